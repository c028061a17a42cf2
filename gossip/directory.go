package gossip

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/record"
)

// Directory support (SPEC §10 [ext]: a commons peer directory). The node
// seals a fresh peer record for each registration rather than reuse the
// one identify shows its peers (see commons/doc.go, "Peer directory"), and
// dials what a directory lists like any other found peer.

// DirectoryDialTimeout bounds one Connect.
const DirectoryDialTimeout = 5 * time.Second

// lastSeq is the Seq of the last record SignedPeerRecord sealed, in this
// process; records are never sealed with a lower or equal one.
var lastSeq atomic.Uint64

// SignedPeerRecord seals a new libp2p peer record of the host's current
// listen addresses with the memory key. Its Seq is strictly greater than
// that of every record sealed before in this process, and time based
// (Unix nanoseconds) so that it also grows across restarts.
func (n *Node) SignedPeerRecord() (*record.Envelope, error) {
	addrs := n.host.Addrs()
	if len(addrs) == 0 {
		return nil, errors.New("gossip: the host listens on no address")
	}
	priv := n.host.Peerstore().PrivKey(n.host.ID())
	if priv == nil {
		return nil, errors.New("gossip: the host has no private key")
	}
	rec := peer.PeerRecordFromAddrInfo(peer.AddrInfo{ID: n.host.ID(), Addrs: addrs})
	rec.Seq = nextSeq(uint64(time.Now().UnixNano()))
	env, err := record.Seal(rec, priv)
	if err != nil {
		return nil, fmt.Errorf("gossip: sealing the peer record: %w", err)
	}
	return env, nil
}

// nextSeq returns max(last+1, now) and remembers it.
func nextSeq(now uint64) uint64 {
	for {
		last := lastSeq.Load()
		next := max(last+1, now)
		if lastSeq.CompareAndSwap(last, next) {
			return next
		}
	}
}

// Connect dials ai unless it is this node or already connected, within
// DirectoryDialTimeout, with every address given: for peers the person
// names (remem connect) and relayed addresses this node learned itself.
// What a directory lists goes through DialListed, which bounds it. The
// connection gater applies as to any dial.
func (n *Node) Connect(ctx context.Context, ai peer.AddrInfo) error {
	if ai.ID == "" || ai.ID == n.host.ID() {
		return nil
	}
	if isConnected(n.host.Network().Connectedness(ai.ID)) {
		return nil
	}
	if len(ai.Addrs) == 0 {
		return fmt.Errorf("gossip: peer %s has no address", ai.ID)
	}
	if slices.ContainsFunc(ai.Addrs, isCircuit) {
		n.waitPunchReady(ctx)
	}
	ctx, cancel := context.WithTimeout(ctx, DirectoryDialTimeout)
	defer cancel()
	if err := n.host.Connect(ctx, ai); err != nil {
		return fmt.Errorf("gossip: dialing %s: %w", ai.ID, err)
	}
	return nil
}

// PunchReadyWait bounds how long a dial through a relay waits for this
// node to answer hole punching.
const PunchReadyWait = 5 * time.Second

// waitPunchReady waits, up to PunchReadyWait, until this node answers
// DCUtR. The peer reached through a relay starts the hole punch as soon
// as the relayed connection is identified, by opening a DCUtR stream to
// this node; go-libp2p serves that protocol only once this node knows a
// public address of its own (observed by the relay, checked every 250 ms
// or more), and a punch that finds no handler is not tried again. A node
// that dials right at its start (the first directory round) would
// otherwise lose the punch to that race.
func (n *Node) waitPunchReady(ctx context.Context) {
	if len(n.cfg.Transport) > 0 || len(n.relays.list()) == 0 {
		return // no hole punching, or no relay to learn an address from
	}
	deadline := time.Now().Add(PunchReadyWait)
	for !n.punchReady() && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Connected reports whether this node has a connection to p.
func (n *Node) Connected(p peer.ID) bool {
	return isConnected(n.host.Network().Connectedness(p))
}
