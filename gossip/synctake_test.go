package gossip

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/remem/remem/internal/scopes"
	"github.com/remem/remem/internal/testutil"
	"github.com/remem/remem/protocol"
)

// Small take budgets, a clock the test moves, and no round but those the
// test runs.
const (
	testTakeRecords     = 20
	testPeerTakeRecords = 50
	testPeerRest        = time.Minute
)

func takeBudgets(clk *testutil.Clock) nodeOpt {
	return func(c *Config) {
		c.Now = clk.Now
		c.Params.SyncInterval, c.Params.SyncOnConnect = 0, false
		c.Params.SyncTakeRecords, c.Params.SyncPeerTakeRecords = testTakeRecords, testPeerTakeRecords
		c.Params.SyncPeerRest = testPeerRest
	}
}

// pool is what a hostile peer holds: records of a few fresh keys (it
// could make more at will) and, once the test says, some of an origin
// the victim admits.
type pool struct {
	mu           sync.Mutex
	strangers    []*protocol.Record
	admitted     []*protocol.Record
	withAdmitted bool // list and offer the admitted records too
	lie          bool // as an initiator, claim the admitted origin's cap in the summary but offer strangers' records alone
	next         int  // the strangers sent so far: the next listing starts after them
	sessions     int
	asked        []int // per session, the ids the victim asked for or accepted
}

func newPool(t *testing.T, admitted protocol.Identity) *pool {
	p := &pool{admitted: lessons(t, admitted, 0, 3)}
	for range 3 {
		id, err := protocol.GenerateIdentity()
		if err != nil {
			t.Fatal(err)
		}
		p.strangers = append(p.strangers, lessons(t, id, 0, 100)...)
	}
	return p
}

// listing is the next 100 strangers' records and every admitted one,
// as DIFF entries (origins and ids increasing), and the lines by id.
func (p *pool) listing() ([]diffEntry, map[recID][]byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sessions++
	recs := p.strangers[p.next:min(p.next+100, len(p.strangers))]
	if p.withAdmitted {
		recs = append(slices.Clone(p.admitted), recs...)
	}
	byOrig := map[originID][]recID{}
	lines := map[recID][]byte{}
	for _, r := range recs {
		o, _ := parseOrigin(r.Origin)
		id := lineID(r.Raw)
		byOrig[o] = append(byOrig[o], id)
		lines[id] = r.Raw
	}
	var diff []diffEntry
	for o, ids := range byOrig {
		slices.SortFunc(ids, cmpID)
		diff = append(diff, diffEntry{origin: o, ids: ids})
	}
	slices.SortFunc(diff, func(a, b diffEntry) int { return cmpOrigin(a.origin, b.origin) })
	return diff, lines
}

// noteAsked counts what a session asked for, and moves the next listing
// past the strangers' records it takes.
func (p *pool) noteAsked(want []recID, lines map[recID][]byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked = append(p.asked, len(want))
	for _, id := range want {
		if rec, err := protocol.Decode(lines[id]); err == nil && rec.Origin != p.admitted[0].Origin {
			p.next++
		}
	}
}

func (p *pool) counts() (sessions int, asked []int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sessions, slices.Clone(p.asked)
}

// respondAlwaysMore answers every session as a responder that always has
// more: its DIFF lists the pool's next records, and it sends every one
// asked for.
func (p *pool) respondAlwaysMore(s network.Stream) {
	defer s.Close()
	c := newConn(s)
	if _, err := c.readFrame(maxSummaryFrame); err != nil {
		return
	}
	diff, lines := p.listing()
	if c.send(encodeDiff(diff)) != nil {
		return
	}
	body, err := c.readFrame(maxRequestFrame)
	if err != nil {
		return
	}
	want, _, err := decodeRequest(body)
	if err != nil {
		return
	}
	p.noteAsked(want, lines)
	if c.send(encodeAccept(nil)) != nil {
		return
	}
	for {
		if b, err := c.readFrame(protocol.MaxLineBytes); err != nil || len(b) == 0 {
			break
		}
	}
	for _, id := range want {
		_ = c.writeFrame(lines[id])
	}
	_ = c.send(nil)
	_, _ = c.br.ReadByte()
}

