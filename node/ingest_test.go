package node

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/remem/remem/protocol"
)

// TestIngestKeepsBadLines: bad lines are named with their number and
// reason, kept in the rejects file, and the good lines are taken once.
func TestIngestKeepsBadLines(t *testing.T) {
	m, _ := openTest(t, nil)
	input := strings.Join([]string{
		`{"kind":"error","title":"go vet","happened":"printf arg mismatch","session":"1"}`,
		`not json at all`,
		`{"kind":"correction","agent_did":"x"}`,
		``,
		`{"kind":"error","title":"go vet","happened":"printf arg mismatch","session":"1"}`,
		"{\"kind\":\"note\",\"text\":\"bad \xff utf-8\"}",
		`{"kind":"note","text":"the docs build takes four minutes"}`,
	}, "\n")
	rep, err := m.Ingest("events.jsonl", strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Taken != 2 || rep.Duplicates != 1 || len(rep.Rejected) != 3 {
		t.Fatalf("report %+v", rep)
	}
	for i, want := range []int{2, 3, 6} {
		if rep.Rejected[i].Line != want || rep.Rejected[i].Reason == "" {
			t.Errorf("rejected[%d] = %+v, want line %d with a reason", i, rep.Rejected[i], want)
		}
	}
	kept, err := os.ReadFile(filepath.Join(m.Home(), RejectsFile))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(kept), "\n"); n != 3 || !strings.Contains(string(kept), "not json at all") {
		t.Fatalf("rejects file:\n%s", kept)
	}
}

// rejectsSizes returns the sizes of the rejects file and its rotated copy
// (0 when missing).
func rejectsSizes(t *testing.T, home string) (cur, old int64) {
	t.Helper()
	for i, name := range []string{RejectsFile, RejectsFile + ".1"} {
		info, err := os.Stat(filepath.Join(home, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			cur = info.Size()
		} else {
			old = info.Size()
		}
	}
	return cur, old
}

// TestRejectsFileBounded: an agent that sends garbage for ever does not fill
// the disk. The rejects file is rotated once it passes MaxRejectsBytes, so
// at most about twice that is kept, and the newest rejects stay in
// rejects.jsonl.
func TestRejectsFileBounded(t *testing.T) {
	m, _ := openTest(t, nil)
	junk := strings.Repeat("x", 1000)
	var last string
	for batch := 0; batch < 40; batch++ {
		var b strings.Builder
		for i := 0; i < 100; i++ {
			last = fmt.Sprintf("garbage %d/%d %s", batch, i, junk)
			b.WriteString(last + "\n")
		}
		if _, err := m.Ingest("events.jsonl", strings.NewReader(b.String())); err != nil {
			t.Fatal(err)
		}
	}
	cur, old := rejectsSizes(t, m.Home())
	if old == 0 {
		t.Fatalf("4 MB of rejects were never rotated (rejects.jsonl is %d bytes)", cur)
	}
	if cur+old > 2*MaxRejectsBytes {
		t.Fatalf("rejects kept: %d + %d bytes, want at most %d", cur, old, 2*MaxRejectsBytes)
	}
	kept, err := os.ReadFile(filepath.Join(m.Home(), RejectsFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(kept), last) {
		t.Fatal("the newest reject is not in rejects.jsonl")
	}
	for i, line := range strings.Split(strings.TrimSuffix(string(kept), "\n"), "\n") {
		if !json.Valid([]byte(line)) {
			t.Fatalf("rejects.jsonl line %d is not whole JSON: %.80q", i+1, line)
		}
	}
}

// TestRejectsOneHugeBatch: one input of many bad lines, or one enormous
// bad line, is bounded as well.
func TestRejectsOneHugeBatch(t *testing.T) {
	m, _ := openTest(t, nil)
	huge := "not json " + strings.Repeat("y", 3*MaxRejectsBytes)
	many := strings.Repeat("not json "+strings.Repeat("z", 500)+"\n", 8000)
	for _, input := range []string{huge, many} {
		rep, err := m.Ingest("events.jsonl", strings.NewReader(input))
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Rejected) == 0 {
			t.Fatal("nothing was rejected")
		}
		cur, old := rejectsSizes(t, m.Home())
		if cur+old > 2*MaxRejectsBytes {
			t.Fatalf("rejects kept: %d + %d bytes, want at most %d", cur, old, 2*MaxRejectsBytes)
		}
	}
}

// TestRejectsConcurrent: appenders in parallel (API, inbox drain, ingest)
// never interleave or lose whole lines between rotations, and every line a
// rotation drops is counted once.
func TestRejectsConcurrent(t *testing.T) {
	m, _ := openTest(t, nil)
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				line := fmt.Sprintf("worker %d line %d %s\n", w, i, strings.Repeat("q", 4000))
				if _, err := m.Ingest("events.jsonl", strings.NewReader(strings.Repeat(line, 10))); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	cur, old := rejectsSizes(t, m.Home())
	if cur+old > 2*MaxRejectsBytes {
		t.Fatalf("rejects kept: %d + %d bytes, want at most %d", cur, old, 2*MaxRejectsBytes)
	}
	if info := m.Rejects(true); info.Kept+info.Dropped != 4*50*10 || info.Error != "" {
		t.Fatalf("%d kept + %d dropped, want %d rejected lines (%s)", info.Kept, info.Dropped, 4*50*10, info.Error)
	}
	for _, name := range []string{RejectsFile, RejectsFile + ".1"} {
		data, err := os.ReadFile(filepath.Join(m.Home(), name))
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
			if !json.Valid([]byte(line)) {
				t.Fatalf("%s line %d is not whole JSON: %.80q", name, i+1, line)
			}
		}
	}
}

