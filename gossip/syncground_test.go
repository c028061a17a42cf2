package gossip

import (
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/remem/remem/internal/forge"
	"github.com/remem/remem/internal/scopes"
	"github.com/remem/remem/protocol"
)

// groundPair starts a and b, connected and syncing only when asked. Both
// hold a lesson of each of maxOrigins origins that sort before an honest
// one (the keys an attacker would grind to sort first), and a holds the
// honest origin's lesson too; b, back online, lacks it.
func groundPair(t *testing.T) (a, b *tnode, honest *protocol.Record) {
	t.Helper()
	ids := make([]protocol.Identity, maxOrigins+1)
	for i := range ids {
		var seed [32]byte
		binary.BigEndian.PutUint64(seed[:], uint64(i)+1)
		id, err := protocol.NewIdentity(seed[:])
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = id
	}
	slices.SortFunc(ids, func(x, y protocol.Identity) int { return strings.Compare(x.Origin(), y.Origin()) })
	ground := make([]*protocol.Record, maxOrigins)
	for i := range ground {
		ground[i] = lesson(t, ids[i], i)
	}
	honest = lesson(t, ids[maxOrigins], 0)
	noAuto := withParams(func(p *Params) { p.SyncInterval, p.SyncOnConnect = 0, false })
	a = startNode(t, noAuto)
	b = startNode(t, noAuto, withBootstrap(a))
	a.holder.add(scopes.Team("t"), append(slices.Clone(ground), honest)...)
	b.holder.add(scopes.Team("t"), ground...)
	eventually(t, 20*time.Second, "a sync partner", func() bool { return b.speaksSync(a.PeerID()) })
	return a, b, honest
}

