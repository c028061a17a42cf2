package relaysvc

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/record"
	pbv2 "github.com/libp2p/go-libp2p/p2p/protocol/circuitv2/pb"
	"github.com/libp2p/go-libp2p/p2p/protocol/circuitv2/proto"
	relayv2 "github.com/libp2p/go-libp2p/p2p/protocol/circuitv2/relay"
	"github.com/libp2p/go-libp2p/p2p/protocol/circuitv2/util"
	ma "github.com/multiformats/go-multiaddr"
	manet "github.com/multiformats/go-multiaddr/net"
)

// Circuit bounds.
const (
	// MaxCircuitsPerPeer bounds the circuits open from or to one peer
	// (go-libp2p's default): a remem pair needs one.
	MaxCircuitsPerPeer = 16
	// MaxLimitedCircuits bounds the circuits open at once that involve a
	// peer the relay does not serve. go-libp2p bounds them only per peer,
	// so free keys opened as many as they liked; at StrangerLimit, 64
	// carry at most 16 MiB per two minutes, about 140 KB/s. Remem's own
	// pairs do not count against it.
	MaxLimitedCircuits = 64
	// ServedWait is how long the relay waits for a peer that connected
	// less than this ago to become one it serves before it decides: a
	// member dials through the relay a moment after connecting to it,
	// before its GossipSub subscription (or its registration) is known,
	// and a circuit decided limited stays limited. It costs a stranger's
	// circuit that long, never a served peer's.
	ServedWait = 3 * time.Second
	// servedPoll is how often Serves is asked during ServedWait.
	servedPoll = 100 * time.Millisecond

	bufferSize       = 2048 // per direction of a circuit (go-libp2p's default)
	maxMessageSize   = 4096 // a hop or stop message (the protocol's)
	streamTimeout    = time.Minute
	connectTimeout   = 30 * time.Second
	handshakeTimeout = time.Minute
	gcEvery          = time.Minute
	reservationTag   = "relay-reservation"
)

// StrangerLimit is what a circuit that involves a peer the relay does not
// serve may carry: go-libp2p's default (2 minutes, 128 KiB each way),
// enough for a hole punch, the purpose the protocol names.
func StrangerLimit() *relayv2.RelayLimit { return relayv2.DefaultLimit() }

// Config configures a Relay.
type Config struct {
	// Serves reports whether the relay carries p without limits (nil:
	// nobody). It is asked on every reservation and circuit, so it must be
	// cheap.
	Serves func(p peer.ID) bool
	// AddrFilter chooses the relay's addresses a reservation carries (nil:
	// public ones, as go-libp2p does).
	AddrFilter func(ma.Multiaddr) bool
	// Logger (nil: discard).
	Logger *slog.Logger
}

// Relay is a circuit relay v2 service on a host.
type Relay struct {
	h        host.Host
	cfg      Config
	log      *slog.Logger
	scope    network.ResourceScopeSpan
	notifiee network.Notifiee
	ctx      context.Context
	cancel   context.CancelFunc
	pipes    sync.WaitGroup // the copy goroutines of open circuits
	gcDone   chan struct{}

	mu       sync.Mutex
	closed   bool
	slots    slots
	circuits map[peer.ID]int       // open circuits from or to each peer
	limited  int                   // open circuits with a stranger
	open     map[*circuit]struct{} // reset at Close
}

// circuit is one relayed connection: the source's hop stream and the
// destination's stop stream.
type circuit struct{ src, dst network.Stream }

// New starts the relay service on h.
func New(h host.Host, cfg Config) (*Relay, error) {
	if cfg.AddrFilter == nil {
		cfg.AddrFilter = manet.IsPublicAddr
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Relay{h: h, cfg: cfg, log: log, ctx: ctx, cancel: cancel, gcDone: make(chan struct{}),
		slots: slots{}, circuits: map[peer.ID]int{}, open: map[*circuit]struct{}{}}
	err := h.Network().ResourceManager().ViewService(relayv2.ServiceName, func(s network.ServiceScope) error {
		var err error
		r.scope, err = s.BeginSpan()
		return err
	})
	if err != nil {
		cancel()
		return nil, err
	}
	h.SetStreamHandler(proto.ProtoIDv2Hop, r.handleStream)
	r.notifiee = &network.NotifyBundle{DisconnectedF: r.disconnected}
	h.Network().Notify(r.notifiee)
	go r.gcLoop()
	return r, nil
}

// Close stops the service: no new reservation or circuit, the open
// circuits are reset, and every goroutine of the relay has ended on
// return.
func (r *Relay) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	open := r.open
	r.open = map[*circuit]struct{}{}
	r.mu.Unlock()
	r.h.RemoveStreamHandler(proto.ProtoIDv2Hop)
	r.h.Network().StopNotify(r.notifiee)
	r.cancel()
	for c := range open {
		_, _ = c.src.Reset(), c.dst.Reset()
	}
	<-r.gcDone
	r.pipes.Wait()
	r.mu.Lock()
	for p := range r.slots {
		r.h.ConnManager().UntagPeer(p, reservationTag)
	}
	r.slots = slots{}
	r.mu.Unlock()
	r.scope.Done()
	return nil
}

