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
	}
}
