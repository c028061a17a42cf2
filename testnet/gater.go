package testnet

import (
	"sync"

	"github.com/libp2p/go-libp2p/core/connmgr"
	"github.com/libp2p/go-libp2p/core/control"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"
)

// partition is the cut of the partition phase, shared by every host's
// gater. While it is active, a peer on one side may not connect to a peer
// on the other; a peer without a side is cut from everyone.
type partition struct {
	mu     sync.RWMutex
	active bool
	side   map[peer.ID]int
}

func newPartition() *partition { return &partition{side: map[peer.ID]int{}} }

func (p *partition) set(id peer.ID, side int) {
	p.mu.Lock()
	p.side[id] = side
	p.mu.Unlock()
}

func (p *partition) activate(on bool) {
	p.mu.Lock()
	p.active = on
	p.mu.Unlock()
}

// cut reports whether a and b may not be connected now.
func (p *partition) cut(a, b peer.ID) bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if !p.active {
		return false
	}
	sa, oka := p.side[a]
	sb, okb := p.side[b]
	return !oka || !okb || sa != sb
}

// gater is one host's connection gater: it refuses links across the cut
// and remembers the host's connections, so the cut can close those that
// exist when it starts.
type gater struct {
	self peer.ID
	p    *partition

	mu    sync.Mutex
	conns map[network.Conn]struct{}
}

var _ connmgr.ConnectionGater = (*gater)(nil)

func newGater(self peer.ID, p *partition) *gater {
	return &gater{self: self, p: p, conns: map[network.Conn]struct{}{}}
}

func (g *gater) InterceptPeerDial(p peer.ID) bool                 { return !g.p.cut(g.self, p) }
func (g *gater) InterceptAddrDial(p peer.ID, _ ma.Multiaddr) bool { return !g.p.cut(g.self, p) }
func (g *gater) InterceptAccept(network.ConnMultiaddrs) bool      { return true }
func (g *gater) InterceptSecured(_ network.Direction, p peer.ID, _ network.ConnMultiaddrs) bool {
	return !g.p.cut(g.self, p)
}

func (g *gater) InterceptUpgraded(c network.Conn) (bool, control.DisconnectReason) {
	if g.p.cut(g.self, c.RemotePeer()) {
		return false, 0
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.conns) >= 64 {
		for old := range g.conns {
			if old.IsClosed() {
				delete(g.conns, old)
			}
		}
	}
	g.conns[c] = struct{}{}
	return true, 0
}

// closeCut closes this host's connections across the cut and returns how
// many it closed.
func (g *gater) closeCut() int {
	g.mu.Lock()
	var doomed []network.Conn
	for c := range g.conns {
		if c.IsClosed() {
			delete(g.conns, c)
			continue
		}
		if g.p.cut(g.self, c.RemotePeer()) {
			doomed = append(doomed, c)
			delete(g.conns, c)
		}
	}
	g.mu.Unlock()
	for _, c := range doomed {
		_ = c.Close() // cutting the partition: the connection is meant to fail
	}
	return len(doomed)
}
