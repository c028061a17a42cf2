package store

import (
	"bytes"
	"strings"
	"testing"

	"github.com/remem/remem/protocol"
)

// Lines gives, for each key, the line Get holds (the newest version), and
// nil for a key never held or forgotten.
func TestLinesAreWhatGetHolds(t *testing.T) {
	s, _ := openTest(t)
	a, b := ident(t, 1), ident(t, 2)
	l1 := signLesson(t, a, lessonText(1), 1, t0)
	l1b := signLesson(t, a, lessonText(1), 2, t0.Add(1e9))
	c := signConfirm(t, b, l1.Hash, t0)
	gone := signLesson(t, b, lessonText(2), 1, t0)
	if _, err := s.PutRecords([]*protocol.Record{l1, c, gone}, "team:x", t0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutRecords([]*protocol.Record{l1b}, "team:y", t0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Forget([]protocol.RecordKey{gone.SetKey()}); err != nil {
		t.Fatal(err)
	}
	never := protocol.RecordKey{Hash: strings.Repeat("cd", 32), Type: protocol.TypeLesson, Origin: a.Origin()}
	keys := []protocol.RecordKey{l1.SetKey(), c.SetKey(), gone.SetKey(), never, l1.SetKey()}
	lines, err := s.Lines(keys)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]byte{l1b.Raw, c.Raw, nil, nil, l1b.Raw}
	for i := range keys {
		if !bytes.Equal(lines[i], want[i]) || (want[i] == nil) != (lines[i] == nil) {
			t.Errorf("key %d: Lines gave %q, want %q", i, lines[i], want[i])
		}
	}
}

// BenchmarkLines: reading 256 lines a sync session sends, by Get (one
// transaction and a decoded record each: what HeldLines did) and by
// Lines (one transaction, no decoding).
func BenchmarkLines(b *testing.B) {
	s, _ := openTest(b)
	id := ident(b, 3)
	var recs []*protocol.Record
	for i := range 256 {
		recs = append(recs, signLesson(b, id, lessonText(i), 1, t0))
	}
	if _, err := s.PutRecords(recs, "team:x", t0); err != nil {
		b.Fatal(err)
	}
	keys := make([]protocol.RecordKey, len(recs))
	for i, r := range recs {
		keys[i] = r.SetKey()
	}
	b.Run("get", func(b *testing.B) {
		for b.Loop() {
			for _, k := range keys {
				if _, _, err := s.Get(k); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("lines", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.Lines(keys); err != nil {
				b.Fatal(err)
			}
		}
	})
}
