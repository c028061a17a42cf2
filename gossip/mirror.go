package gossip

import (
	"context"
	"time"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/remem/remem/protocol"
)

// What a bare GossipSub host must share with a node to sit in a team's
// mesh like one (the testnet's probes do): the router settings
// (RouterParams), the message ids (MessageID) and the validator's verdict
// (MessageValidator).

// MessageValidator returns a topic validator that decides as a node's
// does, for an open team and a memory that holds nothing yet: a message
// over protocol.MaxGossipMsg, of more lines than the per-origin cap, with
// a line protocol.VerifyBatch refuses or of another origin than its signer
// is rejected; one with no usable line is ignored; the rest is accepted.
// now is the clock records are verified against (nil: time.Now).
func MessageValidator(now func() time.Time) pubsub.ValidatorEx {
	if now == nil {
		now = time.Now
	}
	m, _ := newMetrics(nil) // registers nothing, so it cannot fail
	n := &Node{holder: holdsNothing{}, metrics: m, now: now}
	open := &team{}
	return func(ctx context.Context, from peer.ID, msg *pubsub.Message) pubsub.ValidationResult {
		v, _ := n.checkMessage(ctx, open, msg.Data, false, msg.GetFrom(), from)
		return v.pubsub()
	}
}

// holdsNothing is the Holder of MessageValidator: nothing is held, so
// nothing is a duplicate.
type holdsNothing struct{ NoLimits }

func (holdsNothing) Deliver(context.Context, Delivery) error { return nil }
func (holdsNothing) Held(string) ([][]byte, error)           { return nil, nil }
func (holdsNothing) HeldLines(_ string, keys []protocol.RecordKey) ([][]byte, error) {
	return make([][]byte, len(keys)), nil
}
func (holdsNothing) Known(*protocol.Record) bool { return false }
