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
		if n.host.Network().Connectedness(ai.ID) != network.Connected {
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
	if ai.ID == n.host.ID() || n.host.Network().Connectedness(ai.ID) == network.Connected {
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
// starts one, so a pair runs one session (it moves records both ways).
func (n *Node) startConnectSync(ctx context.Context, run *tracker) error {
	if !n.p.SyncOnConnect || len(n.order) == 0 {
		return nil
	}
	sub, err := n.host.EventBus().Subscribe(new(event.EvtPeerIdentificationCompleted))
	if err != nil {
		return err
	}
	slots := make(chan struct{}, 8) // connect syncs at once; the rest wait for the periodic round
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
			case slots <- struct{}{}:
			default:
				continue
			}
			started := run.Go(func() {
				defer func() { <-slots }()
				for _, t := range n.order {
					if !t.members.hasPeer(ev.Peer) {
						continue
					}
					if err := n.syncWith(ctx, t, ev.Peer); err != nil {
						n.log.Debug("sync on connect failed", "peer", ev.Peer, "scope", t.scope, "err", err)
					}
				}
			})
			if !started {
				<-slots
			}
		}
	})
	return nil
}
