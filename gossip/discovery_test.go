package gossip

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/control"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/remem/remem/internal/scopes"
)

// Peer exchange alone: leaves know only the hub; when the hub's mesh is
// over Dhi it prunes some of them with other peers' records (PX), and the
// leaves dial each other.
func TestPeerExchange(t *testing.T) {
	small := withParams(func(p *Params) {
		p.D, p.Dlo, p.Dhi, p.Dout, p.Dscore, p.Dlazy = 2, 1, 3, 0, 1, 2
		p.SyncOnConnect, p.SyncInterval = false, 0
	})
	hub := startNode(t, small)
	var leaves []*tnode
	for range 6 {
		leaves = append(leaves, startNode(t, small, withBootstrap(hub)))
	}
	eventually(t, 30*time.Second, "a leaf connected to another leaf by PX", func() bool {
		for _, a := range leaves {
			for _, b := range leaves {
				if a != b && connectedTo(a, b) {
					return true
				}
			}
		}
		return false
	})
}

func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	withReg := func(c *Config) { c.Registry = reg }
	a := startNode(t, withReg)
	b := newNode(t, withReg) // a second node in the process shares the counters
	_ = b
	if v, _ := a.checkMessage(t.Context(), a.teams["t"], []byte("nope"), false, b.PeerID(), b.PeerID()); v != vReject {
		t.Fatal(v)
	}
	a.metrics.message(vReject.String())
	a.metrics.syncIn(10)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			key := mf.GetName()
			for _, l := range m.GetLabel() {
				key += "{" + l.GetName() + "=" + l.GetValue() + "}"
			}
			got[key] = m.GetCounter().GetValue()
		}
	}
	for key, want := range map[string]float64{
		"remem_gossip_rejected_lines_total{reason=json}": 1,
		"remem_gossip_messages_total{verdict=reject}":    1,
		"remem_gossip_sync_bytes_total{direction=in}":    10,
	} {
		if got[key] != want {
			t.Errorf("%s = %v, want %v", key, got[key], want)
		}
	}
}

// switchGater refuses every secured connection until opened.
type switchGater struct {
	allowAll
	open    atomic.Bool
	refused atomic.Int64 // secured connections refused while closed
}

func (g *switchGater) InterceptSecured(network.Direction, peer.ID, network.ConnMultiaddrs) bool {
	if g.open.Load() {
		return true
	}
	g.refused.Add(1)
	return false
}

type allowAll struct{}

func (allowAll) InterceptPeerDial(peer.ID) bool               { return true }
func (allowAll) InterceptAddrDial(peer.ID, ma.Multiaddr) bool { return true }
func (allowAll) InterceptAccept(network.ConnMultiaddrs) bool  { return true }
func (allowAll) InterceptSecured(network.Direction, peer.ID, network.ConnMultiaddrs) bool {
	return true
}
func (allowAll) InterceptUpgraded(network.Conn) (bool, control.DisconnectReason) { return true, 0 }

// A bootstrap peer that refuses at first is retried until it lets us in,
// and reconnected after the connection drops.
func TestBootstrapRetries(t *testing.T) {
	g := &switchGater{}
	b := startNode(t, func(c *Config) { c.ConnGater = g })
	a := startNode(t, withBootstrap(b))
	eventually(t, 10*time.Second, "a few refused dials", func() bool { return g.refused.Load() >= 2 })
	// Asked of the refusing side: the dialer may hold a refused connection
	// for a moment after its own handshake, until b closes it.
	if connectedTo(b, a) {
		t.Fatal("connected through a closed gater")
	}
	g.open.Store(true)
	eventually(t, 10*time.Second, "the bootstrap peer after it opens", func() bool { return connectedTo(a, b) })
	if err := b.host.Network().ClosePeer(a.PeerID()); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "reconnection", func() bool { return connectedTo(a, b) })
}

// Two nodes that only listen on QUIC connect and sync over it.
func TestQUIC(t *testing.T) {
	quicOnly := func(c *Config) { c.Listen = []string{"/ip4/127.0.0.1/udp/0/quic-v1"} }
	a := startNode(t, quicOnly)
	a.holder.add(scopes.Team("t"), lesson(t, a.id, 1))
	b := startNode(t, quicOnly, withBootstrap(a))
	eventually(t, 10*time.Second, "the record over QUIC", func() bool { return b.holder.count(scopes.Team("t")) == 1 })
	for _, c := range b.host.Network().ConnsToPeer(a.PeerID()) {
		if _, err := c.RemoteMultiaddr().ValueForProtocol(ma.P_QUIC_V1); err != nil {
			t.Errorf("connection over %s", c.RemoteMultiaddr())
		}
	}
}
