package node

import (
	"fmt"
	"log/slog"
	"maps"
	"net"
	"slices"
	"time"

	"github.com/remem/remem/commons"
	"github.com/remem/remem/gossip"
	"github.com/remem/remem/internal/check"
	"github.com/remem/remem/node/consolidate"
	"github.com/remem/remem/protocol"
)

// How defaults are written, here and in gossip, commons and testnet: a
// zero field means the default its comment names, and only where the
// comment says so; one withDefaults method fills them in, then Validate
// checks the result, and New or Open call both. A Params struct is taken
// whole (the zero Params stands for DefaultParams), never merged field by
// field. DefaultX functions return the filled-in values for callers that
// start from them.

// Validate checks the protocol parameters and the similarity threshold.
func (p Params) Validate() error {
	var l check.List
	l.AtLeast("State.N", p.State.N, 1)
	l.Positive("State.W", p.State.W)
	l.If(!(p.Threshold > 0 && p.Threshold <= 1), "Threshold", p.Threshold, "want a similarity above 0, at most 1")
	l.If(!(p.ConfirmThreshold >= 0 && p.ConfirmThreshold <= 1), "ConfirmThreshold", p.ConfirmThreshold, "want a similarity in [0, 1] (0: the default)")
	return l.Err()
}

// withDefaults fills the zero fields that have a default: Home, Params,
// Similarity, Writer, Now, Logger and the strangers' budget.
func (c Config) withDefaults() Config {
	if c.Home == "" {
		c.Home = DefaultHome()
	}
	if c.Params == (Params{}) {
		c.Params = DefaultParams()
	}
	if c.Similarity == nil {
		c.Similarity = consolidate.NewLexical()
	}
	if c.Writer == nil {
		c.Writer = &consolidate.DefaultWriter{Redact: protocol.RedactRawData}
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	c.Strangers = c.Strangers.withDefaults()
	return c
}

// Validate checks c as Open would use it (zero fields take their defaults
// first). Open calls it.
func (c Config) Validate() error {
	c = c.withDefaults()
	var l check.List
	l.Nested("Params", c.Params.Validate())
	l.NotNegative("LockWait", c.LockWait, "failing at once when the home is held")
	validateLayers(&l, c.Layers)
	c.Admission.validate(&l)
	c.Strangers.validate(&l)
	return l.Err()
}

// DefaultAPI is the address of the local API of `remem node`.
const DefaultAPI = "127.0.0.1:7878"

// DefaultEvery is how often `remem node` sleeps and pulls the commons.
const DefaultEvery = 10 * time.Minute

// DefaultDaemonConfig is `remem node` with nothing set: the local API on
// DefaultAPI, LAN peers found with mDNS, a sleep and a commons pull every
// 10 minutes, and a start that waits DefaultLockWait for a short command
// holding the home. Home is DefaultHome.
func DefaultDaemonConfig() DaemonConfig {
	return DaemonConfig{
		Memory:     Config{Params: DefaultParams(), LockWait: DefaultLockWait},
		Gossip:     gossip.Config{MDNS: true, Params: gossip.DefaultParams()},
		PullEvery:  DefaultEvery,
		SleepEvery: DefaultEvery,
		API:        DefaultAPI,
		APILimits:  DefaultAPILimits(),
	}
}

// withDefaults fills the zero fields that have a default: PullEvery,
// SleepEvery and Logger (the nested configs fill their own).
func (c DaemonConfig) withDefaults() DaemonConfig {
	if c.PullEvery == 0 {
		c.PullEvery = DefaultEvery
	}
	if c.SleepEvery == 0 {
		c.SleepEvery = DefaultEvery
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Validate checks c as NewDaemon would use it: the memory's and the gossip
// configs (under Memory. and Gossip.), the folders, the commons URLs, the
// intervals, the API address and its limits. Errors name the field; the
// CLI maps them to its keys and flags.
func (c DaemonConfig) Validate() error {
	c = c.withDefaults()
	var l check.List
	l.Nested("Memory", c.Memory.Validate())
	l.Nested("Gossip", c.Gossip.Validate())
	for _, dir := range c.Folders {
		l.If(dir == "", "Folders", dir, "want a directory")
	}
	for _, s := range c.Commons {
		_, err := commons.CanonicalURL(s)
		l.If(err != nil, "Commons", s,
			"want an http:// or https:// URL of a host, like https://commons.example.org or https://commons.example.org/commons/ "+
				"(a commons is served at the root of its host; no other path, credentials or query)")
	}
	validateTeamKeys(&l, c.TeamKeys, c.Gossip.Teams)
	l.NotNegative("PullEvery", c.PullEvery, "the default, 10m")
	l.NotNegative("SleepEvery", c.SleepEvery, "the default, 10m")
	if c.API != "" {
		_, _, err := net.SplitHostPort(c.API)
		l.If(err != nil, "API", c.API, "want HOST:PORT, like 127.0.0.1:7878")
	}
	l.Nested("APILimits", c.APILimits.OrDefaults(DefaultAPILimits()).Validate())
	return l.Err()
}

// validateTeamKeys: each key is of a team this node joins and holds
// commons.TeamKeySize bytes.
func validateTeamKeys(l *check.List, keys map[string][]byte, teams []string) {
	names := slices.Sorted(maps.Keys(keys))
	for _, t := range names {
		switch {
		case !slices.Contains(teams, t):
			l.Add("TeamKeys", t, "is the key of a team this node is not in: join that team or drop its key")
		case len(keys[t]) != commons.TeamKeySize:
			l.Add("TeamKeys", t, fmt.Sprintf("the key holds %d bytes; want %d (64 hex characters, as `remem team-key` writes)", len(keys[t]), commons.TeamKeySize))
		}
	}
}
