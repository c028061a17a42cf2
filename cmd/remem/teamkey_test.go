package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// runInProcess runs the remem app with args and returns stdout, stderr and
// the error Run returned.
func runInProcess(t *testing.T, home string, args ...string) (string, string, error) {
	t.Helper()
	app := newApp()
	var out, errb bytes.Buffer
	app.Writer, app.ErrWriter = &out, &errb
	app.ExitErrHandler = func(*cli.Context, error) {}
	err := app.Run(append([]string{"remem", "--home", home}, args...))
	return out.String(), errb.String(), err
}

// TestTeamKeyCommand: `remem team-key TEAM` writes a fresh key only its
// owner reads, prints what this node and a teammate add, and run again
// shows the same key instead of replacing it; `remem node` takes the file
// with --team-key.
func TestTeamKeyCommand(t *testing.T) {
	home := t.TempDir()
	out, _, err := runInProcess(t, home, "team-key", "backend")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(home, "team-backend.key")
	fi, err := os.Stat(file)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file %s: %v %v", file, fi, err)
	}
	data, _ := os.ReadFile(file)
	key, err := hex.DecodeString(strings.TrimSpace(string(data)))
	if err != nil || len(key) != 32 {
		t.Fatalf("key file holds %q", data)
	}
	for _, want := range []string{"remem config set team_keys backend=" + file, hex.EncodeToString(key), "teammate"} {
		if !strings.Contains(out, want) {
			t.Errorf("the output does not say %q:\n%s", want, out)
		}
	}
	jout, _, err := runInProcess(t, home, "team-key", "--json", "backend")
	var j struct{ Team, File, Key string }
	if err != nil || json.Unmarshal([]byte(jout), &j) != nil || j.Key != hex.EncodeToString(key) || j.File != file || j.Team != "backend" {
		t.Errorf("run again: %v %s (want the same key, kept)", err, jout)
	}
	dc, err := nodeConfigFor(t, "", "--team", "backend", "--team-key", "backend="+file)
	if err != nil || !bytes.Equal(dc.TeamKeys["backend"], key) {
		t.Errorf("node --team-key: %v %x", err, dc.TeamKeys["backend"])
	}
	other := filepath.Join(t.TempDir(), "ops.key")
	if _, _, err := runInProcess(t, home, "team-key", "--out", other, "ops"); err != nil {
		t.Fatal(err)
	}
	if d2, _ := os.ReadFile(other); len(d2) == 0 || bytes.Equal(d2, data) {
		t.Errorf("--out: %q", d2)
	}
	if _, _, err := runInProcess(t, filepath.Join(home, "nothing"), "team-key", "backend"); err == nil || !strings.Contains(err.Error(), "--out") {
		t.Errorf("no home and no --out: %v", err)
	}
	for _, bad := range [][]string{{"team-key"}, {"team-key", "a/b"}, {"team-key", "a", "b"}} {
		if _, _, err := runInProcess(t, home, bad...); err == nil || !strings.Contains(err.Error(), "team") {
			t.Errorf("remem %v: %v", bad, err)
		}
	}
}
