package store

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/remem/remem/protocol"
)

func TestPutRecordsOutcomes(t *testing.T) {
	s, _ := openTest(t)
	a := ident(t, 1)
	text := lessonText(0)
	l0 := signLesson(t, a, text, 1, t0)
	l1 := signLesson(t, a, text, 2, t0.Add(time.Hour))
	arr := t0.Add(2 * time.Hour)

	steps := []struct {
		name    string
		rec     *protocol.Record
		scope   string
		arrived time.Time
		want    Outcome
		raw     *protocol.Record
		scopes  []string
	}{
		{"new key", l0, "team/x", arr, Added, l0, []string{"team/x"}},
		{"same bytes, same scope", l0, "team/x", arr.Add(time.Minute), Duplicate, l0, []string{"team/x"}},
		{"same bytes, new scope", l0, "folder", arr.Add(time.Minute), Duplicate, l0, []string{"folder", "team/x"}},
		{"newer version", l1, "commons", arr.Add(2 * time.Minute), Replaced, l1, []string{"commons", "folder", "team/x"}},
		{"older version re-delivered", l0, "gossip", arr.Add(3 * time.Minute), Older, l1, []string{"commons", "folder", "gossip", "team/x"}},
		{"newer again", l1, "gossip", arr.Add(4 * time.Minute), Duplicate, l1, []string{"commons", "folder", "gossip", "team/x"}},
	}
	for _, st := range steps {
		out := mustPut(t, s, []*protocol.Record{st.rec}, st.scope, st.arrived)
		if out[0] != st.want {
			t.Fatalf("%s: outcome %v, want %v", st.name, out[0], st.want)
		}
		h, ok, err := s.Get(l0.SetKey())
		if err != nil || !ok {
			t.Fatalf("%s: Get: %v %v", st.name, ok, err)
		}
		if !bytes.Equal(h.Record.Raw, st.raw.Raw) {
			t.Fatalf("%s: held %s, want %s", st.name, h.Record.Raw, st.raw.Raw)
		}
		if !slices.Equal(h.Scopes, st.scopes) {
			t.Fatalf("%s: scopes %v, want %v", st.name, h.Scopes, st.scopes)
		}
		if !h.Arrived.Equal(arr) {
			t.Fatalf("%s: arrived %v, want the first arrival %v", st.name, h.Arrived, arr)
		}
		if h.Record.Seen != st.raw.Seen || h.Record.Text != text || h.Record.Type != protocol.TypeLesson {
			t.Fatalf("%s: decoded record %+v", st.name, h.Record)
		}
	}

	// An earlier arrival (a clock that went back, or a replay) lowers Arrived.
	mustPut(t, s, []*protocol.Record{l0}, "gossip", t0)
	if h, _, _ := s.Get(l0.SetKey()); !h.Arrived.Equal(t0) {
		t.Fatalf("arrived %v, want the earliest %v", h.Arrived, t0)
	}

	if n, err := s.CountRecords(); err != nil || n != 1 {
		t.Fatalf("CountRecords = %d, %v; want 1", n, err)
	}
	for _, scope := range []string{"commons", "folder", "gossip", "team/x"} {
		in, err := s.InScope(scope)
		if err != nil || len(in) != 1 || !bytes.Equal(in[0].Record.Raw, l1.Raw) {
			t.Fatalf("InScope(%s) = %v, %v", scope, in, err)
		}
	}
	if in, _ := s.InScope("team"); len(in) != 0 {
		t.Fatalf("InScope(team) matched a longer scope: %v", in)
	}
	if _, ok, err := s.Get(protocol.RecordKey{Type: protocol.TypeConfirmation, Origin: a.Origin(), Hash: l0.Hash}); ok || err != nil {
		t.Fatalf("Get of a missing key: %v %v", ok, err)
	}
}

