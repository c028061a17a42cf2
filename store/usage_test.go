package store

import (
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"
	"github.com/remem/remem/protocol"
)

// exactUse sums, per origin, the sizes of the record values the store
// holds, read one by one: what UseOf must say to the byte.
func exactUse(t *testing.T, s *Store) map[string]Use {
	t.Helper()
	by := map[string]Use{}
	err := s.view(func(txn *badger.Txn) error {
		return scanPrefix(txn, []byte(recordKeysPrefix), true, func(k, v []byte) error {
			o := originOfKey(k)
			by[o] = by[o].add(Use{1, int64(len(v))})
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return by
}

func checkUse(t *testing.T, s *Store, when string) {
	t.Helper()
	want := exactUse(t, s)
	got := map[string]Use{}
	if err := s.EachUse(func(o string, u Use) { got[o] = u }); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Errorf("%s: EachUse has %d origins, the store holds records of %d", when, len(got), len(want))
	}
	for o, w := range want {
		u, err := s.UseOf(o)
		if err != nil {
			t.Fatal(err)
		}
		if u != w || got[o] != w {
			t.Errorf("%s: origin %.8s: UseOf %+v, EachUse %+v, held %+v", when, o, u, got[o], w)
		}
	}
}

// TestUsageCountsEveryWrite: the per-origin counts match what is held, to
// the byte, after adds, replacements, new scopes, a batch too big for one
// transaction, Forget, and a reopen that rebuilds them.
func TestUsageCountsEveryWrite(t *testing.T) {
	s, home := openTest(t)
	a, b := ident(t, 1), ident(t, 2)
	l1 := signLesson(t, a, lessonText(1), 1, t0)
	if _, err := s.PutRecords([]*protocol.Record{l1}, "team:x", t0); err != nil {
		t.Fatal(err)
	}
	checkUse(t, s, "first build")
	// A newer version with a longer text, the same record in a new scope,
	// another origin's confirmation.
	l1b := signLesson(t, a, lessonText(1), 2, t0.Add(1e9))
	if _, err := s.PutRecords([]*protocol.Record{l1b, signConfirm(t, b, l1.Hash, t0)}, "team:x", t0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutRecords([]*protocol.Record{l1b}, "folder:/tmp/f", t0); err != nil {
		t.Fatal(err)
	}
	checkUse(t, s, "replaced and rescoped")
	// A batch through the journal.
	before := journaled.Load()
	var big []*protocol.Record
	for i := range 600 {
		big = append(big, signLesson(t, b, lessonText(100+i)+strings.Repeat(" and more", 40), 1, t0))
	}
	if _, err := s.PutRecords(big, "team:x", t0); err != nil {
		t.Fatal(err)
	}
	if journaled.Load() == before {
		t.Fatal("the big batch fit one transaction: make it bigger, so the journal's path is counted too")
	}
	checkUse(t, s, "big batch")
	keys := []protocol.RecordKey{l1b.SetKey(), big[0].SetKey(), big[0].SetKey(), {Hash: strings.Repeat("ab", 32), Type: protocol.TypeLesson, Origin: a.Origin()}}
	n, err := s.Forget(keys)
	if err != nil || n != 2 {
		t.Fatalf("Forget: %d, %v; want 2 held", n, err)
	}
	if _, held, _ := s.Get(l1b.SetKey()); held {
		t.Fatal("a forgotten record is still held")
	}
	for _, sc := range []string{"team:x", "folder:/tmp/f"} {
		in, err := s.InScope(sc)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range in {
			if h.Record.Hash == l1b.Hash && h.Record.Origin == a.Origin() {
				t.Fatalf("scope %s still lists a forgotten record", sc)
			}
		}
	}
	checkUse(t, s, "forget")
	if u, _ := s.UseOf(a.Origin()); u != (Use{}) {
		t.Errorf("origin a holds nothing, UseOf says %+v", u)
	}
	s.Close()
	s2, err := Open(home, Options{Small: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	checkUse(t, s2, "reopened")
}
