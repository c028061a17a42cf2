package gossip

import (
	"context"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"
	manet "github.com/multiformats/go-multiaddr/net"
)

// Dialing what a directory lists (issue 28). A directory entry is written
// by whoever holds a commons token, keys are free, and an entry's
// addresses are whatever its signer chose, so a listing could make every
// member dial a victim's address, over and over. What a node dials of a
// listing is therefore bounded here: only addresses that are public or on
// a network this node has an interface on (never a name, which a stranger
// could point anywhere, nor an unspecified, multicast or foreign private
// address); at most DirectoryAddrsPerPeer of one peer and
// DirectoryPeersPerRound peers a round; one address for one peer a round;
// and an address whose dial failed waits a backoff, doubling, before it
// is dialed again for any peer.

const (
	// DirectoryAddrsPerPeer is how many addresses of one listed peer a
	// round dials: an honest node lists a TCP and a QUIC address per
	// family, and a relayed one, and one that works is enough; a peer
	// whose first three do not answer is tried again, with others, next
	// round. It is also what one entry costs a victim per round at most.
	DirectoryAddrsPerPeer = 3
	// DirectoryPeersPerRound bounds the peers one round dials (the
	// listing holds 50 per topic, up to 16 topics): a team larger than
	// this is reached over a few rounds, and through gossip's peer
	// exchange meanwhile.
	DirectoryPeersPerRound = 64
	// DirectoryBackoff is the first wait before an address whose dial
	// failed is dialed again; it doubles up to DirectoryMaxBackoff. An
	// honest peer that was briefly down waits a minute, one gone for long
	// is tried every half hour, about every third round.
	DirectoryBackoff    = time.Minute
	DirectoryMaxBackoff = 30 * time.Minute
	// directoryBackoffMax bounds the addresses held in backoff: 64 peers
	// of 3 addresses a round fill it in 20 rounds. When it is full and
	// nothing in it has waited its time, new addresses are not dialed
	// (the flood that filled it is what they most likely are).
	directoryBackoffMax = 4096
)

// dialableAddr reports whether a listed address may be dialed by a node
// whose interfaces are on the networks own: an IP address (not a name),
// neither unspecified nor multicast nor IPv4-mapped nor IPv6 link-local
// (every interface has fe80::/64), that is public or
// inside one of own. A relayed address is judged by its relay's address.
func dialableAddr(a ma.Multiaddr, own []netip.Prefix) bool {
	if isCircuit(a) {
		relay, _ := ma.SplitFunc(a, func(c ma.Component) bool { return c.Protocol().Code == ma.P_CIRCUIT })
		if len(relay) == 0 {
			return false
		}
		a = relay
	}
	if len(a) == 0 {
		return false
	}
	switch a[0].Protocol().Code {
	case ma.P_IP4, ma.P_IP6:
	default:
		return false // a name, a unix socket, a zone: nothing a node advertises to be dialed
	}
	ip, ok := netip.AddrFromSlice(a[0].RawValue())
	if !ok || ip.IsUnspecified() || ip.IsMulticast() || ip.Is4In6() || (ip.Is6() && ip.IsLinkLocalUnicast()) {
		return false // an IPv6 link-local address needs a zone, which a record cannot carry
	}
	for _, p := range own {
		if p.Contains(ip) {
			return true
		}
	}
	return manet.IsPublicAddr(ma.Multiaddr{a[0]})
}

// ownNetworks are the networks this machine's interfaces are on (loopback
// included), read now: interfaces come and go.
func ownNetworks() []netip.Prefix {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	var out []netip.Prefix
	for _, a := range addrs {
		ipn, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		ip, ok := netip.AddrFromSlice(ipn.IP)
		if !ok {
			continue
		}
		ip = ip.Unmap()
		bits, _ := ipn.Mask.Size()
		if ip.Is4() && bits > 32 {
			bits -= 96
		}
		if p, err := ip.Prefix(bits); err == nil && bits > 0 {
			out = append(out, p)
		}
	}
	return out
}

// dialKey is what a backoff counts an address by: its transport part
// (a /p2p/ suffix is the entry's claim, not where the dial goes), and for
// a relayed address the peer as well, so that one fake entry behind a
// relay does not hold back the relay's honest peers.
func dialKey(a ma.Multiaddr, p peer.ID) string {
	if isCircuit(a) {
		return a.String() + "/p2p/" + p.String()
	}
	transport, _ := peer.SplitAddr(a)
	if transport == nil {
		return a.String()
	}
	return transport.String()
}

