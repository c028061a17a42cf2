package gossip

import (
	"fmt"
	"net"
	"time"

	"github.com/libp2p/go-libp2p"
	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/peer"
	rcmgr "github.com/libp2p/go-libp2p/p2p/host/resource-manager"

	"github.com/remem/remem/internal/check"
)

// Params groups the tunables of the gossip layer. DefaultParams suits a real
// team network; TestnetParams has fast timers for many nodes in one process.
// A Params is taken whole, never merged field by field (a zero field may
// mean "off"): start from one of the two and change what you need. The
// zero Params, as a whole, stands for DefaultParams.
type Params struct {
	// Mesh degree of GossipSub. Team networks are small (a handful to a few
	// dozen machines) and messages are rare (one per sleep per memory), so
	// the defaults are well below GossipSub's 6/5/12. With D=3 each node
	// receives a message about 2-2.5 times (the testnet at 100 nodes
	// measured 2.0-2.4 copies per record against 3.0-3.6 with D=4, at the
	// same median latency); a random 3-regular mesh is connected with high
	// probability, and what a thin mesh misses IHAVE gossip (Dlazy above
	// D) and catch-up sync bring. Dout must stay below D/2, so it is 0: the
	// outbound-link guard against eclipse by inbound peers is given up,
	// which private teams (members, PSK) make up for.
	D, Dlo, Dhi, Dout, Dscore, Dlazy int
	// HeartbeatInterval is GossipSub's mesh maintenance period.
	HeartbeatInterval time.Duration
	// PruneBackoff is how long a pruned peer waits before grafting again.
	PruneBackoff time.Duration
	// HistoryLength and HistoryGossip (in heartbeats) are how long a message
	// is kept for IWANT and advertised in IHAVE gossip. Messages are rare,
	// so the windows are longer than GossipSub's 5 and 3: a message a thin
	// or still-forming mesh missed is still fetched by gossip.
	HistoryLength, HistoryGossip int

	// Peer scoring (see scoreParams): decay period of the counters (GossipSub
	// wants at least 1s), how long
	// a disconnected peer's score is remembered, how often the scores are
	// sampled for Peers(), and the thresholds.
	ScoreDecayInterval time.Duration
	ScoreRetain        time.Duration
	ScoreInspect       time.Duration
	// InvalidMessageWeight is the weight of P4 (messages the validator
	// rejected); the score term is weight × count². It is strongly negative
	// so that one rejected message puts the sender below GraylistThreshold.
	InvalidMessageWeight float64
	// InvalidMessageDecay is how long it takes a rejected message's count to
	// decay to nothing.
	InvalidMessageDecay time.Duration
	GossipThreshold     float64
	PublishThreshold    float64
	GraylistThreshold   float64
	AcceptPXThreshold   float64

	// ValidateTimeout bounds one message's validation (a 1 MiB message is
	// some 2,500 signatures); ValidateConcurrency bounds how many messages
	// of one topic are validated at once. Messages over that are dropped
	// without penalty; catch-up sync brings what they held.
	ValidateTimeout     time.Duration
	ValidateConcurrency int
	// NewOriginsPerPeer is how many origins new to this node (neither
	// admitted nor held) the messages one peer forwards may bring in a
	// minute; past it the peer's messages of new strangers are ignored
	// (not relayed, no penalty) until the minute is over. Keys are free:
	// without it one peer brings a fresh key per message. An honest
	// forwarder brings a few a minute (members' first messages), and what
	// the cap holds back catch-up sync brings.
	NewOriginsPerPeer int

	// Connections: the connection manager trims to ConnLow when ConnHigh is
	// passed; new connections are safe for ConnGrace.
	ConnLow, ConnHigh int
	ConnGrace         time.Duration

	// Bootstrap: the first retry delay (doubling up to BootstrapMaxBackoff)
	// and how often a connected bootstrap peer is checked again.
	BootstrapBackoff    time.Duration
	BootstrapMaxBackoff time.Duration
	BootstrapCheck      time.Duration

	// Catch-up sync: how many random peers of a topic are asked per round,
	// how often a round runs by itself (besides SyncNow and on connect), the
	// deadline of one session, how many sessions one node answers at once,
	// and how long ids fetched by one session stay claimed so that a parallel
	// session does not fetch them again.
	SyncPeers      int
	SyncInterval   time.Duration
	SyncTimeout    time.Duration
	SyncMaxInbound int
	SyncRecentTTL  time.Duration
	// SyncOnConnect runs a session when this node dials a peer that
	// speaks the sync protocol (only the dialing side starts it: one session
	// per pair moves records both ways).
	SyncOnConnect bool

	// Budgets of an answered sync session, so that throwaway identities
	// cannot hold the answering slots. The opening (the peer's summaries)
	// must arrive within SyncOpenTimeout and takes no slot. Once it holds a
	// slot, each later frame the peer owes, or must take, has
	// SyncStepTimeout; that is also how long a session waits for a slot
	// when all are taken. A session sends at most SyncServeBytes (the peer
	// gets the rest in its next session). A peer is answered one session at
	// a time. SyncMemberInbound slots, besides SyncMaxInbound, are kept for
	// sessions of private teams (those with a members list), so strangers
	// in an open team cannot crowd out members.
	SyncOpenTimeout   time.Duration
	SyncStepTimeout   time.Duration
	SyncServeBytes    int
	SyncMemberInbound int

	// Budgets of what sync takes (synctake.go), since a peer with fresh
	// keys always has more: a session takes at most SyncTakeRecords and
	// SyncTakeBytes of records of origins the memory does not admit, and
	// one peer gives at most SyncPeerTakeRecords and SyncPeerTakeBytes of
	// them per hour (a window its first record starts). Admitted origins' records come
	// first and outside them. A round skips a peer that gave records less
	// than SyncPeerRest ago (0: never), and runs again when its rest ends.
	// The session's bytes match what an honest responder sends at most
	// (SyncServeBytes); about 10,000 usual records of 600 B fit in both.
	// An honest node catching up N such records from one peer takes about
	// N/10,000 sessions one SyncPeerRest apart, up to 50,000 (some 30 MB)
	// per hour: a team of 30 members at the 1,000-record cap in about 3
	// minutes; each further peer adds as much again.
	SyncTakeRecords, SyncTakeBytes         int
	SyncPeerTakeRecords, SyncPeerTakeBytes int
	SyncPeerRest                           time.Duration

	// Resource manager (libp2p's rcmgr): its limits are scaled for
	// ResourceMemory bytes and ResourceFDs file descriptors, then capped:
	// connections in and out (above ConnHigh, so the connection manager
	// trims strangers before the resource manager refuses anyone), streams
	// per peer, and sync streams (in all and per peer: a session is one
	// stream).
	ResourceMemory                          int64
	ResourceFDs                             int
	ConnsInbound, ConnsOutbound             int
	PeerStreamsInbound, PeerStreamsOutbound int
	SyncStreamsInbound, SyncPeerStreams     int

	// TCPReuseport listens and dials with SO_REUSEPORT, so outgoing
	// connections leave from the listen port. It is off by default: with
	// it, a second node on the same machine binds the same port without an
	// error and takes part of the incoming connections. The testnet turns
	// it on, to tell which node a socket belongs to by its local port.
	TCPReuseport bool
}

