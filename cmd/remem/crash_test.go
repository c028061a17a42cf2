package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/remem/remem/node"
	"github.com/remem/remem/protocol"
	"github.com/remem/remem/store"
)

// crashFacts are distinct surprises; events about the same one cluster into
// one lesson, so every sleep both writes new lessons and raises old ones.
var crashFacts = []string{
	"the integration suite times out whenever the VPN drops",
	"the linker runs out of memory on the release build",
	"the staging database is wiped every Sunday night",
	"npm install hangs behind the corporate proxy",
	"the TLS certificate of the mirror expired last week",
	"cron jobs run in UTC while the dashboards show local time",
	"the schema migration locks the orders table for minutes",
	"webhook retries flood the queue after an outage", // "the webhook" alone reads as a private name to the raw-data check
	"the sandbox image lacks the git binary",
	"the replica lags several minutes behind the primary",
	"the lockfile drifts when two people add dependencies",
	"the API quota resets at midnight Pacific time",
	"golden files break when the locale is not English",
	"the socket path is too long inside deep temp directories",
	"the manifest generator drops files with spaces in their names",
	"the cache volume fills up after about thirty builds",
}

// appendCrashEvents appends n error events to the home's inbox.
func appendCrashEvents(t *testing.T, home, project string, from, n int) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(home, node.InboxFile), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	for i := from; i < from+n; i++ {
		ev := protocol.Event{Kind: "error", Title: "make check", Happened: crashFacts[(i*7)%len(crashFacts)],
			Agent: "crash-test", Session: fmt.Sprintf("s%d", i), Cwd: project}
		if err := enc.Encode(ev); err != nil {
			t.Fatal(err)
		}
	}
}

// checkCrashInvariants opens the killed process's store and checks that
// nothing half-done is visible: every absorbed event's lesson exists and
// counts it, every lesson marked published has its record in the outbox
// at its current version, and no record was signed twice. It returns
// whether the killed sleep left work for the next one.
func checkCrashInvariants(t *testing.T, home string) (cut bool) {
	t.Helper()
	s, err := store.Open(home, store.Options{})
	if err != nil {
		t.Fatalf("opening the store after the kill: %v", err)
	}
	defer s.Close()
	events, err := s.Events(time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	absorbed := map[string]int64{}
	for _, ev := range events {
		if ev.Lesson == "" {
			cut = true
			continue
		}
		absorbed[ev.Lesson]++
	}
	own, err := s.OwnLessons()
	if err != nil {
		t.Fatal(err)
	}
	ownSeen := map[string]int64{}
	for _, l := range own {
		ownSeen[l.Hash] = l.Seen
		if l.Seen != absorbed[l.Hash] {
			t.Fatalf("lesson %s counts %d events but %d are assigned to it", l.Hash[:8], l.Seen, absorbed[l.Hash])
		}
		if l.Dirty {
			cut = true
		}
	}
	for hash, n := range absorbed {
		if _, ok := ownSeen[hash]; !ok {
			t.Fatalf("%d events are assigned to lesson %s, which was never written", n, hash[:8])
		}
	}
	outbox, err := s.Outbox(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	signed := map[string]int64{} // hash → seen of its newest lesson record
	versions := map[string]bool{}
	for _, e := range outbox {
		r := e.Record
		v := string(r.Raw)
		if versions[v] {
			t.Fatalf("record signed twice: %s", v)
		}
		versions[v] = true
		if r.Type == protocol.TypeLesson {
			signed[r.Hash] = r.Seen
		}
	}
	for _, l := range own {
		if l.Published && !l.Dirty && signed[l.Hash] != l.Seen {
			t.Fatalf("lesson %s is marked published at seen %d, but its newest record says %d", l.Hash[:8], l.Seen, signed[l.Hash])
		}
	}
	return cut
}

// TestSleepSurvivesSIGKILL kills a real `remem sleep` process at 50 random
// points (more, up to 150, until one lands inside a sleep's work). After every kill nothing published is lost or doubled, and the
// last sleep, left to finish, takes every event and signs every lesson.
func TestSleepSurvivesSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("kills 50 processes")
	}
	bin := remem(t)
	home := t.TempDir()
	must(t, home, nil, "init")
	project := t.TempDir()
	must(t, home, nil, "share", "--project", project)
	sleep := func() *exec.Cmd {
		cmd := exec.Command(bin, "sleep")
		cmd.Env = append(os.Environ(), "REMEM_HOME="+home)
		return cmd
	}
	// How long a whole sleep of one round's events takes here.
	const perRound = 40
	total := 0
	appendCrashEvents(t, home, project, total, perRound)
	total += perRound
	start := time.Now()
	if out, err := sleep().CombinedOutput(); err != nil {
		t.Fatalf("remem sleep: %v\n%s", err, out)
	}
	whole := time.Since(start)
	rng := rand.New(rand.NewPCG(1, uint64(time.Now().UnixNano())))
	kills, cuts, rounds := 0, 0, 0
	// 50 kills, and more (up to 150) until one lands inside a sleep's work:
	// on a loaded machine the first sleep's time says little of the next
	// ones', and a run that killed only start-ups tested nothing.
	for round := 0; round < 50 || cuts == 0 && round < 150; round++ {
		rounds++
		appendCrashEvents(t, home, project, total, perRound)
		total += perRound
		cmd := sleep()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.Int64N(int64(whole) * 5 / 4)))
		_ = cmd.Process.Signal(syscall.SIGKILL)
		if err := cmd.Wait(); err != nil {
			kills++
		}
		if checkCrashInvariants(t, home) {
			cuts++
		}
	}
	t.Logf("whole sleep %v; %d of %d sleeps killed, %d of them left work for the next", whole.Round(time.Millisecond), kills, rounds, cuts)
	if cuts == 0 {
		t.Fatal("no kill landed inside a sleep's work: the test tested nothing")
	}
	if out, err := sleep().CombinedOutput(); err != nil {
		t.Fatalf("the sleep after the kills: %v\n%s", err, out)
	}
	if checkCrashInvariants(t, home) {
		t.Fatal("the sleep after the kills left events pending or lessons unsigned")
	}
	s, err := store.Open(home, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n, _ := s.CountEvents(); n != total {
		t.Fatalf("%d events held, %d were written", n, total)
	}
	own, _ := s.OwnLessons()
	for _, l := range own {
		if !l.Published {
			t.Fatalf("lesson %s was never published: %+v", l.Hash[:8], l)
		}
	}
}
