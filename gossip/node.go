package gossip

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/libp2p/go-libp2p"
	pubsub "github.com/libp2p/go-libp2p-pubsub"
	pb "github.com/libp2p/go-libp2p-pubsub/pb"
	"github.com/libp2p/go-libp2p/core/connmgr"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/pnet"
	rcmgr "github.com/libp2p/go-libp2p/p2p/host/resource-manager"
	cmgr "github.com/libp2p/go-libp2p/p2p/net/connmgr"
	quic "github.com/libp2p/go-libp2p/p2p/transport/quic"
	"github.com/libp2p/go-libp2p/p2p/transport/tcp"
	ma "github.com/multiformats/go-multiaddr"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/remem/remem/gossip/relaysvc"
	"github.com/remem/remem/internal/scopes"
	"github.com/remem/remem/protocol"
)

// Holder is what gossip needs from the memory. It must be safe for
// concurrent use: the validator, the subscription loops and sync sessions
// call it from their own goroutines.
type Holder interface {
	// Deliver hands on records that arrived on a team scope (d). ctx ends
	// when the node closes (or the sync round that fetched them ends):
	// Deliver should give up then, as Close waits for it. An error says
	// the records were not kept (the store failed): those of a gossip
	// message, accepted already, are counted (Stats.Undelivered) for sync
	// to bring again; a sync session ends with the error, and a later
	// round asks for its records again.
	Deliver(ctx context.Context, d Delivery) error
	// Held returns the raw lines of the records this memory holds in scope
	// (own records published into it and records received by it), for
	// catch-up sync. Only these lines are ever offered to peers of scope.
	Held(scope string) ([][]byte, error)
	// HeldLines returns the line held now under each of keys in scope, in
	// their order (nil where none is). A sync snapshot keeps the ids and
	// set keys of Held's lines, not the lines, and reads by key the lines a
	// session sends: a line that is no longer the one Held gave is not sent.
	HeldLines(scope string, keys []protocol.RecordKey) ([][]byte, error)
	// Known reports whether an identical record is already held, so the
	// validator can ignore pure duplicates.
	Known(rec *protocol.Record) bool
	Limits
}

// Limits are what a Holder says of what it takes, asked by the validator
// and by sync. A holder that takes everything embeds NoLimits.
type Limits interface {
	// Room is how many new records of origin the memory still takes in
	// scope (SPEC §10 holds at most 1,000 per origin and scope). A message
	// that would take its origin past it is ignored, so it is not relayed
	// either.
	Room(scope, origin string) int
	// HoldsHash reports whether the memory holds a lesson or confirmation
	// of hash, so that a revocation of it, which changes something, is
	// taken past the cap; any other new revocation takes room.
	HoldsHash(hash string) bool
	// HeldVersion moves whenever what Held returns may have changed, so
	// sync reuses its snapshot (the parsed and hashed held lines) until
	// then; snapshots are never modified, and Held is asked once per
	// version, so the holder need not cache it. ok false: the holder keeps
	// no version, and every session reads Held.
	HeldVersion() (v uint64, ok bool)
	// Admits reports whether the memory admits origin (SPEC §8: itself,
	// its trust list, the members of its private teams...). Sync takes
	// admitted origins' records first and outside its budgets.
	Admits(origin string) bool
	// NewStranger reports whether origin is neither admitted by the
	// memory nor held in any scope. The messages one peer forwards may
	// bring at most Params.NewOriginsPerPeer such origins a minute.
	NewStranger(origin string) bool
}

// NoLimits are the Limits of a holder that takes everything: no cap, no
// version, no origin admitted (so every record counts against sync's
// budgets), no stranger counted.
type NoLimits struct{}

// Room is unbounded.
func (NoLimits) Room(string, string) int { return math.MaxInt }

// HoldsHash holds none.
func (NoLimits) HoldsHash(string) bool { return false }

// HeldVersion keeps none.
func (NoLimits) HeldVersion() (uint64, bool) { return 0, false }

// Admits admits none.
func (NoLimits) Admits(string) bool { return false }

// NewStranger counts none.
func (NoLimits) NewStranger(string) bool { return false }

