package testnet

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/remem/remem/gossip"
	"github.com/remem/remem/internal/check"
	"github.com/remem/remem/node"
)

// Phase names one scenario of a run.
type Phase string

// The phases, in the order "all" runs them. PhaseSetup is reported to the
// progress callback while the nodes start.
const (
	PhaseSetup     Phase = "setup"
	PhasePropagate Phase = "propagate"
	PhaseConfirm   Phase = "confirm"
	PhaseRevoke    Phase = "revoke"
	PhaseChurn     Phase = "churn"
	PhasePartition Phase = "partition"
	PhaseLateJoin  Phase = "latejoin"
	PhaseByzantine Phase = "byzantine"
)

// Phases lists the scenarios in the order of a full run.
var Phases = []Phase{PhasePropagate, PhaseConfirm, PhaseRevoke, PhaseChurn, PhasePartition, PhaseLateJoin, PhaseByzantine}

// ParseScenario reads "all" or one phase name.
func ParseScenario(s string) ([]Phase, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" || s == "all" {
		return slices.Clone(Phases), nil
	}
	for _, p := range Phases {
		if string(p) == s {
			return []Phase{p}, nil
		}
	}
	names := make([]string, len(Phases))
	for i, p := range Phases {
		names[i] = string(p)
	}
	return nil, fmt.Errorf("unknown scenario %q: want all or one of %s", s, strings.Join(names, ", "))
}

// Params are the tunables of a run beyond its size. A zero field takes the
// default its comment names (Config.Validate and Run fill them in).
type Params struct {
	// Gossip are the nodes' gossip parameters (zero: gossip.TestnetParams).
	Gossip gossip.Params
	// Memory are the memories' parameters (zero: node.TestnetParams: N = 3,
	// W = 30 s, so fading shows within a run).
	Memory node.Params
	// Team is the one team every node is in (zero: "testnet").
	Team string

	// ChurnFraction of the live nodes stop in the churn phase; a
	// ByzantineFraction as many byzantine hosts join the byzantine phase.
	ChurnFraction     float64
	ByzantineFraction float64
	// Attacks run during the byzantine phase besides the offenders.
	Attacks AttackParams
	// Floods of strangers' records end the byzantine phase, beside honest
	// publications (zero counts: none).
	Floods FloodParams
	// Strangers is every honest memory's budget for records of origins
	// it does not admit (zero fields: node's defaults, 50,000 records and
	// 64 MiB, which a testnet's floods would not reach).
	Strangers node.StrangerBudget
	// SybilWaves are the fresh keys of each sybil wave of the byzantine
	// phase: keys that confirm an offender's lesson and confirm, then
	// revoke, honest ones (nil: 3 then 30; empty: none).
	SybilWaves []int
	// Probes is how many probe hosts count GossipSub duplicates (-1: one per
	// 25 nodes, at least 2; 0: none).
	Probes int

	// PublishEvery spaces the publications of one phase: a team publishes
	// now and then, not all at once (0: 1ms per node, at least 20ms, so
	// the whole process handles about a thousand deliveries a second
	// whatever the size of the network).
	PublishEvery time.Duration
	// PhaseTimeout bounds the wait for deliveries in one step of a phase and
	// ConvergeTimeout the wait for convergence after it (0: from the number
	// of nodes).
	PhaseTimeout    time.Duration
	ConvergeTimeout time.Duration
	// StartTimeout bounds starting the network (0: from the number of nodes).
	StartTimeout time.Duration
}

// GossipParams are the gossip parameters of a run on network: on TCP,
// gossip.TestnetParams (fast timers, so that a run on one machine's
// loopback is short); on the simulated network, gossip.DefaultParams, the
// ones real nodes run with, since its links behave like real ones and its
// simulated time costs nothing while the nodes wait.
func GossipParams(network Network) gossip.Params {
	if network == NetworkSim {
		return gossip.DefaultParams()
	}
	return gossip.TestnetParams()
}

