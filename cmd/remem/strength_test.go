package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/remem/remem/node"
	"github.com/remem/remem/protocol"
)

// runIn runs remem with args on home in this process.
func runIn(t *testing.T, home string, args ...string) string {
	t.Helper()
	app := newApp()
	var out, errOut bytes.Buffer
	app.Writer, app.ErrWriter = &out, &errOut
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := app.RunContext(ctx, append([]string{"remem", "--home", home}, args...)); err != nil {
		t.Fatalf("remem %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
	}
	return out.String()
}

// quorumHome holds a lesson of another memory and two confirmations of it,
// all signed at t0, and a config.toml of toml.
func quorumHome(t *testing.T, toml string, t0 time.Time) (home, hash string) {
	t.Helper()
	home = t.TempDir()
	if toml != "" {
		if err := os.WriteFile(filepath.Join(home, node.ConfigFile), []byte(toml), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	m, err := node.Open(node.Config{Home: home, Create: true, Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	id := func(b byte) protocol.Identity {
		i, _ := protocol.NewIdentity(contextSeed(b))
		return i
	}
	text := "The ledger reconciliation job of the billing service times out when the exchange rate feed is slow."
	l, err := protocol.SignLesson(id(1), protocol.LessonDraft{Kind: "error", Text: text, Seen: 1, Strength: 0.5, Updated: t0})
	if err != nil {
		t.Fatal(err)
	}
	lines := []string{string(l.Raw)}
	for _, b := range []byte{2, 3} {
		c, err := protocol.SignConfirmation(id(b), l.Hash, t0)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(c.Raw))
	}
	if rep, err := m.Receive(context.Background(), "team:x", protocol.SplitLines([]byte(strings.Join(lines, "\n")))); err != nil || len(rep.Refused) > 0 {
		t.Fatalf("receive: %+v %v", rep, err)
	}
	return home, l.Hash
}

// stateAt is the lesson's state and strength `remem lessons --all` shows at
// now ("" when it is not listed).
func stateAt(t *testing.T, home, hash string, now time.Time) (protocol.State, float64) {
	t.Helper()
	t.Setenv("REMEM_NOW", protocol.FormatTime(now))
	var views []node.LessonView
	if err := json.Unmarshal([]byte(runIn(t, home, "lessons", "--all", "--json")), &views); err != nil {
		t.Fatal(err)
	}
	for _, v := range views {
		if v.Hash == hash {
			return v.State, v.Strength
		}
	}
	return "", 0
}

// quorum and window in config.toml are the N and W every command computes
// states with: two verifiers make a lesson common under quorum = 2, and a
// short window makes it fade, then leave the lessons, recall and context.
func TestQuorumAndWindowFromConfig(t *testing.T) {
	t0 := time.Now().UTC().Add(-24 * time.Hour).Truncate(time.Second)
	home, hash := quorumHome(t, "", t0)
	if st, _ := stateAt(t, home, hash, t0.Add(30*time.Minute)); st != protocol.StateCandidate {
		t.Fatalf("default N = 3, two verifiers: %s, want candidate", st)
	}

	// Every origin admitted (SPEC §8 admit_all): the two confirmers are keys made for the test.
	home, hash = quorumHome(t, "quorum = 2\nwindow = \"1h\"\nadmit_all = true\n", t0)
	st, common := stateAt(t, home, hash, t0.Add(30*time.Minute))
	if st != protocol.StateCommon {
		t.Fatalf("quorum = 2, two verifiers: %s, want common", st)
	}
	st, fading := stateAt(t, home, hash, t0.Add(90*time.Minute))
	if st != protocol.StateFading || !(fading < common) {
		t.Fatalf("window = 1h, 90m later: %s at %v, want fading below %v", st, fading, common)
	}
	if st, _ := stateAt(t, home, hash, t0.Add(3*time.Hour)); st != protocol.StateRemoved {
		t.Fatalf("window = 1h, 3h later: %s, want removed", st)
	}
	// Removed: out of every active view.
	for _, args := range [][]string{{"lessons", "--json"}, {"recall", "--json", "ledger reconciliation of the billing service"},
		{"context", "--json", "--cwd", billingProject(t)}} {
		if out := runIn(t, home, args...); strings.Contains(out, hash) {
			t.Errorf("remem %s shows a removed lesson:\n%s", strings.Join(args, " "), out)
		}
	}
	// A bad quorum stops every command, naming the key.
	bad := t.TempDir()
	if err := os.WriteFile(filepath.Join(bad, node.ConfigFile), []byte("quorum = 0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := runLessons(t, bad); err == nil || !strings.Contains(err.Error(), "config.toml: quorum = 0") {
		t.Errorf("remem lessons with quorum = 0: %v", err)
	}
	// The same lesson is there 30 minutes in.
	t.Setenv("REMEM_NOW", protocol.FormatTime(t0.Add(30*time.Minute)))
	if out := runIn(t, home, "recall", "--json", "ledger reconciliation of the billing service"); !strings.Contains(out, hash) {
		t.Errorf("recall misses the common lesson:\n%s", out)
	}
}