// A Delivery is what a node hands its Holder: records that arrived on a
// team scope, already verified by the validator or by sync (never verify
// them twice).
type Delivery struct {
	Scope string
	// From is the peer that sent the bytes: the forwarder of a gossip
	// message, or the sync partner.
	From peer.ID
	// BySync: the records came by a sync session, and so reached this node
	// alone; a gossip message's went along the mesh already.
	BySync  bool
	Records []*protocol.Record
}

// DefaultListen is where a node listens when Config.Listen is empty: port
// 4002 on every interface, over TCP and QUIC.
var DefaultListen = []string{"/ip4/0.0.0.0/tcp/4002", "/ip4/0.0.0.0/udp/4002/quic-v1"}

// Config configures a Node. Identity is required; a zero field takes the
// default its comment names, and Validate checks the rest.
type Config struct {
	// Identity is the memory's key; the libp2p host uses it too, so a peer
	// id maps to exactly one origin.
	Identity protocol.Identity
	// Listen holds multiaddrs to listen on (default DefaultListen). With a
	// PSK, QUIC listeners are dropped: libp2p private networks are TCP only.
	Listen []string
	// Bootstrap holds full multiaddrs (with /p2p/<id>) of peers to keep
	// connected to; they are retried with backoff.
	Bootstrap []string
	// MDNS finds peers on the local network.
	MDNS bool
	// Teams are the team names; each is the topic TopicName(team) and the
	// scope scopes.Team(team).
	Teams []string
	// Members lists the 64-hex keys or 16-hex origins of the members of
	// every team in Teams; empty means open teams. TeamMembers overrides
	// it per team (`remem node --members TEAM=FILE`); its teams must be in
	// Teams, and an empty list makes that team open. When every team is
	// private, the connection gater only lets in peers that are members
	// of at least one of them (the union);
	// when some team is open the gater lets everyone in, and only the
	// validator and sync keep non-members out of the private teams.
	Members     []string
	TeamMembers map[string][]string
	// PSK is an optional 32-byte libp2p private network key. Nodes with
	// another key (or none) cannot connect. QUIC is disabled with a PSK.
	PSK []byte
	// Params are the tunables (the zero Params: DefaultParams()).
	Params Params
	// Logger (default: discard).
	Logger *slog.Logger
	// Registry receives the Prometheus metrics, libp2p's included (nil: none
	// are registered).
	Registry prometheus.Registerer
	// Now is the clock for record verification (default time.Now).
	Now func() time.Time
	// ConnGater is consulted after the members gater (tests use it to cut
	// the network in two).
	ConnGater connmgr.ConnectionGater
	// Transport, when set, replaces the host's TCP and QUIC transports and
	// address discovery: the testnet's simulated network passes its QUIC
	// over in-process links here. Real nodes leave it empty. The
	// reachability services (AutoNAT, relays, hole punching) are off then:
	// a simulated network has no NAT.
	Transport []libp2p.Option
	// RelayService offers a circuit relay v2 (gossip/relaysvc) to other
	// nodes while this one is public: unlimited between members and team
	// peers (relayServes), within go-libp2p's default limits for others.
	RelayService bool
	// Relays are relay multiaddrs (with /p2p/<id>) a private node reserves
	// a slot on, besides those it learns from a commons.
	Relays []string
	// Reachability forces what the node believes of itself (default:
	// AutoNAT finds out).
	Reachability Reachability
}

// TopicName is the GossipSub topic of a team.
func TopicName(team string) string { return "remem/1/team/" + team }

// PeerInfo describes one connected peer.
type PeerInfo struct {
	ID     peer.ID
	Origin string
	Addrs  []ma.Multiaddr
	Topics []string // topics of this node the peer is subscribed to
	Mesh   []string // topics in whose mesh this node keeps the peer
	Score  float64  // GossipSub peer score, as last sampled
	// Conns says how each connection to the peer is made (direct,
	// relayed, hole-punched).
	Conns []ConnInfo
	// Latency is the peer's round trip as last measured (0: never; see
	// Ping).
	Latency time.Duration
}

