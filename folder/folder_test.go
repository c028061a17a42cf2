package folder

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/remem/remem/internal/testutil"
	"github.com/remem/remem/protocol"
)

var t0 = time.Now().UTC().Truncate(time.Second).Add(-2 * time.Hour)

func lesson(t testing.TB, id protocol.Identity, text string, at time.Time, strength float64) *protocol.Record {
	t.Helper()
	rec, err := protocol.SignLesson(id, protocol.LessonDraft{Kind: protocol.KindError, Text: text, Seen: 1, Strength: strength, Updated: at})
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// home is a memory reduced to what the folder needs: an identity and a
// record set merged by protocol.Supersedes.
type home struct {
	id   protocol.Identity
	recs map[protocol.RecordKey]*protocol.Record
}

func newHome(t testing.TB, name string) *home {
	return &home{id: testutil.Identity(t, name), recs: map[protocol.RecordKey]*protocol.Record{}}
}

func (h *home) add(r *protocol.Record) {
	if old, ok := h.recs[r.SetKey()]; !ok || protocol.Supersedes(r, old) {
		h.recs[r.SetKey()] = r
	}
}

func (h *home) deliver(scope string, recs []*protocol.Record) error {
	for _, r := range recs {
		h.add(r)
	}
	return nil
}

// own is the home's current records, the content of its folder file.
func (h *home) own() [][]byte {
	var out [][]byte
	for _, r := range h.recs {
		if r.Origin == h.id.Origin() {
			out = append(out, r.Raw)
		}
	}
	slices.SortFunc(out, bytes.Compare)
	return out
}

func (h *home) sync(t *testing.T, dir string) Report {
	t.Helper()
	if _, err := Write(dir, h.id.Origin(), h.own()); err != nil {
		t.Fatal(err)
	}
	rep, err := Read(dir, h.id.Origin(), time.Now(), h.deliver)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Refused) > 0 || rep.Failed > 0 {
		t.Fatalf("sync of %s: %+v", h.id.Origin(), rep)
	}
	return rep
}

func (h *home) set() []string {
	var out []string
	for _, r := range h.recs {
		out = append(out, string(r.Raw))
	}
	slices.Sort(out)
	return out
}

