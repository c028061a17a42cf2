package gossip

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"

	"github.com/remem/remem/gossip/relaysvc"
)

// RelayHostConfig configures the libp2p host of a commons (`remem commons
// serve --p2p`).
type RelayHostConfig struct {
	// Key is the host's identity: its peer id is what nodes know the
	// relay by, so it must outlive a restart (the commons keeps it in a
	// file).
	Key crypto.PrivKey
	// Listen holds the multiaddrs to listen on.
	Listen []string
	// Logger (nil: discard).
	Logger *slog.Logger
	// Serves reports whether the relay carries a peer without limits: for
	// a commons, a peer registered in its directory (nil: nobody; everyone
	// gets go-libp2p's default limits).
	Serves func(peer.ID) bool
}

// NewRelayHost starts the libp2p host of a commons: a circuit relay v2
// (relaysvc: unlimited between peers cfg.Serves names, within
// go-libp2p's default limits otherwise), and the AutoNAT service, for
// the nodes that bootstrap from the commons. It takes part in no topic and holds no record. A
// commons runs on a reachable address by definition, so the host counts
// itself public (go-libp2p runs a relay service only on a public host).
func NewRelayHost(cfg RelayHostConfig) (host.Host, error) {
	if cfg.Key == nil {
		return nil, fmt.Errorf("relay host: no key")
	}
	if len(cfg.Listen) == 0 {
		return nil, fmt.Errorf("relay host: no listen address (want e.g. /ip4/0.0.0.0/tcp/4001)")
	}
	for _, l := range cfg.Listen {
		if _, err := ma.NewMultiaddr(l); err != nil {
			return nil, fmt.Errorf("relay host: listen address %q: %w (want e.g. /ip4/0.0.0.0/tcp/4001)", l, err)
		}
	}
	h, err := libp2p.New(
		libp2p.Identity(cfg.Key),
		libp2p.ListenAddrStrings(cfg.Listen...),
		libp2p.ForceReachabilityPublic(),
		libp2p.EnableNATService(),
		libp2p.EnableAutoNATv2(),
		libp2p.DisableMetrics(),
	)
	if err != nil {
		return nil, fmt.Errorf("relay host: starting libp2p on %v: %w", cfg.Listen, err)
	}
	r, err := relaysvc.New(h, relayConfig(cfg.Serves, cfg.Logger))
	if err != nil {
		return nil, errors.Join(fmt.Errorf("relay host: starting the relay service: %w", err), h.Close())
	}
	if cfg.Logger != nil {
		cfg.Logger.Info("relay host started", "peer", h.ID(), "addrs", h.Addrs())
	}
	return &relayHost{Host: h, relay: r}, nil
}

// relayHost is a commons' host with its relay service, which Close stops
// first.
type relayHost struct {
	host.Host
	relay *relaysvc.Relay
}

func (h *relayHost) Close() error {
	return errors.Join(h.relay.Close(), h.Host.Close())
}

// HostAddrs are h's addresses with its /p2p/ id, as a commons lists them.
func HostAddrs(h host.Host) []string {
	addrs, err := peer.AddrInfoToP2pAddrs(&peer.AddrInfo{ID: h.ID(), Addrs: h.Addrs()})
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(addrs))
	for _, a := range addrs {
		out = append(out, a.String())
	}
	return out
}
