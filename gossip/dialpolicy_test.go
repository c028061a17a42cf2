package gossip

import (
	"fmt"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"
)

// TestDialableAddr: a directory entry names addresses that this node will
// dial, so only those that are public or on a network this node has an
// interface on pass; names, unspecified and multicast addresses, and
// private addresses of networks this node is not on, do not.
func TestDialableAddr(t *testing.T) {
	own := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("192.168.1.0/24"),
		netip.MustParsePrefix("::1/128"), netip.MustParsePrefix("fd00:1::/64"), netip.MustParsePrefix("fe80::/64")}
	const relay = "/ip4/8.8.4.4/tcp/4001/p2p/12D3KooWDpJ7As7BWAwRMfu1VU2WCqNjvq387JEYKDBj4kx6nXTN"
	for _, tc := range []struct {
		addr string
		want bool
	}{
		{"/ip4/8.8.8.8/tcp/4001", true},
		{"/ip4/8.8.8.8/udp/4001/quic-v1", true},
		{"/ip6/2a00:1450:4001:81b::200e/tcp/4001", true},
		{"/ip4/127.0.0.1/tcp/4001", true},
		{"/ip4/192.168.1.20/tcp/4001", true},
		{"/ip6/::1/tcp/4001", true},
		{"/ip6/fd00:1::5/tcp/4001", true},
		{relay + "/p2p-circuit", true},
		{"/ip4/10.1.2.3/tcp/4001", false},     // private, and no interface on 10/8
		{"/ip4/192.168.2.20/tcp/4001", false}, // another /24 than this node's
		{"/ip4/172.16.0.1/tcp/4001", false},
		{"/ip4/100.64.0.1/tcp/4001", false}, // shared (CGNAT) space
		{"/ip6/fd00:2::5/tcp/4001", false},
		{"/ip4/169.254.1.1/tcp/4001", false},
		{"/ip6/fe80::1/tcp/4001", false},
		{"/ip4/0.0.0.0/tcp/4001", false},
		{"/ip6/::/tcp/4001", false},
		{"/ip4/224.0.0.251/udp/5353", false},
		{"/ip4/255.255.255.255/tcp/1", false},
		{"/ip4/198.51.100.7/tcp/4001", false}, // documentation: unroutable
		{"/ip6/::ffff:10.1.2.3/tcp/4001", false},
		{"/ip6/::ffff:8.8.8.8/tcp/4001", false}, // IPv4-mapped: written as /ip4 by an honest node
		{"/dns4/victim.example/tcp/443", false},
		{"/dns6/victim.example/tcp/443", false},
		{"/dns/victim.example/tcp/443", false},
		{"/dnsaddr/victim.example", false},
		{"/unix/tmp/sock", false},
		{"/ip4/10.1.2.3/tcp/4001/p2p/12D3KooWDpJ7As7BWAwRMfu1VU2WCqNjvq387JEYKDBj4kx6nXTN/p2p-circuit", false}, // a relay off our networks
		{"/dns4/relay.example/tcp/4001/p2p/12D3KooWDpJ7As7BWAwRMfu1VU2WCqNjvq387JEYKDBj4kx6nXTN/p2p-circuit", false},
		{"/p2p-circuit", false},
	} {
		a, err := ma.NewMultiaddr(tc.addr)
		if err != nil {
			t.Fatalf("%s: %v", tc.addr, err)
		}
		if got := dialableAddr(a, own); got != tc.want {
			t.Errorf("dialableAddr(%s) = %v, want %v", tc.addr, got, tc.want)
		}
	}
}

// TestOwnNetworks: this machine's own networks include loopback (every
// test host has it), and no prefix is wider than what an interface holds.
func TestOwnNetworks(t *testing.T) {
	nets := ownNetworks()
	lo := netip.MustParseAddr("127.0.0.1")
	found := false
	for _, p := range nets {
		if p.Contains(lo) {
			found = true
		}
		if p.Bits() == 0 {
			t.Errorf("own network %s covers every address", p)
		}
	}
	if !found {
		t.Errorf("own networks %v hold no loopback", nets)
	}
}

// TestDialBackoff: an address whose dial failed waits DirectoryBackoff,
// doubling up to DirectoryMaxBackoff; a connection clears it; and a full
// table lets no new address be dialed until an entry has waited its time.
func TestDialBackoff(t *testing.T) {
	var b dialBackoff
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	const k = "/ip4/127.0.0.1/tcp/1"
	if !b.ready(k, now) {
		t.Fatal("a new address is not ready")
	}
	wait := DirectoryBackoff
	for range 8 {
		b.failed(k, now)
		if b.ready(k, now.Add(wait-time.Nanosecond)) || !b.ready(k, now.Add(wait)) {
			t.Fatalf("after a failure the wait is not %v", wait)
		}
		now = now.Add(wait)
		wait = min(2*wait, DirectoryMaxBackoff)
	}
	b.succeeded(k)
	if !b.ready(k, now) {
		t.Error("a connected address is still in backoff")
	}
	for i := range directoryBackoffMax {
		b.failed(fmt.Sprint("/ip4/127.0.0.1/tcp/", i), now)
	}
	if b.ready("/ip4/127.0.0.2/tcp/1", now) {
		t.Error("a new address is ready while the table is full")
	}
	if !b.ready("/ip4/127.0.0.2/tcp/1", now.Add(DirectoryBackoff)) {
		t.Error("a new address is not ready once the table's entries have waited")
	}
}

