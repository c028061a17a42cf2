package node

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/control"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"
	"go.uber.org/goleak"

	"github.com/remem/remem/commons"
	"github.com/remem/remem/commons/commonstest"
	"github.com/remem/remem/gossip"
	"github.com/remem/remem/internal/scopes"
	"github.com/remem/remem/internal/testutil"
	"github.com/remem/remem/protocol"
	"github.com/remem/remem/store"
)

// relayOnly is a connection gater that lets a node reach the relay and
// any peer through a relay, and nothing directly: two nodes behind NATs
// that cannot dial each other, on loopback.
type relayOnly struct{ relay peer.ID }

func isCircuitAddr(a ma.Multiaddr) bool {
	_, err := a.ValueForProtocol(ma.P_CIRCUIT)
	return err == nil
}

func (g relayOnly) InterceptPeerDial(peer.ID) bool { return true }
func (g relayOnly) InterceptAddrDial(p peer.ID, a ma.Multiaddr) bool {
	return p == g.relay || isCircuitAddr(a)
}
func (g relayOnly) InterceptAccept(network.ConnMultiaddrs) bool { return true }
func (g relayOnly) InterceptSecured(_ network.Direction, p peer.ID, c network.ConnMultiaddrs) bool {
	return p == g.relay || isCircuitAddr(c.RemoteMultiaddr())
}
func (g relayOnly) InterceptUpgraded(network.Conn) (bool, control.DisconnectReason) { return true, 0 }

// TestPrivateNodesMeetThroughTheCommonsRelay: A and B may not dial each
// other directly (the gater stands for their NATs); both know only the
// commons URL. The commons' libp2p host is a circuit relay; each node
// reserves a slot there and registers its relayed address in the
// directory; B dials A through the relay and receives A's lesson by
// gossip on the team scope, over the relayed connection.
func TestPrivateNodesMeetThroughTheCommonsRelay(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	key, _, err := crypto.GenerateEd25519Key(nil)
	if err != nil {
		t.Fatal(err)
	}
	var dir commons.Registrations // the relay serves the peers registered in the directory
	r, err := gossip.NewRelayHost(gossip.RelayHostConfig{Key: key, Listen: []string{"/ip4/127.0.0.1/tcp/0"}, Serves: dir.Registered})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	url, srv := commonstest.StartServer(t, func(c *commons.ServerConfig) { c.P2P = gossip.HostAddrs(r) })
	dir.Set(srv)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	start := func() *testDaemon { return startPrivate(t, url, r.ID()) }
	t0 := time.Now()
	a := start()
	defer a.stop(t)
	aID := a.d.Gossip().PeerID()
	testutil.Eventually(t, 20*time.Second, "A holding a relayed address", func() bool { return relayed(a.d) })
	topic := dirTopic
	cl := &commons.Client{BaseURL: url, Token: commonstest.Token}
	testutil.Eventually(t, 20*time.Second, "A's relayed address in the directory", func() bool {
		ais, err := cl.Peers(ctx, topic)
		return err == nil && slices.ContainsFunc(ais, func(ai peer.AddrInfo) bool {
			return ai.ID == aID && slices.ContainsFunc(ai.Addrs, isCircuitAddr)
		})
	})
	aReady := time.Since(t0)

	t1 := time.Now()
	b := start()
	defer b.stop(t)
	testutil.Eventually(t, 30*time.Second, "B connected to A", func() bool { return b.d.Gossip().Connected(aID) })
	connected := time.Since(t1)
	awaitTopicPeers(t, a, b)
	for _, p := range b.d.Gossip().Peers() {
		if p.ID == aID && p.Kind() != gossip.ConnRelayed {
			t.Fatalf("B's connection to A is %q, want %q (the gater forbids a direct one): %+v", p.Kind(), gossip.ConnRelayed, p.Conns)
		}
	}

	t2 := time.Now()
	lessonOverRelay(ctx, t, a, b)
	t.Logf("A relayed and listed %v after its start; B connected to A through the relay %v after its start; lesson on B %v after A's sleep (%v after B's start)",
		aReady.Round(time.Millisecond), connected.Round(time.Millisecond), time.Since(t2).Round(time.Millisecond), time.Since(t1).Round(time.Millisecond))
}

