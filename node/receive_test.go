package node

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/remem/remem/internal/scopes"
	"github.com/remem/remem/internal/testutil"
	"github.com/remem/remem/protocol"
)

// Scope "local" holds only this memory's records: an import there of
// another memory's export is refused line by line, so those records never
// become "own" (and then go out in this memory's file, where every reader
// would refuse them).
func TestReceiveLocalTakesOnlyOwnRecords(t *testing.T) {
	clk := newClock()
	m, _ := openTest(t, clk)
	if _, err := m.Publish(protocol.KindError, "go vet reports a copied lock in the cache package"); err != nil {
		t.Fatal(err)
	}
	own, err := m.OwnLines("")
	if err != nil {
		t.Fatal(err)
	}
	other := hostileLine(t, "The staging database is wiped every Sunday night", clk.Now())
	rep, err := m.Receive(context.Background(), scopes.Local, protocol.SplitLines(testutil.JoinLines(append(own, other)...)))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Refused) != 1 || rep.Refused[0].Reason != protocol.ReasonOriginMismatch || rep.Refused[0].Line != 2 {
		t.Fatalf("refused %+v: want line 2 refused as another origin's", rep.Refused)
	}
	lines, err := m.OwnLines("")
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 1 {
		t.Fatalf("%d own lines after the import, want 1", len(lines))
	}
}

// One key cannot fill the memory: past MaxOriginRecs in a scope its new
// records are left out, while its revocations and newer versions of held
// records still come in, and other origins are untouched.
func TestReceiveCapsAnOrigin(t *testing.T) {
	clk := newClock()
	m, _ := openTest(t, clk)
	flood, err := protocol.GenerateIdentity()
	if err != nil {
		t.Fatal(err)
	}
	sign := func(i int, at time.Time) []byte {
		rec, err := protocol.SignLesson(flood, protocol.LessonDraft{Kind: protocol.KindError,
			Text: fmt.Sprintf("The mirror build number %d fails after midnight.", i), Seen: 1, Strength: 0.6, Updated: at})
		if err != nil {
			t.Fatal(err)
		}
		return rec.Raw
	}
	at := clk.Now().Add(-time.Hour)
	var lines [][]byte
	for i := range protocol.MaxOriginRecs + 50 {
		lines = append(lines, sign(i, at))
	}
	// Two batches, as gossip would bring them.
	half := protocol.MaxOriginRecs - 10
	var over int
	for _, part := range [][][]byte{lines[:half], lines[half:]} {
		rep, err := m.Receive(context.Background(), "team:x", protocol.SplitLines(testutil.JoinLines(part...)))
		if err != nil {
			t.Fatal(err)
		}
		over += rep.OverCap
	}
	if over != 50 || m.Room("team:x", flood.Origin()) != 0 {
		t.Fatalf("left out %d, room %d; want 50 and 0", over, m.Room("team:x", flood.Origin()))
	}
	held, err := m.store.InScope("team:x")
	if err != nil || len(held) != protocol.MaxOriginRecs {
		t.Fatalf("%d records held in the scope (%v), want %d", len(held), err, protocol.MaxOriginRecs)
	}
	first, _ := protocol.Verify(lines[0], clk.Now())
	rev, err := protocol.SignRevocation(flood, first.Hash, clk.Now(), "")
	if err != nil {
		t.Fatal(err)
	}
	newer := sign(1, at.Add(time.Minute))
	rep, err := m.Receive(context.Background(), "team:x", protocol.SplitLines(testutil.JoinLines([][]byte{rev.Raw, newer}...)))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Accepted != 2 || rep.OverCap != 0 {
		t.Fatalf("revocation and newer version at the cap: %+v", rep)
	}
	// Another origin still has all its room.
	if r := m.Room("team:x", "0123456789abcdef"); r != protocol.MaxOriginRecs {
		t.Fatalf("another origin's room is %d", r)
	}
}