// Kind is how the peer is best connected: direct or hole-punched over
// relayed.
func (p PeerInfo) Kind() string {
	kind := ""
	for _, c := range p.Conns {
		switch {
		case kind == "" || kind == ConnRelayed:
			kind = c.Kind
		case kind == ConnDirect && c.Kind == ConnHolePunched:
			kind = c.Kind
		}
	}
	return kind
}

// ErrClosed is returned by operations on a closed node.
var ErrClosed = errors.New("gossip: node closed")

type team struct {
	name    string
	topic   string
	scope   string
	members memberSet
	t       *pubsub.Topic
	sync    *syncState
}

// Node is one memory's gossip host.
type Node struct {
	cfg     Config
	p       Params
	holder  Holder
	log     *slog.Logger
	now     func() time.Time
	host    host.Host
	ps      *pubsub.PubSub
	teams   map[string]*team
	order   []*team
	boot    []peer.AddrInfo
	metrics *metrics
	tracer  *meshTracer

	scoreMu sync.Mutex
	scores  map[peer.ID]float64

	newOrigins newOrigins // new strangers per forwarding peer (neworigins.go)

	ctx    context.Context // ends at Close
	cancel context.CancelFunc
	tasks  tracker // handlers and Run's goroutines

	inbound     chan struct{} // slots of sync sessions answered at once
	memberSlots chan struct{} // more slots, for sessions of private teams only (nil: none)
	busyMu      sync.Mutex
	busy        map[peer.ID]bool // peers whose session is being answered
	outgoing    peerLocks        // this node's own sessions, one per peer at a time
	takes       *takeLedger      // what sync took from each peer lately

	running   atomic.Bool
	runDone   chan struct{}
	closeOnce sync.Once

	hostMu       sync.Mutex // guards host while New sets it (the address factory may run before)
	relays       relaySet
	relaySvc     *relaysvc.Manager // nil unless cfg.RelayService
	punches      punchLog
	reach        atomic.Value // network.Reachability
	addrsChanged chan struct{}
	dirBackoff   dialBackoff // addresses of directory listings whose dial failed
	closeErr     error
}

