package node

import (
	"context"
	"fmt"
	"testing"

	"github.com/remem/remem/commons/commonstest"
	"github.com/remem/remem/protocol"
)

// The owner's own pushes never look like a rollback to a commons that
// refuses them (SPEC §10): after revoking its lesson, and after signing
// more records in one second than a file holds, so that the file is cut
// inside that second.
func TestOwnPushesAreNoRollback(t *testing.T) {
	url := commonstest.Start(t)
	clk := newClock() // frozen: every record below is signed in the same second
	m, _ := openTest(t, clk)
	c := m.CommonsClient(url, "tok")
	ctx := context.Background()
	push := func(what string) {
		t.Helper()
		if _, err := m.PushCommons(ctx, c); err != nil {
			t.Fatalf("push %s: %v", what, err)
		}
	}
	var first *protocol.Record
	for i := range 3 {
		rec, err := m.Publish(protocol.KindError, fmt.Sprintf("The mirror build number %d fails after midnight.", i))
		if err != nil {
			t.Fatal(err)
		}
		first = rec
	}
	push("three lessons")
	if _, err := m.Revoke(first.Hash, "it was the proxy"); err != nil {
		t.Fatal(err)
	}
	push("after the revocation")
	for i := 3; i < 900; i++ {
		if _, err := m.Publish(protocol.KindError, fmt.Sprintf("The mirror build number %d fails after midnight.", i)); err != nil {
			t.Fatal(err)
		}
		if i == 400 {
			push("400 lessons of one second")
		}
	}
	lines, left, err := m.FileLines(c.Scope())
	if err != nil || left == 0 {
		t.Fatalf("the file was not cut (%d lines, %d left out, %v): the test tests nothing", len(lines), left, err)
	}
	push("a file cut inside one second")
}
