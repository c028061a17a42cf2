package gossip

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/remem/remem/internal/scopes"
	"github.com/remem/remem/protocol"
)

// Sync both ways in one session, and only what each side lacks moves.
func TestSyncBothWays(t *testing.T) {
	off := withParams(func(p *Params) { p.SyncInterval = 0; p.SyncOnConnect = false })
	a := startNode(t, off)
	b := startNode(t, off, withBootstrap(a))
	eventually(t, 10*time.Second, "connected", func() bool { return connectedTo(b, a) })
	shared := lessons(t, a.id, 0, 20)
	onlyA := lessons(t, a.id, 20, 3)
	onlyB := lessons(t, b.id, 40, 4)
	a.holder.add(scopes.Team("t"), append(slices.Clone(shared), onlyA...)...)
	b.holder.add(scopes.Team("t"), append(slices.Clone(shared), onlyB...)...)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.syncWith(ctx, b.teams["t"], a.PeerID()); err != nil {
		t.Fatal(err)
	}
	if a.holder.count(scopes.Team("t")) != 27 || b.holder.count(scopes.Team("t")) != 27 {
		t.Fatalf("a holds %d, b holds %d, want 27 each", a.holder.count(scopes.Team("t")), b.holder.count(scopes.Team("t")))
	}
	if a.holder.deliveredCount() != 4 || b.holder.deliveredCount() != 3 {
		t.Errorf("a was handed %d, b %d records; want 4 and 3", a.holder.deliveredCount(), b.holder.deliveredCount())
	}
	if a.holder.syncCount() != 4 || b.holder.syncCount() != 3 {
		t.Errorf("BySync was set for %d of a's and %d of b's records; want all", a.holder.syncCount(), b.holder.syncCount())
	}
	// Equal now: a second session moves no record.
	if err := a.syncWith(ctx, a.teams["t"], b.PeerID()); err != nil {
		t.Fatal(err)
	}
	// a counts the session it answered when its handler returns, which may
	// be after b's side returned.
	eventually(t, 5*time.Second, "a to count the session it answered", func() bool { return a.Stats().SyncSessions >= 2 }) // and its own
	st := a.Stats()
	if st.SyncRecordsIn != 4 || st.SyncRecordsOut != 3 {
		t.Errorf("a: %d records in, %d out", st.SyncRecordsIn, st.SyncRecordsOut)
	}
	served := int64(0)
	for _, r := range onlyA {
		served += int64(len(binary.AppendUvarint(nil, uint64(len(r.Raw)))) + len(r.Raw))
	}
	if st.SyncRecordBytesOut != served {
		t.Errorf("a counted %d bytes of records sent, want the %d of its 3 frames", st.SyncRecordBytesOut, served)
	}
	t.Logf("b: %d bytes in, %d out", b.Stats().SyncBytesIn, b.Stats().SyncBytesOut)

	// Another team is never offered: b is not in team u.
	c := startNode(t, off, withTeams("t", "u"), withBootstrap(a))
	c.holder.add(scopes.Team("u"), lesson(t, c.id, 99))
	eventually(t, 10*time.Second, "connected", func() bool { return connectedTo(c, a) })
	if err := c.syncWith(ctx, c.teams["u"], a.PeerID()); err == nil {
		t.Error("a answered a sync of a team it is not in")
	}
	if a.holder.count(scopes.Team("u")) != 0 {
		t.Error("a was handed records of a team it is not in")
	}
}

