package testnet

import (
	"context"
	"os"
	"testing"
	"time"
)

// TestSimTestnet runs every scenario on the simulated network and asserts
// that every phase delivered everything and converged.
func TestSimTestnet(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Network = NetworkSim
	cfg.Sleep = SimSleep
	cfg.Params.Gossip = GossipParams(NetworkSim)
	cfg.Nodes, cfg.Lessons, cfg.Seed = 50, 20, 3
	if n := os.Getenv("REMEM_SIM_NODES"); n != "" {
		var k int
		for _, c := range n {
			k = k*10 + int(c-'0')
		}
		cfg.Nodes = k
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rep, err := RunVirtual(t, ctx, cfg, nil)
	_ = rep.WriteTable(os.Stdout)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	t.Logf("wall %.1f s, simulated %.1f s, RSS %.1f MiB per node", rep.WallMs/1000, rep.TookMs/1000, float64(rep.RSSPerNodeBytes)/(1<<20))
}
