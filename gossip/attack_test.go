package gossip

import (
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	lp2pproto "github.com/libp2p/go-libp2p/core/protocol"
	cmgr "github.com/libp2p/go-libp2p/p2p/net/connmgr"
	"github.com/libp2p/go-libp2p/p2p/protocol/ping"
	"github.com/libp2p/go-libp2p/p2p/transport/tcp"
	ma "github.com/multiformats/go-multiaddr"

	"github.com/remem/remem/internal/hostile"
	"github.com/remem/remem/internal/scopes"
	"github.com/remem/remem/protocol"
)

// Attacks on a node's capacity: throwaway identities that hold sync slots,
// stream and connection floods, and a second node on the same port.

// rawHost is an attacker's throwaway identity: a bare libp2p host on
// loopback with a fresh Ed25519 key and no resource limits of its own.
func rawHost(t testing.TB) host.Host {
	t.Helper()
	id, err := protocol.GenerateIdentity()
	if err != nil {
		t.Fatal(err)
	}
	priv, err := crypto.UnmarshalEd25519PrivateKey(id.Private)
	if err != nil {
		t.Fatal(err)
	}
	h, err := libp2p.New(libp2p.Identity(priv), libp2p.NoListenAddrs,
		libp2p.Transport(tcp.NewTCPTransport),
		libp2p.ResourceManager(&network.NullResourceManager{}),
		libp2p.DisableMetrics())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

func withID(id protocol.Identity) nodeOpt { return func(c *Config) { c.Identity = id } }

// stallSync opens sync streams to p one after the other until ctx ends:
// each sends nothing, or (summary) the full summary of an empty scope of
// team, and then waits, reading nothing, until the node cuts it.
func stallSync(ctx context.Context, h host.Host, p peer.ID, team string, summary bool) {
	for ctx.Err() == nil {
		s, err := h.NewStream(ctx, p, SyncProtocol)
		if err != nil {
			select {
			case <-ctx.Done():
			case <-time.After(50 * time.Millisecond):
			}
			continue
		}
		stop := context.AfterFunc(ctx, func() { s.Reset() })
		if summary {
			c := newConn(s)
			if c.writeFrame(encodeSummary(summaryMsg{team: team, full: true})) != nil || c.flush() != nil {
				s.Reset()
			}
		}
		_, _ = io.Copy(io.Discard, s) // until the node resets it
		stop()
		s.Reset()
	}
}

// Throwaway identities that open sync sessions and stall (sending nothing,
// or a summary and then nothing), again and again, hold no slot for long: a
// late joiner that lacks records still gets them within a few seconds.
func TestSybilsCannotStarveSync(t *testing.T) {
	short := withParams(func(p *Params) {
		p.SyncInterval, p.SyncOnConnect = 0, false
		p.SyncOpenTimeout = 300 * time.Millisecond
		p.SyncStepTimeout = 300 * time.Millisecond
		p.SyncTimeout = 20 * time.Second
	})
	a := startNode(t, short)
	recs := lessons(t, a.id, 0, 30)
	a.holder.add(scopes.Team("t"), recs...)

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for i := range 12 {
		h := rawHost(t)
		if err := h.Connect(ctx, addrInfo(t, a)); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() { stallSync(ctx, h, a.PeerID(), "t", i%3 != 0) }) // 8 send a summary
	}
	eventually(t, 5*time.Second, "the sybils to hold every slot", func() bool { return len(a.inbound) == cap(a.inbound) })
	// Two rounds of stalls, each cut by the node's step timeout.
	eventually(t, 10*time.Second, "two rounds of stalled sessions cut", func() bool { return a.Stats().SyncFailures >= 24 })

	joiner := startNode(t, short, withBootstrap(a))
	eventually(t, 10*time.Second, "the joiner to see a sync partner", func() bool { return joiner.speaksSync(a.PeerID()) })
	start := time.Now()
	deadline := start.Add(4 * time.Second)
	var tries int
	var last error
	for joiner.holder.count(scopes.Team("t")) < len(recs) && time.Now().Before(deadline) {
		tries++
		sctx, scancel := context.WithDeadline(ctx, deadline)
		last = joiner.syncWith(sctx, joiner.teams["t"], a.PeerID())
		scancel()
	}
	if got := joiner.holder.count(scopes.Team("t")); got != len(recs) {
		t.Fatalf("the joiner holds %d of %d records after %d tries in %v (last: %v)", got, len(recs), tries, time.Since(start), last)
	}
	t.Logf("the joiner synced in %v, %d tries; the node answered %d sessions, %d failed",
		time.Since(start), tries, a.Stats().SyncSessions, a.Stats().SyncFailures)
}

