package store

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/remem/remem/protocol"
)

// walkAll is every entry of the view index, in its order.
func walkAll(t *testing.T, s *Store) []Ranked {
	t.Helper()
	var out []Ranked
	if err := s.WalkRanked(func(r Ranked) (bool, error) { out = append(out, r); return true, nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// wantRanked is the index the lessons of s should give with window w:
// one entry per lesson, highest rank first, ties by hash.
func wantRanked(t *testing.T, s *Store, w time.Duration) []Ranked {
	t.Helper()
	ls, err := s.Lessons()
	if err != nil {
		t.Fatal(err)
	}
	out := make([]Ranked, 0, len(ls))
	for _, l := range ls {
		out = append(out, Ranked{Hash: l.Hash, Rank: protocol.StrengthRank(l.Strength, l.Updated, w)})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Rank > out[j].Rank })
	return out
}

// TestViewIndexFollowsLessons: on a real Badger, the view index holds one
// entry per lesson at its current rank through writes that raise, decay
// and delete lessons, across a reopen, and is built again for another
// window and for a home written before it existed. (Before the index,
// WalkRanked did not exist; the first version kept a stale entry when a
// batch wrote one lesson twice.)
func TestViewIndexFollowsLessons(t *testing.T) {
	home := t.TempDir()
	const w = 90 * 24 * time.Hour
	s, err := Open(home, Options{Small: true, RankWindow: w})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	var ls []Lesson
	for i := range 300 {
		ls = append(ls, Lesson{Hash: fmt.Sprintf("%064x", i), Kind: "error", Text: lessonText(i),
			Strength: []float64{0.5, 0.75, r.Float64(), 0}[i%4], Updated: t0.Add(time.Duration(r.IntN(1000)) * time.Hour), Own: i%5 == 0})
	}
	if err := s.PutLessons(ls); err != nil {
		t.Fatal(err)
	}
	// One batch writing a lesson twice, then raising and deleting some.
	a, b := ls[7], ls[7]
	a.Strength, b.Strength = 0.9, 0.95
	if err := s.PutLessons([]Lesson{a, b}); err != nil {
		t.Fatal(err)
	}
	for i := 10; i < 20; i++ {
		l := ls[i]
		l.Strength, l.Updated = protocol.Rise(l.Strength), l.Updated.Add(time.Hour)
		if err := s.Commit(Step{Lesson: l}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 30; i < 40; i++ {
		if err := s.DeleteLesson(ls[i].Hash); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := walkAll(t, s), wantRanked(t, s, w); !slices.Equal(got, want) {
		t.Fatalf("the index holds %d entries, not the %d lessons in rank order", len(got), len(want))
	}
	s.Close()

	// Another window: the index is built again, once.
	s, err = Open(home, Options{Small: true, RankWindow: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := walkAll(t, s), wantRanked(t, s, time.Hour); !slices.Equal(got, want) {
		t.Fatalf("after a new window the index has %d entries out of order (want %d)", len(got), len(want))
	}
	// A home from before the index: no meta, no entries.
	if err := s.DeleteMeta(viewIndexMetaKey); err != nil {
		t.Fatal(err)
	}
	if err := s.db.DropPrefix([]byte(rankPrefix), []byte(rankOfPrefix), []byte(originPrefix)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = Open(home, Options{Small: true, RankWindow: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, want := walkAll(t, s), wantRanked(t, s, time.Hour); !slices.Equal(got, want) || len(want) != 290 {
		t.Fatalf("an old home's index has %d entries (want %d)", len(got), len(want))
	}
	// The walk stops when asked.
	n := 0
	if err := s.WalkRanked(func(Ranked) (bool, error) { n++; return n < 3, nil }); err != nil || n != 3 {
		t.Fatalf("a walk asked to stop after 3 read %d (%v)", n, err)
	}
}

// TestHashesOf: the origin index names each hash an origin holds any record
// of, kept by the merge and built for a home from before it.
func TestHashesOf(t *testing.T) {
	s, home := openTest(t)
	alice, bob := ident(t, 1), ident(t, 2)
	l1, l2 := signLesson(t, alice, lessonText(1), 1, t0), signLesson(t, bob, lessonText(2), 1, t0)
	recs := []*protocol.Record{l1, l2, signConfirm(t, bob, l1.Hash, t0), signRevoke(t, alice, l2.Hash, t0, "wrong")}
	if _, err := s.PutRecords(recs, "team:x", t0); err != nil {
		t.Fatal(err)
	}
	// The same records again, by another scope, change nothing.
	if _, err := s.PutRecords(recs, "team:y", t0); err != nil {
		t.Fatal(err)
	}
	check := func() {
		t.Helper()
		want := map[string][]string{alice.Origin(): sortedSet([]string{l1.Hash, l2.Hash}), bob.Origin(): sortedSet([]string{l1.Hash, l2.Hash}), ident(t, 3).Origin(): nil}
		for o, hs := range want {
			got, err := s.HashesOf(o)
			if err != nil || !slices.Equal(got, hs) {
				t.Errorf("HashesOf(%s) = %v, %v; want %v", o[:8], got, err, hs)
			}
		}
	}
	check()
	if err := s.DeleteMeta(viewIndexMetaKey); err != nil {
		t.Fatal(err)
	}
	if err := s.db.DropPrefix([]byte(originPrefix)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	var err error
	if s, err = Open(home, Options{Small: true}); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	check()
}

// FuzzRankKey: any bytes parse as a v/ key or are refused without a
// panic, and a key made from a rank and a hash reads back as them, in an
// order that puts higher ranks first.
func FuzzRankKey(f *testing.F) {
	f.Add([]byte("v/\x00\x00\x00\x00\x00\x00\x00\x00ab"), 0.5, -3.0, "ab")
	f.Add([]byte("v/"), math.Inf(-1), 460.0, "")
	f.Fuzz(func(t *testing.T, raw []byte, a, b float64, hash string) {
		if rank, h, ok := parseRankKey(raw); ok {
			back := rankKey(rankBytes(rank), h)
			if !math.IsNaN(rank) && !bytes.Equal(back, raw) {
				t.Fatalf("%q read as %v %q writes back as %q", raw, rank, h, back)
			}
		}
		if math.IsNaN(a) || math.IsNaN(b) || hash == "" {
			return
		}
		ka, kb := rankKey(rankBytes(a), hash), rankKey(rankBytes(b), hash)
		ra, ha, ok := parseRankKey(ka)
		if !ok || ha != hash || (ra != a && !(ra == 0 && a == 0)) {
			t.Fatalf("rank %v hash %q read back as %v %q %v", a, hash, ra, ha, ok)
		}
		if a > b && bytes.Compare(ka, kb) >= 0 {
			t.Fatalf("rank %v does not sort before %v", a, b)
		}
	})
}

// TestWalkRankedRefusesCorruptKeys: a v/ key too short to hold a rank and
// a hash is an error of the walk, never a panic or a lesson.
func TestWalkRankedRefusesCorruptKeys(t *testing.T) {
	s, _ := openTest(t)
	if err := s.PutLesson(Lesson{Hash: "ab", Kind: "error", Text: lessonText(1), Strength: 0.5, Updated: t0}); err != nil {
		t.Fatal(err)
	}
	if err := s.update(func(w *writer) error { return w.set([]byte("v/\x01\x02"), nil) }); err != nil {
		t.Fatal(err)
	}
	err := s.WalkRanked(func(Ranked) (bool, error) { return true, nil })
	if err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Fatalf("a corrupt index key gave %v", err)
	}
}

// TestForgetDropsOriginIndex: evicting an origin's records (Forget) drops
// its g/ entry for a hash once it holds no record of it, so the index of
// strangers' records leaves with them and cannot outgrow the strangers'
// budget.
func TestForgetDropsOriginIndex(t *testing.T) {
	s, _ := openTest(t)
	a := ident(t, 1)
	l := signLesson(t, a, lessonText(1), 1, t0)
	rv := signRevoke(t, a, l.Hash, t0.Add(time.Minute), "wrong")
	other := signLesson(t, a, lessonText(2), 1, t0)
	if _, err := s.PutRecords([]*protocol.Record{l, rv, other}, "team:x", t0); err != nil {
		t.Fatal(err)
	}
	hashes := func() []string {
		t.Helper()
		hs, err := s.HashesOf(a.Origin())
		if err != nil {
			t.Fatal(err)
		}
		return hs
	}
	if _, err := s.Forget([]protocol.RecordKey{l.SetKey()}); err != nil {
		t.Fatal(err)
	}
	if got := hashes(); !slices.Contains(got, l.Hash) {
		t.Fatalf("the revocation is still held, yet the origin's hash left the index: %v", got)
	}
	if _, err := s.Forget([]protocol.RecordKey{rv.SetKey(), other.SetKey()}); err != nil {
		t.Fatal(err)
	}
	if got := hashes(); len(got) != 0 {
		t.Fatalf("after every record of the origin was forgotten the index still names %v", got)
	}
}
