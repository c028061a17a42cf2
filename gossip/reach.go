package gossip

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/event"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/p2p/host/autorelay"
	circuitproto "github.com/libp2p/go-libp2p/p2p/protocol/circuitv2/proto"
	"github.com/libp2p/go-libp2p/p2p/protocol/holepunch"
	"github.com/libp2p/go-libp2p/p2p/protocol/ping"
	ma "github.com/multiformats/go-multiaddr"
	manet "github.com/multiformats/go-multiaddr/net"

	"github.com/remem/remem/gossip/relaysvc"
)

// Reachability (SPEC §10 [ext]): AutoNAT tells a node whether it can be
// dialled; a private node reserves a slot on a circuit relay v2 and
// advertises the relayed address; DCUtR hole punching upgrades a relayed
// connection to a direct one where the NATs allow it. All of it is
// go-libp2p's own services; this file wires them and keeps what a user
// asks about (reachability, relays, how each peer is connected).

// Reachability is what a node believes of its own reachability.
type Reachability string

const (
	// ReachabilityAuto lets AutoNAT find out (the default).
	ReachabilityAuto Reachability = ""
	// ReachabilityPublic: the node's addresses can be dialled from the
	// internet (a server with a public IP).
	ReachabilityPublic Reachability = "public"
	// ReachabilityPrivate: the node is behind a NAT or firewall; it uses
	// relays at once instead of waiting for AutoNAT to say so.
	ReachabilityPrivate Reachability = "private"
)

// ValidReachability reports whether r is one of the three settings.
func ValidReachability(r Reachability) bool {
	return r == ReachabilityAuto || r == ReachabilityPublic || r == ReachabilityPrivate
}

// A remem relay (a node with RelayService, a commons host) is remem's own
// circuit relay service (gossip/relaysvc), not go-libp2p's: go-libp2p
// gives every circuit one limit (2 minutes, 128 KiB each way), and with a
// limit the relayed connection is "limited", over which GossipSub by
// design opens no stream: two nodes behind NATs that only meet through
// the relay would share nothing by gossip until a hole punch succeeds,
// and never where it cannot. Without one, the relay was a free proxy for
// anyone (issue 28). So a remem relay carries whole the circuits between
// peers it has a reason to serve: for a node, members of its private
// teams and peers on its open teams' topics (relayServes); for a commons
// host, peers registered in its directory. Every other circuit gets
// go-libp2p's default limits, enough for a hole punch. Remem's traffic is
// one small message per sleep and catch-ups that move what a peer lacks;
// what bounds the relay's load is the reservations (in total, per IP, per
// subnet, and a share for strangers), the circuits per peer and with
// strangers (relaysvc's constants), and DCUtR, which moves each pair to a
// direct connection where the NATs allow. Relays run by others keep their
// limits: over them, sync runs (it opens its streams on limited
// connections too) and gossip waits for the hole punch.

// relayConfig is a remem relay's configuration: the peers it serves, and
// reservations that carry every address of the relay but link-local ones
// (go-libp2p's default keeps public addresses only, so a relay on a LAN
// or on loopback would hand its clients nothing to advertise).
func relayConfig(serves func(peer.ID) bool, log *slog.Logger) relaysvc.Config {
	return relaysvc.Config{
		Serves: serves,
		AddrFilter: func(a ma.Multiaddr) bool {
			return !manet.IsIPUnspecified(a) && !isLinkLocal(a)
		},
		Logger: log,
	}
}

// relayServes: the peers a node's relay carries whole. A member of one of
// its private teams is admitted by the configuration; a peer on the topic
// of one of its open teams knows the team's name, and the node carries
// its gossip anyway. Anyone else is a stranger to the relay.
func (n *Node) relayServes(p peer.ID) bool {
	for _, t := range n.order {
		if !t.members.open() {
			if t.members.hasPeer(p) {
				return true
			}
			continue
		}
		if slices.Contains(n.ps.ListPeers(t.topic), p) {
			return true
		}
	}
	return false
}

// startRelayService runs the relay service while the node is public.
func (n *Node) startRelayService() error {
	if !n.cfg.RelayService || len(n.cfg.Transport) > 0 {
		return nil
	}
	m, err := relaysvc.Manage(n.host, relayConfig(n.relayServes, n.log))
	if err != nil {
		return fmt.Errorf("gossip: %w", err)
	}
	n.relaySvc = m
	return nil
}