// TestCatchUpPastGroundOrigins: maxOrigins origins that sort first do not
// hide an honest origin's lesson from a node back online, whichever side
// starts the session, and the session moves a bucket's worth of summary,
// not one entry per origin.
func TestCatchUpPastGroundOrigins(t *testing.T) {
	a, b, honest := groundPair(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := b.syncWith(ctx, b.teams["t"], a.PeerID()); err != nil {
		t.Fatal(err)
	}
	if !b.holder.has(scopes.Team("t"), honest) {
		t.Fatalf("b holds %d records and not the honest lesson", b.holder.count(scopes.Team("t")))
	}
	s := b.Stats()
	t.Logf("the session moved %d bytes (%d in, %d out) of %d held origins", s.SyncBytesIn+s.SyncBytesOut, s.SyncBytesIn, s.SyncBytesOut, maxOrigins+1)
	if moved := s.SyncBytesIn + s.SyncBytesOut; moved > 64<<10 {
		t.Errorf("moved %d bytes for one lacked lesson", moved)
	}

	// The other way: a offers it to a node that lacks it.
	c := startNode(t, withParams(func(p *Params) { p.SyncInterval, p.SyncOnConnect = 0, false }), withBootstrap(a))
	for _, l := range a.holder.scopes[scopes.Team("t")] {
		if l != honest {
			c.holder.add(scopes.Team("t"), l)
		}
	}
	eventually(t, 20*time.Second, "c a sync partner", func() bool { return a.speaksSync(c.PeerID()) })
	if err := a.syncWith(ctx, a.teams["t"], c.PeerID()); err != nil {
		t.Fatal(err)
	}
	if !c.holder.has(scopes.Team("t"), honest) {
		t.Fatalf("c holds %d records and not the honest lesson", c.holder.count(scopes.Team("t")))
	}
}

// snapshotOfIDs builds a snapshot of ids by origin directly, lines aside.
func snapshotOfIDs(byOrig map[originID][]recID) *snapshot {
	s := &snapshot{keys: map[recID]heldKey{}, byOrig: byOrig}
	s.summarize()
	return s
}

// TestSummaryWindowsCoverABucketOfGroundOrigins: when more than
// maxOrigins origins fall in the bucket of an honest one, successive
// sessions' summaries (through the wire encoding) list windows that tile
// the bucket, so the honest difference is found within a few sessions
// whichever side holds it, and only it is listed.
func TestSummaryWindowsCoverABucketOfGroundOrigins(t *testing.T) {
	const ground = 2*maxOrigins + 100
	shared := map[originID][]recID{}
	for i := range ground {
		var o originID
		binary.BigEndian.PutUint32(o[1:], uint32(i)) // bucket 0, sorting before honest
		shared[o] = []recID{lineID(o[:])}
	}
	for name, honest := range map[string]originID{
		"last":   {0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
		"middle": {0x00, 0x00, 0x00, 0x50, 0x00, 0x00, 0x00, 0x01}, // between ground origins 20480 and 20481, in the second window
	} {
		for _, side := range []string{"responder", "initiator"} {
			with := maps.Clone(shared)
			with[honest] = []recID{lineID([]byte("honest"))}
			without := maps.Clone(shared)
			delete(without, honest)
			ini, resp := snapshotOfIDs(without), snapshotOfIDs(with)
			if side == "initiator" {
				ini, resp = resp, ini
			}
			var w windows
			found := -1
			for session := range 4 {
				if ini.whole == resp.whole {
					t.Fatalf("%s held by the %s: equal whole digests", name, side)
				}
				within := resp.buckets.differing(&ini.buckets)
				sum, next := ini.summaryFrom("t", within, w.from("p"))
				w.set("p", next)
				body := encodeSummary(sum)
				if len(body) > maxSummaryFrame {
					t.Fatalf("summary of %d bytes", len(body))
				}
				got, err := decodeSummary(body)
				if err != nil {
					t.Fatal(err)
				}
				diff := diffWithin(resp, got.entries, got.span(within), nil)
				for _, e := range diff {
					if e.origin != honest {
						t.Fatalf("%s held by the %s, session %d: diff lists %s", name, side, session, e.origin)
					}
					found = session
				}
				if found >= 0 {
					break
				}
			}
			if found < 0 {
				t.Errorf("%s held by the %s: 4 sessions never listed the honest origin", name, side)
			}
		}
	}
}

// TestDecodeRangedSummary: a mode 3 summary round-trips, and one whose
// range ends before it starts, or lists an origin out of it, is refused.
func TestDecodeRangedSummary(t *testing.T) {
	e := func(b byte) summaryEntry { return summaryEntry{origin: originID{b}, originSummary: summaryOf(nil)} }
	ok := summaryMsg{team: "t", full: true, ranged: true, lo: originID{2}, hi: originID{5}, entries: []summaryEntry{e(2), e(5)}}
	got, err := decodeSummary(encodeSummary(ok))
	if err != nil || !got.ranged || got.lo != ok.lo || got.hi != ok.hi || len(got.entries) != 2 {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	if sp := got.span(allBuckets()); sp.has(originID{1}) || !sp.has(originID{3}) || sp.has(originID{6}) {
		t.Error("the span of lo..hi is not lo..hi")
	}
	for name, m := range map[string]summaryMsg{
		"reversed": {team: "t", full: true, ranged: true, lo: originID{5}, hi: originID{2}},
		"below lo": {team: "t", full: true, ranged: true, lo: originID{2}, hi: originID{5}, entries: []summaryEntry{e(1)}},
		"above hi": {team: "t", full: true, ranged: true, lo: originID{2}, hi: originID{5}, entries: []summaryEntry{e(6)}},
	} {
		if _, err := decodeSummary(encodeSummary(m)); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

// TestCatchUpPastAGroundBucket: over real hosts, twice maxOrigins origins
// in the honest origin's own bucket, sorting before it, hide its lesson
// for a few sessions at most: each session's summary lists the next
// window of them. (The ground lines name origins their keys do not
// fingerprint, so no key is ground; the holders never verify them and
// sync never moves them, as both sides hold them.)
func TestCatchUpPastAGroundBucket(t *testing.T) {
	id, err := protocol.GenerateIdentity()
	if err != nil {
		t.Fatal(err)
	}
	honest := lesson(t, id, 0)
	first, _ := parseOrigin(id.Origin())
	updated := protocol.FormatTime(time.Now().Add(-time.Hour))
	var ground []*protocol.Record
	for i := range 2*maxOrigins + 100 {
		o := originID{first[0] &^ 3} // the honest origin's bucket, sorting first in it
		binary.BigEndian.PutUint32(o[1:], uint32(i))
		m := forge.LessonMembers(id, fmt.Sprintf("ground lesson %d", i), updated)
		m["origin"] = protocol.EncodeString(o.String())
		rec, err := protocol.Decode(forge.Sign(id, m))
		if err != nil {
			t.Fatal(err)
		}
		ground = append(ground, rec)
	}
	noAuto := withParams(func(p *Params) { p.SyncInterval, p.SyncOnConnect = 0, false })
	a := startNode(t, noAuto)
	b := startNode(t, noAuto, withBootstrap(a))
	a.holder.add(scopes.Team("t"), append(slices.Clone(ground), honest)...)
	b.holder.add(scopes.Team("t"), ground...)
	eventually(t, 20*time.Second, "a sync partner", func() bool { return b.speaksSync(a.PeerID()) })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sessions := 0
	for ; sessions < 4 && !b.holder.has(scopes.Team("t"), honest); sessions++ {
		if err := b.syncWith(ctx, b.teams["t"], a.PeerID()); err != nil {
			t.Fatal(err)
		}
	}
	s := b.Stats()
	t.Logf("%d sessions moved %d bytes (%d in, %d out)", sessions, s.SyncBytesIn+s.SyncBytesOut, s.SyncBytesIn, s.SyncBytesOut)
	if !b.holder.has(scopes.Team("t"), honest) {
		t.Fatalf("after %d sessions b holds %d records and not the honest lesson", sessions, b.holder.count(scopes.Team("t")))
	}
	if b.holder.count(scopes.Team("t")) != len(ground)+1 || s.SyncRecordsIn != 1 {
		t.Errorf("b holds %d records, received %d by sync; want %d and 1", b.holder.count(scopes.Team("t")), s.SyncRecordsIn, len(ground)+1)
	}
}