// New builds the host (listening at once), GossipSub with peer scoring, the
// team topics and their validators, and the sync protocol handler. Call Run
// to subscribe and start discovery, and Close to stop.
func New(cfg Config, h Holder) (*Node, error) {
	if h == nil {
		return nil, errors.New("gossip: no holder")
	}
	if len(cfg.Identity.Private) != 64 {
		return nil, errors.New("gossip: config has no identity (want a 64-byte Ed25519 private key)")
	}
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("gossip: %w", err)
	}
	p := cfg.Params
	n := &Node{
		cfg:     cfg,
		p:       p,
		holder:  h,
		log:     cfg.Logger,
		now:     cfg.Now,
		teams:   map[string]*team{},
		scores:  map[peer.ID]float64{},
		inbound: make(chan struct{}, max(1, p.SyncMaxInbound)),
		busy:    map[peer.ID]bool{},
		takes:   newTakeLedger(p),
		runDone: make(chan struct{}),

		addrsChanged: make(chan struct{}, 1),
		punches:      punchLog{log: cfg.Logger},
	}
	if p.SyncMemberInbound > 0 {
		n.memberSlots = make(chan struct{}, p.SyncMemberInbound)
	}
	var err error
	if n.metrics, err = newMetrics(cfg.Registry); err != nil {
		return nil, fmt.Errorf("gossip: registering metrics: %w", err)
	}

	// Teams and members.
	common, err := parseMembers(cfg.Members)
	if err != nil {
		return nil, fmt.Errorf("gossip: members: %w", err)
	}
	var union memberSet = memberSet{}
	allPrivate := len(cfg.Teams) > 0
	for _, name := range cfg.Teams {
		if err := checkTeamName(name); err != nil {
			return nil, err
		}
		if n.teams[name] != nil {
			continue
		}
		ms := common
		if list, ok := cfg.TeamMembers[name]; ok {
			if ms, err = parseMembers(list); err != nil {
				return nil, fmt.Errorf("gossip: members of team %q: %w", name, err)
			}
		}
		if ms.open() {
			allPrivate = false
		}
		for o := range ms {
			union[o] = struct{}{}
		}
		if !ms.open() && !ms.hasOrigin(cfg.Identity.Origin()) {
			n.log.Warn("this memory is not in the members list of its team: members will ignore what it publishes", "scope", scopes.Team(name), "origin", cfg.Identity.Origin())
		}
		t := &team{name: name, topic: TopicName(name), scope: scopes.Team(name), members: ms, sync: newSyncState()}
		n.teams[name] = t
		n.order = append(n.order, t)
	}
	if !allPrivate {
		union = nil
	}
	for _, s := range cfg.Bootstrap {
		ai, err := peer.AddrInfoFromString(s)
		if err != nil {
			return nil, fmt.Errorf("gossip: bootstrap address %q: %w (want a multiaddr ending in /p2p/<peer id>)", s, err)
		}
		n.boot = append(n.boot, *ai)
	}

	// Host.
	priv, err := crypto.UnmarshalEd25519PrivateKey(cfg.Identity.Private)
	if err != nil {
		return nil, fmt.Errorf("gossip: identity: %w", err)
	}
	self, err := peer.IDFromPrivateKey(priv)
	if err != nil {
		return nil, fmt.Errorf("gossip: identity: %w", err)
	}
	listen := cfg.Listen
	for _, l := range listen {
		if _, err := ma.NewMultiaddr(l); err != nil {
			return nil, fmt.Errorf("gossip: listen address %q: %w", l, err)
		}
	}
	opts := []libp2p.Option{
		libp2p.Identity(priv),
		libp2p.DefaultSecurity,
		libp2p.DefaultMuxers,
		libp2p.ConnectionGater(&gater{self: self, allowed: union, extra: cfg.ConnGater}),
	}
	tr, listen, err := transports(cfg, listen)
	if err != nil {
		return nil, err
	}
	opts = append(opts, tr...)
	if len(cfg.Transport) == 0 {
		relays, err := parseRelays(cfg.Relays)
		if err != nil {
			return nil, fmt.Errorf("gossip: %w", err)
		}
		n.relays.add(relays...)
		opts = append(opts, reachOptions(cfg, n.relaySource, &n.punches)...)
		opts = append(opts, libp2p.AddrsFactory(n.withPrivateRelayAddrs))
	}
	// The host starts without listening: n.listen opens each address after.
	opts = append(opts, libp2p.NoListenAddrs)
	rm, err := rcmgr.NewResourceManager(rcmgr.NewFixedLimiter(p.resourceLimits()))
	if err != nil {
		return nil, fmt.Errorf("gossip: resource manager: %w", err)
	}
	cm, err := cmgr.NewConnManager(p.ConnLow, p.ConnHigh, cmgr.WithGracePeriod(p.ConnGrace))
	if err != nil {
		_ = rm.Close() // the first error is the one to report
		return nil, fmt.Errorf("gossip: connection manager: %w", err)
	}
	opts = append(opts, libp2p.ResourceManager(rm), libp2p.ConnectionManager(cm))
	if cfg.Registry != nil {
		opts = append(opts, libp2p.PrometheusRegisterer(cfg.Registry))
	} else {
		opts = append(opts, libp2p.DisableMetrics())
	}
	lh, err := libp2p.New(opts...)
	n.hostMu.Lock()
	n.host = lh
	n.hostMu.Unlock()
	if err != nil {
		// libp2p closes them on some failures, not all; closing twice is safe.
		_, _ = cm.Close(), rm.Close()
		return nil, fmt.Errorf("gossip: starting libp2p host on %v: %w", listen, err)
	}
	n.ctx, n.cancel = context.WithCancel(context.Background())
	n.tracer = newMeshTracer(n.metrics, n.host.ConnManager())
	n.host.Network().Notify(&network.NotifyBundle{ConnectedF: n.connected, DisconnectedF: n.disconnected})
	if err := n.watchReach(); err != nil {
		n.cancel()
		return nil, errors.Join(err, n.host.Close())
	}
	if err := n.listen(listen); err != nil {
		n.cancel()
		return nil, errors.Join(err, n.host.Close())
	}
	// AutoRelay may dial the relays now that the dials leave from the
	// listen ports (see relaySet.source).
	n.relays.setReady()

	// GossipSub.
	topics := make([]string, 0, len(n.order))
	for _, t := range n.order {
		topics = append(topics, t.topic)
	}
	gsp := RouterParams(p)
	n.ps, err = pubsub.NewGossipSub(n.ctx, n.host,
		pubsub.WithGossipSubParams(gsp),
		pubsub.WithPeerScore(p.scoreParams(topics), p.scoreThresholds()),
		pubsub.WithPeerScoreInspect(pubsub.PeerScoreInspectFn(n.inspectScores), p.ScoreInspect),
		pubsub.WithPeerExchange(true),
		// A publisher sends its own message to every topic peer in good
		// standing, not only to its mesh: messages are rare (one per sleep),
		// the team is small, and a node that just joined has an empty mesh
		// for a heartbeat or two.
		pubsub.WithFloodPublish(true),
		pubsub.WithMessageIdFn(MessageID),
		pubsub.WithMessageSignaturePolicy(pubsub.StrictSign),
		pubsub.WithMaxMessageSize(protocol.MaxGossipMsg+64<<10),
		pubsub.WithLogger(n.log),
		pubsub.WithRawTracer(n.tracer),
	)
	if err != nil {
		n.cancel()
		return nil, errors.Join(fmt.Errorf("gossip: starting GossipSub: %w", err), n.host.Close())
	}
	for _, t := range n.order {
		err := n.ps.RegisterTopicValidator(t.topic, n.validator(t),
			pubsub.WithValidatorTimeout(p.ValidateTimeout),
			pubsub.WithValidatorConcurrency(max(1, p.ValidateConcurrency)))
		if err == nil {
			t.t, err = n.ps.Join(t.topic)
		}
		if err != nil {
			n.cancel()
			return nil, errors.Join(fmt.Errorf("gossip: joining %s: %w", t.topic, err), n.host.Close())
		}
	}
	n.host.SetStreamHandler(SyncProtocol, n.handleSync)
	if err := n.startRelayService(); err != nil {
		n.cancel()
		return nil, errors.Join(err, n.host.Close())
	}
	n.log.Info("gossip host started", "peer", n.host.ID(), "origin", cfg.Identity.Origin(), "addrs", n.host.Addrs())
	return n, nil
}