func (r *Relay) handleStream(s network.Stream) {
	if err := s.Scope().SetService(relayv2.ServiceName); err != nil {
		_ = s.Reset()
		return
	}
	if err := s.Scope().ReserveMemory(maxMessageSize, network.ReservationPriorityAlways); err != nil {
		_ = s.Reset()
		return
	}
	defer s.Scope().ReleaseMemory(maxMessageSize)
	rd := util.NewDelimitedReader(s, maxMessageSize)
	defer rd.Close()
	_ = s.SetReadDeadline(time.Now().Add(streamTimeout))
	var msg pbv2.HopMessage
	if err := rd.ReadMsg(&msg); err != nil {
		r.refuse(s, pbv2.Status_MALFORMED_MESSAGE)
		return
	}
	_ = s.SetReadDeadline(time.Time{})
	switch msg.GetType() {
	case pbv2.HopMessage_RESERVE:
		r.handleReserve(s)
	case pbv2.HopMessage_CONNECT:
		r.handleConnect(s, &msg)
	default:
		r.refuse(s, pbv2.Status_MALFORMED_MESSAGE)
	}
}

func (r *Relay) handleReserve(s network.Stream) {
	defer func() { _ = s.Close() }()
	p, a := s.Conn().RemotePeer(), s.Conn().RemoteMultiaddr()
	if isCircuit(a) { // a reservation through another relay reaches nobody
		r.refuse(s, pbv2.Status_PERMISSION_DENIED)
		return
	}
	served := r.serves(p)
	now := time.Now()
	expire := now.Add(ReservationTTL)
	sl, err := newSlot(a, !served, expire)
	r.mu.Lock()
	switch {
	case r.closed:
		err = errors.New("the relay is closed")
	case err == nil:
		err = r.slots.take(p, sl, now)
	}
	if err == nil {
		r.h.ConnManager().TagPeer(p, reservationTag, relayv2.ReservationTagWeight)
	}
	r.mu.Unlock()
	if err != nil {
		r.log.Debug("relay reservation refused", "peer", p, "addr", a, "served", served, "err", err)
		r.refuse(s, pbv2.Status_RESERVATION_REFUSED)
		return
	}
	r.log.Debug("relay reservation", "peer", p, "served", served)
	var limit *pbv2.Limit
	if !served {
		limit = limitMsg(StrangerLimit())
	}
	if err := r.respond(s, pbv2.Status_OK, r.reservation(p, expire), limit); err != nil {
		_ = s.Reset() // the slot expires unused
	}
}

func (r *Relay) handleConnect(s network.Stream, msg *pbv2.HopMessage) {
	src := s.Conn().RemotePeer()
	span, err := r.scope.BeginSpan()
	if err != nil {
		r.refuse(s, pbv2.Status_RESOURCE_LIMIT_EXCEEDED)
		return
	}
	fail := func(status pbv2.Status) {
		span.Done()
		r.refuse(s, status)
	}
	if err := span.ReserveMemory(2*bufferSize, network.ReservationPriorityHigh); err != nil {
		fail(pbv2.Status_RESOURCE_LIMIT_EXCEEDED)
		return
	}
	if isCircuit(s.Conn().RemoteMultiaddr()) {
		fail(pbv2.Status_PERMISSION_DENIED)
		return
	}
	dest, err := util.PeerToPeerInfoV2(msg.GetPeer())
	if err != nil {
		fail(pbv2.Status_MALFORMED_MESSAGE)
		return
	}
	r.mu.Lock()
	reserved := r.slots.holds(dest.ID, time.Now())
	r.mu.Unlock()
	if !reserved {
		fail(pbv2.Status_NO_RESERVATION)
		return
	}
	var limit *relayv2.RelayLimit
	if !r.serves(src) || !r.serves(dest.ID) {
		limit = StrangerLimit()
	}
	if status := r.openCircuit(src, dest.ID, limit != nil); status != pbv2.Status_OK {
		fail(status)
		return
	}
	cleanup := func() {
		span.Done()
		r.closeCircuit(src, dest.ID, limit != nil)
	}
	bs, status := r.stop(src, dest.ID, limit)
	if status != pbv2.Status_OK {
		cleanup()
		r.refuse(s, status)
		return
	}
	resp := pbv2.HopMessage{Type: pbv2.HopMessage_STATUS.Enum(), Status: pbv2.Status_OK.Enum(), Limit: limitMsg(limit)}
	if err := util.NewDelimitedWriter(s).WriteMsg(&resp); err != nil {
		_, _ = bs.Reset(), s.Reset()
		cleanup()
		return
	}
	r.log.Debug("relaying", "src", src, "dest", dest.ID, "limited", limit != nil)
	r.pipe(&circuit{src: s, dst: bs}, limit, cleanup)
}

