package store

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/remem/remem/protocol"
)

func seqsOf(evs []StoredEvent) []uint64 {
	var out []uint64
	for _, e := range evs {
		out = append(out, e.Seq)
	}
	return out
}

func TestEvents(t *testing.T) {
	s, home := openTest(t)
	e1 := protocol.Event{Kind: "error", Title: "go test ./...", Happened: "the build failed", Agent: "claude", Session: "s1", Cwd: "/src/app"}
	e2 := protocol.Event{Kind: "correction", Said: "the staging database is reset every night", Agent: "claude", Session: "s1"}
	e3 := protocol.Event{Kind: "note", Text: "deploys are frozen on fridays", Agent: "claude", Session: "s2"}
	e1again := e1
	e1again.Happened = "other words, same dedupe key"

	added, dups, err := s.AddEvents([]protocol.Event{e1, e2, e1again}, t0)
	if err != nil || added != 2 || dups != 1 {
		t.Fatalf("AddEvents = %d, %d, %v; want 2, 1", added, dups, err)
	}
	added, dups, err = s.AddEvents([]protocol.Event{e2, e3}, t0.Add(time.Hour))
	if err != nil || added != 1 || dups != 1 {
		t.Fatalf("AddEvents = %d, %d, %v; want 1, 1", added, dups, err)
	}
	pending, err := s.PendingEvents()
	if err != nil || !slices.Equal(seqsOf(pending), []uint64{1, 2, 3}) {
		t.Fatalf("PendingEvents = %v, %v", seqsOf(pending), err)
	}
	if pending[0].Event != e1 || !pending[0].Received.Equal(t0) || pending[0].Lesson != "" {
		t.Fatalf("event 1 = %+v", pending[0])
	}
	if got, _ := s.Events(t0.Add(time.Minute)); !slices.Equal(seqsOf(got), []uint64{3}) {
		t.Fatalf("Events(since) = %v", seqsOf(got))
	}
	if got, _ := s.Events(t0); !slices.Equal(seqsOf(got), []uint64{1, 2, 3}) {
		t.Fatalf("Events(t0) = %v", seqsOf(got))
	}
	if got, _ := s.Events(time.Time{}); len(got) != 3 {
		t.Fatalf("Events(zero) = %v", seqsOf(got))
	}

	h1 := protocol.LessonHash("error", "go test fails")
	h2 := protocol.LessonHash("surprise", "deploys are frozen on fridays")
	if err := s.AssignEvents([]uint64{1, 3}, h1); err != nil {
		t.Fatal(err)
	}
	if err := s.AssignEvents([]uint64{3}, h2); err != nil { // moved to another lesson
		t.Fatal(err)
	}
	if err := s.AssignEvents([]uint64{2, 99}, h1); err == nil {
		t.Fatal("unknown seq accepted")
	}
	check := func() {
		t.Helper()
		pending, _ := s.PendingEvents()
		of1, _ := s.EventsOf(h1)
		of2, _ := s.EventsOf(h2)
		if !slices.Equal(seqsOf(pending), []uint64{2}) || !slices.Equal(seqsOf(of1), []uint64{1}) || !slices.Equal(seqsOf(of2), []uint64{3}) {
			t.Fatalf("pending %v, of h1 %v, of h2 %v", seqsOf(pending), seqsOf(of1), seqsOf(of2))
		}
		if of1[0].Lesson != h1 || of1[0].Event != e1 {
			t.Fatalf("absorbed event = %+v", of1[0])
		}
	}
	check()

	// Everything survives a restart, and dedupe still holds.
	s.Close()
	s2, err := Open(home, Options{Small: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	s = s2
	check()
	added, dups, _ = s.AddEvents([]protocol.Event{e1, {Kind: "note", Text: "new", Session: "s3"}}, t0.Add(2*time.Hour))
	if added != 1 || dups != 1 {
		t.Fatalf("after reopen: added %d, dups %d", added, dups)
	}
	if n, _ := s.CountEvents(); n != 4 {
		t.Fatalf("CountEvents = %d", n)
	}
	pending, _ = s.PendingEvents()
	if !slices.Equal(seqsOf(pending), []uint64{2, 4}) {
		t.Fatalf("pending after reopen %v (seqs must continue)", seqsOf(pending))
	}
	// Back to pending.
	if err := s.AssignEvents([]uint64{1}, ""); err != nil {
		t.Fatal(err)
	}
	pending, _ = s.PendingEvents()
	of1, _ := s.EventsOf(h1)
	if !slices.Equal(seqsOf(pending), []uint64{1, 2, 4}) || len(of1) != 0 {
		t.Fatalf("pending %v, of h1 %v", seqsOf(pending), seqsOf(of1))
	}
}

// TestAddEventsTooBigCountsOnce: a batch of events too big for one Badger
// transaction goes through the journal, which runs the change again; the
// counts are those of the change that landed (they were once the sum of
// both runs: "taken 10621" for 8,000 events).
func TestAddEventsTooBigCountsOnce(t *testing.T) {
	s, _ := openTest(t)
	const n = 8000
	evs := make([]protocol.Event, n)
	for i := range evs {
		evs[i] = protocol.Event{Kind: "error", Title: "go test ./...", Happened: fmt.Sprintf("the build failed in step %d", i),
			Agent: "claude", Session: fmt.Sprintf("s%d", i)}
	}
	evs = append(evs, evs[:10]...) // ten repeats within the batch
	before := journaled.Load()
	added, dups, err := s.AddEvents(evs, t0)
	if err != nil {
		t.Fatal(err)
	}
	if journaled.Load() == before {
		t.Fatal("the batch fit one transaction: the test does not test the journal")
	}
	if added != n || dups != 10 {
		t.Fatalf("added %d, duplicates %d; want %d and 10", added, dups, n)
	}
	pending, err := s.PendingEvents()
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != n {
		t.Fatalf("%d events pending, want %d", len(pending), n)
	}
}
