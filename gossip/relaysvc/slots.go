package relaysvc

import (
	"errors"
	"net/netip"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"
	manet "github.com/multiformats/go-multiaddr/net"
)

// Reservation bounds. A reservation costs the relay a connection it keeps
// open for ReservationTTL and a map entry; what it lets through is bounded
// per circuit (StrangerLimit, MaxCircuitsPerPeer, MaxLimitedCircuits).
const (
	// MaxReservations bounds the slots held at once: go-libp2p's default,
	// 128 kept connections, nothing for a laptop or a small VPS.
	MaxReservations = 128
	// MaxStrangerReservations bounds the slots of peers the relay does
	// not serve: a quarter, so 96 always stay for its own peers. Before
	// it, 16 addresses took all 128 slots for an hour (issue 28). It costs
	// a peer the relay does not know yet (a member whose subscription
	// has not arrived) a refused reservation while strangers hold their
	// share; AutoRelay asks again within a minute.
	MaxStrangerReservations = 32
	// MaxReservationsPerIP is go-libp2p's default: a NAT rarely hides
	// more nodes of one team, and those meet on their LAN (mDNS).
	MaxReservationsPerIP = 8
	// MaxReservationsPerSubnet bounds the slots of one IPv4 /24 or IPv6
	// /56 (a home's or a small office's delegation), beside the per-IP
	// cap: addresses in one subnet cost an attacker little. Sixteen is two
	// full NATs; more honest nodes of one subnet than that share a LAN, or
	// reserve on their second relay.
	MaxReservationsPerSubnet = 16
	// IPv4SubnetBits and IPv6SubnetBits are the subnets of
	// MaxReservationsPerSubnet.
	IPv4SubnetBits = 24
	IPv6SubnetBits = 56
	// ReservationTTL is go-libp2p's default: AutoRelay refreshes before it.
	ReservationTTL = time.Hour
)

var (
	errTooManyReservations = errors.New("the relay holds its most reservations")
	errTooManyStrangers    = errors.New("the relay holds its most reservations of peers it does not serve")
	errTooManyForIP        = errors.New("too many reservations from this IP address")
	errTooManyForSubnet    = errors.New("too many reservations from this subnet")
	errNoIP                = errors.New("no IP address associated with the peer")
)

// slot is one reservation.
type slot struct {
	expire   time.Time
	ip       netip.Addr
	subnet   netip.Prefix
	stranger bool // the relay did not serve the peer when it reserved
}

// slots are the reservations held, by peer. The caps count at most
// MaxReservations entries, so each check counts them all.
type slots map[peer.ID]slot

// newSlot is the slot of a reservation from a; stranger says whether the
// relay serves the peer.
func newSlot(a ma.Multiaddr, stranger bool, expire time.Time) (slot, error) {
	nip, err := manet.ToIP(a)
	if err != nil {
		return slot{}, errNoIP
	}
	ip, ok := netip.AddrFromSlice(nip)
	if !ok {
		return slot{}, errNoIP
	}
	ip = ip.Unmap()
	bits := IPv6SubnetBits
	if ip.Is4() {
		bits = IPv4SubnetBits
	}
	subnet, err := ip.Prefix(bits)
	if err != nil {
		return slot{}, errNoIP
	}
	return slot{expire: expire, ip: ip, subnet: subnet, stranger: stranger}, nil
}

// take gives p the slot s unless a cap forbids it; a refresh replaces
// p's own slot, which does not count against it.
func (ss slots) take(p peer.ID, s slot, now time.Time) error {
	ss.expire(now)
	delete(ss, p)
	var strangers, sameIP, sameSubnet int
	for _, o := range ss {
		if o.stranger {
			strangers++
		}
		if o.ip == s.ip {
			sameIP++
		}
		if o.subnet == s.subnet {
			sameSubnet++
		}
	}
	switch {
	case len(ss) >= MaxReservations:
		return errTooManyReservations
	case s.stranger && strangers >= MaxStrangerReservations:
		return errTooManyStrangers
	case sameIP >= MaxReservationsPerIP:
		return errTooManyForIP
	case sameSubnet >= MaxReservationsPerSubnet:
		return errTooManyForSubnet
	}
	ss[p] = s
	return nil
}

// expire drops the slots past their time and returns their peers.
func (ss slots) expire(now time.Time) []peer.ID {
	var gone []peer.ID
	for p, s := range ss {
		if !now.Before(s.expire) {
			delete(ss, p)
			gone = append(gone, p)
		}
	}
	return gone
}

// holds reports whether p holds a live slot.
func (ss slots) holds(p peer.ID, now time.Time) bool {
	s, ok := ss[p]
	return ok && now.Before(s.expire)
}