// Strangers in an open team that hold every general slot for long do not
// keep a member of a private team from syncing it: members have slots of
// their own.
func TestSyncSlotsKeptForMembers(t *testing.T) {
	idA, idJ := hostile.Identity(t), hostile.Identity(t)
	members := []string{idA.Key(), idJ.Key()}
	params := withParams(func(p *Params) {
		p.SyncInterval, p.SyncOnConnect = 0, false
		p.SyncOpenTimeout = time.Second
		p.SyncStepTimeout = 15 * time.Second // strangers hold their slots for the whole test
		p.SyncMaxInbound = 2
	})
	a := startNode(t, withID(idA), params, withTeams("priv", "open"), func(c *Config) {
		c.TeamMembers = map[string][]string{"priv": members}
	})
	recs := lessons(t, idA, 0, 10)
	a.holder.add(scopes.Team("priv"), recs...)

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for range 3 {
		h := rawHost(t)
		if err := h.Connect(ctx, addrInfo(t, a)); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() { stallSync(ctx, h, a.PeerID(), "open", true) })
	}
	eventually(t, 5*time.Second, "strangers to hold every general slot", func() bool { return len(a.inbound) == cap(a.inbound) })

	j := startNode(t, withID(idJ), params, withTeams("priv"), func(c *Config) { c.Members = members }, withBootstrap(a))
	eventually(t, 10*time.Second, "the member to see a sync partner", func() bool { return j.speaksSync(a.PeerID()) })
	sctx, scancel := context.WithTimeout(ctx, 3*time.Second)
	defer scancel()
	if err := j.syncWith(sctx, j.teams["priv"], a.PeerID()); err != nil {
		t.Fatalf("a member's session while strangers hold the general slots: %v", err)
	}
	if got := j.holder.count(scopes.Team("priv")); got != len(recs) {
		t.Fatalf("the member holds %d of %d records", got, len(recs))
	}
}

// A peer that opens 3,000 streams is held to the per-peer stream limit of
// the resource manager, and the node still serves an honest peer.
func TestStreamFloodIsLimited(t *testing.T) {
	off := withParams(func(p *Params) { p.SyncInterval, p.SyncOnConnect = 0, false })
	a := startNode(t, off)
	recs := lessons(t, a.id, 0, 10)
	a.holder.add(scopes.Team("t"), recs...)
	att := rawHost(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := att.Connect(ctx, addrInfo(t, a)); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "identify", func() bool {
		ok, _ := att.Peerstore().SupportsProtocols(a.PeerID(), SyncProtocol)
		return len(ok) > 0
	})

	// Half the streams stay unnegotiated, half ask for sync and send one
	// byte of a frame length that never ends.
	var peak atomic.Int64
	inbound := func() int64 {
		var n int64
		_ = a.host.Network().ResourceManager().ViewPeer(att.ID(), func(s network.PeerScope) error {
			n = int64(s.Stat().NumStreamsInbound)
			return nil
		})
		return n
	}
	var mu sync.Mutex
	var streams []network.Stream
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, s := range streams {
			s.Reset()
		}
	}()
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for i := range jobs {
				var s network.Stream
				var err error
				if i%2 == 0 {
					s, err = att.Network().NewStream(ctx, a.PeerID())
				} else if s, err = att.NewStream(ctx, a.PeerID(), SyncProtocol); err == nil {
					_, err = s.Write([]byte{0x80})
				}
				if err != nil {
					if s != nil {
						s.Reset()
					}
					continue
				}
				mu.Lock()
				streams = append(streams, s)
				mu.Unlock()
				if n := inbound(); n > peak.Load() {
					peak.Store(n)
				}
			}
		})
	}
	for i := range 3000 {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	// The last streams reach the node: its count holds for 200 ms.
	last, changed := int64(-1), time.Now()
	eventually(t, 10*time.Second, "the flooder's last streams to reach the node", func() bool {
		n := inbound()
		peak.Store(max(peak.Load(), n))
		if n != last {
			last, changed = n, time.Now()
		}
		return time.Since(changed) >= 200*time.Millisecond
	})

	b := startNode(t, off, withBootstrap(a))
	eventually(t, 10*time.Second, "the honest peer to see a sync partner", func() bool { return b.speaksSync(a.PeerID()) })
	sctx, scancel := context.WithTimeout(ctx, 5*time.Second)
	defer scancel()
	if err := b.syncWith(sctx, b.teams["t"], a.PeerID()); err != nil {
		t.Fatalf("an honest session during the flood: %v", err)
	}
	if got := b.holder.count(scopes.Team("t")); got != len(recs) {
		t.Fatalf("the honest peer holds %d of %d records", got, len(recs))
	}
	limit := int64(DefaultParams().PeerStreamsInbound)
	t.Logf("the flooder opened %d streams on its side; the node held at most %d of them (limit %d)", len(streams), peak.Load(), limit)
	if peak.Load() > limit {
		t.Fatalf("the node held %d inbound streams of one peer, over the limit of %d", peak.Load(), limit)
	}
}

