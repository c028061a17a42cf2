package relaysvc

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/p2p/protocol/circuitv2/client"
	pbv2 "github.com/libp2p/go-libp2p/p2p/protocol/circuitv2/pb"
	"github.com/libp2p/go-libp2p/p2p/protocol/circuitv2/proto"
	"github.com/libp2p/go-libp2p/p2p/protocol/circuitv2/util"
	"github.com/libp2p/go-libp2p/p2p/transport/tcp"
	ma "github.com/multiformats/go-multiaddr"
	"go.uber.org/goleak"
	gproto "google.golang.org/protobuf/proto"
)

func testPeer(t *testing.T) peer.ID {
	t.Helper()
	_, pub, err := crypto.GenerateEd25519Key(nil)
	if err != nil {
		t.Fatal(err)
	}
	id, err := peer.IDFromPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func slotAt(t *testing.T, addr string, stranger bool, expire time.Time) slot {
	t.Helper()
	s, err := newSlot(ma.StringCast(addr), stranger, expire)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSlotCaps: each reservation cap holds where it should and no
// sooner; a refresh does not count against itself; expired slots free
// their room.
func TestSlotCaps(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	later := now.Add(ReservationTTL)
	// fill takes n slots from addresses addr(i); it returns how many were taken.
	fill := func(ss slots, n int, stranger bool, addr func(i int) string) int {
		taken := 0
		for i := range n {
			if ss.take(testPeer(t), slotAt(t, addr(i), stranger, later), now) == nil {
				taken++
			}
		}
		return taken
	}
	distinct := func(i int) string { return fmt.Sprintf("/ip4/10.%d.%d.1/tcp/1", i/256, i%256) }
	for _, tc := range []struct {
		name string
		run  func(ss slots) (got, want int)
	}{
		{"per IP", func(ss slots) (int, int) {
			return fill(ss, MaxReservationsPerIP+3, false, func(int) string { return "/ip4/10.0.0.1/tcp/1" }), MaxReservationsPerIP
		}},
		{"per IPv4 /24", func(ss slots) (int, int) {
			return fill(ss, MaxReservationsPerSubnet+3, false, func(i int) string { return fmt.Sprintf("/ip4/10.0.0.%d/tcp/1", 1+i) }), MaxReservationsPerSubnet
		}},
		{"per IPv6 /56", func(ss slots) (int, int) {
			return fill(ss, MaxReservationsPerSubnet+3, false, func(i int) string { return fmt.Sprintf("/ip6/2001:db8:0:%x::1/tcp/1", i) }), MaxReservationsPerSubnet
		}},
		{"IPv6 /56s apart", func(ss slots) (int, int) {
			return fill(ss, MaxReservationsPerSubnet+3, false, func(i int) string { return fmt.Sprintf("/ip6/2001:db8:0:%x00::1/tcp/1", i+1) }), MaxReservationsPerSubnet + 3
		}},
		{"IPv4-mapped IPv6 is the IPv4 /24", func(ss slots) (int, int) {
			fill(ss, MaxReservationsPerSubnet, false, func(i int) string { return fmt.Sprintf("/ip4/10.0.0.%d/tcp/1", 1+i) })
			return fill(ss, 1, false, func(int) string { return "/ip6/::ffff:10.0.0.200/tcp/1" }), 0
		}},
		{"strangers' share", func(ss slots) (int, int) {
			return fill(ss, MaxStrangerReservations+5, true, distinct), MaxStrangerReservations
		}},
		{"served peers past the strangers' share", func(ss slots) (int, int) {
			fill(ss, MaxStrangerReservations, true, distinct)
			return fill(ss, MaxReservations, false, func(i int) string { return distinct(1000 + i) }), MaxReservations - MaxStrangerReservations
		}},
		{"in total", func(ss slots) (int, int) {
			return fill(ss, MaxReservations+5, false, distinct), MaxReservations
		}},
		{"a refresh takes no second slot", func(ss slots) (int, int) {
			p := testPeer(t)
			taken := 0
			for range MaxReservationsPerIP + 2 {
				if ss.take(p, slotAt(t, "/ip4/10.0.0.1/tcp/1", false, later), now) == nil {
					taken++
				}
			}
			return taken + len(ss) - 1, MaxReservationsPerIP + 2
		}},
		{"expired slots free their room", func(ss slots) (int, int) {
			for range MaxReservationsPerIP {
				ss[testPeer(t)] = slotAt(t, "/ip4/10.0.0.1/tcp/1", false, now)
			}
			return fill(ss, MaxReservationsPerIP, false, func(int) string { return "/ip4/10.0.0.1/tcp/1" }), MaxReservationsPerIP
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, want := tc.run(slots{}); got != want {
				t.Errorf("took %d, want %d", got, want)
			}
		})
	}
	if _, err := newSlot(ma.StringCast("/dns4/example.com/tcp/1"), true, later); err == nil {
		t.Error("a slot from an address without an IP")
	}
}

// TestLimitedCircuitsBounded: circuits with strangers stop at
// MaxLimitedCircuits, whoever opens them; served pairs' circuits do not
// count against it; closing one frees its place.
func TestLimitedCircuitsBounded(t *testing.T) {
	r := &Relay{circuits: map[peer.ID]int{}}
	dest := func() peer.ID { return testPeer(t) }
	for i := range MaxLimitedCircuits {
		if st := r.openCircuit(testPeer(t), dest(), true); st != pbv2.Status_OK {
			t.Fatalf("limited circuit %d refused: %v", i+1, st)
		}
	}
	src, dst := testPeer(t), dest()
	if st := r.openCircuit(src, dst, true); st != pbv2.Status_RESOURCE_LIMIT_EXCEEDED {
		t.Errorf("limited circuit %d: %v, want RESOURCE_LIMIT_EXCEEDED", MaxLimitedCircuits+1, st)
	}
	if st := r.openCircuit(src, dst, false); st != pbv2.Status_OK {
		t.Errorf("a served pair's circuit refused at the strangers' bound: %v", st)
	}
	for i := range MaxCircuitsPerPeer - 1 {
		if st := r.openCircuit(src, dest(), false); st != pbv2.Status_OK {
			t.Fatalf("circuit %d of one peer refused: %v", i+2, st)
		}
	}
	if st := r.openCircuit(src, dest(), false); st != pbv2.Status_RESOURCE_LIMIT_EXCEEDED {
		t.Errorf("circuit %d of one peer: %v, want RESOURCE_LIMIT_EXCEEDED", MaxCircuitsPerPeer+1, st)
	}
	r.closeCircuit(src, dst, false)
	if st := r.openCircuit(src, dest(), false); st != pbv2.Status_OK {
		t.Errorf("after a close, the peer's circuit refused: %v", st)
	}
}

func newHost(t *testing.T, listen bool) host.Host {
	t.Helper()
	opts := []libp2p.Option{libp2p.Transport(tcp.NewTCPTransport), libp2p.DisableMetrics()}
	if listen {
		opts = append(opts, libp2p.ListenAddrStrings("/ip4/127.0.0.1/tcp/0"))
	} else {
		opts = append(opts, libp2p.NoListenAddrs)
	}
	h, err := libp2p.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

// hop sends raw bytes on a hop stream to the relay and returns the
// status it answers (or an error if it answers nothing).
func hop(t *testing.T, h host.Host, relay peer.ID, raw []byte) (pbv2.Status, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := h.NewStream(ctx, relay, proto.ProtoIDv2Hop)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Reset() }()
	_ = s.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := s.Write(raw); err != nil {
		return 0, err
	}
	_ = s.CloseWrite()
	var msg pbv2.HopMessage
	rd := util.NewDelimitedReader(s, maxMessageSize)
	defer rd.Close()
	if err := rd.ReadMsg(&msg); err != nil {
		return 0, err
	}
	return msg.GetStatus(), nil
}

func delimited(t *testing.T, msg *pbv2.HopMessage) []byte {
	t.Helper()
	b, err := gproto.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	return append(binary.AppendUvarint(nil, uint64(len(b))), b...)
}

// TestHostileHopMessages: what a stranger may send on the hop protocol
// is answered with a refusal, and the relay serves a reservation after.
func TestHostileHopMessages(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	rh := newHost(t, true)
	r, err := New(rh, Config{AddrFilter: func(ma.Multiaddr) bool { return true }})
	if err != nil {
		t.Fatal(err)
	}
	ri := peer.AddrInfo{ID: rh.ID(), Addrs: rh.Addrs()}
	h := newHost(t, false)
	if err := h.Connect(context.Background(), ri); err != nil {
		t.Fatal(err)
	}
	nobody := testPeer(t)
	for _, tc := range []struct {
		name string
		raw  []byte
		want pbv2.Status
	}{
		{"not protobuf", append(binary.AppendUvarint(nil, 8), "\xff\xff\xff\xff\xff\xff\xff\xff"...), pbv2.Status_MALFORMED_MESSAGE},
		{"over the size limit", binary.AppendUvarint(nil, maxMessageSize+1), pbv2.Status_MALFORMED_MESSAGE},
		{"cut short", binary.AppendUvarint(nil, 100), pbv2.Status_MALFORMED_MESSAGE},
		{"a status, not a request", delimited(t, &pbv2.HopMessage{Type: pbv2.HopMessage_STATUS.Enum()}), pbv2.Status_MALFORMED_MESSAGE},
		{"connect to no peer", delimited(t, &pbv2.HopMessage{Type: pbv2.HopMessage_CONNECT.Enum()}), pbv2.Status_MALFORMED_MESSAGE},
		{"connect to a bad peer id", delimited(t, &pbv2.HopMessage{Type: pbv2.HopMessage_CONNECT.Enum(), Peer: &pbv2.Peer{Id: []byte("garbage")}}), pbv2.Status_MALFORMED_MESSAGE},
		{"connect to a peer without a reservation", delimited(t, &pbv2.HopMessage{Type: pbv2.HopMessage_CONNECT.Enum(), Peer: util.PeerInfoToPeerV2(peer.AddrInfo{ID: nobody})}), pbv2.Status_NO_RESERVATION},
		{"connect to the relay itself", delimited(t, &pbv2.HopMessage{Type: pbv2.HopMessage_CONNECT.Enum(), Peer: util.PeerInfoToPeerV2(peer.AddrInfo{ID: rh.ID()})}), pbv2.Status_NO_RESERVATION},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := hop(t, h, rh.ID(), tc.raw)
			if err != nil || got != tc.want {
				t.Errorf("answered %v (%v), want %v", got, err, tc.want)
			}
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rsvp, err := client.Reserve(ctx, h, ri)
	if err != nil {
		t.Fatalf("a reservation after the hostile messages: %v", err)
	}
	if rsvp.LimitData == 0 {
		t.Error("a stranger's reservation names no limit")
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Reserve(ctx, h, ri); err == nil {
		t.Error("a reservation after Close")
	}
	_, _ = h.Close(), rh.Close()
	goleak.VerifyNone(t, ignore)
}

// TestServesWaitsForANewPeer: a peer that has just connected and is not
// served yet (its subscription or registration still on the way) is
// asked about again until it is, so its circuit is not decided limited
// for good; a peer not connected at all is not waited for.
func TestServesWaitsForANewPeer(t *testing.T) {
	rh := newHost(t, true)
	h := newHost(t, false)
	asked := map[peer.ID]int{}
	var mu sync.Mutex
	r, err := New(rh, Config{Serves: func(p peer.ID) bool {
		mu.Lock()
		defer mu.Unlock()
		asked[p]++
		return p == h.ID() && asked[p] >= 3 // known from the third question on
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	if err := h.Connect(context.Background(), peer.AddrInfo{ID: rh.ID(), Addrs: rh.Addrs()}); err != nil {
		t.Fatal(err)
	}
	if !r.serves(h.ID()) {
		t.Error("a peer that became served a moment after connecting was decided a stranger")
	}
	nobody := testPeer(t)
	if r.serves(nobody) {
		t.Error("a peer the policy never serves was served")
	}
	mu.Lock()
	defer mu.Unlock()
	if asked[nobody] != 1 {
		t.Errorf("a peer not connected was asked about %d times, want once (no wait)", asked[nobody])
	}
}
