package gossip

import (
	"fmt"

	"github.com/libp2p/go-libp2p/core/connmgr"
	"github.com/libp2p/go-libp2p/core/control"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"

	"github.com/remem/remem/protocol"
)

// OriginOf returns the origin of a peer: the fingerprint of the Ed25519
// public key its id holds (a remem node's peer id is its memory's key).
func OriginOf(id peer.ID) (string, error) {
	pub, err := id.ExtractPublicKey()
	if err != nil {
		return "", fmt.Errorf("peer %s: extracting public key: %w", id, err)
	}
	if pub.Type() != crypto.Ed25519 {
		return "", fmt.Errorf("peer %s: key type %v is not Ed25519, so it is not a remem memory", id, pub.Type())
	}
	raw, err := pub.Raw()
	if err != nil {
		return "", fmt.Errorf("peer %s: reading public key: %w", id, err)
	}
	return protocol.Fingerprint(raw), nil
}

// memberSet holds the origins of a private team; nil is an open team.
type memberSet map[string]struct{}

// parseMembers reads a members list: each entry is a 64-hex public key or a
// 16-hex origin (case-insensitive, surrounding spaces ignored). An empty
// list is an open team (nil).
func parseMembers(list []string) (memberSet, error) {
	if len(list) == 0 {
		return nil, nil
	}
	m := make(memberSet, len(list))
	for i, e := range list {
		origin, err := protocol.ParseOrigin(e)
		if err != nil {
			return nil, fmt.Errorf("member %d: %w", i+1, err)
		}
		m[origin] = struct{}{}
	}
	return m, nil
}

func (m memberSet) open() bool { return m == nil }

func (m memberSet) hasOrigin(origin string) bool {
	if m == nil {
		return true
	}
	_, ok := m[origin]
	return ok
}

func (m memberSet) hasPeer(id peer.ID) bool {
	if m == nil {
		return true
	}
	o, err := OriginOf(id)
	return err == nil && m.hasOrigin(o)
}

// gater refuses connections to and from peers outside the allowed set (the
// union of the members of every team, when every team is private), then asks
// the extra gater, if any.
type gater struct {
	self    peer.ID
	allowed memberSet // nil: everyone
	extra   connmgr.ConnectionGater
}

var _ connmgr.ConnectionGater = (*gater)(nil)

func (g *gater) allow(p peer.ID) bool {
	return p == g.self || g.allowed.hasPeer(p)
}

func (g *gater) InterceptPeerDial(p peer.ID) bool {
	if !g.allow(p) {
		return false
	}
	return g.extra == nil || g.extra.InterceptPeerDial(p)
}

func (g *gater) InterceptAddrDial(p peer.ID, a ma.Multiaddr) bool {
	return g.extra == nil || g.extra.InterceptAddrDial(p, a)
}

func (g *gater) InterceptAccept(c network.ConnMultiaddrs) bool {
	return g.extra == nil || g.extra.InterceptAccept(c)
}

func (g *gater) InterceptSecured(d network.Direction, p peer.ID, c network.ConnMultiaddrs) bool {
	if !g.allow(p) {
		return false
	}
	return g.extra == nil || g.extra.InterceptSecured(d, p, c)
}

func (g *gater) InterceptUpgraded(c network.Conn) (bool, control.DisconnectReason) {
	if g.extra == nil {
		return true, 0
	}
	return g.extra.InterceptUpgraded(c)
}
