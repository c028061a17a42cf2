package store

import (
	"fmt"
	"testing"

	"github.com/dgraph-io/badger/v4"
)

// hugeOps is a change far bigger than one transaction of a small store.
func hugeOps(n int) []op {
	ops := make([]op, n)
	for i := range ops {
		ops[i] = op{key: fmt.Appendf(nil, "m/t%06d", i), val: make([]byte, 600)}
	}
	return ops
}

// A journal whose mark landed is finished at the next open, as if the
// process had been killed while applying it; one whose mark never landed
// leaves nothing.
func TestJournalReplayAtOpen(t *testing.T) {
	home := t.TempDir()
	s, err := Open(home, Options{Small: true})
	if err != nil {
		t.Fatal(err)
	}
	ops := hugeOps(3000)
	write := func(id uint64, mark bool) {
		b := &batch{db: s.db}
		for i, p := range encodeOps(ops) {
			if err := b.set(journalPart(id, uint32(i)), p); err != nil {
				t.Fatal(err)
			}
		}
		if mark {
			if err := b.set(journalMark(id), nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.flush(); err != nil {
			t.Fatal(err)
		}
	}
	write(7, true)  // killed after the mark, before the apply
	write(8, false) // killed before the mark
	ops = append(ops[:0:0], op{key: []byte("m/unmarked"), val: []byte("x")})
	write(8, false)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(home, Options{Small: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n := 0
	err = s.db.View(func(txn *badger.Txn) error {
		if err := scanPrefix(txn, []byte("j/"), false, func(k, _ []byte) error { n++; return nil }); err != nil {
			return err
		}
		for _, k := range []string{"m/t000000", "m/t002999"} {
			if _, ok, err := getIn(txn, []byte(k)); err != nil || !ok {
				return fmt.Errorf("%s not applied (%v)", k, err)
			}
		}
		if _, ok, _ := getIn(txn, []byte("m/unmarked")); ok {
			return fmt.Errorf("an unmarked journal was applied")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("%d journal keys left after open", n)
	}
}

// An update too big for a transaction sees its own writes while gathered,
// and lands whole.
func TestUpdateTooBigLandsWhole(t *testing.T) {
	// Tiny stores (a simulated network's) fit even less in a transaction.
	for name, opts := range map[string]Options{"small": {Small: true}, "tiny": {Tiny: true}} {
		t.Run(name, func(t *testing.T) { updateTooBigLandsWhole(t, opts) })
	}
}

func updateTooBigLandsWhole(t *testing.T, opts Options) {
	s, err := Open(t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	before := journaled.Load()
	var last uint64
	err = s.update(func(w *writer) error {
		for _, o := range hugeOps(3000) {
			if err := w.set(o.key, o.val); err != nil {
				return err
			}
		}
		var err error
		last, err = w.next("t")
		if err != nil {
			return err
		}
		last, err = w.next("t")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if journaled.Load() == before {
		t.Fatal("the change fit one transaction: the test does not test the journal")
	}
	if last != 2 {
		t.Fatalf("the gathered writer did not see its own write: counter %d", last)
	}
	err = s.db.View(func(txn *badger.Txn) error {
		n := 0
		if err := scanPrefix(txn, []byte("m/t"), false, func(k, _ []byte) error { n++; return nil }); err != nil {
			return err
		}
		if n != 3000 {
			return fmt.Errorf("%d of 3000 writes landed", n)
		}
		return scanPrefix(txn, []byte("j/"), false, func(k, _ []byte) error { return fmt.Errorf("journal key %q left", k) })
	})
	if err != nil {
		t.Fatal(err)
	}
}

// FuzzDecodeOps: a journal part cut or garbled by a crash or a disk fault
// gives an error, never a panic, and what encodeOps wrote decodes back.
func FuzzDecodeOps(f *testing.F) {
	f.Add(encodeOps(hugeOps(3))[0])
	f.Add([]byte{0, 5, 'a'})
	f.Add([]byte{1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, part []byte) {
		ops, err := decodeOps([][]byte{part})
		if err != nil {
			return
		}
		again, err := decodeOps(encodeOps(ops))
		if err != nil || len(again) != len(ops) {
			t.Fatalf("re-encoded %d ops decode to %d (%v)", len(ops), len(again), err)
		}
	})
}
