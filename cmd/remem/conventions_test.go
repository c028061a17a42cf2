package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A missing or mistyped home is one error for every command that opens a
// memory, and none of them makes a memory there: only init does.
func TestMissingHomeIsOneErrorAndNoNewMemory(t *testing.T) {
	typo := filepath.Join(t.TempDir(), "remme")
	dir := t.TempDir()
	for _, args := range [][]string{
		{"lessons"}, {"show", "70e27c5e4a0cd6ab0657b9bdf8d0aeb7"}, {"recall", "go test"}, {"status"}, {"id"},
		{"export"}, {"context", "--cwd", dir}, {"commons", "pull", "http://127.0.0.1:1"}, {"folder", "sync", dir},
		{"remember", "--kind", "note", "--text", "the docs build takes four minutes"}, {"sleep"},
		{"publish", "--kind", "error", "The mirror build fails after midnight."},
	} {
		_, errOut, code := run(t, typo, nil, args...)
		want := "remem: no memory at " + typo + "; run `remem init` (or set REMEM_HOME to an existing memory)"
		if code != 1 || !strings.HasPrefix(errOut, want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("remem %v: exit %d, stderr %q, want %q", args, code, errOut, want)
		}
		if _, err := os.Stat(typo); !os.IsNotExist(err) {
			t.Fatalf("remem %v made %s (%v)", args, typo, err)
		}
	}
	if out := must(t, typo, nil, "init"); !strings.HasPrefix(out, "created memory ") {
		t.Errorf("init: %q", out)
	}
	must(t, typo, nil, "lessons")
}
