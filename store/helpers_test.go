package store

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/remem/remem/protocol"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// openTest opens a small on-disk store in a fresh temporary home.
func openTest(t testing.TB) (*Store, string) {
	t.Helper()
	home := t.TempDir()
	s, err := Open(home, Options{Small: true})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s, home
}

// ident returns a deterministic identity for n.
func ident(t testing.TB, n byte) protocol.Identity {
	t.Helper()
	seed := bytes.Repeat([]byte{n + 1}, 32)
	id, err := protocol.NewIdentity(seed)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func lessonText(n int) string {
	names := []string{"staging", "billing", "search", "metrics", "archive", "payments", "reporting", "auth"}
	return fmt.Sprintf("The %s database in region %d is reset every night", names[n%len(names)], n/len(names))
}

func signLesson(t testing.TB, id protocol.Identity, text string, seen int64, at time.Time) *protocol.Record {
	t.Helper()
	r, err := protocol.SignLesson(id, protocol.LessonDraft{
		Kind: protocol.KindSurprise, Text: text, Seen: seen,
		Strength: protocol.InitialStrength(seen), Updated: at,
	})
	if err != nil {
		t.Fatalf("SignLesson(%q): %v", text, err)
	}
	return r
}

func signConfirm(t testing.TB, id protocol.Identity, hash string, at time.Time) *protocol.Record {
	t.Helper()
	r, err := protocol.SignConfirmation(id, hash, at)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func signRevoke(t testing.TB, id protocol.Identity, hash string, at time.Time, reason string) *protocol.Record {
	t.Helper()
	r, err := protocol.SignRevocation(id, hash, at, reason)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// dump writes every key and value the store holds, one per line.
func dump(t testing.TB, s *Store) string {
	t.Helper()
	var b bytes.Buffer
	err := s.view(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.DefaultIteratorOptions)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			v, err := it.Item().ValueCopy(nil)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, "%q = %q\n", it.Item().Key(), v)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func mustPut(t testing.TB, s *Store, recs []*protocol.Record, scope string, at time.Time) []Outcome {
	t.Helper()
	out, err := s.PutRecords(recs, scope, at)
	if err != nil {
		t.Fatalf("PutRecords: %v", err)
	}
	return out
}