func TestTwoHomesConverge(t *testing.T) {
	dir := t.TempDir()
	a, b := newHome(t, "alice"), newHome(t, "bob")
	l1 := lesson(t, a.id, "the flaky login test fails when the clock crosses midnight", t0, 0.5)
	l2 := lesson(t, a.id, "go vet misses the shadowed error in the retry loop", t0, 0.5)
	l3 := lesson(t, b.id, "the staging database drops idle connections after five minutes", t0, 0.75)
	a.add(l1)
	a.add(l2)
	b.add(l3)

	a.sync(t, dir)
	rep := b.sync(t, dir)
	if rep.Files != 1 || rep.Accepted != 2 {
		t.Errorf("b's first sync: %+v", rep)
	}
	a.sync(t, dir)
	if !slices.Equal(a.set(), b.set()) || len(a.set()) != 3 {
		t.Fatalf("not converged after one round: a %d, b %d", len(a.set()), len(b.set()))
	}

	// B confirms l1, A raises l2 (same hash, later time) and revokes l1.
	conf, err := protocol.SignConfirmation(b.id, l1.Hash, t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	b.add(conf)
	a.add(lesson(t, a.id, "go vet misses the shadowed error in the retry loop", t0.Add(time.Hour), 0.75))
	rev, err := protocol.SignRevocation(a.id, l1.Hash, t0.Add(90*time.Minute), "wrong")
	if err != nil {
		t.Fatal(err)
	}
	a.add(rev)
	// Either order converges.
	b.sync(t, dir)
	a.sync(t, dir)
	b.sync(t, dir)
	if !slices.Equal(a.set(), b.set()) || len(a.set()) != 5 {
		t.Fatalf("not converged: a %d, b %d", len(a.set()), len(b.set()))
	}
	if got := b.recs[l2.SetKey()]; got.Strength != 0.75 {
		t.Errorf("b holds the older l2 (strength %v)", got.Strength)
	}
	// Each file holds only its origin's records.
	for _, h := range []*home{a, b} {
		data, err := os.ReadFile(filepath.Join(dir, protocol.OriginFileName(h.id.Origin())))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range protocol.SplitLines(data) {
			if !bytes.Contains(l.Bytes, []byte(`"origin":"`+h.id.Origin()+`"`)) {
				t.Errorf("%s's file holds a foreign line", h.id.Origin())
			}
		}
	}
	// A third home joining late gets everything from the folder alone.
	c := newHome(t, "carol")
	c.sync(t, dir)
	if !slices.Equal(c.set(), a.set()) {
		t.Errorf("a late home holds %d records, want %d", len(c.set()), len(a.set()))
	}
}

func TestDamagedFiles(t *testing.T) {
	dir := t.TempDir()
	good, trunc, garb, wrong, other := testutil.Identity(t, "good"), testutil.Identity(t, "trunc"), testutil.Identity(t, "garbage"), testutil.Identity(t, "wrong"), testutil.Identity(t, "other")
	g1 := lesson(t, good, "the cache server returns stale entries after a deploy", t0, 0.5)
	g2 := lesson(t, good, "the linter crashes on generated files with long lines", t0, 0.5)
	t1 := lesson(t, trunc, "the nightly backup job skips tables with uppercase names", t0, 0.5)
	t2 := lesson(t, trunc, "the queue consumer loses messages when the broker restarts", t0, 0.5)
	w1 := lesson(t, wrong, "the image build fails when the base tag moves", t0, 0.5)
	o1 := lesson(t, other, "the test runner hides panics in parallel subtests", t0, 0.5)

	files := map[string][]byte{
		protocol.OriginFileName(good.Origin()):  testutil.JoinLines(g1.Raw, g2.Raw),
		protocol.OriginFileName(trunc.Origin()): append(testutil.JoinLines(t1.Raw), t2.Raw[:len(t2.Raw)/2]...),
		protocol.OriginFileName(garb.Origin()):  []byte("\x00\x01\xff\xfebinary garbage\n{not json}\n"),
		// A line of another origin in wrong's file, between two of its own.
		protocol.OriginFileName(wrong.Origin()): testutil.JoinLines(w1.Raw, o1.Raw),
		"notes.txt":                             []byte("not records"),
		"ABCDEF0123456789.jsonl":                testutil.JoinLines(o1.Raw), // upper case: not a record file name
		".0123456789abcdef.jsonl.tmp-1":         testutil.JoinLines(o1.Raw),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string][]string{}
	rep, err := Read(dir, "", time.Now(), func(scope string, recs []*protocol.Record) error {
		abs, _ := filepath.Abs(dir)
		if scope != "folder:"+abs {
			t.Errorf("scope %q", scope)
		}
		for _, r := range recs {
			got[r.Origin] = append(got[r.Origin], r.Text)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Files != 4 || rep.Accepted != 4 || rep.Failed != 0 {
		t.Errorf("report %+v", rep)
	}
	if len(got[good.Origin()]) != 2 || len(got[trunc.Origin()]) != 1 || len(got[wrong.Origin()]) != 1 || len(got[other.Origin()]) != 0 {
		t.Errorf("delivered %v", got)
	}
	want := []string{
		protocol.OriginFileName(garb.Origin()) + ":1:utf-8",
		protocol.OriginFileName(garb.Origin()) + ":2:json",
		protocol.OriginFileName(trunc.Origin()) + ":2:json",
		protocol.OriginFileName(wrong.Origin()) + ":2:origin mismatch",
	}
	slices.Sort(want)
	var refused []string
	for _, r := range rep.Refused {
		refused = append(refused, fmt.Sprintf("%s:%d:%s", r.Source, r.Line, r.Reason))
	}
	slices.Sort(refused)
	if !slices.Equal(refused, want) {
		t.Errorf("refused\n got %v\nwant %v", refused, want)
	}
	if n := rep.ByReason()[protocol.ReasonOriginMismatch]; n != 1 {
		t.Errorf("ByReason: %v", rep.ByReason())
	}
	// Reading touched nothing.
	for name, data := range files {
		if b, _ := os.ReadFile(filepath.Join(dir, name)); !bytes.Equal(b, data) {
			t.Errorf("%s changed", name)
		}
	}
	// Self is skipped, a Deliver error is reported and the rest still read.
	rep, err = Read(dir, good.Origin(), time.Now(), func(_ string, recs []*protocol.Record) error {
		if recs[0].Origin == trunc.Origin() {
			return fmt.Errorf("store is full")
		}
		return nil
	})
	if rep.Files != 3 || rep.Accepted != 1 || rep.Failed != 1 || err == nil || !strings.Contains(err.Error(), "store is full") {
		t.Errorf("report %+v, error %v", rep, err)
	}
}

func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	a, b := testutil.Identity(t, "alice"), testutil.Identity(t, "bob")
	other := testutil.JoinLines(lesson(t, b, "the proxy strips the trace header on retries", t0, 0.5).Raw)
	os.WriteFile(filepath.Join(dir, protocol.OriginFileName(b.Origin())), other, 0o644)
	os.WriteFile(filepath.Join(dir, "README"), []byte("shared folder"), 0o644)
	before := snapshotBytes(t, dir)

	v1 := [][]byte{lesson(t, a, "the release script tags the wrong commit on a detached head", t0, 0.5).Raw}
	v2 := append(slices.Clone(v1), lesson(t, a, "the release script forgets the changelog when run twice", t0, 0.5).Raw)
	changed, err := Write(dir, a.Origin(), v1)
	if err != nil || !changed {
		t.Fatal(changed, err)
	}
	path := filepath.Join(dir, protocol.OriginFileName(a.Origin()))
	info1, _ := os.Stat(path)
	if changed, err := Write(dir, a.Origin(), v1); err != nil || changed {
		t.Errorf("identical write: changed=%v err=%v", changed, err)
	}
	if info2, _ := os.Stat(path); !info2.ModTime().Equal(info1.ModTime()) {
		t.Error("identical write touched the file")
	}

	// A reader racing a writer sees the old or the new file, never a mix.
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Errorf("reader: %v", err)
				return
			}
			if !bytes.Equal(data, testutil.JoinLines(v1...)) && !bytes.Equal(data, testutil.JoinLines(v2...)) {
				t.Errorf("reader saw %d bytes: neither version", len(data))
				return
			}
		}
	})
	for i := range 30 {
		if _, err := Write(dir, a.Origin(), [][][]byte{v1, v2}[i%2]); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()

	after := snapshotBytes(t, dir)
	for name, data := range before {
		if !bytes.Equal(after[name], data) {
			t.Errorf("%s changed", name)
		}
	}
	if len(after) != len(before)+1 {
		var names []string
		for n := range after {
			names = append(names, n)
		}
		t.Errorf("folder holds %v (temp files left?)", names)
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", info.Mode())
	}

	// Refused writes leave the file as it was.
	last, _ := os.ReadFile(path)
	for _, bad := range [][][]byte{
		{[]byte("a\nb")},
		{{}},
		slices.Repeat([][]byte{v1[0]}, protocol.MaxOriginRecs+1),
		slices.Repeat([][]byte{v1[0]}, protocol.MaxOriginFile/len(v1[0])+1),
	} {
		if _, err := Write(dir, a.Origin(), bad); err == nil {
			t.Errorf("write of %d lines accepted", len(bad))
		}
	}
	if _, err := Write(dir, "../etc", v1); err == nil {
		t.Error("bad origin accepted")
	}
	if now, _ := os.ReadFile(path); !bytes.Equal(now, last) {
		t.Error("a refused write changed the file")
	}

	// A stale temp file of this origin (a writer killed mid-write) is
	// cleaned up; another origin's is not touched.
	mine := filepath.Join(dir, tempPrefix(a.Origin())+"123")
	theirs := filepath.Join(dir, tempPrefix(b.Origin())+"456")
	old := time.Now().Add(-time.Hour)
	for _, p := range []string{mine, theirs} {
		os.WriteFile(p, []byte("partial"), 0o644)
		os.Chtimes(p, old, old)
	}
	if _, err := Write(dir, a.Origin(), v1); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(mine); err == nil {
		t.Error("own stale temp file kept")
	}
	if _, err := os.Stat(theirs); err != nil {
		t.Error("another origin's temp file removed")
	}
}

