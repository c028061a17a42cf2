package gossip

// The responder's side of a sync session (wire format in syncwire.go).
//
// R's capacity is what throwaway identities would go for, so R spends it
// only on peers that keep the exchange moving. The SUMMARY frames must come
// within Params.SyncOpenTimeout each, and R holds no slot while it waits
// for them. Only a full SUMMARY (a difference to work out) takes one of
// the Params.SyncMaxInbound slots, waiting up to Params.SyncStepTimeout for
// a free one; sessions of private teams have Params.SyncMemberInbound slots
// of their own. From then on each frame R waits for, or waits to send, has
// Params.SyncStepTimeout, and R sends at most Params.SyncServeBytes (fewer
// records: the initiator asks again next time). R answers one session per
// peer at a time. The slots and the per-peer marks are in syncrounds.go;
// what R takes of the initiator's records (accepts, then keeps) is held
// to the budgets of synctake.go.

import (
	"context"
	"fmt"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/remem/remem/protocol"
)

// handleSync answers one session as responder.
func (n *Node) handleSync(s network.Stream) {
	if !n.tasks.enter() {
		_ = s.Reset() // closing: the peer's error is its own
		return
	}
	defer n.tasks.leave()
	p := s.Conn().RemotePeer()
	if err := n.answerSync(s, p); err != nil {
		n.log.Debug("sync session failed", "peer", p, "err", err)
	}
}

// answering is a session this node admitted: its team, what it holds
// there, and the peer's summary.
type answering struct {
	p      peer.ID
	t      *team
	snap   *snapshot
	sum    summaryMsg
	within bucketSet // the buckets the summary lists the origins of
}

func (n *Node) answerSync(s network.Stream, p peer.ID) (err error) {
	c := newConn(s)
	c.pace(n.p.SyncOpenTimeout, time.Now().Add(n.p.SyncTimeout))
	stop := context.AfterFunc(n.ctx, func() { _ = s.Reset() })
	defer stop()
	var st sessionStats
	defer n.finish(c, &st, &err)
	var held releases
	defer held.run()

	a, err := n.admitSession(c, p, &held)
	if a == nil || err != nil {
		return err // a status answered the session, or it failed
	}
	c.pace(n.p.SyncStepTimeout, c.end)
	c.budget = n.p.SyncServeBytes
	if err := n.serve(c, a, &st); err != nil {
		return err
	}
	// Wait for the initiator to close, so our last frames are not cut by a
	// reset: reading returns EOF then. The slot and the peer's mark are
	// free already: the peer may start its next session at once.
	held.run()
	_, _ = c.br.ReadByte()
	return nil
}

// admitSession reads the SUMMARY (the opening: each frame within
// SyncOpenTimeout, and no slot held yet) and decides whether to answer.
// It returns nil when a status byte answered the session, with the error
// of sending it. What the session takes (the peer's mark, a slot) is added
// to held.
func (n *Node) admitSession(c *conn, p peer.ID, held *releases) (*answering, error) {
	sum, err := c.readSummary()
	if err != nil {
		return nil, fmt.Errorf("reading summary: %w", err)
	}
	t := n.teams[sum.team]
	switch {
	case t == nil:
		return nil, c.status(statusNoTeam)
	case !t.members.hasPeer(p):
		return nil, c.status(statusRefused)
	}
	done, ok := n.markBusy(p)
	if !ok {
		return nil, c.status(statusBusy)
	}
	held.add(done)
	snap, err := n.snapshot(t)
	if err != nil {
		_ = c.status(statusInternal)
		return nil, err
	}
	// The whole digest alone: in sync, or ask for more.
	within := allBuckets()
	if !sum.full && sum.whole != snap.whole {
		if sum, within, err = c.askSummary(sum.team, snap); err != nil {
			return nil, err
		}
	}
	// A difference to work out takes a slot; in sync, the rest of the
	// session is a few empty frames.
	if sum.full {
		release := n.takeSlot(t)
		if release == nil {
			return nil, c.status(statusBusy)
		}
		held.add(release)
	}
	return &answering{p: p, t: t, snap: snap, sum: sum, within: within}, nil
}

func (c *conn) readSummary() (summaryMsg, error) {
	body, err := c.readFrame(maxSummaryFrame)
	if err != nil {
		return summaryMsg{}, err
	}
	return decodeSummary(body)
}