// TestARelayServiceNodeFromTheDirectory: no commons host this time; the
// relay is a remem node with RelayService that registered in the
// directory like any member. A and B, gated as behind NATs, find it there,
// reserve a slot on it (AutoRelay takes connected peers that offer a
// relay), and meet through it.
func TestARelayServiceNodeFromTheDirectory(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	url := commonstest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r := runDaemon(t, DaemonConfig{
		Memory: Config{Home: t.TempDir(), Create: true, Params: TestnetParams(), Store: store.Options{Small: true}},
		Gossip: gossip.Config{Teams: []string{"t"}, Listen: []string{"/ip4/127.0.0.1/tcp/0"}, Params: gossip.TestnetParams(),
			RelayService: true, Reachability: gossip.ReachabilityPublic},
		Commons: []string{url}, CommonsToken: commonstest.Token, TeamKeys: dirTeamKeys, SleepEvery: time.Hour,
	})
	defer r.stop(t)
	rID := r.d.Gossip().PeerID()
	t0 := time.Now()
	a := startPrivate(t, url, rID)
	defer a.stop(t)
	testutil.Eventually(t, 30*time.Second, "A holding a relayed address through the relay node", func() bool { return relayed(a.d) })
	aReady := time.Since(t0)
	b := startPrivate(t, url, rID)
	defer b.stop(t)
	aID := a.d.Gossip().PeerID()
	testutil.Eventually(t, 30*time.Second, "B connected to A", func() bool {
		return slices.ContainsFunc(b.d.Gossip().Peers(), func(p gossip.PeerInfo) bool { return p.ID == aID && p.Kind() == gossip.ConnRelayed })
	})
	awaitTopicPeers(t, a, b)
	lessonOverRelay(ctx, t, a, b)
	t.Logf("A relayed through the relay node %v after its start", aReady.Round(time.Millisecond))
}

// startPrivate starts a daemon in team t, with only the commons at url,
// that may dial nothing directly but the relay (relayOnly) and believes
// itself private.
func startPrivate(t *testing.T, url string, relay peer.ID) *testDaemon {
	t.Helper()
	return runDaemon(t, DaemonConfig{
		Memory: Config{Home: t.TempDir(), Create: true, Params: TestnetParams(), Store: store.Options{Small: true}},
		Gossip: gossip.Config{Teams: []string{"t"}, Listen: []string{"/ip4/127.0.0.1/tcp/0"}, Params: gossip.TestnetParams(),
			ConnGater: relayOnly{relay: relay}, Reachability: gossip.ReachabilityPrivate},
		Commons:      []string{url},
		CommonsToken: commonstest.Token,
		TeamKeys:     dirTeamKeys,
		SleepEvery:   time.Hour,
		Logger:       slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo})),
	})
}

func relayed(d *Daemon) bool { return slices.ContainsFunc(d.Gossip().Addrs(), isCircuitAddr) }

// lessonOverRelay: a lesson A publishes reaches B on team t, not through
// the commons, and A's GossipSub message reaches B too.
func lessonOverRelay(ctx context.Context, t *testing.T, a, b *testDaemon) {
	t.Helper()
	rec, err := a.d.Memory().Publish(protocol.KindError, "The nightly deploy fails when the staging database is still migrating")
	if err != nil {
		t.Fatal(err)
	}
	// A GossipSub message counts whether it brought the lesson or came
	// second to a sync round that did (then it is ignored as nothing new).
	messages := func() int { st := b.d.Gossip().Stats(); return st.Received + st.Ignored }
	before := messages()
	if _, err := a.d.SleepNow(ctx); err != nil {
		t.Fatal(err)
	}
	held := awaitLesson(t, b, rec.Hash, 30*time.Second)
	if !slices.Equal(held, []string{scopes.Team("t")}) {
		t.Errorf("the lesson on B has scopes %v, want only %s (gossip over the relay, no commons file)", held, scopes.Team("t"))
	}
	testutil.Eventually(t, 10*time.Second, "A's GossipSub message on B", func() bool { return messages() > before })
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }

// awaitLesson waits until d holds the lesson of hash and returns its
// scopes.
func awaitLesson(t *testing.T, d *testDaemon, hash string, within time.Duration) []string {
	t.Helper()
	var scopes []string
	testutil.Eventually(t, within, "the lesson "+hash[:8]+" on the other node", func() bool {
		views, err := d.d.Memory().Lessons(Filter{All: true})
		if err != nil {
			return false
		}
		for _, v := range views {
			if v.Hash == hash {
				scopes = v.Scopes
				return true
			}
		}
		return false
	})
	return scopes
}

// awaitTopicPeers waits until A and B know each other as peers of the
// team topic (GossipSub's streams over the relayed connection are open),
// so that A's next message goes to B.
func awaitTopicPeers(t *testing.T, a, b *testDaemon) {
	t.Helper()
	aID, bID := a.d.Gossip().PeerID(), b.d.Gossip().PeerID()
	testutil.Eventually(t, 30*time.Second, "A and B in each other's team topic", func() bool {
		in := func(d *Daemon, p peer.ID) bool {
			return slices.ContainsFunc(d.Gossip().Peers(), func(pi gossip.PeerInfo) bool { return pi.ID == p && len(pi.Topics) > 0 })
		}
		return in(b.d, aID) && in(a.d, bID)
	})
}
