package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/remem/remem/node"
	"github.com/remem/remem/protocol"
)

func TestNodeConfig(t *testing.T) {
	home := t.TempDir()
	if s, _, err := loadNodeSettings(home); err != nil || s.Teams != nil || !reflect.DeepEqual(s, defaultNodeSettings()) {
		t.Fatalf("no config file: %+v %v", s, err)
	}
	write := func(s string) {
		if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("teams = [\"backend\"]\nsleep = \"5m\"\nmdns = false\n")
	s, _, err := loadNodeSettings(home)
	if err != nil || len(s.Teams) != 1 || s.Sleep != duration(5*time.Minute) || s.MDNS || s.API != node.DefaultAPI {
		t.Fatalf("config: %+v %v", s, err)
	}
	write("tems = [\"typo\"]\n")
	if _, _, err := loadNodeSettings(home); err == nil || !strings.Contains(err.Error(), "unknown setting") {
		t.Fatalf("a misspelt setting was accepted: %v", err)
	}
	write("teams = \n")
	if _, _, err := loadNodeSettings(home); err == nil || !strings.Contains(err.Error(), "config.toml") {
		t.Fatalf("broken TOML: %v", err)
	}
}

// nodeConfigFor is the DaemonConfig `remem node args...` would run with
// on home's config.toml (written from toml), without starting it.
func nodeConfigFor(t *testing.T, toml string, args ...string) (node.DaemonConfig, error) {
	t.Helper()
	home := t.TempDir()
	if toml != "" {
		if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(toml), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var dc node.DaemonConfig
	cmd := nodeCommand()
	cmd.Action = func(c *cli.Context) (err error) {
		dc, err = nodeDaemonConfig(c, home)
		return err
	}
	app := &cli.App{Name: "remem", Commands: []*cli.Command{cmd}, Writer: io.Discard, ErrWriter: io.Discard,
		ExitErrHandler: func(*cli.Context, error) {}}
	err := app.Run(append([]string{"remem", "node"}, args...))
	return dc, err
}

func TestNodeConfigDefaults(t *testing.T) {
	dc, err := nodeConfigFor(t, "")
	if err != nil {
		t.Fatal(err)
	}
	def := node.DefaultDaemonConfig()
	if !dc.Gossip.MDNS || dc.API != def.API || dc.SleepEvery != def.SleepEvery || dc.PullEvery != def.PullEvery ||
		dc.Memory.LockWait != node.DefaultLockWait || dc.Gossip.Teams != nil || dc.Gossip.Members != nil || dc.Logger == nil {
		t.Fatalf("no file, no flags: %+v", dc)
	}
}

func TestNodeConfigFlagsOverrideFile(t *testing.T) {
	const file = `teams = ["from-file"]
sleep = "5m"
pull = "7m"
api = "127.0.0.1:9999"
mdns = false
listen = ["/ip4/127.0.0.1/tcp/4010", "/ip4/127.0.0.1/udp/4010/quic-v1"]
folders = ["/tmp/a", "/tmp/b"]
`
	dc, err := nodeConfigFor(t, file, "--team", "x", "--team", "y", "--sleep", "1m", "--mdns=true")
	if err != nil {
		t.Fatal(err)
	}
	// Flags win; keys without a flag keep the file's value, lists whole.
	if !slices.Equal(dc.Gossip.Teams, []string{"x", "y"}) || dc.SleepEvery != time.Minute || !dc.Gossip.MDNS {
		t.Errorf("flags did not override: teams %v sleep %v mdns %v", dc.Gossip.Teams, dc.SleepEvery, dc.Gossip.MDNS)
	}
	if dc.PullEvery != 7*time.Minute || dc.API != "127.0.0.1:9999" || len(dc.Gossip.Listen) != 2 || !slices.Equal(dc.Folders, []string{"/tmp/a", "/tmp/b"}) {
		t.Errorf("file values lost: pull %v api %v listen %v folders %v", dc.PullEvery, dc.API, dc.Gossip.Listen, dc.Folders)
	}
	// A false flag overrides a true default, and a file's false stays false.
	if dc, err := nodeConfigFor(t, "", "--mdns=false"); err != nil || dc.Gossip.MDNS {
		t.Errorf("--mdns=false: %v %v", dc.Gossip.MDNS, err)
	}
	if dc, err := nodeConfigFor(t, "mdns = false\n"); err != nil || dc.Gossip.MDNS {
		t.Errorf("mdns = false: %v %v", dc.Gossip.MDNS, err)
	}
}

// N and W of SPEC §8 come from config.toml (quorum, window) or the flags.
func TestNodeConfigQuorumAndWindow(t *testing.T) {
	dc, err := nodeConfigFor(t, "")
	if err != nil || dc.Memory.Params.State != protocol.DefaultStateParams() {
		t.Fatalf("defaults: %+v %v", dc.Memory.Params.State, err)
	}
	dc, err = nodeConfigFor(t, "quorum = 2\nwindow = \"1h\"\n")
	if err != nil || dc.Memory.Params.State != (protocol.StateParams{N: 2, W: time.Hour}) {
		t.Fatalf("config.toml: %+v %v", dc.Memory.Params.State, err)
	}
	dc, err = nodeConfigFor(t, "quorum = 2\nwindow = \"1h\"\n", "--quorum", "4", "--window", "2h")
	if err != nil || dc.Memory.Params.State != (protocol.StateParams{N: 4, W: 2 * time.Hour}) {
		t.Fatalf("flags: %+v %v", dc.Memory.Params.State, err)
	}
	// The embeddings backend changes the threshold, not N and W.
	dc, err = nodeConfigFor(t, "quorum = 2\nembed_url = \"http://127.0.0.1:1/v1\"\n")
	if err != nil || dc.Memory.Params.State.N != 2 || dc.Memory.Params.Threshold != embedThreshold {
		t.Fatalf("with embed_url: %+v %v", dc.Memory.Params, err)
	}
}

func TestNodeConfigMembers(t *testing.T) {
	dir := t.TempDir()
	all, ops := filepath.Join(dir, "all.txt"), filepath.Join(dir, "ops.txt")
	os.WriteFile(all, []byte("fb3a5590974ea181\n"), 0o600)
	os.WriteFile(ops, []byte(strings.Repeat("ab", 32)+"\n595b6457bd8219cd\n"), 0o600)
	// One file for every team, as a string (the old form).
	dc, err := nodeConfigFor(t, fmt.Sprintf("teams = [\"a\"]\nmembers = %q\n", all))
	if err != nil || !slices.Equal(dc.Gossip.Members, []string{"fb3a5590974ea181"}) || dc.Gossip.TeamMembers != nil {
		t.Fatalf("members = FILE: %v %v %v", dc.Gossip.Members, dc.Gossip.TeamMembers, err)
	}
	// A list: a private team beside an open one.
	dc, err = nodeConfigFor(t, fmt.Sprintf("teams = [\"ops\", \"public\"]\nmembers = [%q]\n", "ops="+ops))
	if err != nil || dc.Gossip.Members != nil || len(dc.Gossip.TeamMembers["ops"]) != 2 || dc.Gossip.TeamMembers["public"] != nil {
		t.Fatalf("members = [TEAM=FILE]: %v %v %v", dc.Gossip.Members, dc.Gossip.TeamMembers, err)
	}
	// The flag, repeated.
	dc, err = nodeConfigFor(t, "", "--team", "ops", "--team", "dev", "--members", all, "--members", "ops="+ops)
	if err != nil || len(dc.Gossip.Members) != 1 || len(dc.Gossip.TeamMembers["ops"]) != 2 {
		t.Fatalf("--members FILE --members TEAM=FILE: %v %v %v", dc.Gossip.Members, dc.Gossip.TeamMembers, err)
	}
}

// A bad value fails before the node starts, with a message naming the
// key (and the file) or the flag.
func TestNodeConfigBadValues(t *testing.T) {
	dir := t.TempDir()
	badPSK := filepath.Join(dir, "psk")
	os.WriteFile(badPSK, []byte("short"), 0o600)
	members := filepath.Join(dir, "members")
	os.WriteFile(members, []byte("fb3a5590974ea181\n"), 0o600)
	teamKey := filepath.Join(dir, "t.key")
	os.WriteFile(teamKey, []byte(strings.Repeat("ab", 32)+"\n"), 0o600)
	cases := []struct {
		name, toml string
		args       []string
		want       []string // all in the error
	}{
		{"duration in words", `sleep = "5 minutes"`, nil, []string{"config.toml", "sleep", "5 minutes"}},
		{"duration as a number", `pull = 5`, nil, []string{"config.toml", "pull"}},
		{"negative sleep", `sleep = "-5m"`, nil, []string{"config.toml: sleep = -5m0s", "positive"}},
		{"negative sleep flag", "", []string{"--sleep", "-1m"}, []string{"--sleep = -1m0s", "positive"}},
		{"team with a space", `teams = ["a b"]`, nil, []string{"config.toml: teams = \"a b\""}},
		{"team with a slash, flag", `teams = ["ok"]`, []string{"--team", "a/b"}, []string{"--team = \"a/b\""}},
		{"team not a list", `teams = "backend"`, nil, []string{"config.toml", "teams"}},
		{"bootstrap without peer id", `bootstrap = ["/ip4/10.0.0.5/tcp/4002"]`, nil, []string{"config.toml: bootstrap", "/p2p/"}},
		{"bad listen flag", "", []string{"--listen", "/ip4/1.2.3.4/tcp/x"}, []string{"--listen"}},
		{"commons without scheme", `commons = ["commons.example.org"]`, nil, []string{"config.toml: commons", "https://"}},
		{"api without port", `api = "localhost"`, nil, []string{"config.toml: api", "HOST:PORT"}},
		{"log level", `log_level = "loud"`, nil, []string{"config.toml: log_level = \"loud\""}},
		{"negative strangers' budget", `stranger_records = -1`, nil, []string{"config.toml: stranger_records = -1", "at least 0"}},
		{"negative strangers' bytes flag", "", []string{"--stranger-bytes", "-5"}, []string{"--stranger-bytes = -5", "at least 0"}},
		{"strangers' budget as a string", `stranger_bytes = "64MiB"`, nil, []string{"config.toml", "stranger_bytes"}},
		{"log level flag", "", []string{"--log-level", "loud"}, []string{"--log-level = \"loud\""}},
		{"missing members file", `members = "/nonexistent/members"`, nil, []string{"config.toml: members", "/nonexistent/members"}},
		{"members of a team not joined", fmt.Sprintf("teams = [\"t\"]\nmembers = [%q]", "u="+members), nil, []string{"config.toml: members", "not in"}},
		{"members flag of a team not joined", "", []string{"--team", "t", "--members", "u=" + members}, []string{"--members", "not in"}},
		{"bad psk", fmt.Sprintf("psk = %q", badPSK), nil, []string{"config.toml: psk", "64 hex"}},
		{"team key without a team", fmt.Sprintf("teams = [\"t\"]\nteam_keys = [%q]", teamKey), nil, []string{"config.toml: team_keys", "TEAM=FILE"}},
		{"team key flag with a bad team", "", []string{"--team", "t", "--team-key", "a b=" + teamKey}, []string{"--team-key", "TEAM=FILE"}},
		{"team key too short", fmt.Sprintf("teams = [\"t\"]\nteam_keys = [%q]", "t="+badPSK), nil, []string{"config.toml: team_keys", "64 hex", "remem team-key t"}},
		{"team key file missing", `teams = ["t"]` + "\n" + `team_keys = ["t=/nonexistent/t.key"]`, nil, []string{"config.toml: team_keys", "/nonexistent/t.key"}},
		{"team key of a team not joined", fmt.Sprintf("teams = [\"t\"]\nteam_keys = [%q]", "u="+teamKey), nil, []string{"config.toml: team_keys", "not in"}},
		{"team key flag of a team not joined", "", []string{"--team", "t", "--team-key", "u=" + teamKey}, []string{"--team-key", "not in"}},
		{"two keys of one team", "", []string{"--team", "t", "--team-key", "t=" + teamKey, "--team-key", "t=" + teamKey}, []string{"--team-key", "two keys"}},
		{"members of the wrong type", `members = 3`, nil, []string{"config.toml", "members"}},
		{"layer without a file", `layers = ["team"]`, nil, []string{"config.toml: layers", "NAME=FILE"}},
		{"layer with a relative path", `layers = ["team=team.jsonl"]`, nil, []string{"config.toml: layers", "absolute"}},
		{"layer file missing", `layers = ["team=/nonexistent/team.jsonl"]`, nil, []string{"config.toml: layers", "/nonexistent/team.jsonl"}},
		{"layer named personal", `layers = ["personal=/srv/team.jsonl"]`, nil, []string{"config.toml: layers", "personal"}},
		{"layer flag without a file", "", []string{"--layer", "team"}, []string{"--layer", "NAME=FILE"}},
		{"layers of the wrong type", `layers = 3`, nil, []string{"config.toml", "layers"}},
		{"quorum of zero", `quorum = 0`, nil, []string{"config.toml: quorum = 0", "at least 1"}},
		{"quorum flag of zero", "", []string{"--quorum", "0"}, []string{"--quorum = 0", "at least 1"}},
		{"quorum in words", `quorum = "two"`, nil, []string{"config.toml", "quorum"}},
		{"window of zero", `window = "0s"`, nil, []string{"config.toml: window = 0s", "positive"}},
		{"negative window flag", "", []string{"--window", "-1h"}, []string{"--window = -1h0m0s", "positive"}},
		{"window in days", `window = "90d"`, nil, []string{"config.toml", "window", "90d"}},
		{"threshold of zero", `threshold = 0.0`, nil, []string{"config.toml: threshold = 0", "above 0"}},
		{"threshold above one", `threshold = 1.5`, nil, []string{"config.toml: threshold = 1.5", "at most 1"}},
		{"threshold flag above one", "", []string{"--threshold", "2"}, []string{"--threshold = 2", "at most 1"}},
		{"threshold in words", `threshold = "high"`, nil, []string{"config.toml", "threshold"}},
		{"two writers", "writer = \"cat\"\nwriter_url = \"http://127.0.0.1:11434/v1\"", nil, []string{"config.toml: writer", "writer_url", "keep one"}},
		{"two writers, one a flag", `writer = "cat"`, []string{"--writer-url", "http://127.0.0.1:11434/v1"}, []string{"config.toml: writer", "--writer-url", "keep one"}},
		{"writer model without a URL", `writer_model = "llama3.2"`, nil, []string{"config.toml: writer_model", "--writer-url"}},
		{"writer token file missing", "writer_url = \"http://127.0.0.1:1/v1\"\nwriter_token_file = \"/nonexistent/token\"", nil, []string{"config.toml: writer_token_file", "/nonexistent/token"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := nodeConfigFor(t, tc.toml, tc.args...)
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error does not say %q: %v", w, err)
				}
			}
			t.Log(err)
		})
	}
}