func TestPutRecordsWithinOneBatch(t *testing.T) {
	a := ident(t, 1)
	text := lessonText(1)
	l0 := signLesson(t, a, text, 1, t0)
	l1 := signLesson(t, a, text, 2, t0.Add(time.Hour))
	for _, tc := range []struct {
		name string
		recs []*protocol.Record
		want []Outcome
	}{
		{"old then new", []*protocol.Record{l0, l1}, []Outcome{Added, Replaced}},
		{"new then old", []*protocol.Record{l1, l0}, []Outcome{Added, Older}},
		{"twice", []*protocol.Record{l1, l1}, []Outcome{Added, Duplicate}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := openTest(t)
			out := mustPut(t, s, tc.recs, "team/x", t0)
			if !slices.Equal(out, tc.want) {
				t.Fatalf("outcomes %v, want %v", out, tc.want)
			}
			h, _, _ := s.Get(l0.SetKey())
			if !bytes.Equal(h.Record.Raw, l1.Raw) {
				t.Fatalf("held %s", h.Record.Raw)
			}
		})
	}
}

func TestPutRecordsEqualTimes(t *testing.T) {
	a := ident(t, 1)
	text := lessonText(2)
	x := signLesson(t, a, text, 1, t0)
	y := signLesson(t, a, text, 3, t0)
	hi := x
	if bytes.Compare(y.Raw, x.Raw) > 0 {
		hi = y
	}
	for _, order := range [][]*protocol.Record{{x, y}, {y, x}} {
		s, _ := openTest(t)
		mustPut(t, s, order[:1], "s", t0)
		mustPut(t, s, order[1:], "s", t0)
		h, _, _ := s.Get(x.SetKey())
		if !bytes.Equal(h.Record.Raw, hi.Raw) {
			t.Fatalf("at equal times the higher bytes must win")
		}
	}
}

func TestPutRecordsRefusesBadInput(t *testing.T) {
	s, _ := openTest(t)
	l := signLesson(t, ident(t, 1), lessonText(3), 1, t0)
	if _, err := s.PutRecords([]*protocol.Record{l}, "", t0); err == nil {
		t.Error("empty scope accepted")
	}
	if _, err := s.PutRecords([]*protocol.Record{l}, "a\x00b", t0); err == nil {
		t.Error("scope with NUL accepted")
	}
	if _, err := s.PutRecords([]*protocol.Record{nil}, "s", t0); err == nil {
		t.Error("nil record accepted")
	}
	bad := *l
	bad.Hash = "../x"
	if _, err := s.PutRecords([]*protocol.Record{&bad}, "s", t0); err == nil {
		t.Error("record with a bad hash accepted")
	}
	if n, _ := s.CountRecords(); n != 0 {
		t.Errorf("a refused batch stored %d records", n)
	}
}

// corpus is a set of records with several versions per set key, equal
// timestamps, confirmations and revocations, each with the scope and
// arrival time it comes by.
type arrival struct {
	rec     *protocol.Record
	scope   string
	arrived time.Time
}

