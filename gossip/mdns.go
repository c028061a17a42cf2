package gossip

import (
	"context"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/p2p/discovery/mdns"
)

// MDNSService is the DNS-SD service name remem nodes announce on the LAN.
const MDNSService = "_remem._udp"

type mdnsNotifee struct {
	ctx context.Context
	n   *Node
	run *tracker
}

func (m mdnsNotifee) HandlePeerFound(ai peer.AddrInfo) {
	m.run.Go(func() { m.n.connectTo(m.ctx, ai) })
}

// startMDNS announces this node and dials the remem nodes it finds on the
// local network. The returned function stops the service.
func (n *Node) startMDNS(ctx context.Context, run *tracker) (func(), error) {
	svc := mdns.NewMdnsService(n.host, MDNSService, mdnsNotifee{ctx: ctx, n: n, run: run})
	if err := svc.Start(); err != nil {
		return nil, err
	}
	return func() { _ = svc.Close() }, nil // stopping mDNS at close: nothing to report
}
