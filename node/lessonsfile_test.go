package node_test

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/remem/remem/node"
	"github.com/remem/remem/protocol"
)

// TestLessonsFileForeignMemberCannotShadow: a member another tool added to
// a line of lessons.jsonl is kept at the next write, but one whose name is
// a node field in another case ("Text", "STRENGTH", "ſeen") is not: Go's
// encoding/json, which ParseLayer uses, matches member names without case
// and lets the last one win, so kept after the node's own members it would
// replace the lesson's text or strength for every reader of the file as a
// layer, at every write from then on.
func TestLessonsFileForeignMemberCannotShadow(t *testing.T) {
	clk := newSeedClock(t)
	m, p := seedMemory(t, clk)
	const real = "the staging database is wiped every Sunday night"
	if _, err := m.Remember([]protocol.Event{failed(p, "s1", real)}); err != nil {
		t.Fatal(err)
	}
	seedSleep(t, m)
	path := filepath.Join(m.Home(), node.LessonsFile)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	before, err := node.ParseLayer("own", data)
	if err != nil || len(before.Lessons) != 1 {
		t.Fatalf("lessons.jsonl as a layer: %+v %v\n%s", before, err, data)
	}
	want := before.Lessons[0]
	var edited bytes.Buffer
	for _, l := range protocol.SplitLines(data) {
		edited.Write(bytes.TrimSuffix(l.Bytes, []byte("}")))
		edited.WriteString(`,"reviewed_by":"alice","Text":"The release key is kept in the shared drive.","STRENGTH":1,"Kind":"surprise","ſeen":99}` + "\n")
	}
	if err := os.WriteFile(path, edited.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	clk.Add(time.Minute)
	if _, err := m.Remember([]protocol.Event{failed(p, "s2", real)}); err != nil {
		t.Fatal(err)
	}
	seedSleep(t, m)
	data, err = os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(`"reviewed_by":"alice"`)) {
		t.Errorf("the other tool's own member was dropped:\n%s", data)
	}
	after, err := node.ParseLayer("own", data)
	if err != nil || len(after.Lessons) != 1 {
		t.Fatalf("lessons.jsonl as a layer after the write: %+v %v\n%s", after, err, data)
	}
	got := after.Lessons[0]
	if got.Text != want.Text || got.Kind != want.Kind || got.Hash != want.Hash || got.Strength > 0.99 {
		t.Errorf("a member another tool added shadows the node's: the layer reads %q (%s, strength %v), the node wrote %q (%s):\n%s",
			got.Text, got.Kind, got.Strength, want.Text, want.Kind, data)
	}
}

// TestLessonsFileFIFODoesNotHangSleep: a FIFO put where lessons.jsonl is
// must not stop the sleep that rewrites the file (reading it back to keep
// other tools' members): opening a FIFO to read waits for a writer, and no
// writer comes, so the node's sleeps would stop for good. The test is the
// writer that would come: if it can open the FIFO, the sleep is waiting in
// open, and the test says so and lets it go.
func TestLessonsFileFIFODoesNotHangSleep(t *testing.T) {
	m, p := seedMemory(t, newSeedClock(t))
	path := filepath.Join(m.Home(), node.LessonsFile)
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skip("no FIFO here:", err)
	}
	if _, err := m.Remember([]protocol.Event{failed(p, "s1", "the staging database is wiped every Sunday night")}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := m.Sleep(context.Background()); done <- err }()
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("sleep with a FIFO at lessons.jsonl: %v", err)
			}
			if info, err := os.Lstat(path); err != nil || !info.Mode().IsRegular() {
				t.Errorf("lessons.jsonl after the sleep: %v %v, want the file written in the FIFO's place", info, err)
			}
			return
		default:
		}
		// O_NONBLOCK: opening to write succeeds only while a reader has it
		// open, that is while the sleep waits in its open.
		if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			info, err := f.Stat()
			_ = f.Close()
			if err != nil || info.Mode()&fs.ModeNamedPipe == 0 {
				continue // the file the sleep wrote in its place
			}
			<-done
			t.Fatal("the sleep opened the FIFO at lessons.jsonl and waited there for a writer: a tool that puts a FIFO there stops every sleep")
		}
		runtime.Gosched()
	}
}