// askSummary answers the whole digest with statusNeedFull and reads the
// summary of the same team: the bucket digests, answered with the buckets
// that differ and followed by the summary of their origins (returned with
// those buckets), or at once the full summary of every origin.
func (c *conn) askSummary(team string, snap *snapshot) (summaryMsg, bucketSet, error) {
	if err := c.status(statusNeedFull); err != nil {
		return summaryMsg{}, bucketSet{}, err
	}
	sum, err := c.readSummary()
	if err != nil {
		return summaryMsg{}, bucketSet{}, fmt.Errorf("reading the second summary: %w", err)
	}
	if sum.team != team || (!sum.full && sum.buckets == nil) {
		return summaryMsg{}, bucketSet{}, violation("the second summary is neither the buckets nor the full summary of team %q", team)
	}
	if sum.full {
		return sum, allBuckets(), nil
	}
	within := snap.buckets.differing(sum.buckets)
	if err := c.send(encodeBuckets(within)); err != nil {
		return summaryMsg{}, bucketSet{}, err
	}
	if sum, err = c.readSummary(); err != nil {
		return summaryMsg{}, bucketSet{}, fmt.Errorf("reading the summary of the buckets that differ: %w", err)
	}
	if !sum.full || sum.team != team {
		return summaryMsg{}, bucketSet{}, violation("the third summary is not the summary of team %q", team)
	}
	return sum, within, nil
}

// serve runs the steps after the summary: DIFF, REQUEST, ACCEPT and the
// records both ways.
func (n *Node) serve(c *conn, a *answering, st *sessionStats) error {
	// 2. DIFF
	var diff []diffEntry
	if a.sum.full {
		diff = diffWithin(a.snap, a.sum.entries, a.sum.span(a.within), n.admitsOrigin)
	}
	if err := c.send(encodeDiff(diff)); err != nil {
		return fmt.Errorf("sending diff: %w", err)
	}
	listed, origins := diffIndex(diff)
	// 3. REQUEST
	want, offer, err := c.readRequest(listed)
	if err != nil {
		return err
	}
	// 4. ACCEPT, within what the session takes
	take := n.newIntake(a.p)
	offered := lacking(a.snap, offer, origins)
	accept := a.t.sync.fetching.claim(offered[:min(len(offered), take.acceptRoom(origins, a.sum.entries))], n.p.SyncRecentTTL)
	got := map[recID]bool{}
	defer a.t.sync.fetching.release(accept, got)
	if err := c.send(encodeAccept(accept)); err != nil {
		return fmt.Errorf("sending accept: %w", err)
	}
	// 5. their records: under the diff's origins only.
	in := incoming{t: a.t, from: a.p, expect: make(map[recID]originID, len(accept)), got: got, take: take}
	for _, id := range accept {
		in.expect[id] = originID{}
	}
	in.check = func(_ recID, rec *protocol.Record) string {
		if o, ok := parseOrigin(rec.Origin); !ok || !origins[o] {
			return ReasonWrongOrigin
		}
		return ""
	}
	if err := n.recvRecords(n.ctx, c, in, st); err != nil {
		return fmt.Errorf("receiving records: %w", err)
	}
	// 6. ours, within the budget
	if err := n.sendRecords(c, a.t.scope, a.snap, want, st); err != nil {
		return fmt.Errorf("sending records: %w", err)
	}
	if st.recordsOut < len(want) {
		n.log.Debug("sync session sent part of the records wanted", "peer", a.p, "scope", a.t.scope, "sent", st.recordsOut, "wanted", len(want), "budget", c.budget)
	}
	return nil
}

// diffIndex returns the ids a DIFF lists and its origins.
func diffIndex(diff []diffEntry) (listed map[recID]struct{}, origins map[originID]bool) {
	listed, origins = map[recID]struct{}{}, map[originID]bool{}
	for _, e := range diff {
		origins[e.origin] = true
		for _, id := range e.ids {
			listed[id] = struct{}{}
		}
	}
	return listed, origins
}

// readRequest reads the REQUEST: every wanted id must be one the DIFF
// listed, and none twice. listed loses the wanted ids.
func (c *conn) readRequest(listed map[recID]struct{}) (want, offer []recID, err error) {
	body, err := c.readFrame(maxRequestFrame)
	if err == nil {
		want, offer, err = decodeRequest(body)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("reading request: %w", err)
	}
	for _, id := range want {
		if _, ok := listed[id]; !ok {
			return nil, nil, violation("peer wants id %x that was not listed", id[:])
		}
		delete(listed, id) // each at most once
	}
	return want, offer, nil
}

// lacking are the offered ids this side lacks, once each. Offered records
// are taken under the DIFF's origins only, so with no DIFF there is
// nothing to take.
func lacking(snap *snapshot, offer []recID, origins map[originID]bool) []recID {
	if len(origins) == 0 {
		return nil
	}
	var out []recID
	seen := map[recID]struct{}{}
	for _, id := range offer {
		if snap.has(id) {
			continue
		}
		if _, dup := seen[id]; dup {
			continue
		}
		seen[id] = struct{}{}
		out = append(out, id)
	}
	return out
}
