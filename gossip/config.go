package gossip

import (
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"

	"github.com/remem/remem/internal/check"
)

// ValidTeamName reports whether name can name a team: 1 to 128 bytes, no
// spaces, control characters or '/'.
func ValidTeamName(name string) bool { return checkTeamName(name) == nil }

const teamNameWant = "want 1 to 128 bytes with no spaces, control characters or '/'"

// withDefaults fills the zero fields that have a default: Params, Listen,
// Logger and Now.
func (c Config) withDefaults() Config {
	if c.Params == (Params{}) {
		c.Params = DefaultParams()
	}
	if len(c.Listen) == 0 {
		c.Listen = DefaultListen
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Validate checks c as New would use it (zero fields take their defaults
// first), all but Identity, which New checks: team names, the members
// lists and the teams they name, the listen and bootstrap addresses, the
// pre-shared key and Params. New calls it; callers that build a Config
// from a file call it before to report every bad field at once.
func (c Config) Validate() error {
	c = c.withDefaults()
	var l check.List
	for _, t := range c.Teams {
		l.If(!ValidTeamName(t), "Teams", t, teamNameWant)
	}
	if _, err := parseMembers(c.Members); err != nil {
		l.Add("Members", nil, err.Error())
	}
	teams := make([]string, 0, len(c.TeamMembers))
	for t := range c.TeamMembers {
		teams = append(teams, t)
	}
	slices.Sort(teams)
	for _, t := range teams {
		if !slices.Contains(c.Teams, t) {
			l.Add("TeamMembers", t, "lists members of a team this node is not in: join that team or drop its members list")
			continue
		}
		if _, err := parseMembers(c.TeamMembers[t]); err != nil {
			l.Add("TeamMembers", t, err.Error())
		}
	}
	tcp := false
	for _, a := range c.Listen {
		if _, err := ma.NewMultiaddr(a); err != nil {
			l.Add("Listen", a, fmt.Sprintf("not a multiaddr (%v); want e.g. /ip4/0.0.0.0/tcp/4002", err))
		} else if !isUDP(a) {
			tcp = true
		}
	}
	for _, b := range c.Bootstrap {
		if _, err := peer.AddrInfoFromString(b); err != nil {
			l.Add("Bootstrap", b, fmt.Sprintf("%v; want a multiaddr ending in /p2p/<peer id>", err))
		}
	}
	for _, r := range c.Relays {
		if _, err := peer.AddrInfoFromString(r); err != nil {
			l.Add("Relays", r, fmt.Sprintf("%v; want a relay's multiaddr ending in /p2p/<peer id>", err))
		}
	}
	l.If(!ValidReachability(c.Reachability), "Reachability", c.Reachability, "want public, private, or nothing (AutoNAT decides)")
	switch {
	case len(c.PSK) != 0 && len(c.PSK) != 32:
		l.Add("PSK", nil, fmt.Sprintf("%d bytes; want 32 (64 hex characters), or none", len(c.PSK)))
	case len(c.PSK) == 32 && !tcp:
		l.Add("Listen", nil, fmt.Sprintf("a private network (PSK) is TCP only, and %v are all UDP: add a TCP listen address", c.Listen))
	}
	l.Nested("Params", c.Params.Validate())
	return l.Err()
}
