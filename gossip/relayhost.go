package gossip

import (
	"fmt"
	"log/slog"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"
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
}

// NewRelayHost starts the libp2p host of a commons: a circuit relay v2
// (RelayResources), and the AutoNAT service, for the nodes that bootstrap
// from the commons. It takes part in no topic and holds no record. A
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
		libp2p.EnableRelayService(RelayServiceOptions()...),
		libp2p.EnableNATService(),
		libp2p.EnableAutoNATv2(),
		libp2p.DisableMetrics(),
	)
	if err != nil {
		return nil, fmt.Errorf("relay host: starting libp2p on %v: %w", cfg.Listen, err)
	}
	if cfg.Logger != nil {
		cfg.Logger.Info("relay host started", "peer", h.ID(), "addrs", h.Addrs())
	}
	return h, nil
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
