package node

import (
	"strings"
	"testing"
	"time"

	"github.com/remem/remem/gossip"
	"github.com/remem/remem/internal/testutil"
	"github.com/remem/remem/protocol"
)

func TestParamsValidate(t *testing.T) {
	for name, p := range map[string]Params{"default": DefaultParams(), "testnet": TestnetParams()} {
		if err := p.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	cases := []struct {
		name, field string
		mod         func(*Params)
	}{
		{"no verifier", "State.N", func(p *Params) { p.State.N = 0 }},
		{"no window", "State.W", func(p *Params) { p.State.W = 0 }},
		{"negative window", "State.W", func(p *Params) { p.State.W = -time.Hour }},
		{"no threshold", "Threshold", func(p *Params) { p.Threshold = 0 }},
		{"threshold above 1", "Threshold", func(p *Params) { p.Threshold = 1.5 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := DefaultParams()
			tc.mod(&p)
			testutil.WantField(t, p.Validate(), tc.field)
		})
	}
}

func TestConfigValidate(t *testing.T) {
	if err := (Config{}).Validate(); err != nil {
		t.Fatalf("the zero Config (all defaults) is refused: %v", err)
	}
	cases := []struct {
		name, field string
		c           Config
	}{
		{"bad params", "Params.State.N", Config{Params: Params{State: protocol.StateParams{N: -1, W: time.Hour}, Threshold: 0.5}}},
		{"negative lock wait", "LockWait", Config{LockWait: -time.Second}},
		{"layer with a relative path", "Layers", Config{Layers: []LayerFile{{Name: "team", Path: "team.jsonl"}}}},
		{"layer without a name", "Layers", Config{Layers: []LayerFile{{Path: "/srv/team.jsonl"}}}},
		{"layer named as a built-in layer", "Layers", Config{Layers: []LayerFile{{Name: "personal", Path: "/srv/team.jsonl"}}}},
		{"two layers of one name", "Layers", Config{Layers: []LayerFile{{Name: "team", Path: "/srv/a.jsonl"}, {Name: "team", Path: "/srv/b.jsonl"}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.c.Home, tc.c.Create = t.TempDir(), true
			testutil.WantField(t, tc.c.Validate(), tc.field)
			if _, err := Open(tc.c); err == nil || !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("Open: %v", err)
			}
		})
	}
}

func TestAPILimitsValidate(t *testing.T) {
	valid := func(l APILimits) error { return l.OrDefaults(DefaultAPILimits()).Validate() }
	if err := valid(APILimits{}); err != nil {
		t.Fatalf("zero limits (all defaults): %v", err)
	}
	cases := []struct {
		name, field string
		l           APILimits
	}{
		{"negative header timeout", "ReadHeaderTimeout", APILimits{ReadHeaderTimeout: -1}},
		{"negative read timeout", "ReadTimeout", APILimits{ReadTimeout: -time.Second}},
		{"negative write timeout", "WriteTimeout", APILimits{WriteTimeout: -time.Second}},
		{"negative idle timeout", "IdleTimeout", APILimits{IdleTimeout: -time.Second}},
		{"negative header bytes", "MaxHeaderBytes", APILimits{MaxHeaderBytes: -1}},
		{"negative conns", "MaxConns", APILimits{MaxConns: -5}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { testutil.WantField(t, valid(tc.l), tc.field) })
	}
}

func TestDaemonConfigValidate(t *testing.T) {
	if err := DefaultDaemonConfig().Validate(); err != nil {
		t.Fatalf("DefaultDaemonConfig: %v", err)
	}
	if err := (DaemonConfig{}).Validate(); err != nil {
		t.Fatalf("the zero DaemonConfig (all defaults): %v", err)
	}
	badGossip := gossip.DefaultParams()
	badGossip.D, badGossip.Dlo, badGossip.Dhi = 5, 2, 4
	cases := []struct {
		name, field string
		mod         func(*DaemonConfig)
	}{
		{"bad memory params", "Memory.Params.Threshold", func(c *DaemonConfig) { c.Memory.Params = Params{State: protocol.DefaultStateParams(), Threshold: 2} }},
		{"bad team", "Gossip.Teams", func(c *DaemonConfig) { c.Gossip.Teams = []string{"a/b"} }},
		{"bad bootstrap", "Gossip.Bootstrap", func(c *DaemonConfig) { c.Gossip.Bootstrap = []string{"/ip4/10.0.0.1/tcp/4002"} }},
		{"bad mesh", "Gossip.Params.D", func(c *DaemonConfig) { c.Gossip.Params = badGossip }},
		{"empty folder", "Folders", func(c *DaemonConfig) { c.Folders = []string{""} }},
		{"commons without scheme", "Commons", func(c *DaemonConfig) { c.Commons = []string{"commons.example.org"} }},
		{"commons over ftp", "Commons", func(c *DaemonConfig) { c.Commons = []string{"ftp://commons.example.org"} }},
		{"commons at another path", "Commons", func(c *DaemonConfig) { c.Commons = []string{"https://commons.example.org/remem/"} }},
		{"negative sleep", "SleepEvery", func(c *DaemonConfig) { c.SleepEvery = -time.Minute }},
		{"negative pull", "PullEvery", func(c *DaemonConfig) { c.PullEvery = -time.Minute }},
		{"api without port", "API", func(c *DaemonConfig) { c.API = "127.0.0.1" }},
		{"negative api limit", "APILimits.MaxConns", func(c *DaemonConfig) { c.APILimits.MaxConns = -1 }},
		{"key of a team not joined", "TeamKeys", func(c *DaemonConfig) { c.TeamKeys = map[string][]byte{"ops": make([]byte, 32)} }},
		{"short team key", "TeamKeys", func(c *DaemonConfig) {
			c.Gossip.Teams, c.TeamKeys = []string{"ops"}, map[string][]byte{"ops": make([]byte, 16)}
		}},
		{"empty team key", "TeamKeys", func(c *DaemonConfig) {
			c.Gossip.Teams, c.TeamKeys = []string{"ops"}, map[string][]byte{"ops": nil}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultDaemonConfig()
			c.Memory.Home, c.Memory.Create = t.TempDir(), true
			tc.mod(&c)
			testutil.WantField(t, c.Validate(), tc.field)
			// NewDaemon refuses it before opening anything.
			if d, err := NewDaemon(c); err == nil {
				d.Close()
				t.Fatal("NewDaemon accepted it")
			} else if !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("NewDaemon: %v", err)
			}
		})
	}
}