func corpus(t testing.TB) []arrival {
	ids := []protocol.Identity{ident(t, 1), ident(t, 2), ident(t, 3), ident(t, 4)}
	scopes := []string{"team/a", "folder", "commons"}
	arrivals := []time.Time{t0.Add(24 * time.Hour), t0.Add(25 * time.Hour), t0.Add(26 * time.Hour)}
	var recs []*protocol.Record
	for h := 0; h < 3; h++ {
		text := lessonText(10 + h)
		hash := protocol.LessonHash(protocol.KindSurprise, text)
		for i, id := range ids {
			// Three versions, two of them at the same time.
			recs = append(recs,
				signLesson(t, id, text, 1, t0),
				signLesson(t, id, text, 2, t0.Add(time.Hour)),
				signLesson(t, id, text, 3, t0.Add(time.Hour)),
			)
			recs = append(recs, signConfirm(t, id, hash, t0.Add(time.Duration(i)*time.Minute)))
			if i%2 == 0 {
				recs = append(recs,
					signRevoke(t, id, hash, t0.Add(2*time.Hour), "wrong"),
					signRevoke(t, id, hash, t0.Add(2*time.Hour), "stale"),
				)
			}
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	out := make([]arrival, len(recs))
	for i, r := range recs {
		out[i] = arrival{r, scopes[rng.IntN(len(scopes))], arrivals[rng.IntN(len(arrivals))]}
	}
	// The same record again by another way, as gossip and a folder both deliver it.
	for i := 0; i < 10; i++ {
		a := out[rng.IntN(len(out))]
		a.scope, a.arrived = scopes[rng.IntN(len(scopes))], arrivals[rng.IntN(len(arrivals))]
		out = append(out, a)
	}
	return out
}

func TestPutRecordsOrderIndependent(t *testing.T) {
	all := corpus(t)
	orders := 200
	if testing.Short() {
		orders = 20
	}
	t.Logf("%d arrivals, %d orders", len(all), orders)
	rng := rand.New(rand.NewPCG(7, 7))
	dir := t.TempDir()
	var want string
	for n := 0; n < orders; n++ {
		order := slices.Clone(all)
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		s, err := Open(filepath.Join(dir, strconv.Itoa(n)), Options{Small: true})
		if err != nil {
			t.Fatal(err)
		}
		// Batches of consecutive arrivals with the same scope and time, of
		// random length, so one key also appears twice in one batch.
		for i := 0; i < len(order); {
			j := i + 1
			limit := 1 + rng.IntN(8)
			for j < len(order) && j-i < limit && order[j].scope == order[i].scope && order[j].arrived.Equal(order[i].arrived) {
				j++
			}
			recs := make([]*protocol.Record, 0, j-i)
			for _, a := range order[i:j] {
				recs = append(recs, a.rec)
			}
			mustPut(t, s, recs, order[i].scope, order[i].arrived)
			i = j
		}
		got := dump(t, s)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			want = got
			continue
		}
		if got != want {
			t.Fatalf("order %d gave other contents:\n%s\nwant:\n%s", n, got, want)
		}
	}
	// Sanity: the winners are the latest versions.
	s, err := Open(filepath.Join(dir, "0"), Options{Small: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n, _ := s.CountRecords()
	if n != 3*(4+4+2) {
		t.Fatalf("%d records held, want %d", n, 3*(4+4+2))
	}
	err = s.Each(func(h Held) error {
		for _, a := range all {
			if a.rec.SetKey() == h.Record.SetKey() && protocol.Supersedes(a.rec, h.Record) {
				t.Errorf("held %s although %s supersedes it", h.Record.Raw, a.rec.Raw)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A revocation is never deleted, and an older lesson line arriving after it
// does not resurrect the lesson; a newer lesson from the same origin does
// (SPEC §8: a revocation counts when its at is not earlier than the lesson).
func TestRevocationTombstone(t *testing.T) {
	s, _ := openTest(t)
	a := ident(t, 1)
	text := "The staging database is reset every night"
	l0 := signLesson(t, a, text, 1, t0)
	t1 := t0.Add(time.Hour)
	rv := signRevoke(t, a, l0.Hash, t1, "the reset was moved to weekends")
	now := t0.Add(48 * time.Hour)
	p := protocol.DefaultStateParams()

	state := func() protocol.State {
		t.Helper()
		held, err := s.ForHash(l0.Hash)
		if err != nil {
			t.Fatal(err)
		}
		recs := make([]*protocol.Record, len(held))
		for i, h := range held {
			recs[i] = h.Record
		}
		return protocol.ComputeState(l0.Hash, recs, now, p, protocol.AdmitAll()).State
	}

	mustPut(t, s, []*protocol.Record{l0}, "team/a", t0.Add(time.Minute))
	if st := state(); st != protocol.StateCandidate {
		t.Fatalf("before the revocation: %s", st)
	}
	mustPut(t, s, []*protocol.Record{rv}, "team/a", t1.Add(time.Minute))
	if st := state(); st != protocol.StateRevoked {
		t.Fatalf("after the revocation: %s", st)
	}
	// The old lesson line is delivered again, by another scope too.
	for _, scope := range []string{"team/a", "folder"} {
		out := mustPut(t, s, []*protocol.Record{l0}, scope, t1.Add(2*time.Minute))
		if out[0] != Duplicate {
			t.Fatalf("re-delivered lesson: %v", out[0])
		}
		if st := state(); st != protocol.StateRevoked {
			t.Fatalf("an old lesson line resurrected a revoked lesson: %s", st)
		}
	}
	// Survives a restart.
	home := s.Home()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var err error
	if s, err = Open(home, Options{Small: true}); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if st := state(); st != protocol.StateRevoked {
		t.Fatalf("after reopening: %s", st)
	}
	// A newer lesson from the same origin un-revokes; the revocation stays held.
	t2 := t1.Add(time.Hour)
	l2 := signLesson(t, a, text, 2, t2)
	if out := mustPut(t, s, []*protocol.Record{l2}, "team/a", t2); out[0] != Replaced {
		t.Fatalf("newer lesson: %v", out[0])
	}
	if st := state(); st != protocol.StateCandidate {
		t.Fatalf("after a newer lesson: %s", st)
	}
	if _, ok, _ := s.Get(rv.SetKey()); !ok {
		t.Fatal("the revocation was dropped")
	}
}

func TestReadViews(t *testing.T) {
	s, _ := openTest(t)
	ids := []protocol.Identity{ident(t, 1), ident(t, 2), ident(t, 3)}
	var hashes []string
	var recs []*protocol.Record
	for h := 0; h < 5; h++ {
		l := signLesson(t, ids[0], lessonText(20+h), 1, t0)
		hashes = append(hashes, l.Hash)
		recs = append(recs, l, signConfirm(t, ids[1], l.Hash, t0.Add(time.Hour)))
		if h == 2 {
			recs = append(recs, signRevoke(t, ids[2], l.Hash, t0.Add(2*time.Hour), ""))
		}
	}
	mustPut(t, s, recs[:6], "team/a", t0)
	mustPut(t, s, recs[6:], "folder", t0)
	slices.Sort(hashes)

	got, err := s.Hashes()
	if err != nil || !slices.Equal(got, hashes) {
		t.Fatalf("Hashes = %v, %v; want %v", got, err, hashes)
	}
	for _, h := range hashes {
		held, err := s.ForHash(h)
		if err != nil {
			t.Fatal(err)
		}
		want := 2
		if h == recs[6].Hash { // the third lesson carries the revocation
			want = 3
		}
		if len(held) != want {
			t.Fatalf("ForHash(%s) = %d records, want %d", h, len(held), want)
		}
		for _, x := range held {
			if x.Record.Hash != h {
				t.Fatalf("ForHash(%s) returned a record about %s", h, x.Record.Hash)
			}
		}
	}
	if held, _ := s.ForHash(hashes[0][:31]); len(held) != 0 {
		t.Fatal("ForHash matched a prefix of a hash")
	}
	var walked []protocol.RecordKey
	if err := s.Each(func(h Held) error { walked = append(walked, h.Record.SetKey()); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(walked) != len(recs) {
		t.Fatalf("Each walked %d, want %d", len(walked), len(recs))
	}
	if !slices.IsSortedFunc(walked, func(a, b protocol.RecordKey) int {
		return bytes.Compare(recordKey(a), recordKey(b))
	}) {
		t.Fatal("Each is not in key order")
	}
	stop := errors.New("stop")
	n := 0
	if err := s.Each(func(Held) error { n++; return stop }); err != stop || n != 1 {
		t.Fatalf("Each did not stop on the callback's error: %v after %d", err, n)
	}
	inA, _ := s.InScope("team/a")
	inF, _ := s.InScope("folder")
	if len(inA) != 6 || len(inF) != len(recs)-6 {
		t.Fatalf("InScope: %d and %d", len(inA), len(inF))
	}
	if c, _ := s.CountRecords(); c != len(recs) {
		t.Fatalf("CountRecords = %d", c)
	}
}

// Each pages through the records and lets the callback use the store.
func TestEachPagesAndReenters(t *testing.T) {
	s, _ := openTest(t)
	id := ident(t, 1)
	var recs []*protocol.Record
	for i := 0; i < 1300; i++ {
		recs = append(recs, signConfirm(t, id, protocol.LessonHash("error", strconv.Itoa(i)), t0))
	}
	mustPut(t, s, recs, "team/a", t0)
	n := 0
	err := s.Each(func(h Held) error {
		n++
		if n%500 == 0 { // a write from inside the walk must not deadlock
			_, err := s.PutRecords([]*protocol.Record{h.Record}, "again", t0)
			return err
		}
		return nil
	})
	if err != nil || n != len(recs) {
		t.Fatalf("Each: %d records, %v", n, err)
	}
}

// A batch bigger than one Badger transaction is journaled, not refused.
func TestPutRecordsHugeBatch(t *testing.T) {
	s, _ := openTest(t)
	ids := []protocol.Identity{ident(t, 1), ident(t, 2)}
	var recs []*protocol.Record
	for i := 0; i < 3000; i++ {
		recs = append(recs, signLesson(t, ids[i%2], lessonText(i), int64(i%5), t0))
	}
	before := journaled.Load()
	out := mustPut(t, s, recs, "commons", t0)
	if journaled.Load() == before {
		t.Fatal("the batch fit one transaction: the test does not test the journal")
	}
	for i, o := range out {
		if o != Added {
			t.Fatalf("record %d: %v", i, o)
		}
	}
	if n, _ := s.CountRecords(); n != len(recs) {
		t.Fatalf("%d records held, want %d", n, len(recs))
	}
	out = mustPut(t, s, recs, "commons", t0)
	if out[len(out)-1] != Duplicate {
		t.Fatalf("second put: %v", out[len(out)-1])
	}
	// Again by another scope, with some records twice: a change that goes
	// through the journal and reads what it gathered itself.
	again := append(slices.Clone(recs), recs[:10]...)
	before = journaled.Load()
	out = mustPut(t, s, again, "team/b", t0.Add(-time.Minute))
	if journaled.Load() == before {
		t.Fatal("the third put fit one transaction: the test does not test the journal")
	}
	for i, o := range out {
		if o != Duplicate {
			t.Fatalf("third put, record %d: %v", i, o)
		}
	}
	if in, err := s.InScope("team/b"); err != nil || len(in) != len(recs) {
		t.Fatalf("%d records in team/b, %v", len(in), err)
	}
	h, ok, err := s.Get(recs[3].SetKey())
	if err != nil || !ok || fmt.Sprint(h.Scopes) != "[commons team/b]" || !h.Arrived.Equal(t0.Add(-time.Minute)) {
		t.Fatalf("record 3: %v %v %v %v", h.Scopes, h.Arrived, ok, err)
	}
}

func TestNoteScope(t *testing.T) {
	s, _ := openTest(t)
	a := ident(t, 1)
	l := signLesson(t, a, lessonText(5), 1, t0)
	if _, err := s.AppendOutbox([]*protocol.Record{l}); err != nil {
		t.Fatal(err)
	}
	if in, _ := s.InScope("team/a"); len(in) != 0 {
		t.Fatal("own record in a scope before it was published there")
	}
	missing := protocol.RecordKey{Type: protocol.TypeLesson, Origin: a.Origin(), Hash: protocol.LessonHash("error", "x")}
	if err := s.NoteScope("team/a", []protocol.RecordKey{l.SetKey(), missing}); err != nil {
		t.Fatal(err)
	}
	in, _ := s.InScope("team/a")
	if len(in) != 1 || !slices.Equal(in[0].Scopes, []string{"local", "team/a"}) {
		t.Fatalf("InScope after NoteScope: %+v", in)
	}
}

func TestRevokedHashes(t *testing.T) {
	s, _ := openTest(t)
	alice, bob := ident(t, 1), ident(t, 2)
	l1 := signLesson(t, alice, lessonText(1), 1, t0)
	l2 := signLesson(t, alice, lessonText(2), 1, t0)
	rv, err := protocol.SignRevocation(bob, l2.Hash, t0.Add(time.Minute), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutRecords([]*protocol.Record{l1, l2, rv}, "team:x", t0); err != nil {
		t.Fatal(err)
	}
	got, err := s.RevokedHashes()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !got[l2.Hash] {
		t.Fatalf("revoked hashes %v, want only %s", got, l2.Hash[:8])
	}
}

// TestForHashUnknown: ForHash answers an unknown hash from the filter of
// what is held, and from a scan before a merge built the filter (a store
// just opened), and still scans for anything that is not a hash.
func TestForHashUnknown(t *testing.T) {
	s, home := openTest(t)
	a, b := ident(t, 1), ident(t, 2)
	l := signLesson(t, a, lessonText(1), 1, t0)
	mustPut(t, s, []*protocol.Record{l, signConfirm(t, b, l.Hash, t0)}, "team/a", t0.Add(time.Minute))
	check := func(s *Store) {
		t.Helper()
		for _, c := range []struct {
			hash string
			want int
		}{{l.Hash, 2}, {lessonText(2), 0}, {"0123456789abcdef0123456789abcdef", 0}, {l.Hash + "/1", 1}, {"", 0}, {l.Hash[:10], 0}} {
			held, err := s.ForHash(c.hash)
			if err != nil || len(held) != c.want {
				t.Fatalf("ForHash(%q): %d records (%v), want %d", c.hash, len(held), err, c.want)
			}
		}
	}
	check(s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ForHash("0123456789abcdef"); !errors.Is(err, ErrClosed) {
		t.Fatalf("ForHash on a closed store: %v", err)
	}
	s2, err := Open(home, Options{Small: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if s2.held.built {
		t.Fatal("the filter is built at open")
	}
	check(s2)
	l2 := signLesson(t, a, lessonText(3), 1, t0)
	mustPut(t, s2, []*protocol.Record{l2}, "team/a", t0)
	check(s2)
	if held, err := s2.ForHash(l2.Hash); err != nil || len(held) != 1 {
		t.Fatalf("ForHash of a hash merged after the filter was built: %d, %v", len(held), err)
	}
}

// TestOldHomeWithHashMarks opens a home as code before the filter of held
// keys left it: besides the records, an h/<hash> mark for every hash some
// record is about (the only difference in layout). The marks are no
// longer read or written; reads, merges and the hash listing are as on a
// new home.
func TestOldHomeWithHashMarks(t *testing.T) {
	s, home := openTest(t)
	a, b := ident(t, 1), ident(t, 2)
	l1 := signLesson(t, a, lessonText(1), 1, t0)
	l2 := signLesson(t, b, lessonText(2), 1, t0)
	old := []*protocol.Record{l1, signConfirm(t, b, l1.Hash, t0), l2}
	mustPut(t, s, old, "team/a", t0)
	err := s.db.Update(func(txn *badger.Txn) error {
		for _, h := range []string{l1.Hash, l2.Hash} {
			if err := txn.Set([]byte("h/"+h), nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(home, Options{Small: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	want := []string{l1.Hash, l2.Hash}
	slices.Sort(want)
	if got, err := s2.Hashes(); err != nil || !slices.Equal(got, want) {
		t.Fatalf("Hashes = %v, %v; want %v", got, err, want)
	}
	l3 := signLesson(t, a, lessonText(3), 1, t0)
	out := mustPut(t, s2, append(old, l3, signConfirm(t, a, l2.Hash, t0)), "team/b", t0)
	if fmt.Sprint(out) != "[duplicate duplicate duplicate added added]" {
		t.Fatalf("outcomes %v", out)
	}
	want = append(want, l3.Hash)
	slices.Sort(want)
	if got, err := s2.Hashes(); err != nil || !slices.Equal(got, want) {
		t.Fatalf("Hashes = %v, %v; want %v", got, err, want)
	}
	for h, n := range map[string]int{l1.Hash: 2, l2.Hash: 2, l3.Hash: 1, "0123456789abcdef": 0} {
		if held, err := s2.ForHash(h); err != nil || len(held) != n {
			t.Fatalf("ForHash(%s) = %d, %v; want %d", h, len(held), err, n)
		}
	}
}

// EachKeyOfHash walks the keys of a hash's records, lessons first and
// revocations last, and stops when asked.
func TestEachKeyOfHash(t *testing.T) {
	s, _ := openTest(t)
	a, b, c := ident(t, 1), ident(t, 2), ident(t, 3)
	l := signLesson(t, a, lessonText(1), 1, t0)
	rev, err := protocol.SignRevocation(c, l.Hash, t0, "")
	if err != nil {
		t.Fatal(err)
	}
	mustPut(t, s, []*protocol.Record{rev, signConfirm(t, b, l.Hash, t0), l}, "team/a", t0.Add(time.Minute))
	var got []protocol.RecordKey
	if err := s.EachKeyOfHash(l.Hash, func(k protocol.RecordKey) bool { got = append(got, k); return true }); err != nil {
		t.Fatal(err)
	}
	want := []protocol.RecordKey{
		{Type: protocol.TypeLesson, Origin: a.Origin(), Hash: l.Hash},
		{Type: protocol.TypeConfirmation, Origin: b.Origin(), Hash: l.Hash},
		{Type: protocol.TypeRevocation, Origin: c.Origin(), Hash: l.Hash},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("keys %v, want %v", got, want)
	}
	n := 0
	if err := s.EachKeyOfHash(l.Hash, func(protocol.RecordKey) bool { n++; return false }); err != nil || n != 1 {
		t.Fatalf("a walk stopped at the first key: %d keys, %v", n, err)
	}
	if err := s.EachKeyOfHash(lessonText(2), func(protocol.RecordKey) bool { t.Fatal("a key of a hash not held"); return false }); err != nil {
		t.Fatal(err)
	}
}
