package testnet

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"
)

// TestSimTestnet is the guard of the simulated network: 50 nodes through
// every phase in virtual time, every phase delivering everything and
// converging. REMEM_SIM_NODES and REMEM_SIM_LESSONS run another size by
// hand.
func TestSimTestnet(t *testing.T) {
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
	if testing.Verbose() {
		_ = rep.WriteTable(os.Stdout)
	}
	if err != nil {
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
