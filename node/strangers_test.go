package node

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/remem/remem/internal/forge"
	"github.com/remem/remem/internal/testutil"
	"github.com/remem/remem/protocol"
	"github.com/remem/remem/store"
)

// openBudgeted opens a memory that admits trusted only, under budget.
func openBudgeted(t *testing.T, home string, budget StrangerBudget, trusted ...string) *Memory {
	t.Helper()
	return openBudgetedAt(t, home, nil, budget, trusted...)
}

// openBudgetedAt is openBudgeted on clk's time (nil: the machine's).
func openBudgetedAt(t *testing.T, home string, clk *clock, budget StrangerBudget, trusted ...string) *Memory {
	t.Helper()
	cfg := Config{Home: home, Create: true, Store: store.Options{Small: true}, Admission: Admission{Trust: trusted}, Strangers: budget}
	if clk != nil {
		cfg.Now = clk.Now
	}
	m, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func freshKey(t *testing.T) protocol.Identity {
	t.Helper()
	id, err := protocol.GenerateIdentity()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// paddedLesson is a lesson line of id carrying an unknown member of pad
// bytes, as a flood pads its lines.
func paddedLesson(id protocol.Identity, text string, pad int, at time.Time) []byte {
	members := forge.LessonMembers(id, text, protocol.FormatTime(at))
	if pad > 0 {
		members["x_pad"] = protocol.EncodeString(strings.Repeat("p", pad))
	}
	return forge.Sign(id, members)
}

func receiveLines(t *testing.T, m *Memory, scope string, lines ...[]byte) ReceiveReport {
	t.Helper()
	rep, err := m.Receive(context.Background(), scope, protocol.SplitLines(testutil.JoinLines(lines...)))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Refused) > 0 {
		t.Fatalf("refused %+v", rep.Refused)
	}
	return rep
}

// heldOf counts the records the store holds of origins not in admitted.
func heldOf(t *testing.T, m *Memory, admitted ...string) (n int, bytes int64) {
	t.Helper()
	err := m.store.EachUse(func(o string, u store.Use) {
		for _, a := range admitted {
			if a == o {
				return
			}
		}
		n += u.Records
		bytes += u.Bytes
	})
	if err != nil {
		t.Fatal(err)
	}
	return n, bytes
}

// A fresh key per record fills no more than the strangers' budget, in
// records and in bytes (unknown members counted); admitted origins are not
// counted against it; the gossip validator is told there is no room left;
// and a reopened home counts the same.
func TestStrangersBudgetBoundsHeldRecords(t *testing.T) {
	home := t.TempDir()
	friend := freshKey(t)
	budget := StrangerBudget{Records: 300, Bytes: 1 << 20}
	m := openBudgeted(t, home, budget, friend.Origin())
	const scope = "team:x"
	at := time.Now().Add(-time.Minute)
	over := 0
	for batch := range 10 {
		var lines [][]byte
		for i := range 100 {
			lines = append(lines, paddedLesson(freshKey(t), fmt.Sprintf("The queue %d of batch %d drains slowly after a restart", i, batch), 0, at))
		}
		over += receiveLines(t, m, scope, lines...).OverBudget
	}
	n, _ := heldOf(t, m, m.Origin(), friend.Origin())
	if n > budget.Records || n < budget.Records-5 {
		t.Fatalf("1,000 strangers' records sent, %d held; want the budget, %d", n, budget.Records)
	}
	if over != 1000-n {
		t.Errorf("OverBudget counted %d, want %d", over, 1000-n)
	}
	stranger := freshKey(t)
	if r := m.Room(scope, stranger.Origin()); r != 0 {
		t.Errorf("Room of a stranger with the budget spent: %d, want 0", r)
	}
	if r := m.Room(scope, friend.Origin()); r != protocol.MaxOriginRecs {
		t.Errorf("Room of an admitted origin: %d, want %d", r, protocol.MaxOriginRecs)
	}
	// Admitted records pass the budget.
	var lines [][]byte
	for i := range 50 {
		lines = append(lines, paddedLesson(friend, fmt.Sprintf("The cache %d warms in about a minute", i), 0, at))
	}
	if rep := receiveLines(t, m, scope, lines...); rep.Accepted != 50 || rep.OverBudget != 0 {
		t.Fatalf("an admitted origin's records: %+v, want 50 accepted", rep)
	}
	used, _, err := m.StrangerUse()
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	m2 := openBudgeted(t, home, budget, friend.Origin())
	again, _, err := m2.StrangerUse()
	if err != nil {
		t.Fatal(err)
	}
	if again != used {
		t.Errorf("reopened, strangers' use %+v; before %+v", again, used)
	}
}

// Padded lines are counted by their bytes: 7 KiB lines of fresh keys stop
// at the bytes budget, well before the records budget.
func TestStrangersBudgetCountsUnknownMembers(t *testing.T) {
	budget := StrangerBudget{Records: 10_000, Bytes: 256 << 10}
	m := openBudgeted(t, t.TempDir(), budget)
	at := time.Now().Add(-time.Minute)
	for batch := range 8 {
		var lines [][]byte
		for i := range 20 {
			lines = append(lines, paddedLesson(freshKey(t), fmt.Sprintf("The build %d of batch %d links slowly", i, batch), 7<<10, at))
		}
		receiveLines(t, m, "team:x", lines...)
	}
	n, b := heldOf(t, m, m.Origin())
	t.Logf("160 padded lines sent: %d held, %d bytes", n, b)
	if b > budget.Bytes {
		t.Fatalf("strangers' records take %d bytes, the budget is %d", b, budget.Bytes)
	}
	if n >= 160 || n < 25 {
		t.Fatalf("%d padded records held: want the bytes budget to stop them (about %d)", n, budget.Bytes/(7<<10))
	}
}

// Past the budget, a stranger's record that matters here (a confirmation
// of a lesson an admitted origin published; an origin withdrawing its own
// lesson held here) evicts the oldest stranger's record that matters to
// nothing, with the candidate it made; a record that matters to nothing
// is left out.
func TestStrangersBudgetEvictsWhatMattersToNothing(t *testing.T) {
	friend := freshKey(t)
	budget := StrangerBudget{Records: 100, Bytes: 1 << 20}
	m := openBudgeted(t, t.TempDir(), budget, friend.Origin())
	const scope = "team:x"
	at := time.Now().Add(-time.Hour)
	// The friend's lesson first, then the first stranger's (the oldest),
	// then 99 more strangers' lessons fill the budget, the last of them one
	// its origin will withdraw.
	friendLesson := paddedLesson(friend, "The nightly export skips rows added after midnight", 0, at)
	receiveLines(t, m, scope, friendLesson)
	withdrawer := freshKey(t)
	withdrawn := paddedLesson(withdrawer, "The sandbox resets its database every Sunday", 0, at)
	oldest := paddedLesson(freshKey(t), "The old mirror serves stale packages for an hour", 0, at)
	receiveLines(t, m, scope, oldest)
	var fill [][]byte
	for i := range 98 {
		fill = append(fill, paddedLesson(freshKey(t), fmt.Sprintf("The worker %d restarts after an out-of-memory kill", i), 0, at))
	}
	receiveLines(t, m, scope, fill...)
	receiveLines(t, m, scope, withdrawn) // the newest: eviction takes the oldest first
	if n, _ := heldOf(t, m, m.Origin(), friend.Origin()); n != budget.Records {
		t.Fatalf("%d strangers' records held, want the budget full (%d)", n, budget.Records)
	}
	// A record that matters to nothing is left out.
	if rep := receiveLines(t, m, scope, paddedLesson(freshKey(t), "The proxy drops idle connections after a minute", 0, at)); rep.OverBudget != 1 {
		t.Fatalf("a stranger's lesson past the budget: %+v, want it left out", rep)
	}
	// A confirmation of the friend's lesson matters: it comes in, and the
	// oldest stranger's record goes, with its candidate.
	friendRec, err := protocol.Decode(friendLesson)
	if err != nil {
		t.Fatal(err)
	}
	conf, err := protocol.SignConfirmation(freshKey(t), friendRec.Hash, at.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if rep := receiveLines(t, m, scope, conf.Raw); rep.Accepted != 1 {
		t.Fatalf("a confirmation of an admitted origin's lesson past the budget: %+v, want it taken", rep)
	}
	oldRec, _ := protocol.Decode(oldest)
	if _, held, _ := m.store.Get(oldRec.SetKey()); held {
		t.Error("the oldest stranger's record that matters to nothing was not evicted")
	}
	if _, ok, _ := m.store.GetLesson(oldRec.Hash); ok {
		t.Error("the evicted record's candidate is still held")
	}
	if n, _ := heldOf(t, m, m.Origin(), friend.Origin()); n > budget.Records {
		t.Errorf("%d strangers' records held after eviction, the budget is %d", n, budget.Records)
	}
	// The withdrawal of a lesson its origin published here comes in too.
	wRec, _ := protocol.Decode(withdrawn)
	rev, err := protocol.SignRevocation(withdrawer, wRec.Hash, at.Add(2*time.Minute), "")
	if err != nil {
		t.Fatal(err)
	}
	// Fill the slack eviction freed, so the withdrawal finds the budget full.
	var more [][]byte
	for i := range 10 {
		more = append(more, paddedLesson(freshKey(t), fmt.Sprintf("The runner %d loses its cache on reboot", i), 0, at))
	}
	receiveLines(t, m, scope, more...)
	if rep := receiveLines(t, m, scope, rev.Raw); rep.Accepted != 1 {
		t.Fatalf("an origin's withdrawal of its own lesson past the budget: %+v, want it taken", rep)
	}
	if _, held, _ := m.store.Get(wRec.SetKey()); !held {
		t.Error("the withdrawn lesson's record was evicted to take its own withdrawal")
	}
	// The pair stays through later evictions.
	conf2, err := protocol.SignConfirmation(freshKey(t), friendRec.Hash, at.Add(3*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	receiveLines(t, m, scope, conf2.Raw)
	for _, k := range []protocol.RecordKey{wRec.SetKey(), rev.SetKey()} {
		if _, held, _ := m.store.Get(k); !held {
			t.Errorf("the withdrawal pair lost its %s", k.Type)
		}
	}
}

// A budget lowered below what is held (or an origin no longer admitted)
// is met again at the next delivery: records that matter to nothing go,
// oldest first, to a slack under it.
func TestStrangersBudgetLoweredIsMetAgain(t *testing.T) {
	home := t.TempDir()
	m := openBudgeted(t, home, StrangerBudget{Records: 200})
	at := time.Now().Add(-time.Minute)
	var lines [][]byte
	for i := range 200 {
		lines = append(lines, paddedLesson(freshKey(t), fmt.Sprintf("The index %d rebuilds after every deploy", i), 0, at))
	}
	receiveLines(t, m, "team:x", lines...)
	m.Close()
	lowered := StrangerBudget{Records: 100}
	m2 := openBudgeted(t, home, lowered)
	receiveLines(t, m2, "team:x", paddedLesson(freshKey(t), "The queue drains slowly after a restart", 0, at))
	n, _ := heldOf(t, m2, m2.Origin())
	if want := lowered.Records - lowered.Records/evictSlack + 1; n > want { // the slack, then the new record
		t.Fatalf("%d strangers' records held after the budget went down to %d, want at most %d", n, lowered.Records, want)
	}
}
