package testnet

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/p2p/transport/tcp"
	ma "github.com/multiformats/go-multiaddr"
)

// Network names what the hosts of a run talk over.
type Network string

const (
	// NetworkTCP is real TCP sockets on 127.0.0.1: it measures real CPU
	// time and bytes, and its latencies include the machine's load.
	NetworkTCP Network = "tcp"
	// NetworkSim is go-libp2p's QUIC over simulated links in virtual time
	// (RunVirtual): latencies come from the links and the protocol only.
	NetworkSim Network = "sim"
)

// ParseNetwork reads "tcp" or "sim".
func ParseNetwork(s string) (Network, error) {
	switch Network(s) {
	case NetworkTCP, NetworkSim:
		return Network(s), nil
	}
	return "", fmt.Errorf("unknown network %q: want tcp (real sockets on 127.0.0.1) or sim (simulated links in virtual time)", s)
}

// rawSlots is the first host slot of the hosts that are not nodes
// (probes, offenders, sybils); nodes use their index as their slot.
const rawSlots = 1 << 20

// hostNet is what the hosts of a run talk over: where each listens, the
// libp2p transports it uses, and the bytes each node moved.
type hostNet interface {
	// nodeListen is the listen multiaddr of node idx. again asks for
	// another one after the last could not be opened (a port taken).
	nodeListen(idx int, again bool) (string, error)
	// transport are the libp2p options of host slot's transports; nil
	// leaves gossip its own (TCP and QUIC).
	transport(slot int) []libp2p.Option
	// rawHost are the options of a host that is not a node, at slot.
	rawHost(slot int) []libp2p.Option
	// adopt tells the network that h, started with rawHost, is no node's.
	adopt(h host.Host)
	// apiListener is a listener for a node's local API and a dialer of it.
	apiListener() (net.Listener, func(ctx context.Context) (net.Conn, error), error)
	// totals are the bytes each node sent and received so far (by index),
	// and poll samples them (where sampling is needed).
	totals() map[int]uint64
	poll()
	// counts reports whether totals measures anything.
	counts() bool
	close()
}

// tcpNet is real TCP on 127.0.0.1; the wire counter reads the sockets.
type tcpNet struct {
	*wireCounter
	mu    sync.Mutex
	ports map[int]int // node index → port
	spare []int       // reserved ports not yet given out
}

func newTCPNet(nodes int) (*tcpNet, error) {
	spare, err := reservePorts(nodes)
	if err != nil {
		return nil, err
	}
	return &tcpNet{wireCounter: newWireCounter(), ports: map[int]int{}, spare: spare}, nil
}

func (t *tcpNet) nodeListen(idx int, again bool) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	port, ok := t.ports[idx]
	if !ok || again {
		if len(t.spare) == 0 {
			more, err := reservePorts(1)
			if err != nil {
				return "", err
			}
			t.spare = more
		}
		port, t.spare = t.spare[0], t.spare[1:]
		t.ports[idx] = port
		t.own(port, idx)
	}
	return fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", port), nil
}

func (t *tcpNet) transport(int) []libp2p.Option { return nil }

func (t *tcpNet) rawHost(int) []libp2p.Option {
	return []libp2p.Option{libp2p.Transport(tcp.NewTCPTransport), libp2p.ListenAddrStrings("/ip4/127.0.0.1/tcp/0")}
}

func (t *tcpNet) adopt(h host.Host) {
	for _, a := range h.Addrs() {
		if v, err := a.ValueForProtocol(ma.P_TCP); err == nil {
			if port, err := strconv.Atoi(v); err == nil {
				t.own(port, -1)
			}
		}
	}
}

func (t *tcpNet) apiListener() (net.Listener, func(ctx context.Context) (net.Conn, error), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	addr := ln.Addr().String()
	var d net.Dialer
	return ln, func(ctx context.Context) (net.Conn, error) { return d.DialContext(ctx, "tcp", addr) }, nil
}

func (t *tcpNet) counts() bool { return t.available() }
func (t *tcpNet) close()       {}

// reservePorts finds n free TCP ports on 127.0.0.1, each distinct.
func reservePorts(n int) ([]int, error) {
	ls := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range ls {
			_ = l.Close() // only held to reserve the port
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("reserving a port on 127.0.0.1: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
