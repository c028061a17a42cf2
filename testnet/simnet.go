package testnet

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/host"
	libp2pquic "github.com/libp2p/go-libp2p/p2p/transport/quic"
	"github.com/libp2p/go-libp2p/p2p/transport/quicreuse"
	"github.com/marcopolo/simnet"
	"github.com/quic-go/quic-go"
	"go.uber.org/fx"
)

// SimLinks are the links of the simulated network: every host has one
// link to the router, and a packet between two hosts takes Latency plus a
// uniform draw in [-Jitter, +Jitter], at Bandwidth bits per second on both
// links, and is lost with probability Loss.
type SimLinks struct {
	Latency   time.Duration `json:"latency_ns"`
	Jitter    time.Duration `json:"jitter_ns"`
	Bandwidth int           `json:"bandwidth_bps"` // on each host's uplink and downlink
	Loss      float64       `json:"loss"`
}

// simNet is the simulated network of a run: go-libp2p's QUIC transport over
// marcopolo/simnet's in-process links. It must be built and used inside a
// synctest bubble, where time moves only when every goroutine waits, so the
// latencies measured are those of the links and the protocol alone.
type simNet struct {
	links SimLinks
	nw    *simnet.Simnet

	mu    sync.Mutex
	rnd   *rand.Rand
	conns map[int][]*lossyConn // by host slot; a restart adds one
}

func newSimNet(l SimLinks, seed int64) *simNet {
	s := &simNet{links: l, rnd: newRand(seed, 11), conns: map[int][]*lossyConn{}}
	s.nw = &simnet.Simnet{LatencyFunc: s.latency}
	s.nw.Start()
	return s
}

func (s *simNet) latency(*simnet.Packet) time.Duration {
	d := s.links.Latency
	if s.links.Jitter > 0 {
		s.mu.Lock()
		d += time.Duration(s.rnd.Int64N(int64(2*s.links.Jitter)+1)) - s.links.Jitter
		s.mu.Unlock()
	}
	return max(0, d)
}

// lost draws whether the next packet is lost.
func (s *simNet) lost() bool {
	if s.links.Loss <= 0 {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rnd.Float64() < s.links.Loss
}

// listenAddr is the QUIC address of host slot i.
func (s *simNet) listenAddr(slot int) string {
	return "/ip4/" + simnet.IntToPublicIPv4(slot).String() + "/udp/8000/quic-v1"
}

// nodeListen never needs another address: nothing else uses the slot's.
func (s *simNet) nodeListen(idx int, _ bool) (string, error) { return s.listenAddr(idx), nil }

func (s *simNet) rawHost(slot int) []libp2p.Option {
	return append(s.transport(slot), libp2p.ListenAddrStrings(s.listenAddr(slot)))
}

func (s *simNet) adopt(host.Host) {}

// apiListener serves over in-process pipes: a real socket would wait
// outside the bubble, and virtual time would stop.
func (s *simNet) apiListener() (net.Listener, func(ctx context.Context) (net.Conn, error), error) {
	l := &pipeListener{conns: make(chan net.Conn, pipeBacklog), done: make(chan struct{})}
	return l, l.dial, nil
}

// transport is the host option set of slot: QUIC over the slot's link.
func (s *simNet) transport(slot int) []libp2p.Option {
	bw := simnet.LinkSettings{BitsPerSecond: s.links.Bandwidth}
	settings := simnet.NodeBiDiLinkSettings{Downlink: bw, Uplink: bw}
	src := &sourceIP{}
	reuse := []quicreuse.Option{
		quicreuse.OverrideSourceIPSelector(func() (quicreuse.SourceIPSelector, error) { return src, nil }),
		quicreuse.OverrideListenUDP(func(_ string, addr *net.UDPAddr) (net.PacketConn, error) {
			src.ip.Store(&addr.IP)
			// Under s.mu: simnet's NewEndpoint appends to its links
			// unguarded, and nodes start concurrently (a race -race saw).
			s.mu.Lock()
			c := &lossyConn{SimConn: s.nw.NewEndpoint(addr, settings), net: s}
			s.conns[slot] = append(s.conns[slot], c)
			s.mu.Unlock()
			return c, nil
		}),
	}
	return []libp2p.Option{
		libp2p.Transport(libp2pquic.NewTransport),
		libp2p.QUICReuse(func(l fx.Lifecycle, reset quic.StatelessResetKey, token quic.TokenGeneratorKey, opts ...quicreuse.Option) (*quicreuse.ConnManager, error) {
			cm, err := quicreuse.NewConnManager(reset, token, opts...)
			if err != nil {
				return nil, err
			}
			// libp2p closes a connection manager it made, not one given.
			l.Append(fx.StopHook(cm.Close))
			return cm, nil
		}, reuse...),
		// Address discovery through identify stalls a synctest bubble.
		libp2p.DisableIdentifyAddressDiscovery(),
	}
}

// totals are the bytes each node sent and received so far, as its
// simulated links counted them.
func (s *simNet) totals() map[int]uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[int]uint64, len(s.conns))
	for slot, cs := range s.conns {
		if slot >= rawSlots {
			continue
		}
		for _, c := range cs {
			st := c.Stats()
			out[slot] += uint64(st.BytesSent + st.BytesRcvd)
		}
	}
	return out
}

func (s *simNet) poll()        {}
func (s *simNet) counts() bool { return true }
func (s *simNet) close()       { s.nw.Close() }

// pipeBacklog is how many dialled connections wait for Accept; a dial past
// it fails, as a full TCP backlog would.
const pipeBacklog = 128

// pipeListener hands out one end of a net.Pipe per dial.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

func (l *pipeListener) dial(ctx context.Context) (net.Conn, error) {
	a, b := net.Pipe()
	select {
	case l.conns <- b:
		return a, nil
	case <-l.done:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	default:
		return nil, errors.New("the listener's backlog is full")
	}
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "127.0.0.1:0" }

// lossyConn drops the packets the network loses on their way out.
type lossyConn struct {
	*simnet.SimConn
	net *simNet
}

func (c *lossyConn) WriteTo(p []byte, addr net.Addr) (int, error) {
	if c.net.lost() {
		return len(p), nil
	}
	return c.SimConn.WriteTo(p, addr)
}

// sourceIP answers quic-go's question of the source address: the one
// simulated address of the host.
type sourceIP struct{ ip atomic.Pointer[net.IP] }

func (m *sourceIP) PreferredSourceIPForDestination(*net.UDPAddr) (net.IP, error) {
	return *m.ip.Load(), nil
}