func snapshotBytes(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string][]byte{}
	for _, e := range ents {
		m[e.Name()], _ = os.ReadFile(filepath.Join(dir, e.Name()))
	}
	return m
}

// TestHostileInput: long lines, a 10 MB file, binary, a FIFO, a directory
// and a symlink under record names never panic, hang or stop the others.
func TestHostileInput(t *testing.T) {
	dir := t.TempDir()
	good := testutil.Identity(t, "good")
	g := lesson(t, good, "the cache server returns stale entries after a deploy", t0, 0.5)
	os.WriteFile(filepath.Join(dir, protocol.OriginFileName(good.Origin())), testutil.JoinLines(g.Raw), 0o644)

	names := make([]string, 6)
	for i := range names {
		names[i] = protocol.OriginFileName(testutil.Identity(t, fmt.Sprint("hostile", i)).Origin())
	}
	long := bytes.Repeat([]byte("x"), 9000)
	huge := make([]byte, 10<<20)
	rand.Read(huge)
	for i := 0; i < len(huge); i += 3000 {
		huge[i] = '\n'
	}
	bin := make([]byte, 4096)
	rand.Read(bin)
	os.WriteFile(filepath.Join(dir, names[0]), append(append(long, '\n'), testutil.JoinLines(g.Raw)...), 0o644)
	os.WriteFile(filepath.Join(dir, names[1]), huge, 0o644)
	os.WriteFile(filepath.Join(dir, names[2]), bin, 0o644)
	if err := syscall.Mkfifo(filepath.Join(dir, names[3]), 0o644); err != nil {
		t.Log("no FIFO:", err)
	}
	os.Mkdir(filepath.Join(dir, names[4]), 0o755)
	os.Symlink("/dev/zero", filepath.Join(dir, names[5]))

	done := make(chan struct{})
	var rep Report
	var readErr error
	go func() {
		defer close(done)
		rep, readErr = Read(dir, "", time.Now(), func(_ string, recs []*protocol.Record) error { return nil })
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Read hangs on hostile input")
	}
	if rep.Accepted != 1 {
		t.Errorf("accepted %d, want only the good line", rep.Accepted)
	}
	reasons := rep.ByReason()
	if reasons[protocol.ReasonTooLarge] < 1 || reasons[protocol.ReasonFileTooLarge] != 1 {
		t.Errorf("reasons %v", reasons)
	}
	// The line of good's origin in hostile0's file is refused, not taken.
	if reasons[protocol.ReasonOriginMismatch] != 1 {
		t.Errorf("origin mismatches %d", reasons[protocol.ReasonOriginMismatch])
	}
	if rep.Failed < 2 || readErr == nil { // the directory and the symlink (and the FIFO)
		t.Errorf("failed %d: %v", rep.Failed, readErr)
	}
}