// DefaultParams returns the parameters for real networks.
func DefaultParams() Params {
	return Params{
		D: 3, Dlo: 2, Dhi: 6, Dout: 0, Dscore: 2, Dlazy: 6,
		HeartbeatInterval: time.Second,
		PruneBackoff:      time.Minute,
		HistoryLength:     10,
		HistoryGossip:     6,

		ScoreDecayInterval:   time.Second,
		ScoreRetain:          time.Hour,
		ScoreInspect:         10 * time.Second,
		InvalidMessageWeight: -100,
		InvalidMessageDecay:  time.Hour,
		GossipThreshold:      -10,
		PublishThreshold:     -50,
		GraylistThreshold:    -80,
		AcceptPXThreshold:    0,

		ValidateTimeout:     10 * time.Second,
		ValidateConcurrency: 8,
		NewOriginsPerPeer:   60,

		ConnLow: 16, ConnHigh: 48, ConnGrace: time.Minute,

		BootstrapBackoff:    time.Second,
		BootstrapMaxBackoff: 2 * time.Minute,
		BootstrapCheck:      30 * time.Second,

		SyncPeers:      2,
		SyncInterval:   5 * time.Minute,
		SyncTimeout:    time.Minute,
		SyncMaxInbound: 8,
		SyncRecentTTL:  2 * time.Minute,
		SyncOnConnect:  true,

		SyncOpenTimeout:   5 * time.Second,
		SyncStepTimeout:   10 * time.Second,
		SyncServeBytes:    8 << 20,
		SyncMemberInbound: 4,

		SyncTakeRecords:     10_000,
		SyncTakeBytes:       8 << 20,
		SyncPeerTakeRecords: 50_000,
		SyncPeerTakeBytes:   64 << 20,
		SyncPeerRest:        time.Minute,

		ResourceMemory:      256 << 20,
		ResourceFDs:         512,
		ConnsInbound:        128,
		ConnsOutbound:       128,
		PeerStreamsInbound:  32,
		PeerStreamsOutbound: 64,
		SyncStreamsInbound:  64,
		SyncPeerStreams:     2,
	}
}

