package gossip

// The initiator's side of a sync session (wire format in syncwire.go): it
// sends its summary, asks for what the DIFF lists that it lacks, offers
// what it holds under the DIFF's origins that the responder does not list,
// sends what was accepted and receives what it asked for.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/remem/remem/protocol"
)

// errPeerBusy is a responder's answer while it serves as many sessions as
// it takes (from this peer, or in all): the caller tries again later.
var errPeerBusy = errors.New("busy")

// syncWith runs one session as initiator with p for team t. It waits for
// this node's last session with p to end (the peer answers one at a
// time); the session then has Params.SyncTimeout. Records received are
// delivered with ctx.
func (n *Node) syncWith(ctx context.Context, t *team, p peer.ID) (err error) {
	if !t.members.hasPeer(p) {
		return fmt.Errorf("peer %s is not a member of team %s", p, t.name)
	}
	unlock, err := n.outgoing.lock(ctx, p)
	if err != nil {
		return fmt.Errorf("waiting for the last session with %s to end: %w", p, err)
	}
	defer unlock()
	sctx, cancel := context.WithTimeout(ctx, n.p.SyncTimeout)
	defer cancel()
	// Over a limited relayed connection too (a relay run by others, within
	// its limits; see relayConfig): catch-up must not wait for a hole
	// punch that may never come.
	s, err := n.host.NewStream(network.WithAllowLimitedConn(sctx, "remem sync"), p, SyncProtocol)
	if err != nil {
		return fmt.Errorf("opening sync stream to %s: %w", p, err)
	}
	stop := context.AfterFunc(sctx, func() { _ = s.Reset() })
	defer stop()
	c := newConn(s)
	c.pace(0, time.Now().Add(n.p.SyncTimeout))
	var st sessionStats
	defer n.finish(c, &st, &err)
	return n.initiate(ctx, c, t, p, &st)
}

// initiate runs the steps of a session on its open stream.
func (n *Node) initiate(ctx context.Context, c *conn, t *team, p peer.ID, st *sessionStats) error {
	snap, err := n.snapshot(t)
	if err != nil {
		return err
	}
	// 1. SUMMARY; 2. DIFF
	diff, err := c.askDiff(t, p, snap)
	if err != nil {
		return err
	}
	// 3. REQUEST; 4. ACCEPT
	plan := planRequest(snap, diff, n.admitsOrigin)
	take := n.newIntake(p)
	admitted := func(id recID) bool { return n.admitsOrigin(plan.origin[id]) }
	want := t.sync.fetching.claim(wantFirst(plan.want, admitted, take.room()), n.p.SyncRecentTTL)
	got := map[recID]bool{}
	defer t.sync.fetching.release(want, got)
	accepted, err := c.request(want, plan.offer)
	if err != nil {
		return err
	}
	// 5. our records
	if err := n.sendRecords(c, t.scope, snap, accepted, st); err != nil {
		return fmt.Errorf("sending records: %w", err)
	}
	// 6. theirs, each under the origin the DIFF listed it for
	in := incoming{t: t, from: p, expect: make(map[recID]originID, len(want)), got: got, take: take}
	for _, id := range want {
		in.expect[id] = plan.origin[id]
	}
	in.check = func(id recID, rec *protocol.Record) string {
		if rec.Origin != in.expect[id].String() {
			return ReasonWrongOrigin
		}
		return ""
	}
	if err := n.recvRecords(ctx, c, in, st); err != nil {
		return fmt.Errorf("receiving records: %w", err)
	}
	n.log.Debug("sync done", "peer", p, "scope", t.scope, "in", st.recordsIn, "out", st.recordsOut, "bytes_in", c.cr.n, "bytes_out", c.cw.n)
	return nil
}

