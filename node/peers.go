package node

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/remem/remem/gossip"
)

// The peer workflow of a libp2p user (`ipfs swarm peers`, `ipfs swarm
// connect`): GET /peers lists the connected peers with how each is
// connected and its round trip, measured on the spot; POST /peers/connect
// dials a multiaddr.

// ConnStatus is one connection to a peer.
type ConnStatus struct {
	Addr      string `json:"addr"`
	Kind      string `json:"kind"`      // direct, relayed or hole-punched
	Direction string `json:"direction"` // inbound or outbound
}

// ConnectRequest is the body of POST /peers/connect.
type ConnectRequest struct {
	Addr string `json:"addr"` // a full multiaddr with /p2p/<peer id>
}

// ErrNoHost: the node runs without a libp2p host.
var ErrNoHost = errors.New("this node runs no libp2p host (start it with --team NAME, --bootstrap or --mdns)")

// peerStatus is p as the API shows it.
func peerStatus(p gossip.PeerInfo) PeerStatus {
	ps := PeerStatus{ID: p.ID.String(), Origin: p.Origin, Topics: p.Topics, Score: p.Score, Kind: p.Kind(),
		Addrs: []string{}, Conns: []ConnStatus{}}
	for _, a := range p.Addrs {
		ps.Addrs = append(ps.Addrs, a.String())
	}
	for _, c := range p.Conns {
		ps.Conns = append(ps.Conns, ConnStatus{Addr: c.Addr.String(), Kind: c.Kind, Direction: c.Direction})
	}
	if p.Latency > 0 {
		ps.LatencyMs = float64(p.Latency.Microseconds()) / 1000
	}
	return ps
}

// peers pings every peer (within gossip.PingTimeout), then lists them.
func (d *Daemon) peers(ctx context.Context) ([]PeerStatus, error) {
	out := []PeerStatus{}
	if d.gossip == nil {
		return out, nil
	}
	d.gossip.Ping(ctx)
	for _, p := range d.gossip.Peers() {
		out = append(out, peerStatus(p))
	}
	return out, nil
}

// connect dials addr and returns the peer as connected.
func (d *Daemon) connect(ctx context.Context, addr string) (PeerStatus, error) {
	if d.gossip == nil {
		return PeerStatus{}, ErrNoHost
	}
	ai, err := peer.AddrInfoFromString(addr)
	if err != nil {
		return PeerStatus{}, badRequest{fmt.Errorf("%q is not a peer's multiaddr (%v); want one ending in /p2p/<peer id>, as `remem id` prints", addr, err)}
	}
	if ai.ID == d.gossip.PeerID() {
		return PeerStatus{}, badRequest{fmt.Errorf("%s is this node itself", ai.ID)}
	}
	if err := d.gossip.Connect(ctx, *ai); err != nil {
		return PeerStatus{}, err
	}
	d.log.Info("connected by request", "peer", ai.ID, "addr", addr)
	d.gossip.Ping(ctx)
	for _, p := range d.gossip.Peers() {
		if p.ID == ai.ID {
			return peerStatus(p), nil
		}
	}
	return PeerStatus{}, fmt.Errorf("connected to %s, and the connection closed at once (a gater or a full connection manager)", ai.ID)
}

func (a *api) peers(w http.ResponseWriter, r *http.Request) {
	if a.opts.Peers == nil {
		a.reply(w, []PeerStatus{}, nil)
		return
	}
	ps, err := a.opts.Peers(r.Context())
	a.reply(w, ps, err)
}

func (a *api) connect(w http.ResponseWriter, r *http.Request) {
	var req ConnectRequest
	if err := decode(w, r, &req); err != nil {
		a.reply(w, nil, err)
		return
	}
	if a.opts.Connect == nil {
		fail(w, http.StatusConflict, ErrNoHost)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), gossip.PunchReadyWait+gossip.DirectoryDialTimeout+gossip.PingTimeout+time.Second)
	defer cancel()
	p, err := a.opts.Connect(ctx, req.Addr)
	switch {
	case errors.Is(err, ErrNoHost):
		fail(w, http.StatusConflict, err)
	case err != nil && !errors.As(err, new(badRequest)):
		fail(w, http.StatusBadGateway, err)
	default:
		a.reply(w, p, err)
	}
}

// Peers asks the running node for its peers, each pinged.
func (c *Client) Peers(ctx context.Context) ([]PeerStatus, error) {
	var ps []PeerStatus
	return ps, c.do(ctx, "GET", "/peers", nil, &ps)
}

// Connect asks the running node to dial addr.
func (c *Client) Connect(ctx context.Context, addr string) (PeerStatus, error) {
	var p PeerStatus
	return p, c.do(ctx, "POST", "/peers/connect", ConnectRequest{Addr: addr}, &p)
}