// config.toml's layers go to the memory's config, a --layer flag replaces
// them.
func TestNodeConfigLayers(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	for _, p := range []string{a, b} {
		os.WriteFile(p, []byte(`{"kind":"error","text":"go vet reports a copied lock in the cache package","strength":0.5}`+"\n"), 0o644)
	}
	dc, err := nodeConfigFor(t, fmt.Sprintf("layers = [%q, %q]\n", "team="+a, "ops="+b))
	if want := []node.LayerFile{{Name: "team", Path: a}, {Name: "ops", Path: b}}; err != nil || !reflect.DeepEqual(dc.Memory.Layers, want) {
		t.Errorf("layers from config.toml: %+v %v, want %+v", dc.Memory.Layers, err, want)
	}
	dc, err = nodeConfigFor(t, fmt.Sprintf("layers = [%q]\n", "team="+a), "--layer", "ops="+b)
	if want := []node.LayerFile{{Name: "ops", Path: b}}; err != nil || !reflect.DeepEqual(dc.Memory.Layers, want) {
		t.Errorf("--layer over config.toml: %+v %v, want %+v", dc.Memory.Layers, err, want)
	}
}

// Every setting has its flag, every flag of the node its setting, and
// every setting's field exists in node.DaemonConfig.
func TestNodeSettingsTags(t *testing.T) {
	flags := map[string]bool{}
	for _, f := range nodeCommand().Flags {
		flags[f.Names()[0]] = true
	}
	dc := reflect.TypeFor[node.DaemonConfig]()
	for _, f := range settingFields() {
		key, flag := f.Tag.Get("toml"), f.Tag.Get("flag")
		if key == "" || !flags[flag] {
			t.Errorf("field %s: key %q, flag %q (not a flag of remem node)", f.Name, key, flag)
		}
		delete(flags, flag)
		to, via := f.Tag.Get("to"), f.Tag.Get("via")
		if (to == "") == (via == "") {
			t.Errorf("field %s: want one of the tags to and via", f.Name)
		}
		for _, path := range strings.Fields(to + " " + via) {
			typ := dc
			for _, name := range strings.Split(path, ".") {
				sf, ok := typ.FieldByName(name)
				if !ok {
					t.Fatalf("field %s: node.DaemonConfig has no %s", f.Name, path)
				}
				typ = sf.Type
			}
			if to != "" && !f.Type.ConvertibleTo(typ) {
				t.Errorf("field %s: %s cannot be copied into %s (%s)", f.Name, f.Type, path, typ)
			}
		}
	}
	for f := range flags {
		t.Errorf("flag --%s of remem node has no setting", f)
	}
}

func TestMembersAndPSKFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	write := func(s string) { os.WriteFile(path, []byte(s), 0o600) }
	write("# team\nfb3a5590974ea181\n595b6457bd8219cd6f5f75b84813270ca3863809026c16f574ef0f6ced324794  # alice\n")
	if m, err := readMembers(path); err != nil || len(m) != 2 {
		t.Fatalf("members: %v %v", m, err)
	}
	for _, bad := range []string{"", "# only comments\n", "FB3A5590974EA181\n", "not-a-key\n", "fb3a5590974ea18\n"} {
		write(bad)
		if _, err := readMembers(path); err == nil {
			t.Errorf("members file %q accepted", bad)
		}
	}
	write(strings.Repeat("ab", 32) + "\n")
	if k, err := readPSK(path); err != nil || len(k) != 32 {
		t.Fatalf("psk: %v", err)
	}
	for _, bad := range []string{"short", strings.Repeat("zz", 32), strings.Repeat("ab", 31)} {
		write(bad)
		if _, err := readPSK(path); err == nil {
			t.Errorf("psk %q accepted", bad)
		}
	}
}

func TestEveryCommandHasHelpWithExamples(t *testing.T) {
	for _, c := range commands() {
		all := append([]*cli.Command{c}, c.Subcommands...)
		for _, sub := range all {
			if sub.Subcommands != nil && sub.Action == nil {
				continue
			}
			if !strings.Contains(sub.UsageText, "Example") {
				t.Errorf("remem %s: --help has no examples", sub.Name)
			}
		}
	}
}

func TestUseEmbeddings(t *testing.T) {
	var cfg node.Config
	if err := useEmbeddings(&cfg, "http://127.0.0.1:1/v1"); err != nil || cfg.Params.Threshold != embedThreshold || cfg.Similarity == nil {
		t.Fatalf("%+v %v", cfg.Params, err)
	}
	t.Setenv("REMEM_SIMILARITY_THRESHOLD", "0.7")
	if err := useEmbeddings(&cfg, "http://127.0.0.1:1/v1"); err != nil || cfg.Params.Threshold != 0.7 {
		t.Fatalf("override: %+v %v", cfg.Params, err)
	}
	t.Setenv("REMEM_SIMILARITY_THRESHOLD", "high")
	if err := useEmbeddings(&cfg, "http://127.0.0.1:1/v1"); err == nil {
		t.Fatal("a bad threshold was accepted")
	}
}