// DefaultParams are the parameters `remem testnet` runs with (on TCP; see
// GossipParams for the simulated network).
func DefaultParams() Params {
	return Params{
		Gossip:            gossip.TestnetParams(),
		Memory:            node.TestnetParams(),
		Team:              "testnet",
		ChurnFraction:     0.2,
		ByzantineFraction: 0.1,
		Attacks:           DefaultAttacks(),
		Floods:            DefaultFloods(),
		Strangers:         DefaultStrangers(),
		SybilWaves:        []int{3, 30},
		Probes:            -1,
	}
}

// Config is one run.
type Config struct {
	Nodes   int   // honest nodes at the start (a late joiner adds one)
	Degree  int   // how many others each node dials (bootstraps to)
	Lessons int   // lessons published in the propagate phase; other phases publish a share of it
	Seed    int64 // topology, publishers, texts and choices
	// Phases to run, in order (nil: all).
	Phases []Phase
	// Sleep is how often every node sleeps (and so syncs) by itself.
	Sleep time.Duration
	// Network is what the hosts talk over (zero: NetworkTCP); Links are
	// the simulated links of NetworkSim (zero: DefaultLinks).
	Network Network
	Links   SimLinks
	// Dir holds the nodes' homes; "" makes a temporary directory that is
	// removed at the end.
	Dir    string
	Params Params
	Logger *slog.Logger // the nodes' logs (default: discarded)
}

// DefaultConfig is `remem testnet` without flags.
func DefaultConfig() Config {
	return Config{Nodes: 50, Degree: 3, Lessons: 100, Seed: 1, Sleep: 200 * time.Millisecond, Params: DefaultParams()}
}