// openCircuit counts a new circuit from src to dest, unless a bound
// forbids it.
func (r *Relay) openCircuit(src, dest peer.ID, limited bool) pbv2.Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.closed:
		return pbv2.Status_PERMISSION_DENIED
	case r.circuits[src] >= MaxCircuitsPerPeer, r.circuits[dest] >= MaxCircuitsPerPeer:
		return pbv2.Status_RESOURCE_LIMIT_EXCEEDED
	case limited && r.limited >= MaxLimitedCircuits:
		return pbv2.Status_RESOURCE_LIMIT_EXCEEDED
	}
	r.circuits[src]++
	r.circuits[dest]++
	if limited {
		r.limited++
	}
	return pbv2.Status_OK
}

func (r *Relay) closeCircuit(src, dest peer.ID, limited bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range []peer.ID{src, dest} {
		if r.circuits[p]--; r.circuits[p] <= 0 {
			delete(r.circuits, p)
		}
	}
	if limited {
		r.limited--
	}
}

// stop opens the stop stream to dest over its existing connection and
// runs the handshake that tells it src is calling.
func (r *Relay) stop(src, dest peer.ID, limit *relayv2.RelayLimit) (network.Stream, pbv2.Status) {
	ctx, cancel := context.WithTimeout(r.ctx, connectTimeout)
	defer cancel()
	bs, err := r.h.NewStream(network.WithNoDial(ctx, "relay connect"), dest, proto.ProtoIDv2Stop)
	if err != nil {
		return nil, pbv2.Status_CONNECTION_FAILED
	}
	ok := false
	defer func() {
		if !ok {
			_ = bs.Reset()
		}
	}()
	if err := bs.Scope().SetService(relayv2.ServiceName); err != nil {
		return nil, pbv2.Status_RESOURCE_LIMIT_EXCEEDED
	}
	if err := bs.Scope().ReserveMemory(maxMessageSize, network.ReservationPriorityAlways); err != nil {
		return nil, pbv2.Status_RESOURCE_LIMIT_EXCEEDED
	}
	defer bs.Scope().ReleaseMemory(maxMessageSize)
	rd := util.NewDelimitedReader(bs, maxMessageSize)
	defer rd.Close()
	_ = bs.SetDeadline(time.Now().Add(handshakeTimeout))
	req := pbv2.StopMessage{Type: pbv2.StopMessage_CONNECT.Enum(), Peer: util.PeerInfoToPeerV2(peer.AddrInfo{ID: src}), Limit: limitMsg(limit)}
	if err := util.NewDelimitedWriter(bs).WriteMsg(&req); err != nil {
		return nil, pbv2.Status_CONNECTION_FAILED
	}
	var resp pbv2.StopMessage
	if err := rd.ReadMsg(&resp); err != nil || resp.GetType() != pbv2.StopMessage_STATUS || resp.GetStatus() != pbv2.Status_OK {
		return nil, pbv2.Status_CONNECTION_FAILED
	}
	_ = bs.SetDeadline(time.Time{})
	ok = true
	return bs, pbv2.Status_OK
}

// pipe copies both ways between the circuit's streams, within limit when
// there is one; cleanup runs once both directions end.
func (r *Relay) pipe(c *circuit, limit *relayv2.RelayLimit, cleanup func()) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		_, _ = c.src.Reset(), c.dst.Reset()
		cleanup()
		return
	}
	r.open[c] = struct{}{}
	r.pipes.Add(2)
	r.mu.Unlock()
	if limit != nil {
		deadline := time.Now().Add(limit.Duration)
		_, _ = c.src.SetDeadline(deadline), c.dst.SetDeadline(deadline)
	}
	var left atomic.Int32
	left.Store(2)
	done := func() {
		if left.Add(-1) == 0 {
			_, _ = c.src.Close(), c.dst.Close()
			r.mu.Lock()
			delete(r.open, c)
			r.mu.Unlock()
			cleanup()
		}
	}
	go r.copy(c.dst, c.src, limit, done)
	go r.copy(c.src, c.dst, limit, done)
}