// TestnetParams returns DefaultParams with fast timers, for many nodes in one
// process on loopback.
func TestnetParams() Params {
	p := DefaultParams()
	p.HeartbeatInterval = 100 * time.Millisecond
	p.PruneBackoff = 5 * time.Second
	p.HistoryLength, p.HistoryGossip = 60, 30
	p.ScoreRetain = time.Minute
	p.ScoreInspect = 100 * time.Millisecond
	p.InvalidMessageDecay = 5 * time.Minute
	p.ValidateTimeout = 20 * time.Second // the race detector is slow
	p.ConnGrace = 10 * time.Second
	p.BootstrapBackoff = 50 * time.Millisecond
	p.BootstrapMaxBackoff = time.Second
	p.BootstrapCheck = 250 * time.Millisecond
	p.SyncInterval = 2 * time.Second
	p.SyncTimeout = 20 * time.Second
	p.SyncRecentTTL = 30 * time.Second
	p.SyncPeerRest = time.Second
	p.TCPReuseport = true // the testnet tells a socket's node by its local port
	return p
}

// Validate checks that p is a working set of parameters: the mesh degrees
// in GossipSub's order, the history windows nested, the score thresholds
// ordered, intervals positive and limits above zero. A zero field is an
// error unless its comment gives it a meaning (Dout, SyncInterval,
// SyncMemberInbound, SyncPeerRest, ConnGrace). Each finding names the field and what to do.
func (p Params) Validate() error {
	var l check.List
	// GossipSub's own rules (gossipsub.go validate), stated as remedies.
	l.AtLeast("Dlo", p.Dlo, 1)
	l.If(p.D < p.Dlo || p.D > p.Dhi, "D", p.D, fmt.Sprintf("want Dlo ≤ D ≤ Dhi (Dlo = %d, Dhi = %d)", p.Dlo, p.Dhi))
	l.If(p.Dout < 0 || p.Dout >= p.Dlo || p.Dout >= p.D/2, "Dout", p.Dout,
		fmt.Sprintf("want 0 or more, below both Dlo (%d) and D/2 (%d); D must be at least 2", p.Dlo, p.D/2))
	l.If(p.Dscore < 0 || p.Dscore > p.Dhi, "Dscore", p.Dscore, fmt.Sprintf("want 0 to Dhi (%d)", p.Dhi))
	l.AtLeast("Dlazy", p.Dlazy, 0)
	l.Positive("HeartbeatInterval", p.HeartbeatInterval)
	l.Positive("PruneBackoff", p.PruneBackoff)
	l.AtLeast("HistoryLength", p.HistoryLength, 1)
	l.If(p.HistoryGossip < 1 || p.HistoryGossip > p.HistoryLength, "HistoryGossip", p.HistoryGossip,
		fmt.Sprintf("want 1 to HistoryLength (%d): a message is advertised only while it is kept; raise HistoryLength or lower HistoryGossip", p.HistoryLength))

	// The decays of scoreParams are computed over an hour and ten minutes
	// in steps of ScoreDecayInterval; GossipSub wants steps of at least 1s.
	l.If(p.ScoreDecayInterval < time.Second || p.ScoreDecayInterval >= 10*time.Minute, "ScoreDecayInterval", p.ScoreDecayInterval, "want 1s or more, below 10m")
	l.NotNegative("ScoreRetain", p.ScoreRetain, "forgetting a peer's score at once")
	l.Positive("ScoreInspect", p.ScoreInspect)
	l.If(!(p.InvalidMessageWeight < 0), "InvalidMessageWeight", p.InvalidMessageWeight, "want a negative weight: a rejected message must cost its sender")
	l.If(p.InvalidMessageDecay <= p.ScoreDecayInterval, "InvalidMessageDecay", p.InvalidMessageDecay,
		fmt.Sprintf("want longer than ScoreDecayInterval (%v)", p.ScoreDecayInterval))
	l.If(!(p.GossipThreshold <= 0), "GossipThreshold", p.GossipThreshold, "want 0 or below")
	l.If(!(p.PublishThreshold <= p.GossipThreshold), "PublishThreshold", p.PublishThreshold,
		fmt.Sprintf("want at most GossipThreshold (%v)", p.GossipThreshold))
	l.If(!(p.GraylistThreshold <= p.PublishThreshold), "GraylistThreshold", p.GraylistThreshold,
		fmt.Sprintf("want at most PublishThreshold (%v)", p.PublishThreshold))
	l.If(!(p.AcceptPXThreshold >= 0), "AcceptPXThreshold", p.AcceptPXThreshold, "want 0 or above")

	l.Positive("ValidateTimeout", p.ValidateTimeout)
	l.AtLeast("ValidateConcurrency", p.ValidateConcurrency, 1)
	l.AtLeast("NewOriginsPerPeer", p.NewOriginsPerPeer, 1)

	l.AtLeast("ConnLow", p.ConnLow, 0)
	l.If(p.ConnHigh <= p.ConnLow, "ConnHigh", p.ConnHigh, fmt.Sprintf("want above ConnLow (%d): the manager trims down to ConnLow once ConnHigh is passed", p.ConnLow))
	l.NotNegative("ConnGrace", p.ConnGrace, "no grace period")

	l.Positive("BootstrapBackoff", p.BootstrapBackoff)
	l.If(p.BootstrapMaxBackoff < p.BootstrapBackoff, "BootstrapMaxBackoff", p.BootstrapMaxBackoff,
		fmt.Sprintf("want at least BootstrapBackoff (%v)", p.BootstrapBackoff))
	l.Positive("BootstrapCheck", p.BootstrapCheck)

	l.AtLeast("SyncPeers", p.SyncPeers, 1)
	l.NotNegative("SyncInterval", p.SyncInterval, "no periodic rounds")
	l.Positive("SyncTimeout", p.SyncTimeout)
	l.AtLeast("SyncMaxInbound", p.SyncMaxInbound, 1)
	l.Positive("SyncRecentTTL", p.SyncRecentTTL)
	l.Positive("SyncOpenTimeout", p.SyncOpenTimeout)
	l.Positive("SyncStepTimeout", p.SyncStepTimeout)
	l.AtLeast("SyncServeBytes", p.SyncServeBytes, 1)
	l.AtLeast("SyncMemberInbound", p.SyncMemberInbound, 0)
	l.AtLeast("SyncTakeRecords", p.SyncTakeRecords, 1)
	l.AtLeast("SyncTakeBytes", p.SyncTakeBytes, 1)
	l.AtLeast("SyncPeerTakeRecords", p.SyncPeerTakeRecords, 1)
	l.AtLeast("SyncPeerTakeBytes", p.SyncPeerTakeBytes, 1)
	l.NotNegative("SyncPeerRest", p.SyncPeerRest, "no rest between rounds with a peer that gave records")

	l.If(p.ResourceMemory < 1<<20, "ResourceMemory", p.ResourceMemory, "want at least 1 MiB (1048576)")
	l.AtLeast("ResourceFDs", p.ResourceFDs, 1)
	// The connection manager must trim strangers before the resource
	// manager refuses anyone.
	l.If(p.ConnsInbound <= p.ConnHigh, "ConnsInbound", p.ConnsInbound, fmt.Sprintf("want above ConnHigh (%d)", p.ConnHigh))
	l.If(p.ConnsOutbound <= p.ConnHigh, "ConnsOutbound", p.ConnsOutbound, fmt.Sprintf("want above ConnHigh (%d)", p.ConnHigh))
	l.AtLeast("PeerStreamsInbound", p.PeerStreamsInbound, 1)
	l.AtLeast("PeerStreamsOutbound", p.PeerStreamsOutbound, 1)
	l.AtLeast("SyncStreamsInbound", p.SyncStreamsInbound, 1)
	l.AtLeast("SyncPeerStreams", p.SyncPeerStreams, 1)
	return l.Err()
}

