package mcp

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A project's README that is a FIFO (a plain open waits for a writer
// forever) is read as no README: a session start is not held up.
func TestProjectQueryWithAFIFOReadme(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "payments")
	if err := syscall.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "README.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan string, 1)
	go func() { done <- ProjectQuery(dir) }()
	select {
	case q := <-done:
		if strings.TrimSpace(q) != "payments" {
			t.Errorf("query %q", q)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ProjectQuery waits on the FIFO")
	}
}
