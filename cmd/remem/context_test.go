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
	"unicode/utf8"

	"github.com/remem/remem/node"
	"github.com/remem/remem/protocol"
)

// runContext runs `remem context` in this process.
func runContext(t *testing.T, home string, args ...string) (string, error) {
	t.Helper()
	app := newApp()
	var out, errOut bytes.Buffer
	app.Writer, app.ErrWriter = &out, &errOut
	err := app.RunContext(context.Background(), append([]string{"remem", "--home", home, "context"}, args...))
	return out.String(), err
}

func contextSeed(b byte) []byte { return bytes.Repeat([]byte{b}, 32) }

// contextHome holds three received lessons: a strong one about another
// subject, one about the project, and one confirmed by two more memories.
func contextHome(t *testing.T) (home string, relevant, confirmed string) {
	t.Helper()
	home = t.TempDir()
	m, err := node.Open(node.Config{Home: home, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	now := time.Now().UTC().Add(-time.Hour)
	var lines []string
	sign := func(who byte, text string) string {
		id, _ := protocol.NewIdentity(contextSeed(who))
		rec, err := protocol.SignLesson(id, protocol.LessonDraft{Kind: "error", Text: text, Seen: 3, Strength: 0.9, Updated: now})
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(rec.Raw))
		return rec.Hash
	}
	confirm := func(who byte, hash string) {
		id, _ := protocol.NewIdentity(contextSeed(who))
		rec, err := protocol.SignConfirmation(id, hash, now)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(rec.Raw))
	}
	sign(1, "Docker builds on the shared runner run out of disk space after about forty images.")
	relevant = sign(2, "The ledger reconciliation job of the billing service times out when the exchange rate feed is slow.")
	confirmed = sign(3, "Homebrew upgrades of postgres leave the old data directory unreadable by the new server.")
	confirm(4, confirmed)
	confirm(5, confirmed)
	rep, err := m.Receive(context.Background(), "team:x", protocol.SplitLines([]byte(strings.Join(lines, "\n"))))
	if err != nil || len(rep.Refused) > 0 {
		t.Fatalf("receive: %+v %v", rep, err)
	}
	return home, relevant, confirmed
}

func billingProject(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "billing-service")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	readme := "[![build](https://ci.example/badge.svg)](https://ci.example)\n\n# Billing service: ledger reconciliation and exchange rates\n\nMore text.\n"
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte(readme), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestContextMarkdown(t *testing.T) {
	home, _, _ := contextHome(t)
	dir := billingProject(t)
	out, err := runContext(t, home, "--cwd", dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("remem context:\n%s", out)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if !strings.HasPrefix(out, contextTitle+"\n\n") || !strings.Contains(out, "not instructions") {
		t.Fatalf("the header should say these are observations, not instructions:\n%s", out)
	}
	var items []string
	for _, l := range lines {
		if strings.HasPrefix(l, "- ") {
			items = append(items, l)
		}
	}
	if len(items) != 3 {
		t.Fatalf("want the 3 lessons, got %d:\n%s", len(items), out)
	}
	// The project's lesson first, then the strongest of the rest.
	if !strings.Contains(items[0], "ledger reconciliation") {
		t.Errorf("the lesson about the project should come first:\n%s", out)
	}
	for _, it := range items {
		if !strings.HasPrefix(it, "- Observed (candidate, ") {
			t.Errorf("every lesson should be framed as an observation: %q", it)
		}
	}
	if !strings.HasPrefix(items[1], "- Observed (candidate, 2 confirmations, none admitted: none from memories this one admits): Homebrew upgrades") {
		t.Errorf("the confirmed lesson should come next (equal strength, more confirmations), with its 2 confirmations:\n%s", out)
	}
	if !strings.Contains(out, "Observed (candidate, 0 confirmations): Docker builds") {
		t.Errorf("the unconfirmed lesson should say 0 confirmations:\n%s", out)
	}
}

func TestContextBudgetAndLimit(t *testing.T) {
	home, _, _ := contextHome(t)
	dir := billingProject(t)
	full, err := runContext(t, home, "--cwd", dir)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(full, "\n")
	// A budget one character short of the whole output drops the last lesson.
	budget := utf8.RuneCountInString(full) - 1
	out, err := runContext(t, home, "--cwd", dir, "--budget", itoa(budget))
	if err != nil {
		t.Fatal(err)
	}
	if n := utf8.RuneCountInString(out); n > budget {
		t.Errorf("output of %d characters passes the budget %d", n, budget)
	}
	if want := strings.Join(lines[:len(lines)-2], ""); out != want {
		t.Errorf("budget %d: got\n%s\nwant\n%s", budget, out, want)
	}
	out, err = runContext(t, home, "--cwd", dir, "--limit", "1")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(out, "\n- ") != 1 || !strings.Contains(out, "ledger reconciliation") {
		t.Errorf("--limit 1 should keep the most relevant lesson only:\n%s", out)
	}
	if _, err := runContext(t, home, "--cwd", dir, "--budget", "20"); err == nil || !strings.Contains(err.Error(), "header") {
		t.Errorf("a budget smaller than the header should be refused: %v", err)
	}
	if _, err := runContext(t, home, "--cwd", dir, "--format", "yaml"); err == nil {
		t.Errorf("--format yaml should be refused")
	}
}

func TestContextJSON(t *testing.T) {
	home, relevant, confirmed := contextHome(t)
	dir := billingProject(t)
	out, err := runContext(t, home, "--cwd", dir, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Header  string
		Project string
		Query   string
		Lessons []struct {
			Hash          string
			Observation   string
			Confirmations int
			Confirmers    []string
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	if !strings.Contains(got.Header, "not instructions") || got.Project != dir || !strings.Contains(got.Query, "billing service") || !strings.Contains(got.Query, "ledger reconciliation") {
		t.Errorf("header, project, query: %+v", got)
	}
	if len(got.Lessons) != 3 || got.Lessons[0].Hash != relevant {
		t.Fatalf("lessons: %+v", got.Lessons)
	}
	for _, l := range got.Lessons {
		if l.Hash == confirmed && (l.Confirmations != 2 || len(l.Confirmers) != 2) {
			t.Errorf("confirmed lesson: %+v", l)
		}
	}
}

func TestContextEmptyMemory(t *testing.T) {
	out, err := runContext(t, newHome(t), "--cwd", t.TempDir())
	if err != nil || out != "" {
		t.Errorf("with no lesson the Markdown should be empty: %q %v", out, err)
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
