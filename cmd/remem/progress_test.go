package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/remem/remem/internal/testutil"
)

// writeFailureEvents writes n generated error events as an ingest file.
func writeFailureEvents(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	for _, e := range testutil.FailureEvents(n, 1) {
		line, err := json.Marshal(map[string]string{"kind": "error", "title": e.Title, "happened": e.Happened})
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	path := filepath.Join(t.TempDir(), "events.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// onTerminal runs remem under a pseudo-terminal (script(1)) and returns
// what the terminal showed.
func onTerminal(t *testing.T, home string, args ...string) string {
	t.Helper()
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("script(1) is not installed: no pseudo-terminal to draw a bar on")
	}
	line := remem(t)
	for _, a := range args {
		line += " '" + a + "'"
	}
	cmd := exec.Command(script, "-qec", line, "/dev/null")
	cmd.Env = append(os.Environ(), "REMEM_HOME="+home)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("remem %v on a terminal: %v\n%s", args, err, out)
	}
	return string(out)
}

// TestIngestAndSleepShowProgressOnATerminalOnly: a long import and the
// sleep over it draw a bar on a terminal (reading, matching, clustering,
// writing), and print nothing on stderr when it is a pipe.
func TestIngestAndSleepShowProgressOnATerminalOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary over 3,000 events")
	}
	events := writeFailureEvents(t, 3000)

	piped := t.TempDir()
	must(t, piped, nil, "init")
	for _, args := range [][]string{{"ingest", events}, {"sleep"}} {
		_, stderr, code := run(t, piped, nil, args...)
		if code != 0 || stderr != "" {
			t.Fatalf("remem %v piped: exit %d, stderr %q (want 0 and nothing)", args, code, stderr)
		}
	}

	tty := t.TempDir()
	must(t, tty, nil, "init")
	shown := onTerminal(t, tty, "ingest", events)
	if !strings.Contains(shown, "reading events") || !strings.Contains(shown, "100%") {
		t.Errorf("ingest on a terminal drew no bar:\n%s", shown)
	}
	shown = onTerminal(t, tty, "sleep")
	for _, want := range []string{"clustering error", "writing error", "100%"} {
		if !strings.Contains(shown, want) {
			t.Errorf("sleep on a terminal shows no %q:\n%s", want, shown)
		}
	}
}
