package node

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/remem/remem/store"
)

// holdHome opens the store of a fresh home, as a short command does, and
// returns the home and a function that lets go of it.
func holdHome(t *testing.T) (string, func()) {
	t.Helper()
	home := t.TempDir()
	if _, _, err := InitHome(home); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(home, store.Options{Small: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return home, func() { st.Close() }
}

// TestOpenWaitsForShortHolder: a node starting while `remem lessons` holds
// the home for a moment waits for it instead of exiting.
func TestOpenWaitsForShortHolder(t *testing.T) {
	home, release := holdHome(t)
	time.AfterFunc(300*time.Millisecond, release)
	start := time.Now()
	m, err := Open(Config{Home: home, LockWait: 5 * time.Second})
	if err != nil {
		t.Fatalf("Open while a short command held the home for 300 ms: %v", err)
	}
	m.Close()
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Fatalf("Open returned after %v, before the holder let go", d)
	}
}

// TestOpenGivesUpAfterWait: a holder that does not let go within LockWait
// gives the usual LockedError, not a hang.
func TestOpenGivesUpAfterWait(t *testing.T) {
	home, _ := holdHome(t)
	start := time.Now()
	_, err := Open(Config{Home: home, LockWait: 500 * time.Millisecond})
	var locked *store.LockedError
	if !errors.As(err, &locked) || !strings.Contains(err.Error(), "is in use by process") {
		t.Fatalf("Open of a held home: %v, want the LockedError", err)
	}
	if d := time.Since(start); d < 400*time.Millisecond || d > 3*time.Second {
		t.Fatalf("gave up after %v, want about 500 ms", d)
	}
}

// TestOpenDoesNotWaitForRunningNode: when the holder is the home's running
// node (its pid is in node.json) it will not let go; say so at once.
func TestOpenDoesNotWaitForRunningNode(t *testing.T) {
	home, _ := holdHome(t)
	if err := WriteNodeInfo(home, NodeInfo{API: "127.0.0.1:1", PID: os.Getpid()}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := Open(Config{Home: home, LockWait: 5 * time.Second})
	var locked *store.LockedError
	if !errors.As(err, &locked) {
		t.Fatalf("Open of a home held by its node: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("waited %v for a running node", d)
	}
}

// TestOpenOrDialWaitsForStartingNode: a command that finds the home held by
// a node that does not answer yet (lock taken, API not up) retries until
// the node answers, and then talks to it.
func TestOpenOrDialWaitsForStartingNode(t *testing.T) {
	home, _ := holdHome(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"origin":"0123456789abcdef"}`))
	})}
	defer srv.Close()
	time.AfterFunc(300*time.Millisecond, func() {
		WriteNodeInfo(home, NodeInfo{API: ln.Addr().String(), PID: os.Getpid()})
		go srv.Serve(ln)
	})
	svc, err := OpenOrDial(context.Background(), Config{Home: home}, 5*time.Second)
	if err != nil {
		t.Fatalf("a command while the node starts: %v", err)
	}
	defer svc.Close()
	if _, ok := svc.(*Client); !ok || svc.Origin() != "0123456789abcdef" {
		t.Fatalf("got %T with origin %q, want the node's API", svc, svc.Origin())
	}
}

// TestOpenOrDialGivesUp: nobody answers and nobody lets go: the error names
// the holder and why the API could not be reached.
func TestOpenOrDialGivesUp(t *testing.T) {
	home, _ := holdHome(t)
	_, err := OpenOrDial(context.Background(), Config{Home: home}, 300*time.Millisecond)
	var locked *store.LockedError
	if !errors.As(err, &locked) || !strings.Contains(err.Error(), "no running node") {
		t.Fatalf("OpenOrDial of a held home with no node: %v", err)
	}
}