// askDiff sends the whole digest and, when the responder asks for more,
// the bucket digests and then the summary of the buckets that differ; it
// returns the DIFF, or an error for any status but ok.
func (c *conn) askDiff(t *team, p peer.ID, snap *snapshot) ([]diffEntry, error) {
	m, err := c.summarize(snap.summaryMsg(t.name, false))
	if err == nil && m.status == statusNeedFull {
		m, err = c.summarize(snap.bucketsMsg(t.name))
		if err == nil && m.status == statusBuckets {
			sum, next := snap.summaryFrom(t.name, m.buckets, t.sync.windows.from(p))
			t.sync.windows.set(p, next)
			m, err = c.summarize(sum)
		}
	}
	if err != nil {
		return nil, err
	}
	switch m.status {
	case statusOK:
		return m.entries, nil
	case statusNoTeam:
		return nil, fmt.Errorf("peer %s is not in team %s", p, t.name)
	case statusRefused:
		return nil, fmt.Errorf("peer %s refused sync of team %s (not a member)", p, t.name)
	case statusBusy:
		return nil, fmt.Errorf("peer %s is %w", p, errPeerBusy)
	default:
		return nil, fmt.Errorf("peer %s failed (status %d)", p, m.status)
	}
}

// summarize sends a SUMMARY and reads the DIFF that answers it.
func (c *conn) summarize(m summaryMsg) (diffMsg, error) {
	if err := c.send(encodeSummary(m)); err != nil {
		return diffMsg{}, fmt.Errorf("sending summary: %w", err)
	}
	body, err := c.readFrame(maxDiffFrame)
	if err != nil {
		return diffMsg{}, fmt.Errorf("reading diff: %w", err)
	}
	d, err := decodeDiff(body)
	if err != nil {
		return diffMsg{}, fmt.Errorf("reading diff: %w", err)
	}
	return d, nil
}

// requestPlan is what the initiator asks for and offers.
type requestPlan struct {
	want   []recID
	origin map[recID]originID // the origin the DIFF listed each wanted id under
	offer  []recID
}

// planRequest wants the DIFF's ids this side lacks, and offers the ids it
// holds under the DIFF's origins that the DIFF does not list (at most
// maxIDs), those of the origins first says yes to (the admitted ones; it
// may be nil) first: a responder that takes only part of an offer takes
// them.
func planRequest(snap *snapshot, diff []diffEntry, first func(originID) bool) requestPlan {
	plan := requestPlan{origin: map[recID]originID{}}
	var entryFirst func(diffEntry) bool
	if first != nil {
		entryFirst = func(e diffEntry) bool { return first(e.origin) }
	}
	for _, e := range firstOnes(diff, entryFirst) {
		theirs := make(map[recID]struct{}, len(e.ids))
		for _, id := range e.ids {
			theirs[id] = struct{}{}
			if !snap.has(id) {
				plan.want = append(plan.want, id)
				plan.origin[id] = e.origin
			}
		}
		for _, id := range snap.byOrig[e.origin] {
			if _, ok := theirs[id]; !ok && len(plan.offer) < maxIDs {
				plan.offer = append(plan.offer, id)
			}
		}
	}
	return plan
}

// request sends the REQUEST and reads the ACCEPT, which must be a subset
// of the offer.
func (c *conn) request(want, offer []recID) ([]recID, error) {
	if err := c.send(encodeRequest(want, offer)); err != nil {
		return nil, fmt.Errorf("sending request: %w", err)
	}
	body, err := c.readFrame(maxAcceptFrame)
	if err != nil {
		return nil, fmt.Errorf("reading accept: %w", err)
	}
	accepted, err := decodeAccept(body)
	if err != nil {
		return nil, fmt.Errorf("reading accept: %w", err)
	}
	offered := make(map[recID]struct{}, len(offer))
	for _, id := range offer {
		offered[id] = struct{}{}
	}
	for _, id := range accepted {
		if _, ok := offered[id]; !ok {
			return nil, violation("peer accepted id %x that was not offered", id[:])
		}
	}
	return accepted, nil
}