// dialBackoff holds the addresses whose last dial failed, with when they
// may be dialed again.
type dialBackoff struct {
	mu    sync.Mutex
	addrs map[string]backoffState
}

type backoffState struct {
	until time.Time
	wait  time.Duration
}

// ready reports whether key may be dialed at now.
func (b *dialBackoff) ready(key string, now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	s, ok := b.addrs[key]
	if ok {
		return !now.Before(s.until)
	}
	if len(b.addrs) < directoryBackoffMax {
		return true
	}
	for k, s := range b.addrs {
		if !now.Before(s.until) {
			delete(b.addrs, k)
		}
	}
	return len(b.addrs) < directoryBackoffMax
}

// failed doubles key's wait (the first is DirectoryBackoff).
func (b *dialBackoff) failed(key string, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.addrs == nil {
		b.addrs = map[string]backoffState{}
	}
	s, ok := b.addrs[key]
	wait := DirectoryBackoff
	if ok {
		wait = min(2*s.wait, DirectoryMaxBackoff)
	}
	if !ok && len(b.addrs) >= directoryBackoffMax {
		return // ready refused it anyway until there is room
	}
	b.addrs[key] = backoffState{until: now.Add(wait), wait: wait}
}

// succeeded forgets key's backoff.
func (b *dialBackoff) succeeded(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.addrs, key)
}

// DialPlan is what a round will dial of a listing: per peer, the
// addresses chosen. Skipped counts the addresses left out, by why.
type DialPlan struct {
	Dials   []peer.AddrInfo
	Skipped map[string]int // "not dialable", "backoff", "taken", "per peer", "per round"
}

// planDials chooses what to dial of ais: this node and connected peers
// left out, then per peer at most DirectoryAddrsPerPeer dialable
// addresses not in backoff and not chosen for another peer this round,
// for at most DirectoryPeersPerRound peers.
func (n *Node) planDials(ais []peer.AddrInfo, own []netip.Prefix, now time.Time) DialPlan {
	plan := DialPlan{Skipped: map[string]int{}}
	taken := map[string]bool{}
	for _, ai := range ais {
		if ai.ID == "" || ai.ID == n.host.ID() || n.Connected(ai.ID) {
			continue
		}
		if len(plan.Dials) == DirectoryPeersPerRound {
			plan.Skipped["per round"] += len(ai.Addrs)
			continue
		}
		chosen := peer.AddrInfo{ID: ai.ID}
		for _, a := range ai.Addrs {
			key := dialKey(a, ai.ID)
			switch {
			case !dialableAddr(a, own):
				plan.Skipped["not dialable"]++
			case taken[key]:
				plan.Skipped["taken"]++
			case len(chosen.Addrs) == DirectoryAddrsPerPeer:
				plan.Skipped["per peer"]++
			case !n.dirBackoff.ready(key, now):
				plan.Skipped["backoff"]++
			default:
				taken[key] = true
				chosen.Addrs = append(chosen.Addrs, a)
			}
		}
		if len(chosen.Addrs) > 0 {
			plan.Dials = append(plan.Dials, chosen)
		}
	}
	return plan
}

// DialListed dials what planDials chooses of a directory's listing, all
// at once, each within DirectoryDialTimeout, and waits for them. A failed
// dial puts its addresses in backoff; a connection clears it. It returns
// the plan and the peers connected.
func (n *Node) DialListed(ctx context.Context, ais []peer.AddrInfo) (DialPlan, int) {
	plan := n.planDials(ais, ownNetworks(), n.now())
	var wg sync.WaitGroup
	var mu sync.Mutex
	connected := 0
	for _, ai := range plan.Dials {
		wg.Go(func() {
			err := n.Connect(ctx, ai)
			if ctx.Err() != nil && err != nil {
				return // the round ended, not the address
			}
			for _, a := range ai.Addrs {
				if err != nil {
					n.dirBackoff.failed(dialKey(a, ai.ID), n.now())
				} else {
					n.dirBackoff.succeeded(dialKey(a, ai.ID))
				}
			}
			if err != nil {
				n.log.Debug("directory: dial failed", "peer", ai.ID, "err", err)
				return
			}
			mu.Lock()
			connected++
			mu.Unlock()
		})
	}
	wg.Wait()
	return plan, connected
}
