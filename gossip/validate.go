package gossip

import (
	"context"
	"runtime"
	"sync"
	"time"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/remem/remem/protocol"
)

// verdict of one gossip message, DESIGN.md convention 4.
type verdict int

const (
	vAccept verdict = iota
	vReject         // a refused line: the sender is penalised
	vIgnore         // duplicates, non-members, nothing usable: no penalty
)

func (v verdict) pubsub() pubsub.ValidationResult {
	switch v {
	case vAccept:
		return pubsub.ValidationAccept
	case vReject:
		return pubsub.ValidationReject
	}
	return pubsub.ValidationIgnore
}

func (v verdict) String() string {
	switch v {
	case vAccept:
		return "accept"
	case vReject:
		return "reject"
	}
	return "ignore"
}

// parallelLines is the message size from which lines are verified on
// several cores at once.
const parallelLines = 32

// lineResult is the outcome of verifying one line.
type lineResult struct {
	rec *protocol.Record
	err error
}

// verifyLines runs protocol.Verify on every line, on up to GOMAXPROCS
// goroutines for long messages (each started and joined here). It stops
// early when ctx ends (the validator's timeout) and reports ok=false then.
func verifyLines(ctx context.Context, lines []protocol.Line, now time.Time) (out []lineResult, ok bool) {
	out = make([]lineResult, len(lines))
	workers := min(runtime.GOMAXPROCS(0), len(lines)/(parallelLines/2))
	if workers <= 1 {
		for i, l := range lines {
			if i%64 == 63 && ctx.Err() != nil {
				return nil, false
			}
			out[i].rec, out[i].err = protocol.Verify(l.Bytes, now)
		}
		return out, true
	}
	var wg sync.WaitGroup
	chunk := (len(lines) + workers - 1) / workers
	for w := 0; w < len(lines); w += chunk {
		end := min(w+chunk, len(lines))
		wg.Go(func() {
			for i := w; i < end; i++ {
				if i%64 == 63 && ctx.Err() != nil {
					return
				}
				out[i].rec, out[i].err = protocol.Verify(lines[i].Bytes, now)
			}
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		return nil, false
	}
	return out, true
}

// checkMessage is the whole validator decision for one message's data.
// local is true for this node's own publications (the duplicate check is
// skipped: the holder already holds its own records). author is the signed
// publisher of the message and from the peer that forwarded it.
func (n *Node) checkMessage(ctx context.Context, t *team, data []byte, local bool, author, from peer.ID) (verdict, []*protocol.Record) {
	if len(data) > protocol.MaxGossipMsg {
		n.metrics.rejectLine(ReasonMessageTooLarge)
		return vReject, nil
	}
	if !local && !t.members.open() && (!t.members.hasPeer(author) || !t.members.hasPeer(from)) {
		n.metrics.rejectLine(ReasonNonMember)
		return vIgnore, nil
	}
	lines := protocol.SplitLines(data)
	results, ok := verifyLines(ctx, lines, n.now())
	if !ok {
		return vIgnore, nil // timed out: not the sender's fault for sure
	}
	recs := make([]*protocol.Record, 0, len(results))
	skipped := 0
	rejected := false
	for _, r := range results {
		switch protocol.VerdictOf(r.err) {
		case protocol.Reject:
			n.metrics.rejectLine(string(protocol.ReasonOf(r.err)))
			rejected = true
		case protocol.Skip:
			skipped++
		default:
			recs = append(recs, r.rec)
		}
	}
	if skipped > 0 {
		n.metrics.update(func(s *Stats) { s.Skipped += skipped })
	}
	if rejected {
		return vReject, nil
	}
	if len(recs) == 0 {
		return vIgnore, nil
	}
	if !t.members.open() {
		for _, rec := range recs {
			if !t.members.hasOrigin(rec.Origin) {
				n.metrics.rejectLine(ReasonNonMember)
				return vIgnore, nil
			}
		}
	}
	if !local {
		known := 0
		for _, rec := range recs {
			if n.holder.Known(rec) {
				known++
			}
		}
		if known == len(recs) {
			return vIgnore, nil
		}
	}
	return vAccept, recs
}

// validator is the pubsub topic validator of team t.
func (n *Node) validator(t *team) pubsub.ValidatorEx {
	return func(ctx context.Context, from peer.ID, msg *pubsub.Message) pubsub.ValidationResult {
		// Our own publications come with from = this host (msg.Local is
		// only set for publications that stay local).
		local := from == n.host.ID()
		v, recs := n.checkMessage(ctx, t, msg.Data, local, msg.GetFrom(), from)
		if !local {
			n.metrics.message(v.String())
			if v == vReject {
				n.log.Debug("gossip message rejected", "peer", from, "author", msg.GetFrom(), "scope", t.scope)
			}
		}
		if v == vAccept {
			msg.ValidatorData = recs
		}
		return v.pubsub()
	}
}
