package consolidate

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func needSh(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh:", err)
	}
}

var testCluster = Cluster{Kind: "error", Episodes: []Episode{
	{Kind: "error", Title: "go build", Happened: "illegal instruction on arm64", Expected: "a binary"},
	{Kind: "error", Title: "make", AgentDid: "ran make on the ARM runner", Said: "ok", Text: "note"},
}}

func TestCommandWriter(t *testing.T) {
	needSh(t)
	got, err := CommandWriter{Command: "cat >/dev/null; echo The build fails on ARM."}.Write(context.Background(), testCluster)
	if err != nil {
		t.Fatal(err)
	}
	if got != "The build fails on ARM." {
		t.Fatalf("Write = %q", got)
	}
	// surrounding blank lines and spaces are trimmed
	got, err = CommandWriter{Command: "printf '\\n  The   build fails on ARM.  \\n\\n'"}.Write(context.Background(), testCluster)
	if err != nil || got != "The build fails on ARM." {
		t.Fatalf("Write = %q, %v", got, err)
	}
}

func TestCommandWriterStdin(t *testing.T) {
	needSh(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "in.json")
	_, err := CommandWriter{Command: "cat > '" + path + "'; echo Fine."}.Write(context.Background(), testCluster)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var back Cluster
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatalf("stdin is not a cluster: %v\n%s", err, raw)
	}
	if !reflect.DeepEqual(back, testCluster) {
		t.Fatalf("stdin cluster = %+v", back)
	}
	for _, field := range []string{`"kind":"error"`, `"episodes":[`, `"title":"go build"`, `"happened":`, `"expected":`, `"agent_did":`, `"said":`, `"text":`} {
		if !strings.Contains(string(raw), field) {
			t.Errorf("stdin lacks %s: %s", field, raw)
		}
	}
}

func TestCommandWriterFailures(t *testing.T) {
	needSh(t)
	cases := []struct {
		name, cmd string
		want      []string
	}{
		{"exit status and stderr", "echo 'model not found' >&2; exit 3", []string{"exit status 3", "model not found"}},
		{"empty output", "cat >/dev/null", []string{"empty output"}},
		{"blank output with stderr", "echo '   '; echo warming up >&2", []string{"empty output", "warming up"}},
		{"two lines", "echo The build fails.; echo It works on x86.", []string{"2 lines"}},
		{"two sentences", "echo 'The build fails on ARM. It works on x86.'", []string{"2 sentences"}},
		{"no such command", "definitely-not-a-command-xyz", []string{"exit status 127", "not found"}},
		{"too much output", "head -c 100000 /dev/zero | tr '\\0' a; echo", []string{"more than"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := CommandWriter{Command: c.cmd, Timeout: 10 * time.Second}.Write(context.Background(), testCluster)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
	if _, err := (CommandWriter{}).Write(context.Background(), testCluster); err == nil || !strings.Contains(err.Error(), "no command") {
		t.Fatalf("empty command: %v", err)
	}
}

func TestCommandWriterOneSentenceForms(t *testing.T) {
	needSh(t)
	for _, out := range []string{
		"go test ./... fails after the rebase.",
		"The API returns 404 for e.g. missing users.",
		"Version 1.22 of the toolchain is required.",
	} {
		got, err := CommandWriter{Command: "echo '" + out + "'"}.Write(context.Background(), testCluster)
		if err != nil || got != out {
			t.Errorf("Write = %q, %v; want %q", got, err, out)
		}
	}
}

func TestCommandWriterTimeout(t *testing.T) {
	needSh(t)
	start := time.Now()
	// the shell's children hold stdout open: they must be killed too
	_, err := CommandWriter{Command: "sleep 30 & sleep 30", Timeout: 200 * time.Millisecond}.Write(context.Background(), testCluster)
	if err == nil || !strings.Contains(err.Error(), "timed out after 200ms") {
		t.Fatalf("error %v, want a timeout", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %s to give up", d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel) // while the command runs
	_, err = CommandWriter{Command: "sleep 30"}.Write(ctx, testCluster)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}