// copy moves what src sends to dst, at most limit.Data when limited.
func (r *Relay) copy(dst, src network.Stream, limit *relayv2.RelayLimit, done func()) {
	defer r.pipes.Done()
	defer done()
	buf := make([]byte, bufferSize)
	var from io.Reader = src
	if limit != nil {
		from = io.LimitReader(src, limit.Data)
	}
	n, err := io.CopyBuffer(struct{ io.Writer }{dst}, struct{ io.Reader }{from}, buf)
	if err != nil {
		_, _ = src.Reset(), dst.Reset()
		return
	}
	_ = dst.CloseWrite()
	if limit != nil && n == limit.Data {
		_ = src.CloseRead() // the rest is not carried
	}
}

// serves asks Config.Serves, waiting up to ServedWait for a peer that
// has just connected (see ServedWait).
func (r *Relay) serves(p peer.ID) bool {
	if r.cfg.Serves == nil {
		return false
	}
	if r.cfg.Serves(p) {
		return true
	}
	wait := ServedWait - r.connectedFor(p)
	if wait <= 0 {
		return false
	}
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	tick := time.NewTicker(servedPoll)
	defer tick.Stop()
	for {
		select {
		case <-r.ctx.Done():
			return false
		case <-deadline.C:
			return r.cfg.Serves(p)
		case <-tick.C:
			if r.cfg.Serves(p) {
				return true
			}
		}
	}
}

// connectedFor is how long p has been connected (ServedWait when it is
// not connected: nothing will come).
func (r *Relay) connectedFor(p peer.ID) time.Duration {
	var first time.Time
	for _, c := range r.h.Network().ConnsToPeer(p) {
		if o := c.Stat().Opened; first.IsZero() || o.Before(first) {
			first = o
		}
	}
	if first.IsZero() {
		return ServedWait
	}
	return time.Since(first)
}

// reservation is the reservation message for p: the relay's addresses
// and a voucher signed with the host's key.
func (r *Relay) reservation(p peer.ID, expire time.Time) *pbv2.Reservation {
	exp := uint64(expire.Unix())
	rsvp := &pbv2.Reservation{Expire: &exp}
	self, err := ma.NewComponent("p2p", r.h.ID().String())
	if err != nil {
		return rsvp
	}
	for _, a := range r.h.Addrs() {
		if !r.cfg.AddrFilter(a) {
			continue
		}
		switch id, _ := peer.IDFromP2PAddr(a); id {
		case "":
			a = a.Encapsulate(self.Multiaddr())
		case r.h.ID():
		default:
			continue
		}
		rsvp.Addrs = append(rsvp.Addrs, a.Bytes())
	}
	env, err := record.Seal(&proto.ReservationVoucher{Relay: r.h.ID(), Peer: p, Expiration: expire}, r.h.Peerstore().PrivKey(r.h.ID()))
	if err != nil {
		return rsvp
	}
	if blob, err := env.Marshal(); err == nil {
		rsvp.Voucher = blob
	}
	return rsvp
}

func limitMsg(l *relayv2.RelayLimit) *pbv2.Limit {
	if l == nil {
		return nil
	}
	d, data := uint32(l.Duration/time.Second), uint64(l.Data)
	return &pbv2.Limit{Duration: &d, Data: &data}
}

func (r *Relay) respond(s network.Stream, status pbv2.Status, rsvp *pbv2.Reservation, limit *pbv2.Limit) error {
	_ = s.SetWriteDeadline(time.Now().Add(streamTimeout))
	defer func() { _ = s.SetWriteDeadline(time.Time{}) }()
	msg := pbv2.HopMessage{Type: pbv2.HopMessage_STATUS.Enum(), Status: status.Enum(), Reservation: rsvp, Limit: limit}
	return util.NewDelimitedWriter(s).WriteMsg(&msg)
}

// refuse answers s with status and ends it.
func (r *Relay) refuse(s network.Stream, status pbv2.Status) {
	if err := r.respond(s, status, nil, nil); err != nil {
		_ = s.Reset()
		return
	}
	_ = s.Close()
}

// disconnected drops the slot of a peer that has no connection left.
func (r *Relay) disconnected(n network.Network, c network.Conn) {
	p := c.RemotePeer()
	if n.Connectedness(p) == network.Connected {
		return
	}
	r.mu.Lock()
	delete(r.slots, p)
	r.mu.Unlock()
}

func (r *Relay) gcLoop() {
	defer close(r.gcDone)
	tick := time.NewTicker(gcEvery)
	defer tick.Stop()
	for {
		select {
		case <-r.ctx.Done():
			return
		case <-tick.C:
			r.mu.Lock()
			for _, p := range r.slots.expire(time.Now()) {
				r.h.ConnManager().UntagPeer(p, reservationTag)
			}
			r.mu.Unlock()
		}
	}
}

func isCircuit(a ma.Multiaddr) bool {
	_, err := a.ValueForProtocol(ma.P_CIRCUIT)
	return err == nil
}
