package commons

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/remem/remem/protocol"
)

// registeredTimeout bounds the refresh from a shared store that
// PeerRegistered may run (at most once per peerRefreshEvery).
const registeredTimeout = 2 * time.Second

// PeerRegistered reports whether peer p (a memory's key) holds a live
// entry in this commons' directory: a token holder registered it within
// PeerTTL. The commons' relay carries such peers without limits, and
// strangers within go-libp2p's default ones (gossip/relaysvc). It reads
// memory, and on a shared store refreshes it at most every
// peerRefreshEvery, so it is cheap enough to ask on every relay request.
func (s *Server) PeerRegistered(p peer.ID) bool {
	origin, ok := peerOrigin(p)
	if !ok {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), registeredTimeout)
	defer cancel()
	s.peers.refresh(ctx)
	s.peers.mu.Lock()
	defer s.peers.mu.Unlock()
	e := s.peers.entries[origin]
	return e != nil && !e.expired(s.peers.now())
}

// peerOrigin is the origin of p's Ed25519 key (false for any other key:
// only a memory's key has an origin).
func peerOrigin(p peer.ID) (string, bool) {
	pub, err := p.ExtractPublicKey()
	if err != nil || pub.Type() != crypto.Ed25519 {
		return "", false
	}
	raw, err := pub.Raw()
	if err != nil {
		return "", false
	}
	return protocol.Fingerprint(raw), true
}

// Registrations answers PeerRegistered for a server made later: a
// commons' relay host starts first, since its addresses go into the
// server's configuration (the info document lists them), and its relay
// asks from then on. Until Set, no peer is registered.
type Registrations struct{ srv atomic.Pointer[Server] }

// Set names the server whose directory answers.
func (r *Registrations) Set(s *Server) { r.srv.Store(s) }

// Registered is the server's PeerRegistered (false before Set).
func (r *Registrations) Registered(p peer.ID) bool {
	s := r.srv.Load()
	return s != nil && s.PeerRegistered(p)
}