// victimAndHostile starts a victim that admits one origin, and a raw host
// connected to it that serves sync with handler.
func victimAndHostile(t *testing.T, clk *testutil.Clock, admitted protocol.Identity, handler network.StreamHandler, opts ...nodeOpt) (*tnode, host.Host) {
	t.Helper()
	victim := startNode(t, append([]nodeOpt{takeBudgets(clk)}, opts...)...)
	victim.holder.admit(admitted.Origin())
	h := rawHost(t)
	if handler != nil {
		h.SetStreamHandler(SyncProtocol, handler)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.Connect(ctx, addrInfo(t, victim)); err != nil {
		t.Fatal(err)
	}
	return victim, h
}

// strangersHeld counts the pool's strangers' records the victim holds.
func strangersHeld(v *tnode, p *pool) int {
	n := 0
	for _, r := range p.strangers {
		if v.holder.has(scopes.Team("t"), r) {
			n++
		}
	}
	return n
}

// A responder that always has more, reached by the victim's rounds,
// gives at most the session's budget per session and the peer's per hour:
// the victim asks for no more, and its next round goes back to it only
// after its rest. The admitted origin's records are taken when the hour's
// budget is spent. An hour later it takes strangers' records again.
func TestSyncTakesAtMostTheBudgetFromAResponder(t *testing.T) {
	clk := testutil.NewClock(time.Now())
	admitted := mustIdentity(t)
	p := newPool(t, admitted)
	victim, h := victimAndHostile(t, clk, admitted, p.respondAlwaysMore)
	eventually(t, 10*time.Second, "the victim to see a sync partner", func() bool { return victim.speaksSync(h.ID()) })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	victim.SyncNow(ctx)
	if got := strangersHeld(victim, p); got != testTakeRecords {
		t.Fatalf("one session took %d strangers' records, want the session's budget of %d", got, testTakeRecords)
	}
	victim.SyncNow(ctx) // what records that came by sync start
	if sessions, _ := p.counts(); sessions != 1 {
		t.Fatalf("a round right after the peer gave records went back to it: %d sessions", sessions)
	}
	for range 8 { // eight rests: eight minutes of the hour
		clk.Add(testPeerRest)
		victim.SyncNow(ctx)
	}
	sessions, asked := p.counts()
	if got := strangersHeld(victim, p); got != testPeerTakeRecords {
		t.Fatalf("%d sessions in %v took %d strangers' records, want the peer's hourly budget of %d", sessions, 8*testPeerRest, got, testPeerTakeRecords)
	}
	for i, n := range asked {
		if n > testTakeRecords {
			t.Errorf("session %d asked for %d records, over the budget", i, n)
		}
	}
	if last := asked[len(asked)-1]; last != 0 {
		t.Errorf("with the hour's budget spent the victim still asked for %d records", last)
	}

	p.offerAdmitted()
	clk.Add(testPeerRest)
	victim.SyncNow(ctx)
	for _, r := range p.admitted {
		if !victim.holder.has(scopes.Team("t"), r) {
			t.Fatal("with the strangers' budget spent, the admitted origin's records were not taken")
		}
	}
	if got := strangersHeld(victim, p); got != testPeerTakeRecords {
		t.Errorf("the admitted origin's records took %d strangers' records past the budget along", got-testPeerTakeRecords)
	}
	if st := victim.Stats(); st.SyncRecordsOverBudget != 0 || st.SyncFailures != 0 {
		t.Errorf("honest limits: %d records dropped, %d sessions failed", st.SyncRecordsOverBudget, st.SyncFailures)
	}

	clk.Add(takeWindow)
	victim.SyncNow(ctx)
	if got := strangersHeld(victim, p); got != testPeerTakeRecords+testTakeRecords {
		t.Errorf("an hour later: %d strangers' records held, want %d", got, testPeerTakeRecords+testTakeRecords)
	}
	t.Logf("%d sessions, asked %v", sessions, asked)
}

func (p *pool) offerAdmitted() {
	p.mu.Lock()
	p.withAdmitted = true
	p.mu.Unlock()
}

// offerAlwaysMore runs one session with victim as an initiator that always
// has more: its summary lists the pool's origins, it offers the next
// hundred strangers' records (after the admitted ones, once offered) and
// sends every one accepted. It returns the ids accepted.
func (p *pool) offerAlwaysMore(ctx context.Context, h host.Host, victim peer.ID) ([]recID, error) {
	diff, lines := p.listing()
	var entries []summaryEntry
	var offer, admitted []recID
	for _, e := range diff {
		sum := summaryOf(e.ids)
		if o, _ := parseOrigin(p.admitted[0].Origin); o == e.origin {
			if p.lie {
				sum.count = protocol.MaxOriginRecs
				e.ids = nil
			}
			admitted = append(admitted, e.ids...)
		} else {
			offer = append(offer, e.ids...)
		}
		entries = append(entries, summaryEntry{origin: e.origin, originSummary: sum})
	}
	s, err := h.NewStream(ctx, victim, SyncProtocol)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	c := newConn(s)
	d, err := c.summarize(summaryMsg{team: "t", full: true, entries: entries})
	if err != nil {
		return nil, err
	}
	switch d.status {
	case statusOK:
	case statusBusy:
		return nil, errPeerBusy
	default:
		return nil, fmt.Errorf("status %d", d.status)
	}
	accepted, err := c.request(nil, append(admitted, offer...))
	if err != nil {
		return nil, err
	}
	p.noteAsked(accepted, lines)
	for _, id := range accepted {
		if err := c.writeFrame(lines[id]); err != nil {
			return nil, err
		}
	}
	if err := c.send(nil); err != nil {
		return nil, err
	}
	if body, err := c.readFrame(protocol.MaxLineBytes); err != nil || len(body) != 0 {
		return nil, fmt.Errorf("the victim's records: %d bytes, %v; want the end frame", len(body), err)
	}
	return accepted, nil
}

// An initiator that always has more is accepted at most the session's
// budget per session and the peer's per hour; the admitted origin's
// records, offered first, are taken when that is spent, and a summary that
// lies about them to have strangers' records accepted gets none taken.
func TestSyncTakesAtMostTheBudgetFromAnInitiator(t *testing.T) {
	clk := testutil.NewClock(time.Now())
	admitted := mustIdentity(t)
	p := newPool(t, admitted)
	victim, h := victimAndHostile(t, clk, admitted, nil)
	for i := range 4 {
		if n := len(p.session(t, h, victim)); n > testTakeRecords {
			t.Errorf("session %d: %d records accepted, over the session's budget", i, n)
		}
	}
	if got := strangersHeld(victim, p); got != testPeerTakeRecords {
		t.Fatalf("4 sessions took %d strangers' records, want the hour's budget of %d", got, testPeerTakeRecords)
	}
	p.offerAdmitted()
	if got := p.session(t, h, victim); len(got) != len(p.admitted) {
		t.Errorf("with the hour's budget spent: %d accepted, want the %d admitted records", len(got), len(p.admitted))
	}
	for _, r := range p.admitted {
		if !victim.holder.has(scopes.Team("t"), r) {
			t.Fatal("the admitted origin's records were not taken")
		}
	}
	// A summary that claims the admitted origin's cap gets strangers'
	// records accepted in its room; they are read and dropped.
	p.lie = true
	lied := p.session(t, h, victim)
	if len(lied) <= testTakeRecords {
		t.Fatalf("a lying summary: %d accepted; the lie did not get room, and the test shows nothing", len(lied))
	}
	eventually(t, 5*time.Second, "the victim to count the session", func() bool { return victim.Stats().SyncRecordsOverBudget == len(lied) })
	if got := strangersHeld(victim, p); got != testPeerTakeRecords {
		t.Fatalf("a lying summary took %d strangers' records past the hour's budget", got-testPeerTakeRecords)
	}
	p.lie = false
	clk.Add(takeWindow)
	if got := p.session(t, h, victim); len(got) != testTakeRecords {
		t.Errorf("an hour later: %d accepted, want %d", len(got), testTakeRecords)
	}
}

// With a session budget of five records' bytes, the rest of what was
// accepted is read and dropped, and the session still ends well on both
// sides.
func TestSyncDropsPastTheTakeBytes(t *testing.T) {
	clk := testutil.NewClock(time.Now())
	p := newPool(t, mustIdentity(t))
	// Any five of the lines sent fit; no six do (their lengths differ
	// by a few bytes).
	sizes := make([]int, 100)
	for i, r := range p.strangers[:100] {
		sizes[i] = len(r.Raw)
	}
	slices.Sort(sizes)
	five, six := 0, 0
	for i := range 6 {
		six += sizes[i]
		if i < 5 {
			five += sizes[len(sizes)-1-i]
		}
	}
	if six <= five {
		t.Fatalf("line lengths %d to %d: six fit in five's bytes", sizes[0], sizes[99])
	}
	victim, h := victimAndHostile(t, clk, mustIdentity(t), nil, withParams(func(pp *Params) { pp.SyncTakeBytes = five }))
	if got := p.session(t, h, victim); len(got) != testTakeRecords {
		t.Fatalf("%d accepted, want %d", len(got), testTakeRecords)
	}
	if got := strangersHeld(victim, p); got != 5 {
		t.Errorf("a session of five records' bytes took %d", got)
	}
	eventually(t, 5*time.Second, "the victim to count the session", func() bool { return victim.Stats().SyncRecordsOverBudget > 0 })
	if st := victim.Stats(); st.SyncRecordsOverBudget != testTakeRecords-5 || st.SyncFailures != 0 {
		t.Errorf("%d records dropped, %d sessions failed; want %d and none", st.SyncRecordsOverBudget, st.SyncFailures, testTakeRecords-5)
	}
}

// session runs one hostile initiator's session with victim, again while
// the victim still answers the last one (busy).
func (p *pool) session(t *testing.T, h host.Host, victim *tnode) []recID {
	t.Helper()
	eventually(t, 10*time.Second, "identify", func() bool {
		ok, _ := h.Peerstore().SupportsProtocols(victim.PeerID(), SyncProtocol)
		return len(ok) > 0
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		accepted, err := p.offerAlwaysMore(ctx, h, victim.PeerID())
		if err == nil {
			return accepted
		}
		if ctx.Err() != nil || !errors.Is(err, errPeerBusy) {
			t.Fatal(err)
		}
	}
}

func mustIdentity(t *testing.T) protocol.Identity {
	t.Helper()
	id, err := protocol.GenerateIdentity()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// The ledger counts strangers' records per peer in a window of an hour,
// never admitted ones, starts a rest with any record taken, and remembers
// at most maxTakePeers peers, forgetting first those whose window and
// rest are over.
func TestTakeLedger(t *testing.T) {
	p := DefaultParams()
	p.SyncPeerTakeRecords, p.SyncPeerTakeBytes, p.SyncPeerRest = 3, 1000, time.Minute
	l := newTakeLedger(p)
	now := time.Now()
	const a, b = peer.ID("a"), peer.ID("b")
	for i := range 2 {
		if !l.take(a, now, 400, false) {
			t.Fatalf("record %d within the budget refused", i)
		}
	}
	if l.take(a, now, 400, false) {
		t.Error("a record past the bytes taken")
	}
	if !l.take(a, now, 100, false) || l.take(a, now, 1, false) {
		t.Error("the records budget: a third taken, a fourth refused")
	}
	if !l.take(a, now, 8000, true) || l.left(a, now) != 0 {
		t.Error("an admitted record refused, or charged")
	}
	if l.left(b, now) != 3 {
		t.Error("one peer's records charged another")
	}
	if end, resting := l.restsUntil(a, now.Add(59*time.Second)); !resting || !end.Equal(now.Add(time.Minute)) {
		t.Errorf("rest until %v (%v), want a minute after the last record", end, resting)
	}
	if _, resting := l.restsUntil(b, now); resting {
		t.Error("a peer that gave nothing rests")
	}
	if l.left(a, now.Add(takeWindow-time.Second)) != 0 || l.left(a, now.Add(takeWindow)) != 3 || !l.take(a, now.Add(takeWindow), 900, false) {
		t.Error("the budget is not whole again when the window is over, or before")
	}

	for i := range maxTakePeers + 10 {
		l.take(peer.ID(fmt.Sprint("sybil", i)), now, 1, false)
	}
	if len(l.peers) > maxTakePeers {
		t.Fatalf("%d peers remembered", len(l.peers))
	}
	later := now.Add(2 * takeWindow)
	l.take(b, later, 1, false)
	if len(l.peers) != 1 || l.left(b, later) != 2 {
		t.Errorf("at the bound, the peers whose window is over were not forgotten: %d remembered", len(l.peers))
	}
}

// When a DIFF must be cut, the admitted origins are listed first (and the
// DIFF stays in origin order); an initiator offers their ids first, and
// asks for the strangers' only within room.
func TestAdmittedOriginsFirst(t *testing.T) {
	byOrig := map[originID][]recID{}
	var last originID
	for i := range maxOrigins + 10 {
		var o originID
		binary.BigEndian.PutUint32(o[:], uint32(i))
		byOrig[o] = []recID{lineID(o[:])}
		last = o
	}
	snap := snapshotOfIDs(byOrig)
	admitted := func(o originID) bool { return o == last }
	if diff := diffWithin(snap, nil, everything(), nil); slices.ContainsFunc(diff, func(e diffEntry) bool { return e.origin == last }) {
		t.Fatal("the last origin listed without priority: the test shows nothing")
	}
	diff := diffWithin(snap, nil, everything(), admitted)
	if len(diff) != maxOrigins || !slices.ContainsFunc(diff, func(e diffEntry) bool { return e.origin == last }) ||
		!slices.IsSortedFunc(diff, func(a, b diffEntry) int { return cmpOrigin(a.origin, b.origin) }) {
		t.Fatalf("a cut DIFF of %d origins: the admitted one missing, or out of order", len(diff))
	}
	if _, err := decodeDiff(encodeDiff(diff)); err != nil {
		t.Fatal(err)
	}

	// The initiator's side: it holds another id of each origin.
	mine := map[originID][]recID{}
	for o := range byOrig {
		mine[o] = []recID{lineID(append(o[:], 'x'))}
	}
	plan := planRequest(snapshotOfIDs(mine), diff[len(diff)-3:], admitted)
	if plan.offer[0] != mine[last][0] {
		t.Error("the admitted origin's id is not offered first")
	}
	want := wantFirst(plan.want, func(id recID) bool { return admitted(plan.origin[id]) }, 1)
	if len(want) != 2 || plan.origin[want[0]] != last {
		t.Errorf("want %d ids, the first of %v; want the admitted one and one stranger's", len(want), plan.origin[want[0]])
	}
}

// A round that skips a resting peer has the round loop run again when the
// rest ends, long before the next interval.
func TestRoundAfterTheRest(t *testing.T) {
	p := newPool(t, mustIdentity(t))
	victim, h := victimAndHostile(t, testutil.NewClock(time.Time{}), mustIdentity(t), p.respondAlwaysMore, func(c *Config) {
		c.Now = time.Now
		c.Params.SyncInterval, c.Params.SyncPeerRest = time.Hour, 200*time.Millisecond
	})
	eventually(t, 10*time.Second, "the victim to see a sync partner", func() bool { return victim.speaksSync(h.ID()) })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	victim.SyncNow(ctx)
	victim.SyncNow(ctx) // skips the resting peer
	if sessions, _ := p.counts(); sessions != 1 {
		t.Fatalf("%d sessions, want 1 and a peer resting", sessions)
	}
	eventually(t, 10*time.Second, "a round once the rest ended", func() bool {
		sessions, _ := p.counts()
		return sessions >= 2
	})
}
