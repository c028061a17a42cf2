package node

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/remem/remem/gossip"
	"github.com/remem/remem/internal/testutil"
	"github.com/remem/remem/protocol"
	"github.com/remem/remem/store"
)

// testDaemon is one node running in this process on loopback.
type testDaemon struct {
	d      *Daemon
	cancel context.CancelFunc
	done   chan error
}

func startDaemon(t *testing.T, home string, bootstrap []string) *testDaemon {
	t.Helper()
	return runDaemon(t, DaemonConfig{
		Memory: Config{Home: home, Create: true, Params: TestnetParams(), Store: store.Options{Small: true}, Admission: Admission{All: true}},
		Gossip: gossip.Config{Teams: []string{"t"}, Listen: []string{"/ip4/127.0.0.1/tcp/0"}, Bootstrap: bootstrap,
			Params: gossip.TestnetParams()},
		SleepEvery: time.Hour,
	})
}

// runDaemon starts a daemon of cfg and waits until it is ready.
func runDaemon(t *testing.T, cfg DaemonConfig) *testDaemon {
	t.Helper()
	ready := make(chan struct{})
	cfg.Ready = func(*Daemon) { close(ready) }
	d, err := NewDaemon(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	td := &testDaemon{d: d, cancel: cancel, done: make(chan error, 1)}
	go func() { td.done <- d.Run(ctx) }()
	select {
	case <-ready:
	case err := <-td.done:
		t.Fatalf("daemon stopped at start: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("daemon did not start")
	}
	return td
}

func (td *testDaemon) stop(t *testing.T) {
	t.Helper()
	td.cancel()
	select {
	case err := <-td.done:
		if err != nil {
			t.Errorf("daemon stopped with %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Error("daemon did not stop")
	}
}

func (td *testDaemon) addr() string { return td.d.Gossip().Addrs()[0].String() }

func stateOn(m *Memory, hash string) protocol.State {
	views, err := m.Lessons(Filter{All: true})
	if err != nil {
		return ""
	}
	for _, v := range views {
		if v.Hash == hash {
			return v.State
		}
	}
	return ""
}

// TestDaemonsConfirmRevokeRestart runs four daemons on loopback in a line:
// a lesson reaches every node, three confirmations travel back and every
// node computes common, the origin's revocation removes it everywhere, and
// a restarted node keeps its state.
func TestDaemonsConfirmRevokeRestart(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	homes := make([]string, 4)
	nodes := make([]*testDaemon, 4)
	for i := range nodes {
		homes[i] = t.TempDir()
		var boot []string
		if i > 0 {
			boot = []string{nodes[i-1].addr()}
		}
		nodes[i] = startDaemon(t, homes[i], boot)
	}
	ctx := context.Background()
	origin := nodes[0].d.Memory()
	text := "The release build fails when the changelog has no entry for the version"
	rec, err := origin.Publish(protocol.KindError, text)
	if err != nil {
		t.Fatal(err)
	}
	nodes[0].d.SleepNow(ctx) // publishes the outbox
	for _, n := range nodes {
		testutil.Eventually(t, 30*time.Second, "the lesson on every node", func() bool { return stateOn(n.d.Memory(), rec.Hash) != "" })
	}
	// Three other memories meet the surprise and confirm.
	var wg sync.WaitGroup
	for _, n := range nodes[1:] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := n.d.Memory()
			// In a project the memory opted in: a confirmation is published.
			if _, err := m.Share(ProjectShare{Project: m.Home()}); err != nil {
				t.Error(err)
			}
			m.Remember([]protocol.Event{{Kind: "error", Title: "release build", Happened: "the release build fails when the changelog has no entry for the version", Session: m.Origin(), Cwd: m.Home()}})
			n.d.SleepNow(ctx)
		}()
	}
	wg.Wait()
	for _, n := range nodes {
		testutil.Eventually(t, 30*time.Second, "common on every node", func() bool { return stateOn(n.d.Memory(), rec.Hash) == protocol.StateCommon })
	}
	p, err := origin.Show(rec.Hash)
	if err != nil || len(p.Confirmers) != 3 {
		t.Fatalf("the origin lists confirmers %v (%v)", p.Confirmers, err)
	}
	if _, err := origin.Revoke(rec.Hash, "fixed"); err != nil {
		t.Fatal(err)
	}
	nodes[0].d.SleepNow(ctx)
	for _, n := range nodes {
		testutil.Eventually(t, 30*time.Second, "revoked on every node", func() bool { return stateOn(n.d.Memory(), rec.Hash) == protocol.StateRevoked })
	}
	// Restart the last node on its home: the state survives.
	nodes[3].stop(t)
	nodes[3] = startDaemon(t, homes[3], []string{nodes[2].addr()})
	if got := stateOn(nodes[3].d.Memory(), rec.Hash); got != protocol.StateRevoked {
		t.Fatalf("after a restart the lesson is %q", got)
	}
	if _, err := os.Stat(filepath.Join(homes[3], LessonsFile)); err != nil {
		t.Errorf("lessons.jsonl: %v", err)
	}
	for _, n := range nodes {
		n.stop(t)
	}
}

// TestDaemonCloseWithoutRun: a daemon that is built but never run (its
// caller failed on a later step) releases the home's lock, the store and
// the gossip host when closed, and Close is idempotent; Run after a stop
// closes by itself, so a Close after it does nothing more.
func TestDaemonCloseWithoutRun(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	home := t.TempDir()
	d, err := NewDaemon(DaemonConfig{
		Memory: Config{Home: home, Create: true, Store: store.Options{Small: true}},
		Gossip: gossip.Config{Teams: []string{"t"}, Listen: []string{"/ip4/127.0.0.1/tcp/0"}, Params: gossip.TestnetParams()},
	})
	if err != nil {
		t.Fatal(err)
	}
	var locked *store.LockedError
	if m, err := Open(Config{Home: home}); err == nil {
		m.Close()
		t.Fatal("a second memory opened the home a daemon holds")
	} else if !errors.As(err, &locked) {
		t.Fatalf("opening a held home: %v, want a LockedError", err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
	m, err := Open(Config{Home: home})
	if err != nil {
		t.Fatalf("the home after Close: %v", err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
}