// resourceLimits are libp2p's default limits (with its service limits)
// scaled for ResourceMemory and ResourceFDs, with the connection counts,
// the memory in all, the streams per peer and the sync protocol's streams
// set from p. Streams still negotiating their protocol count in the
// transient scope, shared by every peer: it holds eight peers' worth, so
// that one flooding peer (held to PeerStreamsInbound) cannot fill it.
func (p Params) resourceLimits() rcmgr.ConcreteLimitConfig {
	scaling := rcmgr.DefaultLimits
	libp2p.SetDefaultServiceLimits(&scaling)
	scaling.AddProtocolLimit(SyncProtocol, rcmgr.BaseLimit{
		StreamsInbound:  p.SyncStreamsInbound,
		StreamsOutbound: p.SyncStreamsInbound,
		Streams:         2 * p.SyncStreamsInbound,
		Memory:          64 << 20,
	}, rcmgr.BaseLimitIncrease{})
	scaling.AddProtocolPeerLimit(SyncProtocol, rcmgr.BaseLimit{
		StreamsInbound:  p.SyncPeerStreams,
		StreamsOutbound: p.SyncPeerStreams,
		Streams:         2 * p.SyncPeerStreams,
		Memory:          16 << 20,
	}, rcmgr.BaseLimitIncrease{})
	partial := rcmgr.PartialLimitConfig{
		System: rcmgr.ResourceLimits{
			Conns:         rcmgr.LimitVal(p.ConnsInbound + p.ConnsOutbound),
			ConnsInbound:  rcmgr.LimitVal(p.ConnsInbound),
			ConnsOutbound: rcmgr.LimitVal(p.ConnsOutbound),
			Memory:        rcmgr.LimitVal64(p.ResourceMemory),
		},
		Transient: rcmgr.ResourceLimits{
			StreamsInbound: rcmgr.LimitVal(8 * p.PeerStreamsInbound),
			Streams:        rcmgr.LimitVal(8 * (p.PeerStreamsInbound + p.PeerStreamsOutbound)),
		},
		PeerDefault: rcmgr.ResourceLimits{
			StreamsInbound:  rcmgr.LimitVal(p.PeerStreamsInbound),
			StreamsOutbound: rcmgr.LimitVal(p.PeerStreamsOutbound),
			Streams:         rcmgr.LimitVal(p.PeerStreamsInbound + p.PeerStreamsOutbound),
		},
	}
	return partial.Build(scaling.Scale(p.ResourceMemory, p.ResourceFDs))
}

