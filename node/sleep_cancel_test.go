package node

import (
	"context"
	"errors"
	"testing"

	"github.com/remem/remem/internal/testutil"
	"github.com/remem/remem/node/consolidate"
	"github.com/remem/remem/protocol"
)

// cancelAfter is a writer that cancels the sleep once it has written n
// lessons, as Ctrl-C in the middle of `remem sleep` does.
type cancelAfter struct {
	n      int
	cancel context.CancelFunc
	def    consolidate.DefaultWriter
}

func (w *cancelAfter) Write(ctx context.Context, c consolidate.Cluster) (string, error) {
	w.n--
	if w.n == 0 {
		w.cancel()
	}
	return w.def.Write(ctx, c)
}

// TestSleepCancelledKeepsEvents: a sleep cancelled half-way returns the
// cancellation, the lessons it finished hold exactly the events they took,
// every other event stays pending, and the next sleep takes those: no event
// is lost or counted twice.
func TestSleepCancelledKeepsEvents(t *testing.T) {
	m, project := openTest(t, nil)
	gen := testutil.FailureEvents(600, 5)
	evs := make([]protocol.Event, len(gen))
	for i, e := range gen {
		evs[i] = protocol.Event{Kind: "error", Title: e.Title, Happened: e.Happened, Session: "s", Cwd: project}
		evs[i].Title += " #" + string(rune('a'+i%26)) + string(rune('a'+i/26%26)) // no two alike: none dropped as a duplicate
	}
	if rep, err := m.Remember(evs); err != nil || rep.Taken != len(evs) {
		t.Fatalf("remember: %+v %v", rep, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := m.Sleep(WithWriter(ctx, &cancelAfter{n: 3, cancel: cancel, def: consolidate.DefaultWriter{Redact: protocol.RedactRawData}}))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled sleep: %v, want context.Canceled", err)
	}
	seen := func() int64 {
		ls, err := m.store.Lessons()
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		for _, l := range ls {
			n += l.Seen
		}
		return n
	}
	pending, err := m.store.PendingEvents()
	if err != nil {
		t.Fatal(err)
	}
	absorbed := seen()
	if absorbed == 0 || len(pending) == 0 || absorbed+int64(len(pending)) != int64(len(evs)) {
		t.Fatalf("after the cut: lessons hold %d events, %d pending, of %d", absorbed, len(pending), len(evs))
	}
	t.Logf("cancelled after 3 lessons: %d events absorbed, %d pending", absorbed, len(pending))
	rep := sleep(t, m)
	if rep.Events != len(pending) {
		t.Fatalf("the next sleep took %d events, want the %d pending", rep.Events, len(pending))
	}
	if left, _ := m.store.PendingEvents(); len(left) != 0 || seen() != int64(len(evs)) {
		t.Fatalf("after the next sleep: %d pending, lessons hold %d of %d events", len(left), seen(), len(evs))
	}
}
