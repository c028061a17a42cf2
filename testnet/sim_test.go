package testnet

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSimTestnet is the guard of the simulated network: 50 nodes through
// every phase in virtual time, every phase delivering everything and
// converging. REMEM_SIM_NODES, REMEM_SIM_LESSONS and REMEM_SIM_SEED run another
// size or draw by hand.
//
// Under the race detector the run is made by a child `go test` without
// it: synctest bubbles of thousands of goroutines crash the Go 1.26 race
// runtime now and then (a SIGSEGV in an idle bubble's thread, once
// "ThreadSanitizer: CHECK failed: tsan_rtl.cpp:282"), and the race
// detector makes this run several times slower. The code the run drives
// is raced by the TCP testnet and the packages' own tests.
func TestSimTestnet(t *testing.T) {
	if raceDetector && os.Getenv(simChildEnv) == "" {
		runSimChild(t)
		return
	}
	cfg := DefaultConfig()
	cfg.Network, cfg.Sleep, cfg.Params.Gossip = NetworkSim, SimSleep, GossipParams(NetworkSim)
	cfg.Nodes, cfg.Lessons, cfg.Seed = 50, 20, 3
	if !testing.Short() && !raceDetector {
		cfg.Lessons = 50 // the race detector makes the run five to ten times slower
	}
	if s := os.Getenv("REMEM_SIM_NODES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("REMEM_SIM_NODES=%q: %v", s, err)
		}
		cfg.Nodes = n
	}
	if s := os.Getenv("REMEM_SIM_SEED"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("REMEM_SIM_SEED=%q: %v", s, err)
		}
		cfg.Seed = n
	}
	if s := os.Getenv("REMEM_SIM_LESSONS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("REMEM_SIM_LESSONS=%q: %v", s, err)
		}
		cfg.Lessons = n
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	rep, err := RunVirtual(t, ctx, cfg, nil)
	if testing.Verbose() || err != nil {
		_ = rep.WriteTable(os.Stdout)
	}
	if err != nil {
		for _, p := range rep.Phases {
			if p.Error != "" {
				t.Errorf("%s: delivered %d of %d, converged %v: %s", p.Name, p.Delivered, p.Expected, p.Converged, p.Error)
			}
		}
		t.Fatalf("run: %v", err)
	}
	if rep.Time != "simulated" || rep.BytesSource != "sim" || rep.Links == nil {
		t.Fatalf("the report does not say it was simulated: time %q, bytes %q, links %v", rep.Time, rep.BytesSource, rep.Links)
	}
	if len(rep.Phases) != len(Phases) {
		t.Fatalf("%d phases reported, want %d", len(rep.Phases), len(Phases))
	}
	for _, p := range rep.Phases {
		if p.DeliveryRatio != 1 || !p.Converged || p.Error != "" {
			t.Errorf("%s: delivered %d of %d, converged %v: %s", p.Name, p.Delivered, p.Expected, p.Converged, p.Error)
		}
		if p.Byzantine != nil {
			checkSybils(t, p.Byzantine.Sybils, cfg.Params.SybilWaves)
		}
	}
	// The latencies are the links': nothing arrives before a link's
	// latency minus its jitter, whatever the machine.
	prop := rep.Phases[0]
	if floor := ms(rep.Links.Latency - rep.Links.Jitter); prop.P50Ms < floor {
		t.Errorf("propagate p50 %.1f ms is below one link's latency (%.0f ms): time is not simulated", prop.P50Ms, floor)
	}
	for _, tg := range rep.Targets {
		t.Logf("target %s: %g (bound %g) ok=%v", tg.Name, tg.Value, tg.Bound, tg.OK)
	}
	t.Logf("wall %.1f s for %.1f simulated s; RSS %.1f MiB per node", rep.WallMs/1000, rep.TookMs/1000, float64(rep.RSSPerNodeBytes)/(1<<20))
}

// simChildEnv marks the child run of TestSimTestnet.
const simChildEnv = "REMEM_SIM_CHILD"

// runSimChild runs TestSimTestnet in a `go test` of this package built
// without the race detector, and fails with its output if it fails.
func runSimChild(t *testing.T) {
	// go test puts its own toolchain's bin first on the PATH of a test.
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the simulated testnet runs without the race detector in a child `go test`, and no go tool is on the PATH: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	args := []string{"test", "-count=1", "-run", "^TestSimTestnet$", "-v"}
	if testing.Short() {
		args = append(args, "-short")
	}
	cmd := exec.CommandContext(ctx, goTool, append(args, ".")...)
	cmd.Env = append(os.Environ(), simChildEnv+"=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	var tail []string // the child's own lines: targets, times, verdict
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.Contains(l, "sim_test.go:") || strings.HasPrefix(l, "--- ") {
			tail = append(tail, l)
		}
	}
	if err != nil {
		t.Fatalf("the simulated testnet (child go test without -race) failed: %v\n%s", err, out.String())
	}
	t.Logf("the simulated testnet ran in a child go test without -race:\n%s", strings.Join(tail, "\n"))
}
