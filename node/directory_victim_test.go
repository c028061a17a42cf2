package node

import (
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/record"
	ma "github.com/multiformats/go-multiaddr"

	"github.com/remem/remem/commons"
	"github.com/remem/remem/commons/commonstest"
	"github.com/remem/remem/gossip"
	"github.com/remem/remem/internal/testutil"
	"github.com/remem/remem/store"
)

// victim is a host on loopback that counts the TCP connections made to
// each of its ports (and closes them: it speaks no libp2p).
type victim struct {
	ports   []int
	accepts []atomic.Int64
	lns     []net.Listener
	wg      sync.WaitGroup
}

func startVictim(t *testing.T, n int) *victim {
	t.Helper()
	v := &victim{accepts: make([]atomic.Int64, n)}
	for i := range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		v.lns = append(v.lns, ln)
		v.ports = append(v.ports, ln.Addr().(*net.TCPAddr).Port)
		v.wg.Go(func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				v.accepts[i].Add(1)
				_ = c.Close()
			}
		})
	}
	t.Cleanup(func() {
		for _, ln := range v.lns {
			_ = ln.Close()
		}
		v.wg.Wait()
	})
	return v
}

func (v *victim) total() int64 {
	var n int64
	for i := range v.accepts {
		n += v.accepts[i].Load()
	}
	return n
}

// registerDecoy registers, under a fresh key, a signed peer record whose
// addresses are the victim's ports (from the i-th on, so that decoys
// differ) and two it must never be dialed by: its first port by name and
// on the unspecified address.
func registerDecoy(ctx context.Context, t *testing.T, cl *commons.Client, topic string, v *victim, i int) {
	t.Helper()
	priv, _, err := crypto.GenerateEd25519Key(nil)
	if err != nil {
		t.Fatal(err)
	}
	id, err := peer.IDFromPrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	addrs := []ma.Multiaddr{
		ma.StringCast(fmt.Sprintf("/dns4/localhost/tcp/%d", v.ports[0])),
		ma.StringCast(fmt.Sprintf("/ip4/0.0.0.0/tcp/%d", v.ports[0])),
	}
	for j := range v.ports {
		addrs = append(addrs, ma.StringCast(fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", v.ports[(i+j)%len(v.ports)])))
	}
	rec := peer.PeerRecordFromAddrInfo(peer.AddrInfo{ID: id, Addrs: addrs})
	rec.Seq = 1
	env, err := record.Seal(rec, priv)
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.PutPeer(ctx, env, []string{topic}); err != nil {
		t.Fatal(err)
	}
}

// TestDirectoryDecoysCostTheVictimAFewDials reruns the attack
// (as a member who knows the team key could still mount it): 50
// directory entries under fresh keys, each naming 30 ports of a victim
// (plus the victim by name and on 0.0.0.0), made two honest nodes open
// 2,446 and 3,322 connections to it. Here two daemons run directory rounds
// against a real commons holding first one such entry, then 50: one
// entry costs the victim at most DirectoryAddrsPerPeer connections a round
// from each node; fifty entries naming the same ports cost each port at
// most one connection from each node (an address is dialed for one peer
// a round, and is then in backoff), and the round after costs nothing.
// Never is the victim dialed by name or on 0.0.0.0 (its first port would
// count twice). Meanwhile the daemons find each other in that listing.
func TestDirectoryDecoysCostTheVictimAFewDials(t *testing.T) {
	url := commonstest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const team = "t"
	topic := dirTopic
	cl := &commons.Client{BaseURL: url, Token: commonstest.Token}
	v := startVictim(t, 30)

	start := func() *testDaemon {
		return runDaemon(t, DaemonConfig{
			Memory:       Config{Home: t.TempDir(), Create: true, Params: TestnetParams(), Store: store.Options{Small: true}},
			Gossip:       gossip.Config{Teams: []string{team}, Listen: []string{"/ip4/127.0.0.1/tcp/0"}, Params: gossip.TestnetParams()},
			Commons:      []string{url},
			CommonsToken: commonstest.Token,
			TeamKeys:     dirTeamKeys,
			SleepEvery:   time.Hour,
			NoDirectory:  true, // the test runs the rounds itself
		})
	}
	a, b := start(), start()
	stop := sync.OnceFunc(func() { a.stop(t); b.stop(t) })
	defer stop()
	round := func() int64 {
		t.Helper()
		before := v.total()
		for _, n := range []*testDaemon{a, b} {
			if !n.d.directory(ctx) {
				t.Fatal("a directory round failed")
			}
		}
		return v.total() - before
	}

	registerDecoy(ctx, t, cl, topic, v, 0)
	if got := round(); got < 1 || got > 2*gossip.DirectoryAddrsPerPeer {
		t.Errorf("one decoy entry: the victim saw %d connections in a round of two nodes, want 1 to %d", got, 2*gossip.DirectoryAddrsPerPeer)
	}
	for i := 1; i < 50; i++ {
		registerDecoy(ctx, t, cl, topic, v, i)
	}
	got := round()
	t.Logf("50 decoy entries: the victim saw %d connections in a round of two nodes", got)
	if late := round(); late != 0 {
		t.Errorf("the round after: %d more connections, want none (every port in backoff)", late)
	}
	testutil.Eventually(t, 10*time.Second, "B connected to A through the flooded listing", func() bool {
		return b.d.Gossip().Connected(a.d.Gossip().PeerID())
	})
	stop() // every dial has ended
	for i, p := range v.ports {
		if n := v.accepts[i].Load(); n > 2 {
			t.Errorf("victim port %d took %d connections, want at most one per node", p, n)
		}
	}
	if n := v.total(); n > int64(2*len(v.ports)) {
		t.Errorf("the victim took %d connections in all, want at most %d", n, 2*len(v.ports))
	}
}
