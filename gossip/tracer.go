package gossip

import (
	"sync"
	"time"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/connmgr"
	"github.com/libp2p/go-libp2p/core/peer"
	lp2pproto "github.com/libp2p/go-libp2p/core/protocol"
)

// meshTracer follows GossipSub's mesh (GRAFT and PRUNE) so Peers can say
// which peers are in this node's mesh of each topic, and counts messages
// dropped because the subscription loop fell behind. Mesh peers are
// protected in the connection manager while they are in the mesh: a flood
// of connections past its high-water mark must not cut the links records
// travel on (GossipSub only tags them, and a flood's peers can look busier).
// The mesh is at most Dhi peers per topic, so this protects few.
type meshTracer struct {
	m    *metrics
	cm   connmgr.ConnManager
	mu   sync.Mutex
	mesh map[string]map[peer.ID]struct{}
}

var _ pubsub.RawTracer = (*meshTracer)(nil)

// Connection manager protection tags.
const (
	protectMember = "remem-member"
	protectMesh   = "remem-mesh:" // + topic
)

func newMeshTracer(m *metrics, cm connmgr.ConnManager) *meshTracer {
	return &meshTracer{m: m, cm: cm, mesh: map[string]map[peer.ID]struct{}{}}
}

func (t *meshTracer) Graft(p peer.ID, topic string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mesh[topic] == nil {
		t.mesh[topic] = map[peer.ID]struct{}{}
	}
	t.mesh[topic][p] = struct{}{}
	t.cm.Protect(p, protectMesh+topic)
}

func (t *meshTracer) Prune(p peer.ID, topic string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.mesh[topic], p)
	t.cm.Unprotect(p, protectMesh+topic)
}

func (t *meshTracer) Leave(topic string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for p := range t.mesh[topic] {
		t.cm.Unprotect(p, protectMesh+topic)
	}
	delete(t.mesh, topic)
}

// forget drops a peer that has no connection left from every mesh.
func (t *meshTracer) forget(p peer.ID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for topic, peers := range t.mesh {
		if _, ok := peers[p]; ok {
			delete(peers, p)
			t.cm.Unprotect(p, protectMesh+topic)
		}
	}
}

// peers returns the mesh peers of topic that pass keep (the router drops
// disconnected peers from its mesh without a PRUNE event).
func (t *meshTracer) peers(topic string, keep func(peer.ID) bool) []peer.ID {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []peer.ID
	for p := range t.mesh[topic] {
		if keep(p) {
			out = append(out, p)
		}
	}
	return out
}

func (t *meshTracer) UndeliverableMessage(*pubsub.Message) {
	t.m.update(func(s *Stats) { s.Dropped++ })
}

func (t *meshTracer) OnNewOutboundStream(peer.ID, lp2pproto.ID)            {}
func (t *meshTracer) OnClosedOutboundStream(peer.ID)                       {}
func (t *meshTracer) Join(string)                                          {}
func (t *meshTracer) ValidateMessage(*pubsub.Message)                      {}
func (t *meshTracer) DeliverMessage(*pubsub.Message)                       {}
func (t *meshTracer) RejectMessage(*pubsub.Message, string)                {}
func (t *meshTracer) DuplicateMessage(*pubsub.Message)                     {}
func (t *meshTracer) ThrottlePeer(peer.ID)                                 {}
func (t *meshTracer) RecvRPC(*pubsub.RPC)                                  {}
func (t *meshTracer) SendRPC(*pubsub.RPC, peer.ID)                         {}
func (t *meshTracer) SendRPCCompleted(*pubsub.RPC, peer.ID, time.Duration) {}
func (t *meshTracer) DropRPC(*pubsub.RPC, peer.ID)                         {}
