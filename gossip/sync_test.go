package gossip

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/remem/remem/protocol"
)

func snapshotOf(t *testing.T, recs []*protocol.Record) *snapshot {
	t.Helper()
	n := newNode(t)
	n.holder.add(Scope("t"), recs...)
	s, err := n.snapshot(n.teams["t"])
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSummaryAndDiffRoundTrip(t *testing.T) {
	a, _ := protocol.GenerateIdentity()
	b, _ := protocol.GenerateIdentity()
	c, _ := protocol.GenerateIdentity()
	ra, rb, rc := lessons(t, a, 0, 5), lessons(t, b, 10, 4), lessons(t, c, 20, 3)
	// mine: a (all), b (3 of 4); theirs: a (all), b (all), c.
	mine := snapshotOf(t, append(slices.Clone(ra), rb[:3]...))
	theirs := snapshotOf(t, append(append(slices.Clone(ra), rb...), rc...))

	body := encodeSummary("t", theirs, true)
	sum, err := decodeSummary(body)
	if err != nil || sum.team != "t" || !sum.full || len(sum.entries) != 3 || sum.whole != theirs.whole {
		t.Fatalf("decodeSummary: %+v %v", sum, err)
	}
	// The whole digest alone: different sets, different digests; equal sets, equal.
	lite, err := decodeSummary(encodeSummary("t", theirs, false))
	if err != nil || lite.full || lite.entries != nil || lite.whole != theirs.whole || lite.whole == mine.whole {
		t.Fatalf("whole-digest summary: %+v %v", lite, err)
	}
	if again := snapshotOf(t, append(append(slices.Clone(ra), rb...), rc...)); again.whole != theirs.whole {
		t.Fatal("equal record sets gave different whole digests")
	}
	diff := diffAgainst(mine, sum.entries)
	// a is equal and left out; b differs (my 3 ids); c I lack (0 ids).
	if len(diff) != 2 {
		t.Fatalf("diff has %d origins, want 2", len(diff))
	}
	got := map[string]int{}
	for _, e := range diff {
		got[e.origin.String()] = len(e.ids)
	}
	if got[b.Origin()] != 3 || got[c.Origin()] != 0 {
		t.Errorf("diff %v", got)
	}
	status, back, err := decodeDiff(encodeDiff(diff))
	if err != nil || status != statusOK || len(back) != 2 {
		t.Fatalf("decodeDiff: %d %d %v", status, len(back), err)
	}
	for i := range diff {
		if back[i].origin != diff[i].origin || !slices.Equal(back[i].ids, diff[i].ids) {
			t.Errorf("entry %d changed in the round trip", i)
		}
	}
	status, _, err = decodeDiff([]byte{statusBusy})
	if err != nil || status != statusBusy {
		t.Errorf("busy: %d %v", status, err)
	}
}

func TestDecodeRefusesBadFrames(t *testing.T) {
	var o1, o2 originID
	o1[0], o2[0] = 2, 1
	var id recID
	unsorted := binary.AppendUvarint([]byte{statusOK}, 2)
	unsorted = append(unsorted, o1[:]...)
	unsorted = appendIDs(unsorted, []recID{id})
	unsorted = append(unsorted, o2[:]...)
	unsorted = appendIDs(unsorted, nil)

	tooMany := binary.AppendUvarint([]byte{statusOK}, 1)
	tooMany = append(tooMany, o1[:]...)
	tooMany = binary.AppendUvarint(tooMany, maxOriginIDs+1)

	cases := map[string][]byte{
		"origins out of order":    unsorted,
		"too many ids":            tooMany,
		"truncated":               unsorted[:len(unsorted)-3],
		"trailing bytes":          append(encodeDiff(nil), 0),
		"huge count, short frame": binary.AppendUvarint([]byte{statusOK}, maxOrigins),
	}
	for name, body := range cases {
		if _, _, err := decodeDiff(body); !errors.Is(err, errProtocol) {
			t.Errorf("%s: err %v, want a protocol violation", name, err)
		}
	}
	if _, err := decodeSummary(binary.AppendUvarint(nil, maxTeamLen+1)); !errors.Is(err, errProtocol) {
		t.Errorf("long team name: %v", err)
	}
	if _, err := decodeSummary(append(binary.AppendUvarint(nil, 1), 't', 7)); !errors.Is(err, errProtocol) {
		t.Errorf("unknown summary mode: %v", err)
	}
	if _, err := decodeSummary(append(binary.AppendUvarint(nil, 1), 't', summaryWhole, 1, 2)); !errors.Is(err, errProtocol) {
		t.Errorf("short whole digest: %v", err)
	}
}

// Sync both ways in one session, and only what each side lacks moves.
func TestSyncBothWays(t *testing.T) {
	off := withParams(func(p *Params) { p.SyncInterval = 0; p.SyncOnConnect = false })
	a := startNode(t, off)
	b := startNode(t, off, withBootstrap(a))
	eventually(t, 10*time.Second, "connected", func() bool { return connectedTo(b, a) })
	shared := lessons(t, a.id, 0, 20)
	onlyA := lessons(t, a.id, 20, 3)
	onlyB := lessons(t, b.id, 40, 4)
	a.holder.add(Scope("t"), append(slices.Clone(shared), onlyA...)...)
	b.holder.add(Scope("t"), append(slices.Clone(shared), onlyB...)...)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.syncWith(ctx, b.teams["t"], a.PeerID()); err != nil {
		t.Fatal(err)
	}
	if a.holder.count(Scope("t")) != 27 || b.holder.count(Scope("t")) != 27 {
		t.Fatalf("a holds %d, b holds %d, want 27 each", a.holder.count(Scope("t")), b.holder.count(Scope("t")))
	}
	if a.holder.deliveredCount() != 4 || b.holder.deliveredCount() != 3 {
		t.Errorf("a was handed %d, b %d records; want 4 and 3", a.holder.deliveredCount(), b.holder.deliveredCount())
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
	t.Logf("b: %d bytes in, %d out", b.Stats().SyncBytesIn, b.Stats().SyncBytesOut)

	// Another team is never offered: b is not in team u.
	c := startNode(t, off, withTeams("t", "u"), withBootstrap(a))
	c.holder.add(Scope("u"), lesson(t, c.id, 99))
	eventually(t, 10*time.Second, "connected", func() bool { return connectedTo(c, a) })
	if err := c.syncWith(ctx, c.teams["u"], a.PeerID()); err == nil {
		t.Error("a answered a sync of a team it is not in")
	}
	if a.holder.count(Scope("u")) != 0 {
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
	if !victim.holder.has(Scope("t"), good) || victim.holder.count(Scope("t")) != 1 {
		t.Fatalf("victim holds %d records", victim.holder.count(Scope("t")))
	}
	if victim.Stats().Rejected[string(protocol.ReasonSignature)] != 1 {
		t.Errorf("rejected %v, want one signature refusal", victim.Stats().Rejected)
	}

	evil.host.SetStreamHandler(SyncProtocol, respond([][]byte{unasked}))
	err := victim.syncWith(ctx, victim.teams["t"], evil.PeerID())
	if !errors.Is(err, errProtocol) {
		t.Fatalf("unasked record: err %v, want a protocol violation", err)
	}
	if victim.holder.count(Scope("t")) != 1 {
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
	// The violation above may have closed the connection; dial again.
	if err := victim.host.Connect(ctx, addrInfo(t, evil)); err != nil {
		t.Fatal(err)
	}
	if err := victim.syncWith(ctx, victim.teams["t"], evil.PeerID()); !errors.Is(err, errProtocol) {
		t.Fatalf("huge frame: err %v, want a protocol violation", err)
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
		n.holder.add(Scope("t"), recs...)
		if err := n.Publish(ctx, "t", raws(recs)); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 10*time.Second, "each half to hold its 10", func() bool {
		return b.holder.count(Scope("t")) == 10 && c.holder.count(Scope("t")) == 10
	})
	if connectedTo(c, a) {
		t.Fatal("the cut is not cut")
	}
	for _, g := range gaters {
		g.closed.Store(false)
	}
	for i, n := range nodes {
		eventually(t, 20*time.Second, "every node to hold all 20", func() bool { return n.holder.count(Scope("t")) == 20 })
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
	a.holder.add(Scope("t"), recs...)
	b.holder.add(Scope("t"), recs...)
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
