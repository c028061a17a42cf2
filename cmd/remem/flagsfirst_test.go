package main

import (
	"slices"
	"strings"
	"testing"
)

func TestFlagsFirst(t *testing.T) {
	app := newApp()
	for _, c := range []struct{ in, want string }{
		{"remem recall go-vet --limit 1 --json", "remem recall --limit 1 --json go-vet"},
		{"remem hash TEXT --kind error", "remem hash --kind error TEXT"},
		{"remem --home /h -q show abcd1234 --json", "remem --home /h -q show --json abcd1234"},
		{"remem commons pull URL --token-file F", "remem commons pull --token-file F URL"},
		{"remem commons pull --token-file=F URL --json", "remem commons pull --token-file=F --json URL"},
		{"remem ingest - --json", "remem ingest --json -"},
		{"remem config set threshold -1", "remem config set threshold -1"}, // not a flag: an argument
		{"remem recall a -- --json", "remem recall a -- --json"},           // after --, arguments
		{"remem recall a --nosuch", "remem recall a --nosuch"},             // unknown: urfave/cli says so
		{"remem show abcd1234 --help", "remem show --help abcd1234"},       // help too
		{"remem commons", "remem commons"},                                 // a group
		{"remem nosuch --json", "remem nosuch --json"},                     // no command
		{"remem", "remem"},
	} {
		got := flagsFirst(app, strings.Fields(c.in))
		if !slices.Equal(got, strings.Fields(c.want)) {
			t.Errorf("%s\n got %s\nwant %s", c.in, strings.Join(got, " "), c.want)
		}
	}
}

// TestFlagsAfterArgumentsThroughBinary: flags after a command's argument
// are read, as in git or restic (a new user met `remem recall "go vet"
// --json` printing text and `remem hash TEXT --kind error` saying --kind
// was missing).
func TestFlagsAfterArgumentsThroughBinary(t *testing.T) {
	home := newHome(t)
	if out := must(t, home, nil, "hash", "go test fails", "--kind", "error", "--json"); !strings.Contains(out, `"kind": "error"`) {
		t.Errorf("hash TEXT --kind error --json: %s", out)
	}
	must(t, home, nil, "publish", "--kind", "error", "The integration suite times out when the VPN is down")
	if out := must(t, home, nil, "recall", "VPN", "--json", "--limit", "1"); !strings.HasPrefix(strings.TrimSpace(out), "[") {
		t.Errorf("recall QUERY --json: %s", out)
	}
}
