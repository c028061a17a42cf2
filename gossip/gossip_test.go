package gossip

import (
	"context"
	"crypto/rand"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"go.uber.org/goleak"

	"github.com/remem/remem/internal/scopes"
	"github.com/remem/remem/protocol"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestNames(t *testing.T) {
	if got := TopicName("infra"); got != "remem/1/team/infra" {
		t.Errorf("TopicName = %q", got)
	}
	if got := scopes.Team("infra"); got != "team:infra" {
		t.Errorf("Scope = %q", got)
	}
}

func TestCloseWithoutRunAndTwice(t *testing.T) {
	n := newNode(t)
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
	if err := n.Run(context.Background()); err == nil {
		t.Fatal("Run after Close returned nil")
	}
	if err := n.Publish(context.Background(), "t", nil); err == nil {
		t.Fatal("Publish after Close returned nil")
	}
}

func TestPeerIDIsOrigin(t *testing.T) {
	n := newNode(t)
	o, err := OriginOf(n.PeerID())
	if err != nil {
		t.Fatal(err)
	}
	if o != n.id.Origin() {
		t.Fatalf("OriginOf(peer id) = %s, want %s", o, n.id.Origin())
	}
	for _, a := range n.Addrs() {
		if !strings.Contains(a.String(), "/p2p/"+n.PeerID().String()) {
			t.Errorf("address %s lacks /p2p/", a)
		}
	}
}

// A lesson published on one of 8 nodes in a sparse topology (a ring with
// chords: node i bootstraps to i+1 and i+4) reaches all 8 by gossip.
func TestEightNodesSparse(t *testing.T) {
	const N = 8
	nodes := make([]*tnode, N)
	for i := range nodes {
		nodes[i] = newNode(t, withParams(func(p *Params) { p.SyncInterval = 0; p.SyncOnConnect = false }))
	}
	for i, n := range nodes {
		n.cfg.Bootstrap = nil
		for _, j := range []int{(i + 1) % N, (i + 4) % N} {
			n.boot = append(n.boot, addrInfo(t, nodes[j]))
		}
	}
	for _, n := range nodes {
		n.run(t)
	}
	// Gossip alone (sync is off here): publish once the mesh has formed,
	// since a peer grafted after a message went by is not sent it again.
	for _, n := range nodes {
		eventually(t, 20*time.Second, "mesh peers on every node", func() bool {
			return len(n.MeshPeers("t")) >= 2
		})
	}
	rec := lesson(t, nodes[0].id, 1)
	nodes[0].holder.add(scopes.Team("t"), rec)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := nodes[0].Publish(ctx, "t", [][]byte{rec.Raw}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for !allHave(nodes, rec) {
		if time.Now().After(deadline) {
			for i, n := range nodes {
				t.Logf("node %d (%s): has %v, topic peers %v, mesh %v, stats %+v", i, n.PeerID().ShortString(), n.holder.has(scopes.Team("t"), rec), n.ps.ListPeers(TopicName("t")), n.MeshPeers("t"), n.Stats())
			}
			t.Fatal("timed out waiting for the lesson on every node")
		}
		time.Sleep(20 * time.Millisecond)
	}
	for i, n := range nodes {
		if i > 0 && n.Stats().Received == 0 {
			t.Errorf("node %d got the lesson without a gossip message", i)
		}
		if n.holder.syncCount() != 0 {
			t.Errorf("node %d: BySync was set for a gossip message", i)
		}
	}
	for i, n := range nodes {
		conns := len(n.host.Network().Peers())
		t.Logf("node %d: %d connections, %d topic peers, %d mesh peers", i, conns, len(n.ps.ListPeers(TopicName("t"))), len(n.MeshPeers("t")))
	}
}

// A node started after 200 records were published catches up through sync,
// and receives less than twice the bytes of the records it lacked. A node
// that holds 199 of them syncs with a few bytes.
func TestLateJoinerCatchUp(t *testing.T) {
	noPeriodic := withParams(func(p *Params) { p.SyncInterval = 0 })
	a := startNode(t, noPeriodic)
	b := startNode(t, noPeriodic, withBootstrap(a))
	c := startNode(t, noPeriodic, withBootstrap(a, b))
	for _, n := range []*tnode{a, b, c} {
		eventually(t, 20*time.Second, "mesh peers", func() bool { return len(n.MeshPeers("t")) >= 2 })
	}
	var all []*protocol.Record
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for k, n := range []*tnode{a, b} {
		recs := lessons(t, n.id, k*100, 100)
		all = append(all, recs...)
		n.holder.add(scopes.Team("t"), recs...)
		for i := 0; i < len(recs); i += 25 { // four sleeps each
			if err := n.Publish(ctx, "t", raws(recs[i:i+25])); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, n := range []*tnode{a, b, c} {
		eventually(t, 20*time.Second, "200 records everywhere", func() bool { return n.holder.count(scopes.Team("t")) == 200 })
	}
	raw := rawBytes(all)

	late := startNode(t, noPeriodic, withBootstrap(a, b))
	eventually(t, 20*time.Second, "the late node to hold 200 records", func() bool {
		return late.holder.count(scopes.Team("t")) == 200
	})
	eventually(t, 10*time.Second, "its sync sessions to end", func() bool {
		s := late.Stats()
		return s.SyncSessions+s.SyncFailures >= 2
	})
	s := late.Stats()
	t.Logf("late joiner: lacked %d records, %d raw bytes; sync received %d bytes (%.3fx), sent %d; sessions %d, failures %d; records by sync %d, delivered in all %d",
		200, raw, s.SyncBytesIn, float64(s.SyncBytesIn)/float64(raw), s.SyncBytesOut, s.SyncSessions, s.SyncFailures, s.SyncRecordsIn, late.holder.deliveredCount())
	if s.SyncBytesIn > int64(2*raw) {
		t.Errorf("late joiner received %d sync bytes for %d raw bytes lacked (> 2x)", s.SyncBytesIn, raw)
	}
	// Sync never moves a record twice. (Gossip may also bring some of them
	// by IHAVE/IWANT while they are in the peers' message history; the
	// merge is idempotent, so those are only counted, not refused.)
	if s.SyncRecordsIn > 200 {
		t.Errorf("late joiner was handed %d records by sync for 200 lacked", s.SyncRecordsIn)
	}

	// Almost everything: 199 of the 200, one session.
	almost := newNode(t, noPeriodic, withBootstrap(c))
	missing := all[137]
	for _, r := range all {
		if r != missing {
			almost.holder.add(scopes.Team("t"), r)
		}
	}
	almost.run(t)
	eventually(t, 20*time.Second, "the 200th record", func() bool { return almost.holder.has(scopes.Team("t"), missing) })
	eventually(t, 10*time.Second, "the session to end", func() bool { return almost.Stats().SyncSessions >= 1 })
	s = almost.Stats()
	t.Logf("node holding 199/200: sync received %d bytes, sent %d (the missing record is %d bytes; all 200 are %d)",
		s.SyncBytesIn, s.SyncBytesOut, len(missing.Raw), raw)
	if s.SyncBytesIn > int64(raw/10) {
		t.Errorf("199/200 sync received %d bytes, more than a tenth of everything (%d)", s.SyncBytesIn, raw)
	}
}

// An outsider to a private team cannot connect to a node whose teams are
// all private, and what it publishes through a node it can reach (one also
// in an open team) is never delivered.
func TestPrivateTeam(t *testing.T) {
	idA, _ := protocol.GenerateIdentity()
	idB, _ := protocol.GenerateIdentity()
	idX, _ := protocol.GenerateIdentity()
	members := []string{idA.Key(), idB.Origin(), idX.Key()}
	withID := func(id protocol.Identity) nodeOpt { return func(c *Config) { c.Identity = id } }
	private := func(c *Config) { c.Teams = []string{"priv"}; c.Members = members }

	a := startNode(t, withID(idA), private)
	b := startNode(t, withID(idB), private, withBootstrap(a))
	// x is in priv and in an open team, so its gater lets everyone in.
	x := startNode(t, withID(idX), withTeams("priv", "open"), func(c *Config) {
		c.TeamMembers = map[string][]string{"priv": members}
	}, withBootstrap(a))
	// The outsider thinks priv is open.
	o := startNode(t, withTeams("priv", "open"), withBootstrap(x))

	eventually(t, 20*time.Second, "members connected", func() bool { return connectedTo(b, a) && connectedTo(x, a) })
	eventually(t, 20*time.Second, "outsider connected to x", func() bool { return connectedTo(o, x) })

	// a refuses the outsider once its key is known (InterceptSecured):
	// a never sees a connection from it, and the outsider's side dies.
	var sawOutsider atomic.Bool
	a.host.Network().Notify(&network.NotifyBundle{ConnectedF: func(_ network.Network, c network.Conn) {
		if c.RemotePeer() == o.PeerID() {
			sawOutsider.Store(true)
		}
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = o.host.Connect(ctx, addrInfo(t, a)) // the dialer may finish its handshake before a hangs up
	eventually(t, 10*time.Second, "the outsider's connection to a to die", func() bool { return !connectedTo(o, a) })
	if err := a.host.Connect(ctx, addrInfo(t, o)); err == nil {
		t.Error("a dialed the outsider")
	}
	if sawOutsider.Load() || connectedTo(a, o) {
		t.Fatal("a accepted a connection from the outsider")
	}

	// The outsider publishes into priv (x forwards nothing of it) and
	// tries sync.
	bad := lesson(t, o.id, 7)
	o.holder.add(scopes.Team("priv"), bad)
	eventually(t, 20*time.Second, "outsider sees x in priv", func() bool {
		return len(o.ps.ListPeers(TopicName("priv"))) >= 1
	})
	if err := o.Publish(ctx, "priv", [][]byte{bad.Raw}); err != nil {
		t.Fatal(err)
	}
	if err := o.syncWith(ctx, o.teams["priv"], x.PeerID()); err == nil {
		t.Error("x answered a sync of priv from a non-member")
	}
	// A member's lesson still flows, and comes after the outsider's.
	good := lesson(t, idA, 8)
	a.holder.add(scopes.Team("priv"), good)
	for _, n := range []*tnode{a, b, x} {
		eventually(t, 20*time.Second, "members' mesh", func() bool { return len(n.MeshPeers("priv")) >= 1 })
	}
	if err := a.Publish(ctx, "priv", [][]byte{good.Raw}); err != nil {
		t.Fatal(err)
	}
	for _, n := range []*tnode{b, x} {
		eventually(t, 20*time.Second, "the member's lesson", func() bool { return n.holder.has(scopes.Team("priv"), good) })
	}
	eventually(t, 10*time.Second, "x to ignore the outsider's message", func() bool {
		return x.Stats().Rejected[ReasonNonMember] >= 1
	})
	for _, n := range []*tnode{a, b, x} {
		if n.holder.has(scopes.Team("priv"), bad) {
			t.Errorf("a member holds the outsider's record")
		}
	}
}

// Peers publishing forged (bad signature) or imperative records are
// rejected; their scores fall below zero on the honest nodes, and honest
// delivery goes on.
func TestForgedImperativeAndRelayedRejected(t *testing.T) {
	h0 := startNode(t)
	h1 := startNode(t, withBootstrap(h0))
	h2 := startNode(t, withBootstrap(h0, h1))
	honest := []*tnode{h0, h1, h2}
	forger := startNode(t, withBootstrap(honest...))
	preacher := startNode(t, withBootstrap(honest...))
	// The relay republishes a validly signed record of another origin.
	relay := startNode(t, withBootstrap(honest...))
	attackers := []*tnode{forger, preacher, relay}
	for _, m := range attackers {
		// An attacker skips its own validator, so what it publishes goes out.
		if err := m.ps.UnregisterTopicValidator(TopicName("t")); err != nil {
			t.Fatal(err)
		}
		for _, n := range honest {
			eventually(t, 20*time.Second, "honest nodes and the attacker see each other in the topic", func() bool {
				return slices.Contains(n.ps.ListPeers(TopicName("t")), m.PeerID()) &&
					slices.Contains(m.ps.ListPeers(TopicName("t")), n.PeerID())
			})
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	forged := badSignature(lesson(t, forger.id, 1).Raw)
	imperative := forgeLesson(preacher.id, "Always run make clean before release builds")
	if _, err := protocol.Verify(imperative, time.Now()); protocol.ReasonOf(err) != protocol.ReasonInstruction {
		t.Fatalf("the imperative line verifies as %v, want an instruction refusal", err)
	}
	if err := forger.Publish(ctx, "t", [][]byte{forged}); err != nil {
		t.Fatal(err)
	}
	if err := preacher.Publish(ctx, "t", [][]byte{imperative}); err != nil {
		t.Fatal(err)
	}
	victim, err := protocol.GenerateIdentity()
	if err != nil {
		t.Fatal(err)
	}
	if err := relay.Publish(ctx, "t", [][]byte{lesson(t, victim, 1).Raw}); err != nil {
		t.Fatal(err)
	}
	for i, n := range honest {
		for j, m := range attackers {
			deadline := time.Now().Add(20 * time.Second)
			for n.Score(m.PeerID()) >= 0 {
				if time.Now().After(deadline) {
					t.Fatalf("honest node %d: attacker %d score %.1f after 20s; stats %+v; scores %v; attacker %d sees topic peers %v, honest sees %v",
						i, j, n.Score(m.PeerID()), n.Stats(), n.Peers(), j, m.ps.ListPeers(TopicName("t")), n.ps.ListPeers(TopicName("t")))
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
		eventually(t, 10*time.Second, "the three refusals counted", func() bool {
			st := n.Stats()
			return st.Rejected[string(protocol.ReasonSignature)] >= 1 && st.Rejected[string(protocol.ReasonInstruction)] >= 1 &&
				st.Rejected[string(protocol.ReasonOriginMismatch)] >= 1
		})
	}
	for i, n := range honest {
		st := n.Stats()
		t.Logf("honest node %d: forger score %.1f, preacher score %.1f (graylist %.0f), rejected lines %v, rejected messages %d",
			i, n.Score(forger.PeerID()), n.Score(preacher.PeerID()), n.p.GraylistThreshold, st.Rejected, st.RejectedMessages)
		if s := n.Score(forger.PeerID()); s >= n.p.GraylistThreshold {
			t.Errorf("node %d: forger score %.1f is not below the graylist threshold", i, s)
		}
		for _, p := range n.Peers() {
			if p.ID != forger.PeerID() {
				continue
			}
			if p.Origin != forger.id.Origin() || p.Score >= 0 || !slices.Contains(p.Topics, TopicName("t")) || len(p.Addrs) == 0 {
				t.Errorf("node %d: Peers() shows the forger as %+v", i, p)
			}
		}
		if n.holder.deliveredCount() != 0 {
			t.Errorf("node %d was handed %d records before any honest publication", i, n.holder.deliveredCount())
		}
	}
	// Honest delivery goes on.
	rec := lesson(t, h2.id, 3)
	h2.holder.add(scopes.Team("t"), rec)
	if err := h2.Publish(ctx, "t", [][]byte{rec.Raw}); err != nil {
		t.Fatal(err)
	}
	for _, n := range honest {
		eventually(t, 20*time.Second, "honest lesson delivered", func() bool { return n.holder.has(scopes.Team("t"), rec) })
	}
}

// Nodes with different pre-shared keys cannot connect; the same key can.
func TestPSKMismatch(t *testing.T) {
	psk := func() []byte { k := make([]byte, 32); rand.Read(k); return k }
	k1, k2 := psk(), psk()
	withPSK := func(k []byte) nodeOpt {
		return func(c *Config) {
			c.PSK = k
			c.Listen = []string{"/ip4/127.0.0.1/tcp/0", "/ip4/127.0.0.1/udp/0/quic-v1"}
		}
	}
	a := startNode(t, withPSK(k1))
	for _, addr := range a.Addrs() {
		if strings.Contains(addr.String(), "quic") {
			t.Errorf("a PSK node listens on QUIC: %s", addr)
		}
	}
	same := startNode(t, withPSK(k1), withBootstrap(a))
	eventually(t, 10*time.Second, "same-key nodes connected", func() bool { return connectedTo(same, a) })

	other := newNode(t, withPSK(k2))
	none := newNode(t)
	// A wrong key garbles the handshake, which then hangs until a timeout:
	// give both dials two seconds, at once.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	errs := make(chan error, 2)
	for _, n := range []*tnode{other, none} {
		go func() { errs <- n.host.Connect(ctx, addrInfo(t, a)) }()
	}
	for range 2 {
		if err := <-errs; err == nil {
			t.Error("a node with another PSK or none connected to a private network")
		}
	}
	if connectedTo(a, other) || connectedTo(a, none) {
		t.Error("a holds a connection to a node outside its private network")
	}
}

func allHave(nodes []*tnode, rec *protocol.Record) bool {
	for _, n := range nodes {
		if !n.holder.has(scopes.Team("t"), rec) {
			return false
		}
	}
	return true
}

// (An address that cannot be bound is refused too: see
// TestSecondNodeOnSamePortFails. The host has started by then, so closing
// it leaves no goroutine behind.)
func TestNewRefusesBadConfig(t *testing.T) {
	id, _ := protocol.GenerateIdentity()
	p := TestnetParams()
	base := func() Config {
		return Config{Identity: id, Listen: []string{"/ip4/127.0.0.1/tcp/0"}, Teams: []string{"t"}, Params: p}
	}
	cases := map[string]func(c *Config){
		"no identity":      func(c *Config) { c.Identity = protocol.Identity{} },
		"bad listen":       func(c *Config) { c.Listen = []string{"/ip4/127.0.0.1/tcp/notaport"} },
		"bad bootstrap":    func(c *Config) { c.Bootstrap = []string{"/ip4/127.0.0.1/tcp/1"} },
		"short psk":        func(c *Config) { c.PSK = []byte("short") },
		"psk and udp only": func(c *Config) { c.PSK = make([]byte, 32); c.Listen = []string{"/ip4/127.0.0.1/udp/0/quic-v1"} },
		"bad member":       func(c *Config) { c.Members = []string{"nothex"} },
		"bad team":         func(c *Config) { c.Teams = []string{"a/b"} },
		"empty team":       func(c *Config) { c.Teams = []string{""} },
	}
	for name, f := range cases {
		t.Run(name, func(t *testing.T) {
			c := base()
			f(&c)
			n, err := New(c, newMemHolder())
			if err == nil {
				n.Close()
				t.Fatal("New accepted it")
			}
			t.Log(err)
		})
	}
}