// TestDialKey: a /p2p/ suffix does not make the same address another
// (the victim's port is one key, whatever peer an entry claims), while a
// relayed address is counted with its peer.
func TestDialKey(t *testing.T) {
	p1, p2 := peer.ID("p1"), peer.ID("p2")
	direct := ma.StringCast("/ip4/127.0.0.1/tcp/1")
	claimed := ma.StringCast("/ip4/127.0.0.1/tcp/1/p2p/12D3KooWDpJ7As7BWAwRMfu1VU2WCqNjvq387JEYKDBj4kx6nXTN")
	if dialKey(direct, p1) != dialKey(claimed, p2) {
		t.Errorf("%s and %s are two keys", direct, claimed)
	}
	relayed := ma.StringCast("/ip4/8.8.4.4/tcp/4001/p2p/12D3KooWDpJ7As7BWAwRMfu1VU2WCqNjvq387JEYKDBj4kx6nXTN/p2p-circuit")
	if dialKey(relayed, p1) == dialKey(relayed, p2) {
		t.Error("one relayed address of two peers is one key")
	}
}

// FuzzDialableAddr: whatever multiaddr a signed record carries, the
// filter and the backoff key neither panic nor let through anything but
// an IP address (or a relayed address through one) that is public or on
// this node's networks.
func FuzzDialableAddr(f *testing.F) {
	for _, s := range []string{"/ip4/8.8.8.8/tcp/4001", "/dns4/x.example/tcp/1", "/ip4/10.0.0.1/tcp/1",
		"/ip4/8.8.4.4/tcp/4001/p2p/12D3KooWDpJ7As7BWAwRMfu1VU2WCqNjvq387JEYKDBj4kx6nXTN/p2p-circuit", "/p2p-circuit", "/ip6/::/udp/1/quic-v1"} {
		f.Add(ma.StringCast(s).Bytes())
	}
	own := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := ma.NewMultiaddrBytes(b)
		if err != nil {
			return
		}
		_ = dialKey(a, peer.ID("p"))
		if !dialableAddr(a, own) {
			return
		}
		first := a[0].Protocol().Code
		if first != ma.P_IP4 && first != ma.P_IP6 {
			t.Errorf("%s passed, not an IP address", a)
		}
		ip, _ := netip.AddrFromSlice(a[0].RawValue())
		if !ip.IsGlobalUnicast() && !own[0].Contains(ip) {
			t.Errorf("%s passed: %s is neither public nor on this node's networks", a, ip)
		}
	})
}

// TestPlanDialsCaps: of a listing of 100 peers, each naming 6 addresses
// (3 of them shared with every other peer), a round dials 64 peers, at
// most DirectoryAddrsPerPeer addresses each, every shared address for one
// peer only, and nothing of this node itself.
func TestPlanDialsCaps(t *testing.T) {
	n := newNode(t)
	shared := []ma.Multiaddr{ma.StringCast("/ip4/127.0.0.1/tcp/1"), ma.StringCast("/ip4/127.0.0.1/tcp/2"), ma.StringCast("/ip4/127.0.0.1/tcp/3")}
	var ais []peer.AddrInfo
	for i := range 100 {
		ai := peer.AddrInfo{ID: peer.ID(fmt.Sprint("peer", i)), Addrs: slices.Clone(shared)}
		for j := range 3 {
			ai.Addrs = append(ai.Addrs, ma.StringCast(fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", 1000+10*i+j)))
		}
		ais = append(ais, ai)
	}
	ais = append(ais, peer.AddrInfo{ID: n.host.ID(), Addrs: shared})
	plan := n.planDials(ais, []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, time.Now())
	if len(plan.Dials) != DirectoryPeersPerRound {
		t.Fatalf("%d peers dialed, want %d", len(plan.Dials), DirectoryPeersPerRound)
	}
	seen := map[string]bool{}
	for _, ai := range plan.Dials {
		if ai.ID == n.host.ID() || len(ai.Addrs) > DirectoryAddrsPerPeer {
			t.Errorf("dials %s with %d addresses", ai.ID, len(ai.Addrs))
		}
		for _, a := range ai.Addrs {
			if seen[a.String()] {
				t.Errorf("%s is dialed for two peers", a)
			}
			seen[a.String()] = true
		}
	}
	if plan.Skipped["per round"] != 36*6 || plan.Skipped["taken"] == 0 {
		t.Errorf("skipped %v", plan.Skipped)
	}
}