// A flood of throwaway connections past the high-water mark is trimmed,
// but a member of a joined private team (not in any mesh) and a mesh peer
// of an open team stay connected.
func TestConnFloodKeepsTeamPeers(t *testing.T) {
	idA, idM := hostile.Identity(t), hostile.Identity(t)
	members := []string{idA.Key(), idM.Key()}
	small := withParams(func(p *Params) {
		p.SyncInterval, p.SyncOnConnect = 0, false
		p.ConnLow, p.ConnHigh, p.ConnGrace = 4, 8, 0
	})
	a := startNode(t, withID(idA), small, withTeams("priv", "open"), func(c *Config) {
		c.TeamMembers = map[string][]string{"priv": members}
	})
	// The member does not run: it subscribes to nothing and is in no mesh.
	m := newNode(t, withID(idM), small, withTeams("priv"), func(c *Config) { c.Members = members })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := m.host.Connect(ctx, addrInfo(t, a)); err != nil {
		t.Fatal(err)
	}
	mesh := startNode(t, small, withTeams("open"), withBootstrap(a))
	eventually(t, 10*time.Second, "a mesh link", func() bool {
		for _, p := range a.MeshPeers("open") {
			if p == mesh.PeerID() {
				return true
			}
		}
		return false
	})

	// Strangers connect and keep streams open (GossipSub, and ping twice),
	// more than the member has: the connection manager ranks them above it.
	var flood []host.Host
	for range 30 {
		h := rawHost(t)
		if err := h.Connect(ctx, addrInfo(t, a)); err != nil {
			t.Fatal(err)
		}
		for _, proto := range []lp2pproto.ID{"/meshsub/1.1.0", ping.ID, ping.ID} {
			s, err := h.NewStream(ctx, a.PeerID(), proto)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Reset()
		}
		flood = append(flood, h)
	}
	a.host.ConnManager().(*cmgr.BasicConnMgr).TrimOpenConns(ctx)
	strangers := 0
	for _, h := range flood {
		if a.host.Network().Connectedness(h.ID()) == network.Connected {
			strangers++
		}
	}
	t.Logf("after the trim: %d of %d strangers still connected", strangers, len(flood))
	if !connectedTo(a, m) {
		t.Error("the trim dropped a member of a private team")
	}
	if !connectedTo(a, mesh) {
		t.Error("the trim dropped a mesh peer")
	}
	if strangers > 4 {
		t.Errorf("%d strangers still connected, want at most ConnLow (4)", strangers)
	}
}

