package gossip

import (
	"sync"
	"time"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/peer"
	lp2pproto "github.com/libp2p/go-libp2p/core/protocol"
)

// meshTracer follows GossipSub's mesh (GRAFT and PRUNE) so Peers can say
// which peers are in this node's mesh of each topic, and counts messages
// dropped because the subscription loop fell behind.
type meshTracer struct {
	m    *metrics
	mu   sync.Mutex
	mesh map[string]map[peer.ID]struct{}
}

var _ pubsub.RawTracer = (*meshTracer)(nil)

func newMeshTracer(m *metrics) *meshTracer {
	return &meshTracer{m: m, mesh: map[string]map[peer.ID]struct{}{}}
}

func (t *meshTracer) Graft(p peer.ID, topic string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mesh[topic] == nil {
		t.mesh[topic] = map[peer.ID]struct{}{}
	}
	t.mesh[topic][p] = struct{}{}
}

func (t *meshTracer) Prune(p peer.ID, topic string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.mesh[topic], p)
}

func (t *meshTracer) Leave(topic string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.mesh, topic)
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
