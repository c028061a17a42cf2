package testnet

import (
	"context"
	"os"
	"testing"
	"time"
)

// TestSmallTestnet runs every scenario on a small network and asserts that
// every phase delivered everything and converged.
func TestSmallTestnet(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Nodes, cfg.Lessons = 10, 10
	if !testing.Short() {
		cfg.Nodes, cfg.Lessons = 20, 30
	}
	cfg.Seed = 7
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	rep, err := Run(ctx, cfg, nil)
	rep.WriteTable(os.Stdout)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	t.Logf("took %v", time.Since(start))
	if len(rep.Phases) != len(Phases) {
		t.Fatalf("%d phases reported, want %d", len(rep.Phases), len(Phases))
	}
	for _, p := range rep.Phases {
		if p.DeliveryRatio != 1 {
			t.Errorf("%s: delivery ratio %v (%d of %d): %s", p.Name, p.DeliveryRatio, p.Delivered, p.Expected, p.Error)
		}
		if !p.Converged {
			t.Errorf("%s: not converged: %s", p.Name, p.Error)
		}
		if p.Error != "" {
			t.Errorf("%s: %s", p.Name, p.Error)
		}
		if b := p.Byzantine; b != nil {
			a := b.Attacks
			t.Logf("byzantine: %d offenders, rejected lines %v, held forged %d; %d sybils held %d sync streams; API flood of %d connections: %d of %d honest requests answered, slowest %.0f ms",
				b.Offenders, b.RejectedLines, b.HeldForged, a.SybilHosts, a.SybilStreams, a.APIFloodConns, a.APIAnswered, a.APIRequests, a.APIMaxAnswerMs)
			if a.SybilStreams == 0 || a.APIFloodConns <= a.APIMaxConns {
				t.Errorf("the attacks did not attack: %+v", a)
			}
		}
	}
	// The hostile run's memory bound: every node and attacker in one
	// process, 20 MiB per node.
	const rssPerNode = 20 << 20
	t.Logf("RSS peak %.1f MiB, %.1f MiB per node", float64(rep.RSSBytes)/(1<<20), float64(rep.RSSPerNodeBytes)/(1<<20))
	if rep.RSSPerNodeBytes > rssPerNode && !raceDetector {
		t.Errorf("RSS %.1f MiB per node, over the %d MiB bound", float64(rep.RSSPerNodeBytes)/(1<<20), rssPerNode>>20)
	}
}