func isLinkLocal(a ma.Multiaddr) bool {
	ip, err := manet.ToIP(a)
	return err == nil && (ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast())
}

// relaySet holds the relays a private node may reserve a slot on: those
// configured and those learned later (from a commons' info document).
type relaySet struct {
	mu     sync.Mutex
	relays []peer.AddrInfo
	ready  chan struct{} // closed once the host listens (setReady)
}

func (s *relaySet) add(ais ...peer.AddrInfo) (added int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ai := range ais {
		if ai.ID == "" || len(ai.Addrs) == 0 {
			continue
		}
		i := slices.IndexFunc(s.relays, func(r peer.AddrInfo) bool { return r.ID == ai.ID })
		if i >= 0 {
			s.relays[i].Addrs = ma.Unique(append(s.relays[i].Addrs, ai.Addrs...))
			continue
		}
		s.relays = append(s.relays, ai)
		added++
	}
	return added
}

func (s *relaySet) list() []peer.AddrInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.relays)
}

func (s *relaySet) readyChan() chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ready == nil {
		s.ready = make(chan struct{})
	}
	return s.ready
}

// setReady tells relaySource that the host listens now.
func (s *relaySet) setReady() {
	ch := s.readyChan()
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-ch:
	default:
		close(ch)
	}
}

