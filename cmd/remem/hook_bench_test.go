package main

import (
	"bytes"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"
)

// BenchmarkHook runs the built binary as a tool's hook does, beside
// `remem version` (the process start alone) as the baseline of the same
// run, and reports the p95 of each: a hook must answer within 50 ms at p95.
//
//	go test ./cmd/remem -run x -bench Hook -benchtime 200x
func BenchmarkHook(b *testing.B) {
	home := b.TempDir()
	cmd := exec.Command(remem(b), "init")
	cmd.Env = append(os.Environ(), "REMEM_HOME="+home)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("init: %v %s", err, out)
	}
	failure, _ := os.ReadFile(hookPayloads + "/claude-code/PostToolUseFailure.Bash.json")
	start := []byte(`{"hook_event_name":"SessionStart","session_id":"s","cwd":"` + b.TempDir() + `","source":"startup"}`)
	for _, bc := range []struct {
		name  string
		args  []string
		stdin []byte
	}{
		{"version", []string{"version"}, nil},
		{"failure", []string{"hook", "claude-code"}, failure},
		{"session-start", []string{"hook", "claude-code"}, start},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var took []time.Duration
			for b.Loop() {
				cmd := exec.Command(remem(b), bc.args...)
				cmd.Env = append(os.Environ(), "REMEM_HOME="+home)
				cmd.Stdin = bytes.NewReader(bc.stdin)
				began := time.Now()
				if err := cmd.Run(); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(began))
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)*95/100].Microseconds())/1000, "p95-ms")
		})
	}
}