// transports are the host's transports for cfg, and the listen addresses
// they can open: cfg.Transport when set; else TCP, and QUIC unless a
// private network (PSK) leaves TCP alone.
func transports(cfg Config, listen []string) ([]libp2p.Option, []string, error) {
	if len(cfg.Transport) > 0 {
		return cfg.Transport, listen, nil
	}
	var tcpOpts []any
	if !cfg.Params.TCPReuseport {
		tcpOpts = append(tcpOpts, tcp.DisableReuseport())
	}
	opts := []libp2p.Option{libp2p.Transport(tcp.NewTCPTransport, tcpOpts...)}
	if len(cfg.PSK) == 0 {
		return append(opts, libp2p.Transport(quic.NewTransport)), listen, nil
	}
	if len(cfg.PSK) != 32 {
		return nil, nil, fmt.Errorf("gossip: the pre-shared key is %d bytes, want 32", len(cfg.PSK))
	}
	var tcpOnly []string
	for _, l := range listen {
		if !isUDP(l) {
			tcpOnly = append(tcpOnly, l)
		}
	}
	if len(tcpOnly) == 0 {
		return nil, nil, fmt.Errorf("gossip: a private network (PSK) needs a TCP listen address; %v are all UDP", listen)
	}
	return append(opts, libp2p.PrivateNetwork(pnet.PSK(cfg.PSK))), tcpOnly, nil
}

func checkTeamName(name string) error {
	if name == "" || len(name) > 128 {
		return fmt.Errorf("gossip: team name %q: want 1 to 128 bytes", name)
	}
	for _, r := range name {
		if r <= ' ' || r == '/' || r == 0x7f {
			return fmt.Errorf("gossip: team name %q: no spaces, control characters or '/'", name)
		}
	}
	return nil
}

func isUDP(addr string) bool {
	return strings.Contains(addr, "/udp/")
}

