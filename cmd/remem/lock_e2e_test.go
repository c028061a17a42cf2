package main

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/remem/remem/store"
)

// holdFor opens the store of home from this test process, as a short
// `remem` command does, and lets go after d.
func holdFor(t *testing.T, home string, d time.Duration) {
	t.Helper()
	st, err := store.Open(home, store.Options{Small: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	time.AfterFunc(d, func() { st.Close() })
}

// TestNodeWaitsForShortCommand: `remem node` started while a short command
// holds the home (a script polling nodes as they start) waits for it
// instead of exiting.
func TestNodeWaitsForShortCommand(t *testing.T) {
	home := t.TempDir()
	must(t, home, nil, "init")
	holdFor(t, home, 300*time.Millisecond)
	p := startNode(t, home)
	p.stop(t)
}

// TestCommandWaitsForShortCommand: a command that finds the home held by
// another short command, with no node to ask, waits for it.
func TestCommandWaitsForShortCommand(t *testing.T) {
	home := t.TempDir()
	must(t, home, nil, "init")
	holdFor(t, home, 300*time.Millisecond)
	must(t, home, nil, "lessons", "--json")
}

// TestSecondNodeRefusedAtOnce: a home held by its running node is not
// waited for; the second node says who holds it.
func TestSecondNodeRefusedAtOnce(t *testing.T) {
	home := t.TempDir()
	p := startNode(t, home)
	defer p.stop(t)
	start := time.Now()
	_, errOut, code := run(t, home, nil, "node", "--mdns=false", "--api", "127.0.0.1:0")
	if code == 0 || !strings.Contains(errOut, "is in use by process "+strconv.Itoa(p.cmd.Process.Pid)) {
		t.Fatalf("a second node on a held home: exit %d, %s", code, errOut)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("the second node took %v to give up on a home its node holds", d)
	}
}
