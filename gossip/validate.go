package gossip

import (
	"context"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/remem/remem/internal/parallel"
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
	// Only an origin publishes its own records on a topic (SPEC §10): every
	// line is bound to the message's signer.
	origin, err := OriginOf(author)
	if err != nil {
		n.metrics.rejectLine(string(protocol.ReasonOriginMismatch))
		return vReject, nil
	}
	lines := protocol.SplitLines(data)
	if len(lines) > protocol.MaxOriginRecs {
		// Every line is the signer's: past the cap the message is refused
		// before a single signature is checked, so a flood costs nothing.
		n.metrics.rejectLine(string(protocol.ReasonTooManyRecords))
		return vReject, nil
	}
	b := protocol.VerifyBatch(lines, protocol.Bound{Source: author.String(), Origin: origin, Each: parallel.Each(ctx, parallelLines/2)}, n.now())
	if ctx.Err() != nil {
		return vIgnore, nil // timed out: not the sender's fault for sure
	}
	recs, skipped := b.Records, len(b.Skipped)
	for reason, count := range protocol.TallyOf(b.Refused) {
		for range count {
			n.metrics.rejectLine(string(reason))
		}
	}
	rejected := len(b.Refused) > 0
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
		if n.tooManyNewOrigins(origin, from) {
			n.metrics.rejectLine(ReasonNewOrigins)
			return vIgnore, nil
		}
		// An origin past the cap is not relayed either (its revocations
		// of hashes this node holds are).
		if n.overCap(t.scope, origin, recs) {
			n.metrics.rejectLine(string(protocol.ReasonTooManyRecords))
			return vIgnore, nil
		}
	}
	return vAccept, recs
}

// overCap reports whether recs, all of origin, would take it past the cap
// in scope: every record not held counts, but a revocation of a hash the
// holder (or the message) holds a lesson or confirmation of, which changes
// something and so is taken past the cap (SPEC §10).
func (n *Node) overCap(scope, origin string, recs []*protocol.Record) bool {
	room := n.holder.Room(scope, origin)
	if len(recs) <= room {
		return false
	}
	fresh := 0
	var revs []*protocol.Record
	brought := map[string]bool{}
	for _, rec := range recs {
		if n.holder.Known(rec) {
			continue
		}
		if rec.Type == protocol.TypeRevocation {
			revs = append(revs, rec)
			continue
		}
		fresh++
		brought[rec.Hash] = true
	}
	for _, rev := range revs {
		if fresh > room {
			break
		}
		if !brought[rev.Hash] && !n.holder.HoldsHash(rev.Hash) {
			fresh++
		}
	}
	return fresh > room
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
