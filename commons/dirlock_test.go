package commons

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/remem/remem/internal/testutil"
)

// TestSecondServerOnOneDirectoryRefused: a directory's conditions hold
// only within one process, so a second server on the same --data is
// refused at start, naming the directory and the pid that holds it; once
// the first closes, a new one starts.
func TestSecondServerOnOneDirectoryRefused(t *testing.T) {
	dir := t.TempDir()
	cfg := func() ServerConfig {
		return ServerConfig{DataDir: dir, Tokens: []string{testToken}, Registry: prometheus.NewRegistry()}
	}
	first := newTestServerWith(t, cfg(), dir)
	o, body := originFile(t, "lock", 1, "v1")
	if code, _, msg := first.put(t, o+".jsonl", testToken, body); code != 201 {
		t.Fatalf("PUT to the first server: %d %s", code, msg)
	}
	second, err := NewServer(context.Background(), cfg())
	if err == nil {
		second.Close()
		t.Fatal("a second server on the same data directory started")
	}
	var le *DirLockedError
	if !errors.As(err, &le) || le.Dir != dir || le.PID != os.Getpid() {
		t.Fatalf("second NewServer: %v, want a *DirLockedError naming %s and pid %d", err, dir, os.Getpid())
	}
	for _, want := range []string{dir, strconv.Itoa(os.Getpid()), "--data"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	first.stop()
	third := newTestServerWith(t, cfg(), dir)
	if code, _, got := third.get(t, "/commons/"+o+".jsonl"); code != 200 || got != string(body) {
		t.Fatalf("GET from the server started after the first closed: %d", code)
	}
}

// originFile is the origin of the identity name and a file of its first
// n lesson lines of variant.
func originFile(t testing.TB, name string, n int, variant string) (string, []byte) {
	t.Helper()
	var body []byte
	for _, l := range lessonLines(t, name, n, variant) {
		body = append(append(body, l...), '\n')
	}
	return testutil.Identity(t, name).Origin(), body
}