// TestWatcherPolls: the first snapshot is taken in NewWatcher, so each
// change after it is seen by the next poll, and only *.jsonl files count.
func TestWatcherPolls(t *testing.T) {
	dir := t.TempDir()
	calls := 0
	w, err := NewWatcher(dir, time.Hour, func() { calls++ })
	if err != nil {
		t.Fatal(err)
	}
	a := testutil.Identity(t, "alice")
	steps := []struct {
		name   string
		change func()
		calls  int
	}{
		{"nothing changed", func() {}, 0},
		{"a file that is not *.jsonl", func() { os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644) }, 0},
		{"a new *.jsonl file", func() {
			if _, err := Write(dir, a.Origin(), [][]byte{lesson(t, a, "the build cache breaks after a compiler upgrade", t0, 0.5).Raw}); err != nil {
				t.Fatal(err)
			}
		}, 1},
		{"the same files again", func() {}, 1},
		{"a *.jsonl file removed", func() { os.Remove(filepath.Join(dir, protocol.OriginFileName(a.Origin()))) }, 2},
	}
	for _, step := range steps {
		step.change()
		w.poll()
		if calls != step.calls {
			t.Fatalf("after %s: %d calls, want %d", step.name, calls, step.calls)
		}
	}
}

func TestWatcherRun(t *testing.T) {
	dir := t.TempDir()
	calls := make(chan struct{}, 16)
	w, err := NewWatcher(dir, 5*time.Millisecond, func() { calls <- struct{}{} })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	a := testutil.Identity(t, "alice")
	if _, err := Write(dir, a.Origin(), [][]byte{lesson(t, a, "the build cache breaks after a compiler upgrade", t0, 0.5).Raw}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-calls:
	case <-time.After(5 * time.Second):
		t.Fatal("no call after a write")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestNewWatcherErrors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		dir      string
		interval time.Duration
	}{
		{"a missing folder", filepath.Join(t.TempDir(), "missing"), time.Second},
		{"no interval", t.TempDir(), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := NewWatcher(tc.dir, tc.interval, func() {}); err == nil {
				t.Error("no error")
			}
		})
	}
}

func TestReportJSON(t *testing.T) {
	r := Report{Files: 1, Refused: []Refusal{{Source: "a.jsonl", Line: 2, Reason: protocol.ReasonOriginMismatch}}, Failed: 1}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"files":1,"accepted":0,"skipped":0,"refused":[{"source":"a.jsonl","line":2,"reason":"origin mismatch","detail":""}],"failed":1}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}