// A second node asked to listen on a TCP port another node holds fails,
// and its error names the port and what to do.
func TestSecondNodeOnSamePortFails(t *testing.T) {
	noReuse := withParams(func(p *Params) { p.TCPReuseport = false })
	a := newNode(t, noReuse)
	var port string
	for _, addr := range a.host.Addrs() {
		if v, err := addr.ValueForProtocol(ma.P_TCP); err == nil {
			port = v
		}
	}
	if _, err := strconv.Atoi(port); err != nil {
		t.Fatalf("no TCP port in %v", a.host.Addrs())
	}
	p := TestnetParams()
	p.TCPReuseport = false
	n, err := New(Config{
		Identity: hostile.Identity(t),
		Listen:   []string{"/ip4/127.0.0.1/tcp/" + port},
		Teams:    []string{"t"},
		Params:   p,
	}, newMemHolder())
	if err == nil {
		n.Close()
		t.Fatalf("a second node started on port %s", port)
	}
	t.Log(err)
	if !errors.Is(err, syscall.EADDRINUSE) {
		t.Errorf("a port in use is not EADDRINUSE to errors.Is: %v", err)
	}
	if msg := err.Error(); !strings.Contains(msg, port) || !strings.Contains(msg, "--listen") || strings.Count(msg, "in use") != 1 || strings.Contains(msg, "\n") {
		t.Errorf("the error is not one line naming port %s and --listen once: %v", port, err)
	}
}

// One identity is answered one session at a time, whatever the team: a
// second session while the first stalls is told busy, and takes no second
// slot.
func TestSyncOneSessionPerPeer(t *testing.T) {
	off := withParams(func(p *Params) { p.SyncInterval, p.SyncOnConnect = 0, false })
	a := startNode(t, off, withTeams("t", "u"))
	a.holder.add(scopes.Team("t"), lessons(t, a.id, 0, 3)...)
	h := rawHost(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.Connect(ctx, addrInfo(t, a)); err != nil {
		t.Fatal(err)
	}
	open := func(team string) (byte, network.Stream) {
		s, err := h.NewStream(ctx, a.PeerID(), SyncProtocol)
		if err != nil {
			t.Fatal(err)
		}
		c := newConn(s)
		if err := c.writeFrame(encodeSummary(summaryMsg{team: team, full: true})); err != nil {
			t.Fatal(err)
		}
		if err := c.flush(); err != nil {
			t.Fatal(err)
		}
		body, err := c.readFrame(maxDiffFrame)
		if err != nil || len(body) == 0 {
			t.Fatalf("reading the diff: %v", err)
		}
		return body[0], s
	}
	first, s1 := open("t")
	defer s1.Reset()
	second, s2 := open("u")
	defer s2.Reset()
	if first != statusOK || second != statusBusy {
		t.Fatalf("two sessions of one peer: statuses %d and %d, want %d and %d", first, second, statusOK, statusBusy)
	}
	if len(a.inbound) != 1 {
		t.Errorf("one peer holds %d slots", len(a.inbound))
	}
}

// A session sends at most SyncServeBytes of records; the initiator gets
// the rest in its next sessions.
func TestSyncServeBudget(t *testing.T) {
	const budget = 4 << 10
	off := withParams(func(p *Params) { p.SyncInterval, p.SyncOnConnect = 0, false })
	a := startNode(t, off, withParams(func(p *Params) { p.SyncServeBytes = budget }))
	recs := lessons(t, a.id, 0, 40)
	a.holder.add(scopes.Team("t"), recs...)
	b := startNode(t, off, withBootstrap(a))
	eventually(t, 10*time.Second, "a sync partner", func() bool { return b.speaksSync(a.PeerID()) })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sessions := 0
	for b.holder.count(scopes.Team("t")) < len(recs) && sessions < 20 {
		before := b.Stats().SyncBytesIn
		if err := b.syncWith(ctx, b.teams["t"], a.PeerID()); errors.Is(err, errPeerBusy) {
			// a's side of the last session has not ended yet: it frees
			// its slot when it does.
			time.Sleep(20 * time.Millisecond)
			continue
		} else if err != nil {
			t.Fatal(err)
		}
		sessions++
		if in := b.Stats().SyncBytesIn - before; in > budget+1024 {
			t.Fatalf("session %d moved %d bytes to the initiator, over the budget of %d", sessions, in, budget)
		}
	}
	if b.holder.count(scopes.Team("t")) != len(recs) || sessions < 2 {
		t.Fatalf("after %d sessions b holds %d of %d records (%d raw bytes)", sessions, b.holder.count(scopes.Team("t")), len(recs), rawBytes(recs))
	}
	t.Logf("%d raw bytes moved in %d sessions of at most %d bytes", rawBytes(recs), sessions, budget)
}
