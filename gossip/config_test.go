package gossip

import (
	"strings"
	"testing"
	"time"

	"github.com/remem/remem/internal/testutil"
	"github.com/remem/remem/protocol"
)

func TestParamsValidate(t *testing.T) {
	for name, p := range map[string]Params{"default": DefaultParams(), "testnet": TestnetParams()} {
		if err := p.Validate(); err != nil {
			t.Errorf("%s params: %v", name, err)
		}
	}
	cases := []struct {
		name, field string
		mod         func(p *Params)
	}{
		{"D above Dhi", "D", func(p *Params) { p.D = p.Dhi + 1 }},
		{"D below Dlo", "D", func(p *Params) { p.D, p.Dlo = 2, 3 }},
		{"no Dlo", "Dlo", func(p *Params) { p.Dlo = 0 }},
		{"Dout at D/2", "Dout", func(p *Params) { p.D, p.Dhi, p.Dout = 4, 6, 2 }},
		{"D of 1", "Dout", func(p *Params) { p.D, p.Dlo = 1, 1 }},
		{"Dscore above Dhi", "Dscore", func(p *Params) { p.Dscore = p.Dhi + 1 }},
		{"negative Dlazy", "Dlazy", func(p *Params) { p.Dlazy = -1 }},
		{"no heartbeat", "HeartbeatInterval", func(p *Params) { p.HeartbeatInterval = 0 }},
		{"HistoryGossip above HistoryLength", "HistoryGossip", func(p *Params) { p.HistoryLength, p.HistoryGossip = 5, 6 }},
		{"no HistoryGossip", "HistoryGossip", func(p *Params) { p.HistoryGossip = 0 }},
		{"no HistoryLength", "HistoryLength", func(p *Params) { p.HistoryLength, p.HistoryGossip = 0, 0 }},
		{"decay under a second", "ScoreDecayInterval", func(p *Params) { p.ScoreDecayInterval = time.Millisecond }},
		{"decay of an hour", "ScoreDecayInterval", func(p *Params) { p.ScoreDecayInterval, p.InvalidMessageDecay = time.Hour, 2*time.Hour }},
		{"positive invalid weight", "InvalidMessageWeight", func(p *Params) { p.InvalidMessageWeight = 1 }},
		{"invalid decay too short", "InvalidMessageDecay", func(p *Params) { p.InvalidMessageDecay = p.ScoreDecayInterval }},
		{"positive gossip threshold", "GossipThreshold", func(p *Params) { p.GossipThreshold = 1 }},
		{"publish above gossip", "PublishThreshold", func(p *Params) { p.PublishThreshold = p.GossipThreshold + 1 }},
		{"graylist above publish", "GraylistThreshold", func(p *Params) { p.GraylistThreshold = p.PublishThreshold + 1 }},
		{"negative PX threshold", "AcceptPXThreshold", func(p *Params) { p.AcceptPXThreshold = -1 }},
		{"no validate timeout", "ValidateTimeout", func(p *Params) { p.ValidateTimeout = 0 }},
		{"no validate concurrency", "ValidateConcurrency", func(p *Params) { p.ValidateConcurrency = 0 }},
		{"ConnHigh at ConnLow", "ConnHigh", func(p *Params) { p.ConnHigh = p.ConnLow }},
		{"negative grace", "ConnGrace", func(p *Params) { p.ConnGrace = -time.Second }},
		{"max backoff below backoff", "BootstrapMaxBackoff", func(p *Params) { p.BootstrapMaxBackoff = p.BootstrapBackoff / 2 }},
		{"no bootstrap check", "BootstrapCheck", func(p *Params) { p.BootstrapCheck = 0 }},
		{"no sync peers", "SyncPeers", func(p *Params) { p.SyncPeers = 0 }},
		{"negative sync interval", "SyncInterval", func(p *Params) { p.SyncInterval = -time.Second }},
		{"no sync timeout", "SyncTimeout", func(p *Params) { p.SyncTimeout = 0 }},
		{"no inbound sessions", "SyncMaxInbound", func(p *Params) { p.SyncMaxInbound = 0 }},
		{"no open timeout", "SyncOpenTimeout", func(p *Params) { p.SyncOpenTimeout = 0 }},
		{"no step timeout", "SyncStepTimeout", func(p *Params) { p.SyncStepTimeout = -1 }},
		{"no serve budget", "SyncServeBytes", func(p *Params) { p.SyncServeBytes = 0 }},
		{"negative member slots", "SyncMemberInbound", func(p *Params) { p.SyncMemberInbound = -1 }},
		{"no take budget", "SyncTakeRecords", func(p *Params) { p.SyncTakeRecords = 0 }},
		{"no take bytes", "SyncTakeBytes", func(p *Params) { p.SyncTakeBytes = -1 }},
		{"no peer take budget", "SyncPeerTakeRecords", func(p *Params) { p.SyncPeerTakeRecords = 0 }},
		{"no peer take bytes", "SyncPeerTakeBytes", func(p *Params) { p.SyncPeerTakeBytes = 0 }},
		{"negative peer rest", "SyncPeerRest", func(p *Params) { p.SyncPeerRest = -time.Second }},
		{"tiny resource memory", "ResourceMemory", func(p *Params) { p.ResourceMemory = 1000 }},
		{"no fds", "ResourceFDs", func(p *Params) { p.ResourceFDs = 0 }},
		{"conns under ConnHigh", "ConnsInbound", func(p *Params) { p.ConnsInbound = p.ConnHigh }},
		{"no peer streams", "PeerStreamsInbound", func(p *Params) { p.PeerStreamsInbound = 0 }},
		{"no sync streams", "SyncPeerStreams", func(p *Params) { p.SyncPeerStreams = 0 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := DefaultParams()
			tc.mod(&p)
			err := p.Validate()
			testutil.WantField(t, err, tc.field)
			t.Log(err)
		})
	}
	// Zero has a meaning for these.
	p := DefaultParams()
	p.Dout, p.SyncInterval, p.SyncMemberInbound, p.ConnGrace, p.ScoreRetain, p.SyncPeerRest = 0, 0, 0, 0, 0, 0
	if err := p.Validate(); err != nil {
		t.Errorf("documented zeros refused: %v", err)
	}
}

