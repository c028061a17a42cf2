package store

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/remem/remem/protocol"
)

func TestClosedStore(t *testing.T) {
	s, _ := openTest(t)
	s.Close()
	if _, err := s.PutRecords(nil, "s", t0); !errors.Is(err, ErrClosed) {
		t.Errorf("PutRecords on a closed store: %v", err)
	}
	if _, err := s.CountRecords(); !errors.Is(err, ErrClosed) {
		t.Errorf("CountRecords on a closed store: %v", err)
	}
	if _, _, err := s.GetLesson("x"); !errors.Is(err, ErrClosed) {
		t.Errorf("GetLesson on a closed store: %v", err)
	}
}

func TestInMemory(t *testing.T) {
	s, err := Open("", Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	l := signLesson(t, ident(t, 1), lessonText(0), 1, t0)
	if out, err := s.PutRecords([]*protocol.Record{l}, "s", t0); err != nil || out[0] != Added {
		t.Fatalf("%v %v", out, err)
	}
	if n, _ := s.CountRecords(); n != 1 {
		t.Fatal(n)
	}
}

// Readers and writers at once, for the race detector.
func TestConcurrentUse(t *testing.T) {
	s, _ := openTest(t)
	ids := []protocol.Identity{ident(t, 1), ident(t, 2), ident(t, 3), ident(t, 4)}
	var recs [][]*protocol.Record
	for w := range ids {
		var batch []*protocol.Record
		for i := 0; i < 50; i++ {
			batch = append(batch, signLesson(t, ids[w], lessonText(i), int64(w), t0.Add(time.Duration(w)*time.Second)))
		}
		recs = append(recs, batch)
	}
	var wg sync.WaitGroup
	for w := range ids {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := 0; i < len(recs[w]); i += 5 {
				if _, err := s.PutRecords(recs[w][i:i+5], "team/a", t0); err != nil {
					t.Error(err)
				}
				if _, _, err := s.AddEvents([]protocol.Event{{Kind: "note", Text: lessonText(i), Session: string(rune('a' + w))}}, t0); err != nil {
					t.Error(err)
				}
			}
		}()
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				if _, err := s.ForHash(recs[w][i].Hash); err != nil {
					t.Error(err)
				}
				if _, err := s.Hashes(); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if n, _ := s.CountRecords(); n != 200 {
		t.Fatalf("%d records", n)
	}
	if n, _ := s.CountEvents(); n != 40 {
		t.Fatalf("%d events", n)
	}
}
