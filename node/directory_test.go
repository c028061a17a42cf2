package node

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"go.uber.org/goleak"

	"github.com/remem/remem/commons"
	"github.com/remem/remem/commons/commonstest"
	"github.com/remem/remem/gossip"
	"github.com/remem/remem/internal/scopes"
	"github.com/remem/remem/internal/testutil"
	"github.com/remem/remem/protocol"
	"github.com/remem/remem/store"
)

// startDirDaemon starts a daemon on loopback in team "t" with no
// bootstrap and no mDNS: the commons at url is all it knows.
func startDirDaemon(t *testing.T, url string) *testDaemon {
	t.Helper()
	return runDaemon(t, DaemonConfig{
		Memory:       Config{Home: t.TempDir(), Create: true, Params: TestnetParams(), Store: store.Options{Small: true}},
		Gossip:       gossip.Config{Teams: []string{"t"}, Listen: []string{"/ip4/127.0.0.1/tcp/0"}, Params: gossip.TestnetParams()},
		Commons:      []string{url},
		CommonsToken: commonstest.Token,
		TeamKeys:     dirTeamKeys,
		SleepEvery:   time.Hour,
	})
}

// TestDaemonsFindEachOtherInTheDirectory: two daemons that share only a
// commons URL and a team find each other through its peer directory
// (SPEC §10 [ext]) and a lesson of one reaches the other on the team
// scope, not through the commons.
func TestDaemonsFindEachOtherInTheDirectory(t *testing.T) {
	// Checked after the commons closes (cleanups run last in, first out),
	// which ends the clients' idle connections.
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	url := commonstest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	topic := dirTopic
	cl := &commons.Client{BaseURL: url, Token: commonstest.Token}

	a := startDirDaemon(t, url)
	defer a.stop(t)
	aID := a.d.Gossip().PeerID()
	testutil.Eventually(t, 10*time.Second, "A listed in the directory", func() bool {
		ais, err := cl.Peers(ctx, topic)
		return err == nil && slices.ContainsFunc(ais, func(ai peer.AddrInfo) bool { return ai.ID == aID })
	})

	start := time.Now()
	b := startDirDaemon(t, url)
	defer b.stop(t)
	testutil.Eventually(t, 10*time.Second, "B connected to A", func() bool { return b.d.Gossip().Connected(aID) })
	connected := time.Since(start)

	rec, err := a.d.Memory().Publish(protocol.KindError, "The nightly deploy fails when the staging database is still migrating")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.d.SleepNow(ctx); err != nil {
		t.Fatal(err)
	}
	held := awaitLesson(t, b, rec.Hash, 15*time.Second)
	received := time.Since(start)
	t.Logf("B started -> connected to A via the directory: %v; -> lesson received: %v (scopes %v)", connected, received, held)
	if !slices.Contains(held, scopes.Team("t")) {
		t.Errorf("the lesson on B has scopes %v, want %s", held, scopes.Team("t"))
	}
	for _, s := range held {
		if scopes.Of(s) == scopes.KindCommons {
			t.Errorf("the lesson reached B through the commons (%s), not the team", s)
		}
	}
	if !b.d.Gossip().Connected(aID) {
		t.Error("B is no longer connected to A")
	}
}