func TestConfigValidate(t *testing.T) {
	id, _ := protocol.GenerateIdentity()
	key := strings.Repeat("ab", 32)
	if err := (Config{}).Validate(); err != nil {
		t.Fatalf("the zero Config (all defaults) is refused: %v", err)
	}
	cases := []struct {
		name, field string
		c           Config
	}{
		{"bad team", "Teams", Config{Teams: []string{"ok", "a b"}}},
		{"empty team", "Teams", Config{Teams: []string{""}}},
		{"long team", "Teams", Config{Teams: []string{strings.Repeat("t", 129)}}},
		{"bad member", "Members", Config{Teams: []string{"t"}, Members: []string{"nothex"}}},
		{"members of another team", "TeamMembers", Config{Teams: []string{"t"}, TeamMembers: map[string][]string{"u": {key}}}},
		{"bad team member", "TeamMembers", Config{Teams: []string{"t"}, TeamMembers: map[string][]string{"t": {"abc"}}}},
		{"bad listen", "Listen", Config{Listen: []string{"/ip4/127.0.0.1/tcp/notaport"}}},
		{"bootstrap without peer id", "Bootstrap", Config{Bootstrap: []string{"/ip4/127.0.0.1/tcp/1"}}},
		{"relay without peer id", "Relays", Config{Relays: []string{"/ip4/127.0.0.1/tcp/4001"}}},
		{"relay not a multiaddr", "Relays", Config{Relays: []string{"relay.example.org:4001"}}},
		{"unknown reachability", "Reachability", Config{Reachability: "maybe"}},
		{"short psk", "PSK", Config{PSK: []byte("short")}},
		{"psk over udp only", "Listen", Config{PSK: make([]byte, 32), Listen: []string{"/ip4/127.0.0.1/udp/0/quic-v1"}}},
		{"bad params", "Params.HistoryGossip", Config{Params: func() Params { p := DefaultParams(); p.HistoryGossip = 99; return p }()}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.c.Identity = id
			err := tc.c.Validate()
			testutil.WantField(t, err, tc.field)
			// New refuses it with the same words, before starting a host.
			if n, nerr := New(tc.c, newMemHolder()); nerr == nil {
				n.Close()
				t.Fatal("New accepted it")
			} else if !strings.Contains(nerr.Error(), err.Error()) {
				t.Fatalf("New said %q, Validate %q", nerr, err)
			}
			t.Log(err)
		})
	}
	// A private team beside an open one.
	c := Config{Teams: []string{"priv", "open"}, TeamMembers: map[string][]string{"priv": {key}, "open": nil}}
	if err := c.Validate(); err != nil {
		t.Fatalf("per-team members refused: %v", err)
	}
}