// MessageID is the GossipSub message id of a message: the content hash of
// its data, so the same batch is one message whoever sends it. A host that
// must sit in a team's mesh like a node (the testnet's probes) uses it too.
func MessageID(m *pb.Message) string { return MessageIDOf(m.Data) }

// MessageIDOf is the id of a message holding data.
func MessageIDOf(data []byte) string {
	sum := sha256.Sum256(data)
	return string(sum[:])
}

// listen opens the listen addresses one at a time: libp2p alone fails only
// when none can be opened, and a node that silently lost its TCP port (to
// another node on the same machine, say) would never be reached there.
func (n *Node) listen(addrs []string) error {
	for _, s := range addrs {
		a, err := ma.NewMultiaddr(s)
		if err == nil {
			err = n.host.Network().Listen(a)
		}
		if err != nil {
			return listenError(a, s, err)
		}
	}
	return nil
}

// listenError says what to do when a listen address cannot be opened; a
// port in use is the usual case: another remem node on this machine.
func listenError(a ma.Multiaddr, s string, err error) error {
	// libp2p's swarm formats its listen errors with %s: the errno is lost
	// to errors.Is, its text is not.
	inUse := errors.Is(err, syscall.EADDRINUSE) || strings.Contains(err.Error(), syscall.EADDRINUSE.Error())
	if !inUse || a == nil {
		return fmt.Errorf("gossip: cannot listen on %s: %w", s, err)
	}
	e := &PortInUseError{Addr: s, Kind: "TCP", Err: err}
	if v, perr := a.ValueForProtocol(ma.P_TCP); perr == nil {
		e.Port = v
	} else if v, perr := a.ValueForProtocol(ma.P_UDP); perr == nil {
		e.Kind, e.Port = "UDP", v
	}
	return e
}

// PortInUseError is a listen address whose port another process holds. It
// is syscall.EADDRINUSE to errors.Is, which libp2p's own error is not.
type PortInUseError struct {
	Addr, Kind, Port string
	Err              error // what libp2p said
}

func (e *PortInUseError) Error() string {
	// libp2p's own words (Err, through Unwrap) say "in use" once more.
	return fmt.Sprintf("gossip: cannot listen on %s: %s port %s is already in use, perhaps by another remem node on this machine: "+
		"stop that node, or give this one another port with --listen", e.Addr, e.Kind, e.Port)
}

func (e *PortInUseError) Unwrap() []error { return []error{syscall.EADDRINUSE, e.Err} }

// connected protects members of this node's private teams in the
// connection manager, so a flood of strangers past its high-water mark is
// trimmed before them. (In open teams anyone is a member; there the mesh
// peers are protected, see meshTracer.) The protection stays after a
// disconnect: members are few, and a reconnect needs it again.
func (n *Node) connected(net network.Network, c network.Conn) {
	p := c.RemotePeer()
	if len(net.ConnsToPeer(p)) == 1 {
		origin, _ := OriginOf(p)
		n.log.Info("peer connected", "peer", p, "origin", origin, "addr", c.RemoteMultiaddr(), "kind", n.connInfo(c).Kind, "peers", len(net.Peers()))
	}
	for _, t := range n.order {
		if !t.members.open() && t.members.hasPeer(p) {
			n.host.ConnManager().Protect(p, protectMember)
			return
		}
	}
}

// disconnected ends the mesh protections of a peer with no connection left
// (GossipSub drops it from its mesh without a PRUNE).
func (n *Node) disconnected(net network.Network, c network.Conn) {
	p := c.RemotePeer()
	if !isConnected(net.Connectedness(p)) {
		n.tracer.forget(p)
		origin, _ := OriginOf(p)
		n.log.Info("peer disconnected", "peer", p, "origin", origin, "peers", len(net.Peers()))
	}
}

func (n *Node) inspectScores(m map[peer.ID]float64) {
	n.scoreMu.Lock()
	n.scores = m
	n.scoreMu.Unlock()
}