// withDefaults fills the zero fields that have a default: Phases, the
// Params (see its comments) and Logger. The timeouts and the spacing of
// publications grow with the number of nodes.
func (c Config) withDefaults() Config {
	if len(c.Phases) == 0 {
		c.Phases = slices.Clone(Phases)
	}
	if c.Network == "" {
		c.Network = NetworkTCP
	}
	if c.Links == (SimLinks{}) {
		c.Links = DefaultLinks()
	}
	if c.Params.Team == "" {
		c.Params.Team = "testnet"
	}
	if c.Params.Gossip == (gossip.Params{}) {
		c.Params.Gossip = GossipParams(c.Network)
	}
	if c.Params.Memory == (node.Params{}) {
		c.Params.Memory = node.TestnetParams()
	}
	if c.Params.PublishEvery == 0 {
		c.Params.PublishEvery = max(20*time.Millisecond, time.Duration(c.Nodes)*time.Millisecond)
		if c.Network == NetworkSim {
			// The spacing spares the CPU on TCP; simulated time has its own.
			c.Params.PublishEvery = simPublishEvery
		}
	}
	if c.Network == NetworkSim {
		// Simulated waits cost nothing, and real nodes' timers are slow:
		// a node cut off retries its bootstrap peers with a backoff of up
		// to BootstrapMaxBackoff, checked every BootstrapCheck.
		g := c.Params.Gossip
		slow := g.BootstrapMaxBackoff + g.BootstrapCheck + g.SyncTimeout
		if c.Params.PhaseTimeout == 0 {
			c.Params.PhaseTimeout = 2*time.Minute + slow
		}
		if c.Params.ConvergeTimeout == 0 {
			c.Params.ConvergeTimeout = time.Minute + slow
		}
	}
	if c.Params.PhaseTimeout == 0 {
		c.Params.PhaseTimeout = 30*time.Second + time.Duration(c.Nodes)*300*time.Millisecond
	}
	if c.Params.ConvergeTimeout == 0 {
		c.Params.ConvergeTimeout = 15*time.Second + time.Duration(c.Nodes)*150*time.Millisecond
	}
	if c.Params.StartTimeout == 0 {
		c.Params.StartTimeout = 30*time.Second + time.Duration(c.Nodes)*500*time.Millisecond
	}
	if c.Params.SybilWaves == nil {
		c.Params.SybilWaves = []int{3, 30}
	}
	if c.Params.Probes == -1 {
		c.Params.Probes = max(2, c.Nodes/25)
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Validate checks a run as Run would use it (zero fields take their
// defaults first): its size, its phases and its Params. Run calls it.
func (c Config) Validate() error {
	c = c.withDefaults()
	var l check.List
	l.If(c.Nodes < 2 || c.Nodes > 2000, "Nodes", c.Nodes, "want 2 to 2000: at least two to gossip, and no more than one process should run")
	l.If(c.Degree < 1, "Degree", c.Degree, "want at least 1: every node must dial another")
	l.AtLeast("Lessons", c.Lessons, 1)
	l.Positive("Sleep", c.Sleep)
	if _, err := ParseNetwork(string(c.Network)); err != nil {
		l.Add("Network", string(c.Network), err.Error())
	}
	l.Nested("Links", c.Links.Validate())
	for _, ph := range c.Phases {
		l.If(!slices.Contains(Phases, ph), "Phases", string(ph), "not a phase; see ParseScenario")
	}
	l.Nested("Params", c.Params.Validate())
	return l.Err()
}

// Validate checks the parameters as given (Config.Validate fills the
// defaults first).
func (p Params) Validate() error {
	var l check.List
	l.Nested("Gossip", p.Gossip.Validate())
	l.Nested("Memory", p.Memory.Validate())
	l.If(!gossip.ValidTeamName(p.Team), "Team", p.Team, "want 1 to 128 bytes with no spaces, control characters or '/'")
	l.If(p.ChurnFraction < 0 || p.ChurnFraction >= 1, "ChurnFraction", p.ChurnFraction, "want 0 or more, below 1")
	l.If(p.ByzantineFraction < 0 || p.ByzantineFraction >= 1, "ByzantineFraction", p.ByzantineFraction, "want 0 or more, below 1")
	l.Nested("Attacks", p.Attacks.Validate())
	l.Nested("Floods", p.Floods.Validate())
	for i, w := range p.SybilWaves {
		l.If(w < 1, "SybilWaves", i, fmt.Sprintf("%d keys: want at least 1", w))
	}
	l.AtLeast("Probes", p.Probes, -1)
	l.NotNegative("PublishEvery", p.PublishEvery, "1ms per node, at least 20ms")
	l.NotNegative("PhaseTimeout", p.PhaseTimeout, "a timeout from the number of nodes")
	l.NotNegative("ConvergeTimeout", p.ConvergeTimeout, "a timeout from the number of nodes")
	l.NotNegative("StartTimeout", p.StartTimeout, "a timeout from the number of nodes")
	return l.Err()
}

// DefaultLinks are the simulated links without flags: 50 ms one way with
// 5 ms of jitter, 50 Mbit/s, no loss.
func DefaultLinks() SimLinks {
	return SimLinks{Latency: 50 * time.Millisecond, Jitter: 5 * time.Millisecond, Bandwidth: 50_000_000}
}

// Validate checks the links as given.
func (l SimLinks) Validate() error {
	var ls check.List
	ls.If(l.Latency < 0, "Latency", l.Latency, "want 0 or a positive duration")
	ls.If(l.Jitter < 0 || l.Jitter > l.Latency, "Jitter", l.Jitter, "want 0 to Latency: a packet never arrives before it is sent")
	ls.If(l.Bandwidth < 10_000, "Bandwidth", l.Bandwidth, "want at least 10000 bits per second")
	ls.If(l.Loss < 0 || l.Loss > 0.5, "Loss", l.Loss, "want 0 to 0.5 (a fraction of packets)")
	return ls.Err()
}

// share is the number of lessons a phase other than propagate publishes: a
// fraction of Lessons, at least lo.
func (c *Config) share(frac float64, lo int) int {
	return max(lo, int(float64(c.Lessons)*frac+0.5))
}

// SimSleep is how often the nodes of a simulated network sleep (and sync)
// by themselves unless told otherwise. Simulated time is free while every
// node waits, but each sleep costs real CPU at every node: a thousand
// nodes sleeping every 200 ms, as on TCP, would spend the run sleeping.
// Real nodes sleep every 10 minutes; every 10 s keeps a run's own sleeps
// (withdrawals, catch-up rounds) within its simulated minutes.
const SimSleep = 10 * time.Second

// simPublishEvery spaces a simulated phase's publications: ten lessons a
// second across the network, so that propagations overlap.
const simPublishEvery = 100 * time.Millisecond
