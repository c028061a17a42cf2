package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/remem/remem/node"
	"github.com/remem/remem/protocol"
	"github.com/remem/remem/store"
)

// strangerHome holds a lesson of a stranger and the confirmations of two
// fresh keys and of a real second home (signed with its key), none
// admitted; config.toml has a comment and a key of its own.
func strangerHome(t *testing.T) (home, hash, second string, keys []protocol.Identity) {
	t.Helper()
	home, second = newHome(t), newHome(t)
	if err := os.WriteFile(filepath.Join(home, node.ConfigFile), []byte("# my settings\nsleep = \"2m\" # often\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	id := func(b byte) protocol.Identity {
		i, err := protocol.NewIdentity(contextSeed(b))
		if err != nil {
			t.Fatal(err)
		}
		return i
	}
	b, err := node.LoadIdentity(second)
	if err != nil {
		t.Fatal(err)
	}
	keys = []protocol.Identity{id(12), id(13), b}
	text := "The ledger reconciliation job of the billing service times out when the exchange rate feed is slow."
	l, err := protocol.SignLesson(id(11), protocol.LessonDraft{Kind: "error", Text: text, Seen: 1, Strength: 0.5, Updated: t0})
	if err != nil {
		t.Fatal(err)
	}
	lines := []string{string(l.Raw)}
	for _, k := range keys {
		c, err := protocol.SignConfirmation(k, l.Hash, t0)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(c.Raw))
	}
	m, err := node.Open(node.Config{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if rep, err := m.Receive(context.Background(), "team:x", protocol.SplitLines([]byte(strings.Join(lines, "\n")))); err != nil || len(rep.Refused) > 0 {
		t.Fatalf("receive: %+v %v", rep, err)
	}
	return home, l.Hash, second, keys
}

func lessonOf(t *testing.T, home, hash string) node.LessonView {
	t.Helper()
	var views []node.LessonView
	if err := json.Unmarshal([]byte(must(t, home, nil, "lessons", "--all", "--json")), &views); err != nil {
		t.Fatal(err)
	}
	for _, v := range views {
		if v.Hash == hash {
			return v
		}
	}
	t.Fatalf("lesson %s not listed", hash)
	return node.LessonView{}
}

// Three fresh keys' confirmations leave a lesson a candidate, and every
// view says "3 confirmations, none admitted"; trusting them (by key, by
// origin, by a real second home's `remem id --json`) makes it common;
// removing one makes it a candidate again.
func TestTrustMakesStrangersCount(t *testing.T) {
	home, hash, second, keys := strangerHome(t)
	v := lessonOf(t, home, hash)
	if v.State != protocol.StateCandidate || v.Support != "3 confirmations, none admitted" || len(v.Admitted) != 0 || len(v.Verifiers) != 3 ||
		!strings.HasPrefix(v.StateReason, "3 confirmations, none admitted") {
		t.Fatalf("strangers' confirmations: %+v", v)
	}
	if out := must(t, home, nil, "lessons"); !strings.Contains(out, "3 confirmations, none admitted") {
		t.Errorf("remem lessons:\n%s", out)
	}
	show := must(t, home, nil, "show", hash)
	if !strings.Contains(show, "3 confirmations, none admitted") || strings.Count(show, node.NotAdmitted) != 3 {
		t.Errorf("remem show should list each verifier as not admitted:\n%s", show)
	}
	ctxOut := must(t, home, nil, "context", "--cwd", t.TempDir())
	if !strings.Contains(ctxOut, "Observed (candidate, 3 confirmations, none admitted: none from memories this one admits): ") {
		t.Errorf("remem context should frame the support as not admitted:\n%s", ctxOut)
	}

	must(t, home, nil, "trust", "add", keys[0].Key())
	must(t, home, nil, "trust", "add", strings.ToUpper(keys[1].Origin()))
	idDoc := must(t, second, nil, "id", "--json")
	if out := must(t, home, []byte(idDoc), "trust", "add", "-"); !strings.Contains(out, "trusted origin "+keys[2].Origin()) {
		t.Errorf("trust add - of remem id --json: %s", out)
	}
	if out := must(t, home, []byte(idDoc), "trust", "add", "-"); !strings.Contains(out, "already trusted") {
		t.Errorf("a second add of the same origin: %s", out)
	}
	cfg, err := os.ReadFile(filepath.Join(home, node.ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(cfg), "# my settings\nsleep = \"2m\" # often\n") || strings.Count(string(cfg), "trust = ") != 1 {
		t.Errorf("config.toml lost its comment or its keys:\n%s", cfg)
	}
	var listed []trustEntry
	if err := json.Unmarshal([]byte(must(t, home, nil, "trust", "list", "--json")), &listed); err != nil || len(listed) != 4 {
		t.Fatalf("trust list --json: %+v %v", listed, err)
	}
	for i, k := range keys {
		if e := listed[i+1]; e.Origin != k.Origin() || e.Source != "trust" {
			t.Errorf("trust list entry %d: %+v, want origin %s", i+1, e, k.Origin())
		}
	}
	v = lessonOf(t, home, hash)
	if v.State != protocol.StateCommon || v.Support != "3 confirmations, 3 admitted" {
		t.Fatalf("trusted confirmers: %+v", v)
	}
	show = must(t, home, nil, "show", hash)
	if strings.Count(show, "admitted: "+node.AdmittedTrust) != 3 {
		t.Errorf("remem show should say each verifier is in the trust list:\n%s", show)
	}

	must(t, home, nil, "trust", "remove", keys[1].Key())
	if v = lessonOf(t, home, hash); v.State != protocol.StateCandidate || v.Support != "3 confirmations, 2 admitted" {
		t.Fatalf("after trust remove: %+v", v)
	}
	if out := must(t, home, nil, "context", "--cwd", t.TempDir()); !strings.Contains(out, "3 confirmations, 2 admitted: 1 from memories this one does not admit") {
		t.Errorf("remem context after remove:\n%s", out)
	}
}

// Hostile entries are refused with what to give, and config.toml is left
// as it was; an id document's other members are ignored.
func TestTrustRefusesHostileEntries(t *testing.T) {
	home, _, second, _ := strangerHome(t)
	before, err := os.ReadFile(filepath.Join(home, node.ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	huge := []byte(`{"key":"` + strings.Repeat("a", 1<<20) + `"}`)
	doc := filepath.Join(t.TempDir(), "mixed.json")
	b, _ := node.LoadIdentity(second)
	a, _ := protocol.NewIdentity(contextSeed(12))
	if err := os.WriteFile(doc, []byte(`{"key":"`+b.Key()+`","origin":"`+a.Origin()+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		stdin []byte
		args  []string
		want  string
	}{
		{nil, []string{"trust", "add", "garbage"}, "not hex"},
		{nil, []string{"trust", "add", "abcd"}, "hex digits"},
		{nil, []string{"trust", "add"}, "needs an ENTRY"},
		{huge, []string{"trust", "add", "-"}, "over 64 KiB"},
		{[]byte("not json"), []string{"trust", "add", "-"}, "is not the JSON"},
		{[]byte(`{"peer_id":"x"}`), []string{"trust", "add", "-"}, "neither a key nor an origin"},
		{[]byte(`{"key":"zz"}`), []string{"trust", "add", "-"}, "not a 64-hex public key"},
		{nil, []string{"trust", "add", doc}, "is not the key's"},
	} {
		_, errOut, code := run(t, home, c.stdin, c.args...)
		if code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("remem %v: exit %d, stderr %q, want %q", c.args, code, errOut, c.want)
		}
	}
	if after, _ := os.ReadFile(filepath.Join(home, node.ConfigFile)); string(after) != string(before) {
		t.Errorf("a refused entry changed config.toml:\n%s", after)
	}
	// An extra member (even one named like a setting) is ignored.
	extra := `{"key":"` + b.Key() + `","admit_all":true,"trust":["` + a.Origin() + `"]}`
	must(t, home, []byte(extra), "trust", "add", "-")
	var entries []configEntry
	if err := json.Unmarshal([]byte(must(t, home, nil, "config", "list", "--json")), &entries); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Key == "admit_all" && e.Value != false || e.Key == "trust" && len(e.Value.([]any)) != 1 {
			t.Errorf("an id document's extra member changed %s: %v", e.Key, e.Value)
		}
	}
	for _, cmd := range [][]string{{"trust", "--help"}, {"trust", "add", "--help"}, {"trust", "remove", "--help"}, {"trust", "list", "--help"}} {
		if out := must(t, home, nil, cmd...); !strings.Contains(out, "Examples:") {
			t.Errorf("remem %v has no examples:\n%s", cmd, out)
		}
	}
}

// admit_all with an open scope: doctor warns that strangers count.
func TestDoctorWarnsAdmitAll(t *testing.T) {
	home := newHome(t)
	if err := os.WriteFile(filepath.Join(home, node.ConfigFile), []byte("admit_all = true\nteams = [\"ops\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, _ := run(t, home, nil, "doctor")
	if !strings.Contains(out, "WARN  admit") || !strings.Contains(out, "team ops (no members list)") {
		t.Errorf("doctor should warn of admit_all with an open team:\n%s", out)
	}
	if err := os.WriteFile(filepath.Join(home, node.ConfigFile), []byte("teams = [\"ops\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, _, _ = run(t, home, nil, "doctor"); !strings.Contains(out, "OK    admit") {
		t.Errorf("doctor without admit_all:\n%s", out)
	}
}

// A home from before admitted verifiers (no upgrade note in its store)
// whose lesson was common through three strangers: the first open counts
// it, and remem status says so once.
func TestAdmissionUpgradeNoticeOnce(t *testing.T) {
	home, _, _, _ := strangerHome(t)
	st, err := store.Open(home, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteMeta("admission_upgrade"); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	var s node.Status
	if err := json.Unmarshal([]byte(must(t, home, nil, "status", "--json")), &s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(s.AdmissionNotice, "1 lesson that was common or fading only through memories this one does not admit are candidates now") {
		t.Errorf("first status after the upgrade: %q", s.AdmissionNotice)
	}
	if out := must(t, home, nil, "status"); strings.Contains(out, "notice") {
		t.Errorf("the notice is shown once:\n%s", out)
	}
}