// Run subscribes to the team topics, hands received records to the holder,
// starts discovery (bootstrap, mDNS) and sync (on connect and every
// Params.SyncInterval), and returns when ctx ends or the node is closed,
// after everything it started has stopped.
func (n *Node) Run(ctx context.Context) error {
	if !n.running.CompareAndSwap(false, true) {
		return errors.New("gossip: Run called twice")
	}
	defer close(n.runDone)
	if n.ctx.Err() != nil {
		return ErrClosed
	}
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(n.ctx, cancel)
	defer stop()
	var run tracker
	var closeMDNS func()
	defer func() {
		cancel()
		if closeMDNS != nil {
			closeMDNS() // no peer-found callback after this
		}
		run.wait()
	}()

	for _, t := range n.order {
		sub, err := t.t.Subscribe(pubsub.WithBufferSize(64))
		if err != nil {
			return fmt.Errorf("gossip: subscribing to %s: %w", t.topic, err)
		}
		run.Go(func() {
			defer sub.Cancel()
			n.readLoop(ctx, t, sub)
		})
	}
	if err := n.startConnectSync(ctx, &run); err != nil {
		return err
	}
	for _, ai := range n.boot {
		run.Go(func() { n.bootstrapLoop(ctx, ai) })
	}
	n.dialRelays(ctx, &run)
	if len(n.cfg.Transport) == 0 {
		run.Go(func() { n.repunchLoop(ctx) })
	}
	if n.cfg.MDNS {
		var err error
		if closeMDNS, err = n.startMDNS(ctx, &run); err != nil {
			n.log.Warn("mDNS not started", "err", err)
		}
	}
	run.Go(func() { n.syncLoop(ctx) })
	<-ctx.Done()
	return nil
}

func (n *Node) readLoop(ctx context.Context, t *team, sub *pubsub.Subscription) {
	for {
		msg, err := sub.Next(ctx)
		if err != nil {
			return
		}
		if msg.Local || msg.ReceivedFrom == n.host.ID() {
			continue // our own publication
		}
		recs, ok := msg.ValidatorData.([]*protocol.Record)
		if !ok || len(recs) == 0 {
			continue
		}
		if err := n.holder.Deliver(ctx, Delivery{Scope: t.scope, From: msg.ReceivedFrom, Records: recs}); err != nil && ctx.Err() == nil {
			n.metrics.update(func(s *Stats) { s.Undelivered += len(recs) })
			n.log.Error("a gossip message's records were not kept; sync brings them again", "scope", t.scope, "peer", msg.ReceivedFrom.String(), "err", err)
		}
	}
}

// Close stops Run, closes the host and waits for every goroutine this node
// started. It is safe to call more than once.
func (n *Node) Close() error {
	n.closeOnce.Do(func() {
		n.cancel()
		n.tasks.close()
		if n.relaySvc != nil {
			_ = n.relaySvc.Close() // stops the relay; its only error is the event subscription's
		}
		n.closeErr = n.host.Close()
		n.tasks.wait()
		if n.running.Load() {
			<-n.runDone
		}
	})
	return n.closeErr
}

// Publish sends lines (the memory's new records since its last sleep) to
// team's topic as one message, or as several when they pass
// protocol.MaxGossipMsg. Every line goes through the validator first, so a
// line peers would refuse is an error here.
func (n *Node) Publish(ctx context.Context, teamName string, lines [][]byte) error {
	if n.ctx.Err() != nil {
		return ErrClosed
	}
	t := n.teams[teamName]
	if t == nil {
		return fmt.Errorf("gossip: not in team %q", teamName)
	}
	msgs, err := batch(lines, protocol.MaxGossipMsg)
	if err != nil {
		return fmt.Errorf("gossip: publishing to %s: %w", t.topic, err)
	}
	for _, m := range msgs {
		if err := t.t.Publish(ctx, m); err != nil {
			return fmt.Errorf("gossip: publishing to %s: %w", t.topic, err)
		}
		n.metrics.update(func(s *Stats) { s.Published++ })
	}
	return nil
}

