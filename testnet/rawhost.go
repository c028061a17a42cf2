package testnet

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p"
	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"

	"github.com/remem/remem/gossip"
	rproto "github.com/remem/remem/protocol"
)

// A rawHost is a bare libp2p host with GossipSub on the team topic and no
// remem node behind it. Probes use it to count what the router receives
// (every copy of every message; the nodes' validators see first copies only);
// byzantine hosts use it to publish what an honest node's own validator
// would refuse to send.
type rawHost struct {
	id     rproto.Identity
	h      host.Host
	ps     *pubsub.PubSub
	topic  *pubsub.Topic
	sub    *pubsub.Subscription
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	trace  *routerCount
	gater  *gater
}

// routerCount counts, at one host, the messages its router received: first
// copies (validated once) and duplicates.
type routerCount struct {
	first, dup atomic.Int64

	mu      sync.Mutex
	firstAt map[string]time.Time // message id → when the first copy came
}

func (c *routerCount) OnNewOutboundStream(peer.ID, protocol.ID) {}
func (c *routerCount) OnClosedOutboundStream(peer.ID)           {}
func (c *routerCount) Join(string)                              {}
func (c *routerCount) Leave(string)                             {}
func (c *routerCount) Graft(peer.ID, string)                    {}
func (c *routerCount) Prune(peer.ID, string)                    {}
func (c *routerCount) ValidateMessage(m *pubsub.Message) {
	c.first.Add(1)
	now := time.Now()
	c.mu.Lock()
	if c.firstAt == nil {
		c.firstAt = map[string]time.Time{}
	}
	c.firstAt[gossip.MessageID(m.Message)] = now
	c.mu.Unlock()
}

// arrived returns when the first copy of the message with id came.
func (c *routerCount) arrived(id string) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	at, ok := c.firstAt[id]
	return at, ok
}
func (c *routerCount) DeliverMessage(*pubsub.Message)        {}
func (c *routerCount) RejectMessage(*pubsub.Message, string) {}
func (c *routerCount) DuplicateMessage(*pubsub.Message)      { c.dup.Add(1) }
func (c *routerCount) ThrottlePeer(peer.ID)                  {}
func (c *routerCount) RecvRPC(*pubsub.RPC)                   {}
func (c *routerCount) SendRPC(*pubsub.RPC, peer.ID)          {}
func (c *routerCount) SendRPCCompleted(*pubsub.RPC, peer.ID, time.Duration) {
}
func (c *routerCount) DropRPC(*pubsub.RPC, peer.ID)         {}
func (c *routerCount) UndeliverableMessage(*pubsub.Message) {}

type routerSnapshot struct{ first, dup int64 }

func (c *routerCount) snapshot() routerSnapshot {
	return routerSnapshot{c.first.Load(), c.dup.Load()}
}

// newRawHost starts a host in the team's topic on the run's network, with
// a node's router settings and message ids. With validate, the host's topic
// validator is a node's (probes forward what nodes forward); byzantine
// hosts have none, so they publish anything.
func (c *cluster) newRawHost(validate bool) (*rawHost, error) {
	h, err := newRawHost(c.p.Team, c.p.Gossip, c.part, validate, c.net.rawHost(c.rawSlot()))
	if err == nil {
		c.net.adopt(h.h)
	}
	return h, err
}

// rawSlot is the network slot of the next host that is not a node.
func (c *cluster) rawSlot() int {
	c.raws++
	return rawSlots + c.raws - 1
}

// newRawHost starts a host with the transports of hostOpts.
func newRawHost(team string, p gossip.Params, part *partition, validate bool, hostOpts []libp2p.Option) (*rawHost, error) {
	id, err := rproto.GenerateIdentity()
	if err != nil {
		return nil, err
	}
	priv, err := crypto.UnmarshalEd25519PrivateKey(id.Private)
	if err != nil {
		return nil, err
	}
	opts := append([]libp2p.Option{libp2p.Identity(priv), libp2p.DisableMetrics()}, hostOpts...)
	self, err := peer.IDFromPrivateKey(priv)
	if err != nil {
		return nil, err
	}
	g := newGater(self, part)
	opts = append(opts, libp2p.ConnectionGater(g))
	h, err := libp2p.New(opts...)
	if err != nil {
		return nil, fmt.Errorf("starting a raw host: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &rawHost{id: id, h: h, ctx: ctx, cancel: cancel, trace: &routerCount{}, gater: g}
	fail := func(err error) (*rawHost, error) {
		cancel()
		_ = h.Close() // the first error is the one to report
		return nil, err
	}
	r.ps, err = pubsub.NewGossipSub(ctx, h,
		pubsub.WithGossipSubParams(gossip.RouterParams(p)),
		pubsub.WithPeerExchange(true),
		pubsub.WithMessageIdFn(gossip.MessageID),
		pubsub.WithMessageSignaturePolicy(pubsub.StrictSign),
		pubsub.WithMaxMessageSize(4<<20),
		pubsub.WithRawTracer(r.trace),
	)
	if err != nil {
		return fail(fmt.Errorf("starting GossipSub on a raw host: %w", err))
	}
	topic := gossip.TopicName(team)
	if validate {
		if err := r.ps.RegisterTopicValidator(topic, gossip.MessageValidator(nil)); err != nil {
			return fail(err)
		}
	}
	if r.topic, err = r.ps.Join(topic); err != nil {
		return fail(err)
	}
	if r.sub, err = r.topic.Subscribe(); err != nil {
		return fail(err)
	}
	r.wg.Go(func() {
		for {
			if _, err := r.sub.Next(ctx); err != nil {
				return
			}
		}
	})
	return r, nil
}

// peerID is the host's id.
func (r *rawHost) peerID() peer.ID { return r.h.ID() }

// keepConnected dials targets now and whenever a link is down, until the
// host closes.
func (r *rawHost) keepConnected(targets []peer.AddrInfo, every time.Duration) {
	ctx := r.ctx
	r.wg.Go(func() {
		for {
			for _, ai := range targets {
				if r.h.Network().Connectedness(ai.ID) != network.Connected {
					cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
					_ = r.h.Connect(cctx, ai)
					ccancel()
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(every):
			}
		}
	})
}

// topicPeers is how many peers of the topic the host knows.
func (r *rawHost) topicPeers() int { return len(r.topic.ListPeers()) }

// publish sends data on the topic as this host.
func (r *rawHost) publish(ctx context.Context, data []byte) error {
	return r.topic.Publish(ctx, data)
}

// publishAs sends data on the topic signed by id, not by the host: one
// host can publish as any number of keys, as a flood of fresh keys does.
func (r *rawHost) publishAs(ctx context.Context, id rproto.Identity, data []byte) error {
	priv, err := crypto.UnmarshalEd25519PrivateKey(id.Private)
	if err != nil {
		return err
	}
	pid, err := peer.IDFromPrivateKey(priv)
	if err != nil {
		return err
	}
	return r.topic.Publish(ctx, data, pubsub.WithSecretKeyAndPeerId(priv, pid))
}

// close stops the host and waits for its goroutines.
func (r *rawHost) close() {
	r.cancel()
	r.sub.Cancel()
	_ = r.h.Close() // an offender or probe going away: its errors are not the run's
	r.wg.Wait()
}