// RouterParams are the GossipSub router settings New derives from p. A
// host that must sit in a team's mesh like a node (the testnet's probes)
// uses them too.
func RouterParams(p Params) pubsub.GossipSubParams {
	g := pubsub.DefaultGossipSubParams()
	g.D, g.Dlo, g.Dhi, g.Dout, g.Dscore, g.Dlazy = p.D, p.Dlo, p.Dhi, p.Dout, p.Dscore, p.Dlazy
	g.HeartbeatInterval = p.HeartbeatInterval
	if p.HeartbeatInterval < g.HeartbeatInitialDelay {
		g.HeartbeatInitialDelay = p.HeartbeatInterval
	}
	g.PruneBackoff = p.PruneBackoff
	g.HistoryLength, g.HistoryGossip = p.HistoryLength, p.HistoryGossip // Validate keeps them nested
	if g.UnsubscribeBackoff > p.PruneBackoff {
		g.UnsubscribeBackoff = p.PruneBackoff
	}
	return g
}

// topicScoreParams scores one team topic. Messages are rare (one per sleep
// per memory), so the delivery-rate terms that punish quiet mesh peers (P3,
// P3b) are off: an honest peer that has nothing to say must not lose score.
// What counts: time in the mesh and first deliveries (small positive terms),
// and invalid messages (P4), strongly negative.
func (p Params) topicScoreParams() *pubsub.TopicScoreParams {
	decay := func(d time.Duration) float64 {
		return pubsub.ScoreParameterDecayWithBase(d, p.ScoreDecayInterval, 0.01)
	}
	return &pubsub.TopicScoreParams{
		TopicWeight: 1,

		TimeInMeshWeight:  0.1,
		TimeInMeshQuantum: time.Minute,
		TimeInMeshCap:     10, // at most +1 for being in the mesh

		FirstMessageDeliveriesWeight: 1,
		FirstMessageDeliveriesDecay:  decay(time.Hour),
		FirstMessageDeliveriesCap:    5, // at most +5

		MeshMessageDeliveriesWeight: 0,
		MeshMessageDeliveriesDecay:  decay(time.Hour),
		MeshFailurePenaltyWeight:    0,
		MeshFailurePenaltyDecay:     decay(time.Hour),

		InvalidMessageDeliveriesWeight: p.InvalidMessageWeight,
		InvalidMessageDeliveriesDecay:  decay(p.InvalidMessageDecay),
	}
}

