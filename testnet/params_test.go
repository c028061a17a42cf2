package testnet

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/remem/remem/gossip"
	"github.com/remem/remem/internal/testutil"
)

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("DefaultConfig: %v", err)
	}
	if err := (Config{Nodes: 2, Degree: 1, Lessons: 1, Sleep: time.Second}).Validate(); err != nil {
		t.Fatalf("a Config with zero Params (all defaults): %v", err)
	}
	badMesh := gossip.TestnetParams()
	badMesh.HistoryGossip = badMesh.HistoryLength + 1
	cases := []struct {
		name, field string
		mod         func(*Config)
	}{
		{"one node", "Nodes", func(c *Config) { c.Nodes = 1 }},
		{"too many nodes", "Nodes", func(c *Config) { c.Nodes = 2001 }},
		{"no degree", "Degree", func(c *Config) { c.Degree = 0 }},
		{"no lessons", "Lessons", func(c *Config) { c.Lessons = 0 }},
		{"no sleep", "Sleep", func(c *Config) { c.Sleep = 0 }},
		{"unknown phase", "Phases", func(c *Config) { c.Phases = []Phase{"nap"} }},
		{"bad team", "Params.Team", func(c *Config) { c.Params.Team = "a team" }},
		{"bad gossip params", "Params.Gossip.HistoryGossip", func(c *Config) { c.Params.Gossip = badMesh }},
		{"bad memory params", "Params.Memory.Threshold", func(c *Config) { c.Params.Memory.Threshold = -1 }},
		{"churn of everyone", "Params.ChurnFraction", func(c *Config) { c.Params.ChurnFraction = 1 }},
		{"negative byzantine share", "Params.ByzantineFraction", func(c *Config) { c.Params.ByzantineFraction = -0.1 }},
		{"probes below -1", "Params.Probes", func(c *Config) { c.Params.Probes = -2 }},
		{"negative spacing", "Params.PublishEvery", func(c *Config) { c.Params.PublishEvery = -time.Millisecond }},
		{"negative phase timeout", "Params.PhaseTimeout", func(c *Config) { c.Params.PhaseTimeout = -time.Second }},
		{"more slow than flood", "Params.Attacks.APISlowloris", func(c *Config) { c.Params.Attacks.APISlowloris = c.Params.Attacks.APIFlood + 1 }},
		{"negative api limit", "Params.Attacks.APILimits.MaxConns", func(c *Config) { c.Params.Attacks.APILimits.MaxConns = -1 }},
		{"flood line past a line", "Params.Floods.LineBytes", func(c *Config) { c.Params.Floods.LineBytes = 9 << 10 }},
		{"flood message past the cap", "Params.Floods.RevocationsPerMsg", func(c *Config) { c.Params.Floods.RevocationsPerMsg = 1001 }},
		{"floods without flooders", "Params.Floods.Flooders", func(c *Config) { c.Params.Floods.Flooders = 0 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			tc.mod(&c)
			err := c.Validate()
			testutil.WantField(t, err, tc.field)
			// Run refuses it before starting a node.
			if _, err := Run(context.Background(), c, nil); err == nil || !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("Run: %v", err)
			}
			t.Log(err)
		})
	}
}