// relaySource is AutoRelay's peer source: up to num of the known relays
// (configured, then learned from a commons), then connected peers that
// offer a relay (a --relay-service node met by bootstrap, mDNS or a
// directory), once the host listens. The host starts without listening
// (Node.listen opens each address after), and a node forced private
// starts AutoRelay at once: a relay dialled before the listeners exist is
// dialled from an ephemeral port, that connection is kept (the
// reservation protects it), and the address the relay observes is then
// one no listener owns, which go-libp2p does not use for hole punching.
// Waiting for the listeners makes the relay connection leave from the
// listen port, whose mapping is the one DCUtR punches with.
func (n *Node) relaySource(ctx context.Context, num int) <-chan peer.AddrInfo {
	out := make(chan peer.AddrInfo)
	ready := n.relays.readyChan()
	go func() {
		defer close(out)
		select {
		case <-ready:
		case <-ctx.Done():
			return
		}
		for _, r := range n.relayCandidates(num) {
			select {
			case out <- r:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

// relayCandidates are up to num relays: the known ones, then connected
// peers that offer a relay.
func (n *Node) relayCandidates(num int) []peer.AddrInfo {
	rs := n.relays.list()
	if h := n.hostOrNil(); h != nil {
		for _, p := range h.Network().Peers() {
			if slices.ContainsFunc(rs, func(r peer.AddrInfo) bool { return r.ID == p }) {
				continue
			}
			if ok, err := h.Peerstore().SupportsProtocols(p, circuitproto.ProtoIDv2Hop); err == nil && len(ok) > 0 {
				rs = append(rs, peer.AddrInfo{ID: p, Addrs: h.Peerstore().Addrs(p)})
			}
		}
	}
	if len(rs) > num {
		rs = rs[:num]
	}
	return rs
}

// reachOptions are the host options for reachability: AutoNAT (v2, and
// the v1 service so peers learn theirs, unless forced private), the
// relay transport with AutoRelay over source, hole punching traced by
// punches. The relay service, when the node offers one, starts with the
// node (startRelayService).
func reachOptions(cfg Config, source autorelay.PeerSource, punches *punchLog) []libp2p.Option {
	opts := []libp2p.Option{
		libp2p.EnableRelay(),
		libp2p.EnableAutoNATv2(),
		libp2p.EnableHolePunching(holepunch.WithTracer(punches)),
		libp2p.EnableAutoRelayWithPeerSource(source,
			autorelay.WithMinCandidates(1),
			autorelay.WithNumRelays(2),
			autorelay.WithBootDelay(0),
			// A relay that refused (or a commons restarting) is tried
			// again after a minute, not go-libp2p's hour.
			autorelay.WithBackoff(time.Minute),
			// The source is local and cheap: ask it often, so a relay met
			// a moment after start (in a directory) is used at once.
			autorelay.WithMinInterval(2*time.Second)),
	}
	switch cfg.Reachability {
	case ReachabilityPublic:
		opts = append(opts, libp2p.ForceReachabilityPublic(), libp2p.EnableNATService())
	case ReachabilityPrivate:
		// No AutoNAT service: go-libp2p never closes its dial-back host
		// when the reachability is forced private (autonat.New makes no
		// service to close it), and a private node dials back poorly.
		opts = append(opts, libp2p.ForceReachabilityPrivate())
	default:
		opts = append(opts, libp2p.EnableNATService())
	}
	return opts
}

// dialRelays connects to the known relays when AutoNAT is to decide the
// node's reachability. AutoNAT asks peers that run its service to dial
// back, and AutoRelay reserves a slot only once AutoNAT has said
// "private"; a node behind NAT whose only contact is a commons would
// otherwise connect to nobody, AutoNAT would never ask, and the node would
// stay unknown and unreachable. A relay (a commons host) runs the AutoNAT
// service, so connecting to it lets AutoNAT decide.
func (n *Node) dialRelays(ctx context.Context, run *tracker) {
	if n.cfg.Reachability != ReachabilityAuto || len(n.cfg.Transport) > 0 {
		return
	}
	for _, r := range n.relays.list() {
		run.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			if err := n.host.Connect(cctx, r); err != nil && ctx.Err() == nil {
				n.log.Info("relay unreachable", "relay", r.ID, "err", err)
			}
		})
	}
}

// parseRelays turns relay multiaddrs (with /p2p/<id>) into AddrInfos.
func parseRelays(addrs []string) ([]peer.AddrInfo, error) {
	var out []peer.AddrInfo
	for _, s := range addrs {
		ai, err := peer.AddrInfoFromString(s)
		if err != nil {
			return nil, fmt.Errorf("relay address %q: %w (want a multiaddr ending in /p2p/<peer id>)", s, err)
		}
		out = append(out, *ai)
	}
	return out, nil
}

// punchLog remembers the peers whose connection a hole punch made direct,
// for Connections, and logs each punch.
type punchLog struct {
	log   *slog.Logger
	mu    sync.Mutex
	ok    map[peer.ID]time.Duration // how long the successful punch took
	tried map[peer.ID]bool          // DCUtR ran with the peer, whatever came of it
}

func (p *punchLog) Trace(evt *holepunch.Event) {
	p.mu.Lock()
	if p.tried == nil {
		p.tried = map[peer.ID]bool{}
	}
	p.tried[evt.Remote] = true
	p.mu.Unlock()
	switch e := evt.Evt.(type) {
	case *holepunch.EndHolePunchEvt:
		if e.Success {
			p.mu.Lock()
			if p.ok == nil {
				p.ok = map[peer.ID]time.Duration{}
			}
			p.ok[evt.Remote] = e.EllapsedTime
			p.mu.Unlock()
			p.log.Info("hole punched: the relayed connection is now direct", "peer", evt.Remote, "took", e.EllapsedTime.Round(time.Millisecond))
		} else {
			p.log.Info("hole punching failed: the connection stays relayed", "peer", evt.Remote, "err", e.Error)
		}
	case *holepunch.ProtocolErrorEvt:
		p.log.Info("hole punching refused by the protocol: the connection stays relayed", "peer", evt.Remote, "err", e.Error)
	case *holepunch.DirectDialEvt:
		if e.Success {
			p.log.Info("dialled a relayed peer directly", "peer", evt.Remote)
		}
	}
}

func (p *punchLog) punched(id peer.ID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.ok[id]
	return ok
}

// Connection kinds, as Connections reports them.
const (
	ConnDirect      = "direct"
	ConnRelayed     = "relayed"
	ConnHolePunched = "hole-punched"
)

// ConnInfo is one connection to a peer.
type ConnInfo struct {
	Addr      ma.Multiaddr
	Kind      string // ConnDirect, ConnRelayed or ConnHolePunched
	Direction string // "inbound" or "outbound"
	Opened    time.Time
}

// connInfo describes c.
func (n *Node) connInfo(c network.Conn) ConnInfo {
	st := c.Stat()
	kind := ConnDirect
	switch {
	case st.Limited || isCircuit(c.RemoteMultiaddr()):
		kind = ConnRelayed
	case n.punches.punched(c.RemotePeer()):
		kind = ConnHolePunched
	}
	dir := "outbound"
	if st.Direction == network.DirInbound {
		dir = "inbound"
	}
	return ConnInfo{Addr: c.RemoteMultiaddr(), Kind: kind, Direction: dir, Opened: st.Opened}
}

func isCircuit(a ma.Multiaddr) bool {
	_, err := a.ValueForProtocol(ma.P_CIRCUIT)
	return err == nil
}

// Reachability is what AutoNAT (or the configuration) says of this node
// now: public, private or unknown.
func (n *Node) Reachability() string {
	v, _ := n.reach.Load().(network.Reachability)
	return reachabilityName(v)
}

func reachabilityName(r network.Reachability) string {
	switch r {
	case network.ReachabilityPublic:
		return "public"
	case network.ReachabilityPrivate:
		return "private"
	}
	return "unknown"
}

// Relays are the relays this node knows of (configured and learned).
func (n *Node) Relays() []peer.AddrInfo { return n.relays.list() }

// AddRelays adds relays learned at run time (a commons' libp2p host); a
// private node reserves a slot on them. It returns how many were new.
func (n *Node) AddRelays(ais ...peer.AddrInfo) int {
	added := n.relays.add(ais...)
	if added > 0 {
		n.log.Info("relays learned", "new", added, "known", len(n.relays.list()))
	}
	return added
}

// AddrsChanged receives a value after the host's addresses changed (a
// relay slot reserved or lost, a new observed address): the directory
// registers the new ones. Changes that come while one waits are merged.
func (n *Node) AddrsChanged() <-chan struct{} { return n.addrsChanged }

// watchReach logs reachability and address changes until the node
// closes, and signals AddrsChanged after each address change.
func (n *Node) watchReach() error {
	sub, err := n.host.EventBus().Subscribe([]any{new(event.EvtLocalReachabilityChanged), new(event.EvtLocalAddressesUpdated)})
	if err != nil {
		return fmt.Errorf("gossip: watching reachability: %w", err)
	}
	n.tasks.Go(func() {
		defer func() { _ = sub.Close() }()
		for {
			select {
			case <-n.ctx.Done():
				return
			case e, ok := <-sub.Out():
				if !ok {
					return
				}
				switch e := e.(type) {
				case event.EvtLocalReachabilityChanged:
					old, _ := n.reach.Swap(e.Reachability).(network.Reachability)
					if old != e.Reachability {
						n.log.Info("reachability changed", "from", reachabilityName(old), "to", reachabilityName(e.Reachability))
					}
				case event.EvtLocalAddressesUpdated:
					if !e.Diffs {
						continue
					}
					var added, removed []string
					for _, a := range e.Current {
						if a.Action == event.Added {
							added = append(added, a.Address.String())
						}
					}
					for _, a := range e.Removed {
						removed = append(removed, a.Address.String())
					}
					if len(added)+len(removed) == 0 {
						continue
					}
					n.log.Info("addresses changed", "added", added, "removed", removed)
					select {
					case n.addrsChanged <- struct{}{}:
					default:
					}
				}
			}
		}
	})
	return nil
}

// PingTimeout bounds one Ping.
const PingTimeout = 2 * time.Second

// Ping measures the round trip to every connected peer at once (over a
// relayed connection too), within PingTimeout; Peers then reports it.
func (n *Node) Ping(ctx context.Context) {
	ctx, cancel := context.WithTimeout(network.WithAllowLimitedConn(ctx, "remem ping"), PingTimeout)
	defer cancel()
	var wg sync.WaitGroup
	for _, p := range n.host.Network().Peers() {
		wg.Go(func() {
			select {
			case res := <-ping.Ping(ctx, n.host, p):
				if res.Error == nil {
					n.log.Debug("ping", "peer", p, "rtt", res.RTT)
				}
			case <-ctx.Done():
			}
		})
	}
	wg.Wait()
}

// autorelayTag is the tag AutoRelay protects a relay's connection with
// while it holds a reservation there (go-libp2p's relay_finder.go).
const autorelayTag = "autorelay"

// withPrivateRelayAddrs is the host's address factory. AutoRelay
// advertises a relayed address only through a relay's public addresses;
// a relay on a LAN (or on loopback, in tests) would give a private node
// nothing to advertise. So while the node is not public, for every relay
// it holds a reservation on, the relay's non-public addresses are
// added as relayed ones too; a peer that cannot reach them fails that dial
// only.
func (n *Node) withPrivateRelayAddrs(addrs []ma.Multiaddr) []ma.Multiaddr {
	h := n.hostOrNil()
	if h == nil || n.Reachability() == "public" {
		return addrs
	}
	out := addrs
	for _, r := range h.Network().Peers() {
		if !h.ConnManager().IsProtected(r, autorelayTag) {
			continue
		}
		circuit, err := ma.NewMultiaddr("/p2p/" + r.String() + "/p2p-circuit")
		if err != nil {
			continue
		}
		for _, a := range h.Peerstore().Addrs(r) {
			if isCircuit(a) || manet.IsPublicAddr(a) || manet.IsIPUnspecified(a) || isLinkLocal(a) {
				continue
			}
			out = append(out, a.Encapsulate(circuit))
		}
	}
	return ma.Unique(out)
}

// hostOrNil is the host once New has it.
func (n *Node) hostOrNil() host.Host {
	n.hostMu.Lock()
	defer n.hostMu.Unlock()
	return n.host
}

// isConnected: a connection, direct or relayed (go-libp2p calls a peer
// reached only through a relay Limited, not Connected).
func isConnected(c network.Connectedness) bool {
	return c == network.Connected || c == network.Limited
}

// attempted reports whether DCUtR ever ran with id.
func (p *punchLog) attempted(id peer.ID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tried[id]
}

// punchReady reports whether this node serves DCUtR: go-libp2p registers
// the protocol only once the node knows a public address of its own.
func (n *Node) punchReady() bool {
	return slices.Contains(n.host.Mux().Protocols(), holepunch.Protocol)
}

// Repunching. The node that receives a relayed connection starts the hole
// punch, and only if it serves DCUtR by then; a relayed connection that
// arrives a moment too early (a peer that dialled through the relay while
// this node was starting) is never punched, and go-libp2p never tries
// again. So once this node serves DCUtR, a peer it holds only relayed
// connections from, with which DCUtR never ran, is dialled again through
// the relay from this side: the peer now receives a relayed connection
// and starts the punch. Once per peer.
const (
	repunchEvery = 5 * time.Second
	// repunchAfter leaves a fresh relayed connection to its own punch.
	repunchAfter = 10 * time.Second
)

func (n *Node) repunchLoop(ctx context.Context) {
	tick := time.NewTicker(repunchEvery)
	defer tick.Stop()
	done := map[peer.ID]bool{}
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if !n.punchReady() {
			continue
		}
		for _, p := range n.host.Network().Peers() {
			if done[p] || n.punches.attempted(p) {
				continue
			}
			circuit, ok := n.unpunched(p)
			if !ok {
				continue
			}
			done[p] = true
			n.log.Info("dialling a relayed peer again so that it punches a hole", "peer", p, "via", circuit)
			for _, c := range n.host.Network().ConnsToPeer(p) {
				_ = c.Close() // a relayed connection, replaced at once by the dial below
			}
			if err := n.Connect(ctx, peer.AddrInfo{ID: p, Addrs: []ma.Multiaddr{circuit}}); err != nil && ctx.Err() == nil {
				n.log.Info("dialling a relayed peer again failed", "peer", p, "err", err)
			}
		}
	}
}

// unpunched: every connection to p is relayed, at least one came in
// through the relay more than repunchAfter ago; circuit is the address to
// dial p back through that relay.
func (n *Node) unpunched(p peer.ID) (circuit ma.Multiaddr, ok bool) {
	conns := n.host.Network().ConnsToPeer(p)
	for _, c := range conns {
		if !isCircuit(c.RemoteMultiaddr()) {
			return nil, false
		}
	}
	for _, c := range conns {
		st := c.Stat()
		if st.Direction != network.DirInbound || time.Since(st.Opened) < repunchAfter {
			continue
		}
		self, err := ma.NewComponent("p2p", p.String())
		if err != nil {
			return nil, false
		}
		return c.RemoteMultiaddr().Encapsulate(self.Multiaddr()), true
	}
	return nil, false
}