func (p Params) scoreParams(topics []string) *pubsub.PeerScoreParams {
	sp := &pubsub.PeerScoreParams{
		Topics:            make(map[string]*pubsub.TopicScoreParams, len(topics)),
		TopicScoreCap:     10,
		AppSpecificScore:  func(peer.ID) float64 { return 0 },
		AppSpecificWeight: 1,
		// Many team members share one office NAT, and tests run on
		// loopback: colocation only counts above 10 peers per address and
		// never on loopback.
		IPColocationFactorWeight:    -5,
		IPColocationFactorThreshold: 10,
		IPColocationFactorWhitelist: loopbackNets(),
		BehaviourPenaltyWeight:      -10,
		BehaviourPenaltyThreshold:   6,
		BehaviourPenaltyDecay:       pubsub.ScoreParameterDecayWithBase(10*time.Minute, p.ScoreDecayInterval, 0.01),
		DecayInterval:               p.ScoreDecayInterval,
		DecayToZero:                 0.01,
		RetainScore:                 p.ScoreRetain,
	}
	for _, t := range topics {
		sp.Topics[t] = p.topicScoreParams()
	}
	return sp
}

func (p Params) scoreThresholds() *pubsub.PeerScoreThresholds {
	return &pubsub.PeerScoreThresholds{
		GossipThreshold:   p.GossipThreshold,
		PublishThreshold:  p.PublishThreshold,
		GraylistThreshold: p.GraylistThreshold,
		// Small networks rarely build positive scores: accept PX from any
		// peer that has not misbehaved.
		AcceptPXThreshold:           p.AcceptPXThreshold,
		OpportunisticGraftThreshold: 1,
	}
}

func loopbackNets() []*net.IPNet {
	var out []*net.IPNet
	for _, s := range []string{"127.0.0.0/8", "::1/128"} {
		_, n, _ := net.ParseCIDR(s)
		out = append(out, n)
	}
	return out
}
