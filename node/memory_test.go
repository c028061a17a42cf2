package node

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/remem/remem/internal/testutil"
	"github.com/remem/remem/protocol"
)

// clock is a settable clock for tests.
type clock = testutil.Clock

func newClock() *clock {
	return testutil.NewClock(time.Now().UTC().Add(-time.Hour).Truncate(time.Second))
}

// openTest opens a memory in a fresh home with a project opted in.
func openTest(t testing.TB, clk *clock) (*Memory, string) {
	t.Helper()
	var cfg Config
	if clk != nil {
		cfg.Now = clk.Now
	}
	return openTestWith(t, cfg)
}

// openTestWith is openTest with cfg's other fields (its home is made here).
func openTestWith(t testing.TB, cfg Config) (*Memory, string) {
	t.Helper()
	home := t.TempDir()
	// Every origin counts: these tests are of the merge rule's mechanics,
	// as the seed counts ("counted, not weighted"); admission_test.go has
	// the default, which admits no stranger.
	cfg.Home, cfg.Create, cfg.Admission = home, true, Admission{All: true}
	m, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	project := filepath.Join(home, "project")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Share(ProjectShare{Project: project, Surprises: true}); err != nil {
		t.Fatal(err)
	}
	return m, project
}

func failure(cwd, session, happened string) protocol.Event {
	return protocol.Event{Kind: "error", Title: "go test", Happened: happened, Agent: "claude", Session: session, Cwd: cwd}
}

// transfer moves every own record of from into to, as a transport would.
func transfer(t *testing.T, from, to *Memory, scope string) ReceiveReport {
	t.Helper()
	lines, err := from.OwnLines("")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := to.Receive(context.Background(), scope, protocol.SplitLines(testutil.JoinLines(lines...)))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Refused) > 0 {
		t.Fatalf("refused: %+v", rep.Refused)
	}
	return rep
}