// A sync peer is never trusted: records it sends unasked end the session,
// and records that fail verification are refused and counted.
func TestSyncDistrustsPeer(t *testing.T) {
	off := withParams(func(p *Params) { p.SyncInterval = 0; p.SyncOnConnect = false })
	victim := startNode(t, off)
	evil := startNode(t, off, withBootstrap(victim))
	eventually(t, 10*time.Second, "connected", func() bool { return connectedTo(evil, victim) })
	good := lesson(t, evil.id, 1)
	forged := badSignature(lesson(t, evil.id, 2).Raw)
	unasked := lesson(t, evil.id, 3).Raw
	var origin originID
	copy(origin[:], mustHex(t, evil.id.Origin()))

	// The evil responder lists good and forged, then sends what it likes.
	respond := func(send [][]byte) func(network.Stream) {
		return func(s network.Stream) {
			defer s.Close()
			c := newConn(s)
			if _, err := c.readFrame(maxSummaryFrame); err != nil {
				return
			}
			ids := []recID{lineID(good.Raw), lineID(forged)}
			slices.SortFunc(ids, cmpID)
			_ = c.writeFrame(encodeDiff([]diffEntry{{origin: origin, ids: ids}}))
			_ = c.flush()
			if _, err := c.readFrame(maxRequestFrame); err != nil {
				return
			}
			_ = c.writeFrame(appendIDs(nil, nil))
			_ = c.flush()
			for {
				b, err := c.readFrame(protocol.MaxLineBytes)
				if err != nil || len(b) == 0 {
					break
				}
			}
			for _, l := range send {
				_ = c.writeFrame(l)
			}
			_ = c.writeFrame(nil)
			_ = c.flush()
			_, _ = c.br.ReadByte()
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	evil.host.SetStreamHandler(SyncProtocol, respond([][]byte{forged, good.Raw}))
	if err := victim.syncWith(ctx, victim.teams["t"], evil.PeerID()); err != nil {
		t.Fatal(err)
	}
	if !victim.holder.has(scopes.Team("t"), good) || victim.holder.count(scopes.Team("t")) != 1 {
		t.Fatalf("victim holds %d records", victim.holder.count(scopes.Team("t")))
	}
	if victim.Stats().Rejected[string(protocol.ReasonSignature)] != 1 {
		t.Errorf("rejected %v, want one signature refusal", victim.Stats().Rejected)
	}

	evil.host.SetStreamHandler(SyncProtocol, respond([][]byte{unasked}))
	err := victim.syncWith(ctx, victim.teams["t"], evil.PeerID())
	if !errors.Is(err, errProtocol) {
		t.Fatalf("unasked record: err %v, want a protocol violation", err)
	}
	if victim.holder.count(scopes.Team("t")) != 1 {
		t.Error("the unasked record was delivered")
	}

	// A frame over its limit is refused before it is read.
	evil.host.SetStreamHandler(SyncProtocol, func(s network.Stream) {
		defer s.Close()
		c := newConn(s)
		_, _ = c.readFrame(maxSummaryFrame)
		_, _ = c.bw.Write(binary.AppendUvarint(nil, maxDiffFrame+1))
		_ = c.flush()
		_, _ = c.br.ReadByte()
	})
	// The violation above may close the connection, and a dial made while
	// it is closing reuses it: a stream on it is then reset (seen once in
	// a full run). A reset is retried on a fresh dial; any other answer
	// but a protocol violation fails.
	for attempt := 1; ; attempt++ {
		if err := victim.host.Connect(ctx, addrInfo(t, evil)); err != nil {
			t.Fatal(err)
		}
		err := victim.syncWith(ctx, victim.teams["t"], evil.PeerID())
		if errors.Is(err, errProtocol) {
			break
		}
		if !errors.Is(err, network.ErrReset) || attempt == 5 {
			t.Fatalf("huge frame: err %v, want a protocol violation", err)
		}
	}
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// partition refuses peers of the other side while closed.
type partition struct {
	allowAll
	closed atomic.Bool
	other  map[peer.ID]bool
}

func (p *partition) InterceptPeerDial(id peer.ID) bool { return !p.closed.Load() || !p.other[id] }
func (p *partition) InterceptSecured(_ network.Direction, id peer.ID, _ network.ConnMultiaddrs) bool {
	return !p.closed.Load() || !p.other[id]
}

// Two halves of a team publish while cut apart; once the cut heals, every
// node converges through sync, without any publisher sending again.
func TestPartitionHeals(t *testing.T) {
	ids := make([]protocol.Identity, 4)
	gaters := make([]*partition, 4)
	pids := make([]peer.ID, 4)
	for i := range ids {
		ids[i], _ = protocol.GenerateIdentity()
		gaters[i] = &partition{other: map[peer.ID]bool{}}
		gaters[i].closed.Store(true)
		var err error
		if pids[i], err = PeerIDOf(ids[i]); err != nil {
			t.Fatal(err)
		}
	}
	for i := range gaters {
		for j := range pids {
			if i/2 != j/2 {
				gaters[i].other[pids[j]] = true
			}
		}
	}
	opt := func(i int) nodeOpt {
		return func(c *Config) { c.Identity = ids[i]; c.ConnGater = gaters[i] }
	}
	a := startNode(t, opt(0))
	b := startNode(t, opt(1), withBootstrap(a))
	c := startNode(t, opt(2), withBootstrap(a)) // refused until the cut heals
	d := startNode(t, opt(3), withBootstrap(c))
	nodes := []*tnode{a, b, c, d}
	eventually(t, 10*time.Second, "each half connected", func() bool { return connectedTo(b, a) && connectedTo(d, c) })
	for _, n := range nodes {
		eventually(t, 10*time.Second, "mesh in each half", func() bool { return len(n.MeshPeers("t")) >= 1 })
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for k, n := range []*tnode{a, d} {
		recs := lessons(t, n.id, 10*k, 10)
		n.holder.add(scopes.Team("t"), recs...)
		if err := n.Publish(ctx, "t", raws(recs)); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 10*time.Second, "each half to hold its 10", func() bool {
		return b.holder.count(scopes.Team("t")) == 10 && c.holder.count(scopes.Team("t")) == 10
	})
	if connectedTo(c, a) {
		t.Fatal("the cut is not cut")
	}
	for _, g := range gaters {
		g.closed.Store(false)
	}
	for i, n := range nodes {
		eventually(t, 20*time.Second, "every node to hold all 20", func() bool { return n.holder.count(scopes.Team("t")) == 20 })
		t.Logf("node %d: sync in %d bytes, %d records", i, n.Stats().SyncBytesIn, n.Stats().SyncRecordsIn)
	}
}

// TestInSyncSessionIsCheap: two nodes that hold the same records settle a
// session with the whole-scope digest alone.
func TestInSyncSessionIsCheap(t *testing.T) {
	noAuto := withParams(func(p *Params) { p.SyncInterval, p.SyncOnConnect = 0, false })
	a := startNode(t, noAuto)
	b := startNode(t, noAuto, withBootstrap(a))
	id, _ := protocol.GenerateIdentity()
	recs := lessons(t, id, 0, 50)
	a.holder.add(scopes.Team("t"), recs...)
	b.holder.add(scopes.Team("t"), recs...)
	// Identify must have told b that a speaks sync before b picks it.
	eventually(t, 20*time.Second, "a sync partner", func() bool { return b.speaksSync(a.PeerID()) })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	b.SyncNow(ctx)
	eventually(t, 20*time.Second, "the session to end", func() bool {
		s := b.Stats()
		return s.SyncSessions+s.SyncFailures >= 1
	})
	s := b.Stats()
	t.Logf("in sync: %d bytes out, %d bytes in, %d sessions", s.SyncBytesOut, s.SyncBytesIn, s.SyncSessions)
	if s.SyncFailures > 0 || s.SyncBytesOut+s.SyncBytesIn > 200 {
		t.Fatalf("an in-sync session moved %d+%d bytes (failures %d)", s.SyncBytesOut, s.SyncBytesIn, s.SyncFailures)
	}
}

// TestCatchUpBytesFollowTheDifference: a node that knows 300 origins and
// lacks 3 records of 3 of them moves those records and a few buckets'
// worth of summary, not one entry per origin: at most 1.2× the lines it
// lacked plus 2 KB, both directions counted.
func TestCatchUpBytesFollowTheDifference(t *testing.T) {
	noAuto := withParams(func(p *Params) { p.SyncInterval, p.SyncOnConnect = 0, false })
	a := startNode(t, noAuto)
	b := startNode(t, noAuto, withBootstrap(a))
	var all []*protocol.Record
	for i := range 300 {
		id, _ := protocol.GenerateIdentity()
		all = append(all, lesson(t, id, i))
	}
	a.holder.add(scopes.Team("t"), all...)
	b.holder.add(scopes.Team("t"), all[3:]...)
	lacked := 0
	for _, r := range all[:3] {
		lacked += len(r.Raw)
	}
	eventually(t, 20*time.Second, "a sync partner", func() bool { return b.speaksSync(a.PeerID()) })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := b.syncWith(ctx, b.teams["t"], a.PeerID()); err != nil {
		t.Fatal(err)
	}
	if b.holder.count(scopes.Team("t")) != 300 {
		t.Fatalf("b holds %d of 300", b.holder.count(scopes.Team("t")))
	}
	s := b.Stats()
	moved := s.SyncBytesIn + s.SyncBytesOut
	t.Logf("lacked %d bytes; the session moved %d (%d in, %d out)", lacked, moved, s.SyncBytesIn, s.SyncBytesOut)
	if bound := int64(1.2*float64(lacked)) + 2048; moved > bound {
		t.Errorf("moved %d bytes for %d lacked, over %d", moved, lacked, bound)
	}
	// The session was b's catch-up: b sent no record, a sent the three.
	if s.SyncRecordBytesOut != 0 {
		t.Errorf("b counted %d bytes of records sent", s.SyncRecordBytesOut)
	}
	eventually(t, 5*time.Second, "a to count the session it answered", func() bool { return a.Stats().SyncSessions >= 1 })
	if as := a.Stats(); as.SyncRecordBytesOut < int64(lacked) || as.SyncRecordBytesOut >= as.SyncBytesOut {
		t.Errorf("a sent %d bytes of records (of %d out) for %d bytes of lines", as.SyncRecordBytesOut, as.SyncBytesOut, lacked)
	}
}

// TestResponderTakesTheFullSummary: an initiator may answer status 5 with
// the full summary of every origin instead of the bucket digests, and the
// responder compares every origin.
func TestResponderTakesTheFullSummary(t *testing.T) {
	a, b := lackingPair(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, err := b.host.NewStream(ctx, a.PeerID(), SyncProtocol)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Reset() }()
	c := newConn(st)
	snap, err := b.snapshot(b.teams["t"])
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.summarize(snap.summaryMsg("t", false))
	if err != nil || m.status != statusNeedFull {
		t.Fatalf("whole digest answered %d (%v), want %d", m.status, err, statusNeedFull)
	}
	if m, err = c.summarize(snap.summaryMsg("t", true)); err != nil || m.status != statusOK {
		t.Fatalf("full summary answered %d (%v)", m.status, err)
	}
	if len(m.entries) != 1 || len(m.entries[0].ids) != 5 {
		t.Fatalf("diff %+v, want the origin with a's 5 ids", m.entries)
	}
}

// TestResponderRefusesABadBucketRound: an initiator that answers the
// buckets that differ with the buckets again, or with another team's
// summary, ends the session; the responder answers the next session.
func TestResponderRefusesABadBucketRound(t *testing.T) {
	a, b := lackingPair(t)
	snap, err := b.snapshot(b.teams["t"])
	if err != nil {
		t.Fatal(err)
	}
	for name, third := range map[string]summaryMsg{
		"buckets again": snap.bucketsMsg("t"),
		"another team":  snap.summaryWithin("u", allBuckets()),
		"whole alone":   snap.summaryMsg("t", false),
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		st, err := b.host.NewStream(ctx, a.PeerID(), SyncProtocol)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		c := newConn(st)
		m, err := c.summarize(snap.summaryMsg("t", false))
		if err == nil && m.status == statusNeedFull {
			m, err = c.summarize(snap.bucketsMsg("t"))
		}
		if err != nil || m.status != statusBuckets {
			t.Fatalf("%s: the bucket round answered %d (%v)", name, m.status, err)
		}
		if m, err = c.summarize(third); err == nil {
			t.Errorf("%s: the responder answered %d with a diff of %d origins", name, m.status, len(m.entries))
		}
		_ = st.Reset()
		cancel()
	}
	// The responder still answers an honest session.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	eventually(t, 10*time.Second, "an honest session", func() bool { return b.syncWith(ctx, b.teams["t"], a.PeerID()) == nil })
	if b.holder.count(scopes.Team("t")) != 5 {
		t.Errorf("b holds %d of 5 after an honest session", b.holder.count(scopes.Team("t")))
	}
}

// stallingHolder is a memHolder whose Deliver waits until its context
// ends, as a memory does whose embeddings endpoint hangs.
type stallingHolder struct {
	*memHolder
	entered chan struct{} // closed when the first Deliver starts
	once    sync.Once
	ended   chan error    // the context's error, for each Deliver that returned
	release chan struct{} // closed by free: Deliver returns then in any case
	free    func()
}

func newStallingHolder(h *memHolder) *stallingHolder {
	release := make(chan struct{})
	return &stallingHolder{memHolder: h, entered: make(chan struct{}), ended: make(chan error, 16),
		release: release, free: sync.OnceFunc(func() { close(release) })}
}

func (h *stallingHolder) Deliver(ctx context.Context, _ Delivery) error {
	h.once.Do(func() { close(h.entered) })
	select {
	case <-ctx.Done():
	case <-h.release:
	}
	select {
	case h.ended <- ctx.Err():
	default:
	}
	return ctx.Err()
}

// Close returns promptly while the holder's Deliver waits (for records
// that came by gossip, by a session the node answers and by one it
// started): Deliver's context ends when the node closes.
func TestCloseWhileDeliverWaits(t *testing.T) {
	off := withParams(func(p *Params) { p.SyncInterval, p.SyncOnConnect = 0, false })
	cases := []struct {
		name string
		// provoke makes b deliver records of a; it returns when b's
		// session or round has returned.
		provoke func(t *testing.T, a, b *tnode) (wait func())
	}{
		{"gossip message", func(t *testing.T, a, b *tnode) func() {
			eventually(t, 10*time.Second, "a to see b in the topic", func() bool { return len(a.teams["t"].t.ListPeers()) > 0 })
			recs := lessons(t, a.id, 0, 3)
			a.holder.add(scopes.Team("t"), recs...)
			if err := a.Publish(context.Background(), "t", raws(recs)); err != nil {
				t.Fatal(err)
			}
			return func() {}
		}},
		{"sync session answered", func(t *testing.T, a, b *tnode) func() {
			a.holder.add(scopes.Team("t"), lessons(t, a.id, 0, 3)...)
			done := make(chan struct{})
			go func() {
				defer close(done)
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				_ = a.syncWith(ctx, a.teams["t"], b.PeerID()) // b accepts a's offer
			}()
			return func() { <-done }
		}},
		{"sync round started", func(t *testing.T, a, b *tnode) func() {
			a.holder.add(scopes.Team("t"), lessons(t, a.id, 0, 3)...)
			eventually(t, 10*time.Second, "b to know a speaks sync", func() bool { return b.speaksSync(a.PeerID()) })
			done := make(chan struct{})
			go func() {
				defer close(done)
				b.SyncNow(context.Background())
			}()
			return func() { <-done }
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { closeWhileDeliverWaits(t, off, c.provoke) })
	}
}

// closeWhileDeliverWaits starts a with b, whose Deliver waits for its
// context, has provoke make b deliver, and closes b.
func closeWhileDeliverWaits(t *testing.T, off nodeOpt, provoke func(t *testing.T, a, b *tnode) (wait func())) {
	a := startNode(t, off)
	var stalling *stallingHolder
	b := newNodeWith(t, func(h *memHolder) Holder { stalling = newStallingHolder(h); return stalling }, off, withBootstrap(a))
	t.Cleanup(stalling.free) // runs before b's cleanup closes it
	b.run(t)
	eventually(t, 10*time.Second, "connected", func() bool { return connectedTo(b, a) })
	wait := provoke(t, a, b)
	select {
	case <-stalling.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("b never delivered")
	}
	start := time.Now()
	closed := make(chan error, 1)
	go func() { closed <- b.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		stalling.free()
		t.Fatal("Close did not return within 5 s of a Deliver that waits for its context")
	}
	select {
	case err := <-stalling.ended:
		if err == nil {
			t.Error("Deliver returned with its context alive")
		}
	case <-time.After(5 * time.Second):
		stalling.free()
		t.Error("Deliver still waits 5 s after Close: its context did not end")
	}
	wait()
	t.Logf("Close took %v", time.Since(start))
}

// lackingPair starts a and b, connected and syncing only when asked; a
// holds five lessons of one origin in team t and b the first two.
func lackingPair(t *testing.T) (a, b *tnode) {
	t.Helper()
	noAuto := withParams(func(p *Params) { p.SyncInterval, p.SyncOnConnect = 0, false })
	a = startNode(t, noAuto)
	b = startNode(t, noAuto, withBootstrap(a))
	id, _ := protocol.GenerateIdentity()
	recs := lessons(t, id, 0, 5)
	a.holder.add(scopes.Team("t"), recs...)
	b.holder.add(scopes.Team("t"), recs[:2]...)
	eventually(t, 20*time.Second, "a sync partner", func() bool { return b.speaksSync(a.PeerID()) })
	return a, b
}

// A holder that fails to keep records (its store fails) loses none of
// them: a gossip message's are counted as undelivered, a sync session that
// fetched some ends with the error, and the next session brings them once
// the holder keeps records again.
func TestDeliverErrorsLoseNothing(t *testing.T) {
	// a's records are a stranger's to b, and b takes no more of them from
	// one peer in an hour than there are: the records not kept must not
	// use that up.
	off := withParams(func(p *Params) {
		p.SyncInterval, p.SyncOnConnect = 0, false
		p.SyncPeerTakeRecords = 21
	})
	a := startNode(t, off)
	b := startNode(t, off, withBootstrap(a))
	b.holder.mu.Lock()
	b.holder.fail = errors.New("the disk is full")
	b.holder.mu.Unlock()
	eventually(t, 20*time.Second, "a mesh between the two", func() bool { return len(b.MeshPeers("t")) >= 1 && len(a.MeshPeers("t")) >= 1 })

	rec := lesson(t, a.id, 1)
	a.holder.add(scopes.Team("t"), rec)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := a.Publish(ctx, "t", [][]byte{rec.Raw}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the message's record counted as undelivered", func() bool { return b.Stats().Undelivered == 1 })

	recs := lessons(t, a.id, 10, 20)
	a.holder.add(scopes.Team("t"), recs...)
	eventually(t, 10*time.Second, "a sync partner", func() bool { return b.speaksSync(a.PeerID()) })
	if err := b.syncWith(ctx, b.teams["t"], a.PeerID()); err == nil || !strings.Contains(err.Error(), "the disk is full") {
		t.Fatalf("a session whose records were not kept: %v, want the holder's error", err)
	}
	b.holder.mu.Lock()
	b.holder.fail = nil
	b.holder.mu.Unlock()
	want := len(recs) + 1
	for sessions := 0; b.holder.count(scopes.Team("t")) < want && sessions < 20; sessions++ {
		if err := b.syncWith(ctx, b.teams["t"], a.PeerID()); err != nil && !errors.Is(err, errPeerBusy) {
			t.Fatal(err)
		}
	}
	if got := b.holder.count(scopes.Team("t")); got != want {
		t.Fatalf("b holds %d of %d records after the holder recovered; stats %+v", got, want, b.Stats())
	}
}