// batch joins lines with "\n" into messages of at most limit bytes.
func batch(lines [][]byte, limit int) ([][]byte, error) {
	var out [][]byte
	var cur []byte
	n := 0 // lines in cur
	for i, l := range lines {
		l = bytes.TrimRight(l, "\r\n")
		if len(l) == 0 {
			continue
		}
		if bytes.IndexByte(l, '\n') >= 0 {
			return nil, fmt.Errorf("line %d holds a newline", i+1)
		}
		if len(l) > protocol.MaxLineBytes {
			return nil, fmt.Errorf("line %d is %d bytes, the limit is %d", i+1, len(l), protocol.MaxLineBytes)
		}
		// A receiver refuses more than MaxOriginRecs records of one origin
		// in a message, so a long outbox goes out in several.
		if len(cur) > 0 && (len(cur)+1+len(l) > limit || n == protocol.MaxOriginRecs) {
			out = append(out, cur)
			cur, n = nil, 0
		}
		if len(cur) > 0 {
			cur = append(cur, '\n')
		}
		cur = append(cur, l...)
		n++
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out, nil
}

// PeerID is this node's peer id (derived from the memory's key).
func (n *Node) PeerID() peer.ID { return n.host.ID() }

// Addrs returns the node's addresses with its /p2p/ id, ready for
// another node's Bootstrap.
func (n *Node) Addrs() []ma.Multiaddr {
	addrs, err := peer.AddrInfoToP2pAddrs(&peer.AddrInfo{ID: n.host.ID(), Addrs: n.host.Addrs()})
	if err != nil {
		return nil
	}
	return addrs
}

// Peers describes the connected peers, sorted by id.
func (n *Node) Peers() []PeerInfo {
	n.scoreMu.Lock()
	scores := n.scores
	n.scoreMu.Unlock()
	topicPeers := map[peer.ID][]string{}
	meshPeers := map[peer.ID][]string{}
	for _, t := range n.order {
		for _, p := range t.t.ListPeers() {
			topicPeers[p] = append(topicPeers[p], t.topic)
		}
		for _, p := range n.MeshPeers(t.name) {
			meshPeers[p] = append(meshPeers[p], t.topic)
		}
	}
	var out []PeerInfo
	for _, p := range n.host.Network().Peers() {
		origin, _ := OriginOf(p)
		var addrs []ma.Multiaddr
		for _, c := range n.host.Network().ConnsToPeer(p) {
			addrs = append(addrs, c.RemoteMultiaddr())
		}
		info := PeerInfo{ID: p, Origin: origin, Addrs: addrs, Topics: topicPeers[p], Mesh: meshPeers[p], Score: scores[p],
			Latency: n.host.Peerstore().LatencyEWMA(p)}
		for _, c := range n.host.Network().ConnsToPeer(p) {
			info.Conns = append(info.Conns, n.connInfo(c))
		}
		out = append(out, info)
	}
	slices.SortFunc(out, func(a, b PeerInfo) int { return strings.Compare(string(a.ID), string(b.ID)) })
	return out
}

// MeshPeers returns the connected peers in this node's GossipSub mesh of
// team's topic.
func (n *Node) MeshPeers(team string) []peer.ID {
	net := n.host.Network()
	return n.tracer.peers(TopicName(team), func(p peer.ID) bool { return isConnected(net.Connectedness(p)) })
}

// Score returns the last sampled GossipSub score of p (0 when unknown).
func (n *Node) Score(p peer.ID) float64 {
	n.scoreMu.Lock()
	defer n.scoreMu.Unlock()
	return n.scores[p]
}

// Stats returns the counters since New.
func (n *Node) Stats() Stats { return n.metrics.stats() }

// Teams returns the team names this node is in, in Config order.
func (n *Node) Teams() []string {
	out := make([]string, len(n.order))
	for i, t := range n.order {
		out[i] = t.name
	}
	return out
}

// tracker owns a set of goroutines: Go refuses new ones after close, and wait
// joins them.
type tracker struct {
	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
}

func (t *tracker) Go(f func()) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
	}
	t.wg.Go(f)
	return true
}

// enter registers the calling goroutine (a stream handler libp2p started);
// leave must follow when enter returned true.
func (t *tracker) enter() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
	}
	t.wg.Add(1)
	return true
}

func (t *tracker) leave() { t.wg.Done() }

func (t *tracker) close() {
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
}

func (t *tracker) wait() {
	t.close()
	t.wg.Wait()
}
