package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// configHome is an initialised home with config.toml holding text.
func configHome(t *testing.T, text string) (home, file string) {
	t.Helper()
	home = t.TempDir()
	must(t, home, nil, "init")
	file = filepath.Join(home, "config.toml")
	if text != "" {
		if err := os.WriteFile(file, []byte(text), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	return home, file
}

func readText(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// set keeps every comment and other line; it edits the key's line (a list
// over several lines included) or appends it, and the node reads it.
func TestConfigSetKeepsComments(t *testing.T) {
	home, file := configHome(t, `# my remem settings
teams = ["backend"]  # the team channel

# how often to sleep
sleep = "5m"
listen = [
  "/ip4/0.0.0.0/tcp/4010", # tcp
  "/ip4/0.0.0.0/udp/4010/quic-v1",
]
writer = "llm -m small#1" # a # in the value
# the end
`)
	must(t, home, nil, "config", "set", "teams", "backend", "ops")
	must(t, home, nil, "config", "set", "sleep", "2m")
	must(t, home, nil, "config", "set", "listen", "/ip4/127.0.0.1/tcp/4011")
	must(t, home, nil, "config", "set", "quorum", "2")
	must(t, home, nil, "config", "set", "mdns", "false")
	must(t, home, nil, "config", "set", "threshold", "0.4")
	must(t, home, nil, "config", "set", "writer", "llm -m big#2")
	want := `# my remem settings
teams = ["backend", "ops"]  # the team channel

# how often to sleep
sleep = "2m"
listen = ["/ip4/127.0.0.1/tcp/4011"]
writer = "llm -m big#2" # a # in the value
# the end
quorum = 2
mdns = false
threshold = 0.4
`
	if got := readText(t, file); got != want {
		t.Errorf("config.toml after set:\n%s\nwant:\n%s", got, want)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("the file's mode should stay 0640: %v %v", fi.Mode(), err)
	}
	s, _, err := loadNodeSettings(home)
	if err != nil || len(s.Teams) != 2 || s.Quorum != 2 || s.MDNS || *s.Threshold != 0.4 {
		t.Fatalf("the node reads %+v %v", s, err)
	}

	must(t, home, nil, "config", "unset", "mdns")
	must(t, home, nil, "config", "unset", "layers") // absent: nothing to do
	if got := readText(t, file); strings.Contains(got, "mdns") || !strings.HasSuffix(got, "quorum = 2\nthreshold = 0.4\n") {
		t.Errorf("config.toml after unset:\n%s", got)
	}

	if out := must(t, home, nil, "config", "get", "teams"); out != "backend\nops\n" {
		t.Errorf("get teams: %q", out)
	}
	if out := must(t, home, nil, "config", "get", "sleep"); out != "2m\n" {
		t.Errorf("get sleep: %q", out)
	}
	var entries []configEntry
	if err := json.Unmarshal([]byte(must(t, home, nil, "config", "list", "--json")), &entries); err != nil {
		t.Fatal(err)
	}
	got := map[string]configEntry{}
	for _, e := range entries {
		got[e.Key] = e
	}
	if len(entries) != len(settingFields()) || got["quorum"].Value != 2.0 || got["quorum"].Source != "config.toml" ||
		got["window"].Value != "2160h" || got["window"].Source != "default" || got["mdns"].Value != true {
		t.Errorf("list --json: %+v", entries)
	}
	if out := must(t, home, nil, "config", "list"); !strings.Contains(out, "api") || !strings.Contains(out, "127.0.0.1:7878") {
		t.Errorf("list: %s", out)
	}
}

// A new home's config.toml is created by set.
func TestConfigSetCreatesFile(t *testing.T) {
	home, file := configHome(t, "")
	must(t, home, nil, "config", "set", "api", "127.0.0.1:7999")
	if got := readText(t, file); got != "api = \"127.0.0.1:7999\"\n" {
		t.Errorf("config.toml: %q", got)
	}
}

// Unknown keys, wrong types and values Validate refuses are refused in a
// line or two, and the file is left as it was.
func TestConfigSetRefuses(t *testing.T) {
	const text = "# keep me\nquorum = 3\n"
	home, file := configHome(t, text)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"tems", "x"}, `unknown key "tems"; did you mean "teams"?`},
		{[]string{"token-file", "/x"}, `did you mean "commons_token_file"?`},
		{[]string{"zzzzzzzzzz", "1"}, `unknown key "zzzzzzzzzz" (`},
		{[]string{"quorum", "two"}, "quorum two: want a whole number"},
		{[]string{"quorum", "0"}, "quorum = 0: want at least 1"},
		{[]string{"mdns", "maybe"}, "want true or false"},
		{[]string{"sleep", "5"}, "want a duration like 10m"},
		{[]string{"api", "a", "b"}, "want one value"},
		{[]string{"commons", "example.org"}, "want an http:// or https:// URL"},
		{[]string{"threshold", "1.5"}, "threshold = 1.5: want a similarity above 0, at most 1"},
		{[]string{"psk", "/nonexistent/psk"}, "psk"},
		{[]string{"quorum"}, "needs a KEY and its VALUE"},
	} {
		_, errOut, code := run(t, home, nil, append([]string{"config", "set"}, tc.args...)...)
		if code != 2 || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "\n") > 2 {
			t.Errorf("config set %v: exit %d, stderr %q, want exit 2 and %q in at most two lines", tc.args, code, errOut, tc.want)
		}
	}
	if got := readText(t, file); got != text {
		t.Errorf("a refused set changed config.toml:\n%s", got)
	}
	if _, errOut, code := run(t, home, nil, "config", "get", "quorom"); code != 2 || !strings.Contains(errOut, `did you mean "quorum"?`) {
		t.Errorf("get of a misspelt key: exit %d %q", code, errOut)
	}
	missing := filepath.Join(t.TempDir(), "typo")
	if _, errOut, code := run(t, missing, nil, "config", "set", "quorum", "2"); code == 0 || !strings.Contains(errOut, "remem init") {
		t.Errorf("set on a missing home: exit %d %q", code, errOut)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Errorf("config set created the mistyped home %s", missing)
	}
}
