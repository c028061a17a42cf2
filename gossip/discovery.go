package gossip

import (
	"context"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/libp2p/go-libp2p/core/event"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/peerstore"
	"github.com/libp2p/go-libp2p/p2p/net/swarm"
)

// Discovery. A node finds peers in any of three ways, each enough alone:
// bootstrap multiaddrs (kept connected, retried with backoff), mDNS on the
// local network (Config.MDNS), and GossipSub peer exchange (a peer that
// prunes us from its mesh sends other peers of the topic, which we dial).

const connectTimeout = 10 * time.Second

// bootstrapLoop keeps ai connected: it dials with exponential backoff
// (Params.BootstrapBackoff doubling to BootstrapMaxBackoff, with jitter)
// and checks again every Params.BootstrapCheck.
func (n *Node) bootstrapLoop(ctx context.Context, ai peer.AddrInfo) {
	if ai.ID == n.host.ID() {
		return
	}
	n.host.Peerstore().AddAddrs(ai.ID, ai.Addrs, peerstore.PermanentAddrTTL)
	n.host.ConnManager().Protect(ai.ID, "remem-bootstrap")
	backoff := n.p.BootstrapBackoff
	for {
		wait := n.p.BootstrapCheck
		if !isConnected(n.host.Network().Connectedness(ai.ID)) {
			if sw, ok := n.host.Network().(*swarm.Swarm); ok {
				sw.Backoff().Clear(ai.ID) // our own backoff paces the retries
			}
			cctx, cancel := context.WithTimeout(ctx, connectTimeout)
			err := n.host.Connect(cctx, ai)
			cancel()
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				n.log.Debug("bootstrap dial failed", "peer", ai.ID, "err", err, "retry", backoff)
				wait = backoff + time.Duration(rand.Int64N(int64(backoff)/4+1))
				backoff = min(2*backoff, n.p.BootstrapMaxBackoff)
			} else {
				n.log.Debug("connected to bootstrap peer", "peer", ai.ID)
				backoff = n.p.BootstrapBackoff
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// connectTo dials a peer found by mDNS.
func (n *Node) connectTo(ctx context.Context, ai peer.AddrInfo) {
	if ai.ID == n.host.ID() || isConnected(n.host.Network().Connectedness(ai.ID)) {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	if err := n.host.Connect(cctx, ai); err != nil {
		n.log.Debug("dialing discovered peer failed", "peer", ai.ID, "err", err)
	}
}

// startConnectSync runs a sync session with every peer this node dials, once
// libp2p's identify says it speaks the sync protocol. Only the dialing side
// starts one, so a pair runs one session (it moves records both ways). The
// sessions run one after another: a node that comes back dials several
// peers at once, and sessions side by side would each bring it the same
// missing records; one after the other, the first brings them and the
// next ones find nothing to move. A session that takes longer than
// connectSyncStagger (a slow or stalling peer) lets the next one start
// beside it, up to connectSyncSlots at once. Peers past connectSyncQueue
// wait for the periodic round.
func (n *Node) startConnectSync(ctx context.Context, run *tracker) error {
	if !n.p.SyncOnConnect || len(n.order) == 0 {
		return nil
	}
	sub, err := n.host.EventBus().Subscribe(new(event.EvtPeerIdentificationCompleted))
	if err != nil {
		return err
	}
	queue := make(chan peer.ID, connectSyncQueue)
	run.Go(func() {
		defer func() { _ = sub.Close() }() // an event bus subscription: nothing to flush
		for {
			var e any
			select {
			case <-ctx.Done():
				return
			case e = <-sub.Out():
			}
			ev, ok := e.(event.EvtPeerIdentificationCompleted)
			if !ok || ev.Conn == nil || ev.Conn.Stat().Direction != network.DirOutbound ||
				!slices.Contains(ev.Protocols, SyncProtocol) {
				continue
			}
			select {
			case queue <- ev.Peer:
			default:
			}
		}
	})
	slots := make(chan struct{}, connectSyncSlots)
	run.Go(func() {
		for {
			var p peer.ID
			select {
			case <-ctx.Done():
				return
			case p = <-queue:
			}
			select {
			case <-ctx.Done():
				return
			case slots <- struct{}{}:
			}
			done := make(chan struct{})
			started := run.Go(func() {
				defer func() { <-slots }()
				defer close(done)
				n.syncOnConnect(ctx, p)
			})
			if !started {
				<-slots
				return
			}
			stagger := time.NewTimer(connectSyncStagger)
			select {
			case <-ctx.Done():
			case <-done:
			case <-stagger.C:
			}
			stagger.Stop()
		}
	})
	return nil
}

func (n *Node) syncOnConnect(ctx context.Context, p peer.ID) {
	for _, t := range n.order {
		if !t.members.hasPeer(p) {
			continue
		}
		if err := n.syncWith(ctx, t, p); err != nil {
			n.log.Debug("sync on connect failed", "peer", p, "scope", t.scope, "err", err)
		}
	}
}

const (
	// connectSyncQueue dialled peers wait for their session; a session
	// longer than connectSyncStagger lets the next start beside it, up to
	// connectSyncSlots at once.
	connectSyncQueue   = 32
	connectSyncStagger = 2 * time.Second
	connectSyncSlots   = 8
)