// TestEventAtStoredInUTC: by every path in (API and MCP through Remember,
// files and the inbox through Ingest) an event's "at" is kept in UTC with
// Z, and one that names no instant is refused with the reason.
func TestEventAtStoredInUTC(t *testing.T) {
	m, _ := openTest(t, nil)
	rep, err := m.Remember([]protocol.Event{
		{Kind: protocol.EventNote, Text: "the docs build takes four minutes", At: "2025-06-01T14:00:00+02:00"},
		{Kind: protocol.EventNote, Text: "the linter is slow on big files", At: "2025-06-01T12:00:00"},
	})
	if err != nil || rep.Taken != 1 || len(rep.Rejected) != 1 || !strings.Contains(rep.Rejected[0].Reason, `"at"`) {
		t.Fatalf("Remember: %+v, %v", rep, err)
	}
	rep, err = m.Ingest("events.jsonl", strings.NewReader(`{"kind":"note","text":"CI caches expire after a week","at":"2025-06-01T07:00:00-05:00"}`+"\n"))
	if err != nil || rep.Taken != 1 {
		t.Fatalf("Ingest: %+v, %v", rep, err)
	}
	evs, err := m.Stored().PendingEvents()
	if err != nil || len(evs) != 2 {
		t.Fatalf("pending: %v, %v", evs, err)
	}
	for _, ev := range evs {
		if ev.Event.At != "2025-06-01T12:00:00Z" {
			t.Errorf("stored at = %q, want 2025-06-01T12:00:00Z", ev.Event.At)
		}
	}
}

// A process that holds the inbox's lock for ever costs a hook nothing but
// its wait: the events go into a leftover file of their own, and the next
// drain takes them with the inbox's.
func TestAppendInboxWithinSpillsPastAHeldLock(t *testing.T) {
	m, _ := openTest(t, nil)
	home := m.Home()
	if _, err := AppendInboxWithin(home, time.Second, protocol.Event{Kind: "note", Text: "before the lock"}); err != nil {
		t.Fatal(err)
	}
	holder, err := os.OpenFile(filepath.Join(home, InboxFile), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(holder.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	spilled, err := AppendInboxWithin(home, 50*time.Millisecond, protocol.Event{Kind: "note", Text: "while the lock is held"})
	if err != nil || !spilled {
		t.Fatalf("spilled %v, err %v", spilled, err)
	}
	_ = holder.Close() // lets go of the lock, as a drain needs it
	rep, err := m.DrainInbox()
	if err != nil || rep.Taken != 2 {
		t.Fatalf("drained %+v, %v", rep, err)
	}
	if left, _ := filepath.Glob(filepath.Join(home, InboxFile+"*")); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}