func sleep(t *testing.T, m *Memory) SleepReport {
	t.Helper()
	rep, err := m.Sleep(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func ownLesson(t *testing.T, m *Memory) LessonView {
	t.Helper()
	views, err := m.Lessons(Filter{All: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range views {
		if v.Own {
			return v
		}
	}
	t.Fatalf("no own lesson among %+v", views)
	return LessonView{}
}

func TestConfirmationTravelsBack(t *testing.T) {
	clk := newClock()
	a, projA := openTest(t, clk)
	b, projB := openTest(t, clk)
	ctx := context.Background()

	if _, err := a.Remember([]protocol.Event{
		failure(projA, "s1", "undefined: mocks.NewClient on a clean checkout until go generate has run"),
		failure(projA, "s2", "undefined: mocks.NewClient after a fresh clone, go generate had not run"),
	}); err != nil {
		t.Fatal(err)
	}
	rep := sleep(t, a)
	if rep.NewLessons != 1 || rep.Signed != 1 {
		t.Fatalf("A's sleep: %+v", rep)
	}
	lesson := ownLesson(t, a)

	clk.Add(time.Minute)
	transfer(t, a, b, "team:x")
	clk.Add(time.Minute)
	if _, err := b.Remember([]protocol.Event{failure(projB, "s9", "undefined: mocks.NewClient on a clean checkout, go generate not run yet")}); err != nil {
		t.Fatal(err)
	}
	rep = sleep(t, b)
	if rep.Confirmations != 1 {
		t.Fatalf("B's sleep confirmed nothing: %+v", rep)
	}
	transfer(t, b, a, "team:x")
	p, err := a.Show(lesson.Hash)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(p.Confirmers, b.Origin()) {
		t.Fatalf("A does not list B as confirmer: %+v", p)
	}
	_ = ctx
}

func TestNoConfirmationWhenMetBefore(t *testing.T) {
	clk := newClock()
	a, projA := openTest(t, clk)
	b, projB := openTest(t, clk)
	a.Remember([]protocol.Event{failure(projA, "s1", "undefined: mocks.NewClient on a clean checkout until go generate has run")})
	sleep(t, a)

	// B meets the surprise before the lesson arrives.
	b.Remember([]protocol.Event{failure(projB, "s0", "undefined: mocks.NewClient on a clean checkout, go generate not run yet")})
	clk.Add(time.Minute)
	transfer(t, a, b, "team:x")
	clk.Add(time.Minute)
	b.Remember([]protocol.Event{failure(projB, "s9", "undefined: mocks.NewClient on a clean checkout before go generate")})
	if rep := sleep(t, b); rep.Confirmations != 0 {
		t.Fatalf("B confirmed a surprise it had met before: %+v", rep)
	}
}

func TestOwnLessonNeverConfirmed(t *testing.T) {
	clk := newClock()
	a, projA := openTest(t, clk)
	a.Remember([]protocol.Event{failure(projA, "s1", "the linter flags unused parameters in generated code")})
	sleep(t, a)
	clk.Add(time.Minute)
	a.Remember([]protocol.Event{failure(projA, "s2", "the linter flags unused parameters in generated code again")})
	if rep := sleep(t, a); rep.Confirmations != 0 {
		t.Fatalf("a memory confirmed its own lesson: %+v", rep)
	}
}

func TestNothingSharedWithoutOptIn(t *testing.T) {
	m, err := Open(Config{Home: t.TempDir(), Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	m.Remember([]protocol.Event{failure("/tmp/elsewhere", "s1", "the build cache is cold after every rebase")})
	rep := sleep(t, m)
	if rep.NewLessons != 1 || rep.Signed != 0 || rep.KeptLocal != 1 {
		t.Fatalf("sleep without opt-in: %+v", rep)
	}
	lines, _ := m.OwnLines("")
	if len(lines) != 0 {
		t.Fatalf("records signed without opt-in: %s", lines)
	}
}

func TestCorrectionsNeedExplicitOptIn(t *testing.T) {
	m, proj := openTest(t, nil)
	m.Remember([]protocol.Event{{Kind: "correction", Said: "we indent Makefiles with tabs here", AgentDid: "indented with spaces", Cwd: proj}})
	if rep := sleep(t, m); rep.Signed != 0 {
		t.Fatalf("a correction was published without --corrections: %+v", rep)
	}
	if _, err := m.Share(ProjectShare{Project: proj, Corrections: true}); err != nil {
		t.Fatal(err)
	}
	m.Remember([]protocol.Event{{Kind: "correction", Said: "we indent Makefiles with tabs here", AgentDid: "indented with spaces again", Cwd: proj, Session: "2"}})
	if rep := sleep(t, m); rep.Signed != 1 {
		t.Fatalf("a correction was not published with --corrections: %+v", rep)
	}
}

// TestRawDataNeverSigned feeds events full of raw data and scans every
// exported line.
func TestRawDataNeverSigned(t *testing.T) {
	m, proj := openTest(t, nil)
	raw := []string{"/home/alice/src/api/.env", "alice@example.com", "https://bob:hunter2@git.example.com/x.git",
		"10.1.2.3", "AKIAIOSFODNN7EXAMPLE", "sk-proj-abcdefghijklmnopqrstuvwxyz012345", "https://api.example.com/v1?token=abc123"}
	var evs []protocol.Event
	for i, r := range raw {
		evs = append(evs, protocol.Event{Kind: "error", Title: "deploy step " + r, Happened: "connection to " + r + " was refused", Expected: "a login as " + r, Cwd: proj, Session: string(rune('a' + i))})
	}
	m.Remember(evs)
	sleep(t, m)
	lines, err := m.OwnLines("")
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) == 0 {
		t.Fatal("nothing was signed: the test would prove nothing")
	}
	for _, l := range lines {
		for _, r := range raw {
			if strings.Contains(string(l), r) || strings.Contains(string(l), strings.Split(r, "@")[0]+"@") && strings.Contains(r, "@") {
				t.Errorf("raw %q leaked into %s", r, l)
			}
		}
		rec, err := protocol.Decode(l)
		if err != nil {
			t.Fatal(err)
		}
		if f := protocol.FindRawData(rec.Text); len(f) > 0 {
			t.Errorf("signed text holds raw data %v: %s", f, rec.Text)
		}
	}
}

func TestRevocationRemovesAndNeverResurrects(t *testing.T) {
	clk := newClock()
	a, projA := openTest(t, clk)
	b, _ := openTest(t, clk)
	a.Remember([]protocol.Event{failure(projA, "s1", "the integration suite times out when the VPN is down")})
	sleep(t, a)
	old, _ := a.OwnLines("")
	lesson := ownLesson(t, a)
	transfer(t, a, b, "team:x")
	clk.Add(time.Minute)
	if _, err := a.Revoke(lesson.Hash, "fixed"); err != nil {
		t.Fatal(err)
	}
	transfer(t, a, b, "team:x")
	views, _ := b.Lessons(Filter{})
	if len(views) != 0 {
		t.Fatalf("revoked lesson still in B's active view: %+v", views)
	}
	// The old lesson line arrives again: it must not come back.
	b.Receive(context.Background(), "folder:/x", protocol.SplitLines(testutil.JoinLines(old...)))
	if views, _ := b.Lessons(Filter{}); len(views) != 0 {
		t.Fatalf("an older record resurrected a revoked lesson: %+v", views)
	}
	if views, _ := b.Lessons(Filter{State: protocol.StateRevoked}); len(views) != 1 {
		t.Fatalf("revoked lesson not listed as revoked: %+v", views)
	}
}

// TestInboxConcurrentAppends: 8 writers append 2,000 events each while
// sleeps drain the inbox; every event is stored exactly once.
func TestInboxConcurrentAppends(t *testing.T) {
	m, _ := openTest(t, nil)
	writers, each := 8, 2000
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				ev := protocol.Event{Kind: "note", Text: "note " + string(rune('A'+w)) + " " + strconv.Itoa(i), Agent: "w" + strconv.Itoa(w), Session: strconv.Itoa(i)}
				if err := AppendInbox(m.Home(), ev); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		if _, err := m.DrainInbox(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := m.DrainInbox(); err != nil {
		t.Fatal(err)
	}
	evs, err := m.store.Events(time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != writers*each {
		t.Fatalf("stored %d events, want %d", len(evs), writers*each)
	}
}
