package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/remem/remem/node"
	"github.com/remem/remem/protocol"
	"github.com/remem/remem/testnet"
)

func testnetCommand() *cli.Command {
	tn := node.TestnetParams().State
	return &cli.Command{
		Name:  "testnet",
		Usage: "run many real nodes in this process, on 127.0.0.1 or a simulated network, and measure them",
		UsageText: `remem testnet [--network tcp|sim] [--nodes 50] [--degree 3] [--lessons 100] [--seed 1]
               [--scenario all|propagate|confirm|revoke|churn|partition|latejoin|byzantine]
               [--sleep 200ms] [--quorum 3] [--window 30s] [--out DIR] [--json]
               [--latency 50ms] [--jitter 5ms] [--bandwidth 50M] [--loss 0]
               [--sweep 10,30,100,300,1000]

Every node is a full remem node with its own libp2p host and its own store
in a temporary home. The nodes form a random sparse graph drawn from --seed
(each dials --degree others). The scenarios run as phases: propagate,
confirm, revoke, churn (a fifth of the nodes stop and come back), partition
(the graph is cut in two and healed), latejoin (a new node joins) and
byzantine (a tenth as many hostile hosts publish forged, imperative and
oversized records). After each phase every node's records and states are
compared.

--network tcp (the default) runs the hosts on real sockets on 127.0.0.1: real
CPU time and bytes, but latencies that mostly measure the machine's load;
up to about 100 nodes. --network sim runs them over simulated links
(--latency, --jitter, --bandwidth, --loss) in virtual time: every latency is
in simulated ms, the same on a busy laptop as on a thousand machines, and
1,000 nodes fit on two cores (about 10 minutes). Simulated nodes sleep every
10s unless --sleep says otherwise, and run with the gossip parameters of
real nodes; the report adds the protocol's targets.

--sweep runs the testnet at each size and writes scaling.json and
scaling.svg (CPU, bytes and RSS per node and per delivery, and latency,
against n), and each run's files under --out/nodes-N.

The table goes to stdout and a progress bar to stderr; report.json and
propagation.svg (the CDF of arrival times per phase) go to --out. The exit
status is 1 when a phase missed a delivery or did not converge.

Examples:
  remem testnet --nodes 20
  remem testnet --nodes 100 --out /tmp/tn100 --json > report.json
  remem testnet --scenario partition --nodes 30 --seed 7
  remem testnet --nodes 50 --mesh 3,2,6,4      # try another GossipSub mesh
  remem testnet --network sim --nodes 1000 --json --out /tmp/tn1000 > report.json
  remem testnet --network sim --nodes 200 --latency 120ms --jitter 30ms --loss 0.01
  remem testnet --network sim --sweep 10,30,100,300,1000 --out /tmp/sweep`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "network", Value: "tcp", Usage: "tcp: real sockets on 127.0.0.1, real CPU and bytes; sim: simulated links in virtual time"},
			&cli.DurationFlag{Name: "latency", Value: testnet.DefaultLinks().Latency, Usage: "sim: one-way latency of every link"},
			&cli.DurationFlag{Name: "jitter", Value: testnet.DefaultLinks().Jitter, Usage: "sim: each packet's latency varies by up to this much either way"},
			&cli.StringFlag{Name: "bandwidth", Value: "50M", Usage: "sim: bits per second of each host's uplink and downlink (k, M and G suffixes)"},
			&cli.Float64Flag{Name: "loss", Usage: "sim: fraction of packets lost, 0 to 0.5"},
			&cli.IntFlag{Name: "nodes", Value: 50, Usage: "honest nodes at the start"},
			&cli.IntFlag{Name: "degree", Value: 3, Usage: "how many others each node dials"},
			&cli.IntFlag{Name: "lessons", Value: 100, Usage: "lessons published in the propagate phase (other phases publish a share of it)"},
			&cli.Int64Flag{Name: "seed", Value: 1, Usage: "seed of the topology and every random choice"},
			&cli.StringFlag{Name: "scenario", Value: "all", Usage: "all, or one of " + phaseNames()},
			&cli.DurationFlag{Name: "sleep", Value: 200 * time.Millisecond, Usage: "how often every node sleeps (and syncs) by itself"},
			&cli.StringFlag{Name: "out", Value: "remem-testnet", Usage: "directory for report.json and propagation.svg"},
			&cli.StringFlag{Name: "sweep", Usage: "run at each of these sizes, e.g. 10,30,100,300,1000, and write scaling.json and scaling.svg"},
			&cli.StringFlag{Name: "mesh", Usage: "GossipSub mesh as D,Dlo,Dhi,Dlazy (default: the gossip package's testnet parameters)"},
			&cli.StringFlag{Name: "homes", Usage: "keep the nodes' homes in this directory instead of a temporary one"},
			&cli.DurationFlag{Name: "publish-every", Usage: "spacing of publications within a phase (default: 1ms per node, at least 20ms)"},
			&cli.DurationFlag{Name: "phase-timeout", Usage: "bound on each wait for deliveries (default: 30s + 300ms per node)"},
			&cli.IntFlag{Name: "quorum", Value: tn.N, Usage: "N, as remem node --quorum: verifiers that make a lesson common"},
			&cli.DurationFlag{Name: "window", Value: tn.W, Usage: "W, as remem node --window, short so that fading shows within a run"},
			jsonFlag,
		},
		Action: func(c *cli.Context) error {
			cfg, err := testnetConfig(c)
			if err != nil {
				return err
			}
			var sizes []int
			if c.IsSet("sweep") {
				if sizes, err = testnet.ParseSizes(c.String("sweep")); err != nil {
					return cli.Exit("--sweep: "+err.Error(), 2)
				}
			}
			bar := newProgressBar(c.App.ErrWriter, "testnet")
			run := func(t *testing.T) error {
				if len(sizes) > 0 {
					return sweep(c, t, cfg, sizes, bar)
				}
				rep, runErr := runOn(c, t, cfg, func(ph testnet.Phase, done, total int) { bar.update(string(ph), done, total) })
				bar.finish()
				return writeTestnetReport(c, c.String("out"), rep, runErr)
			}
			if cfg.Network == testnet.NetworkSim {
				inVirtualTime(run) // ends the process
			}
			return run(nil)
		},
	}
}

// runOn runs cfg on its network: in virtual time on the simulated
// one (t is then the test inVirtualTime made).
func runOn(c *cli.Context, t *testing.T, cfg testnet.Config, progress func(testnet.Phase, int, int)) (testnet.Report, error) {
	if cfg.Network == testnet.NetworkSim {
		return testnet.RunVirtual(t, c.Context, cfg, progress)
	}
	return testnet.Run(c.Context, cfg, progress)
}

// sweep runs cfg at each size, writes each run's files under
// --out/nodes-N and scaling.json and scaling.svg in --out, and prints the
// sweep's table (or scaling.json with --json).
func sweep(c *cli.Context, t *testing.T, cfg testnet.Config, sizes []int, bar *progressBar) error {
	out := c.String("out")
	var points []testnet.ScalePoint
	var failed []string
	for _, n := range sizes {
		cfg.Nodes = n
		rep, runErr := runOn(c, t, cfg, func(ph testnet.Phase, done, total int) {
			bar.update(fmt.Sprintf("%d nodes: %s", n, ph), done, total)
		})
		bar.finish()
		if c.Context.Err() != nil {
			return fmt.Errorf("sweep interrupted at %d nodes: %w", n, c.Context.Err())
		}
		if len(rep.Phases) > 0 {
			if err := rep.WriteFiles(filepath.Join(out, fmt.Sprintf("nodes-%d", n))); err != nil {
				return err
			}
		}
		if runErr != nil {
			failed = append(failed, fmt.Sprintf("%d nodes: %v", n, runErr))
		}
		rep.Nodes = n
		points = append(points, testnet.PointOf(rep, runErr))
		runtime.GC()
		debug.FreeOSMemory() // the next run's RSS starts from what it needs
	}
	sc := testnet.NewScaling(cfg, points)
	if err := sc.WriteFiles(out); err != nil {
		return err
	}
	if c.Bool("json") {
		enc := json.NewEncoder(c.App.Writer)
		enc.SetIndent("", "  ")
		if err := enc.Encode(sc); err != nil {
			return err
		}
	} else {
		if err := sc.WriteTable(c.App.Writer); err != nil {
			return err
		}
		abs, _ := filepath.Abs(out)
		fmt.Fprintf(c.App.Writer, "wrote %s and %s, and each run's report under %s\n",
			filepath.Join(abs, "scaling.json"), filepath.Join(abs, "scaling.svg"), filepath.Join(abs, "nodes-N"))
	}
	if len(failed) > 0 {
		return cli.Exit("runs failed: "+strings.Join(failed, "; "), 1)
	}
	return nil
}

// writeTestnetReport writes the files of a run, prints its table (or JSON)
// and returns the run's error, with exit status 1 when a phase failed.
func writeTestnetReport(c *cli.Context, out string, rep testnet.Report, runErr error) error {
	if len(rep.Phases) == 0 && runErr != nil {
		return runErr
	}
	if err := rep.WriteFiles(out); err != nil {
		return errors.Join(runErr, err)
	}
	if c.Bool("json") {
		if err := rep.WriteJSON(c.App.Writer); err != nil {
			return err
		}
	} else {
		if err := rep.WriteTable(c.App.Writer); err != nil {
			return err
		}
		abs, _ := filepath.Abs(out)
		fmt.Fprintf(c.App.Writer, "wrote %s and %s\n", filepath.Join(abs, "report.json"), filepath.Join(abs, "propagation.svg"))
	}
	if runErr != nil {
		return cli.Exit(runErr.Error(), 1)
	}
	return nil
}

// testnetConfig is the run the flags ask for. --quorum and --window set
// the memories' node.Params.State, the field `remem node` fills from its
// quorum and window settings.
func testnetConfig(c *cli.Context) (testnet.Config, error) {
	cfg := testnet.DefaultConfig()
	cfg.Nodes, cfg.Degree, cfg.Lessons, cfg.Seed = c.Int("nodes"), c.Int("degree"), c.Int("lessons"), c.Int64("seed")
	cfg.Sleep = c.Duration("sleep")
	network, err := testnet.ParseNetwork(c.String("network"))
	if err != nil {
		return cfg, cli.Exit("--network: "+err.Error(), 2)
	}
	cfg.Network = network
	cfg.Params.Gossip = testnet.GossipParams(network)
	if network == testnet.NetworkSim {
		bw, err := parseBandwidth(c.String("bandwidth"))
		if err != nil {
			return cfg, cli.Exit("--bandwidth: "+err.Error(), 2)
		}
		cfg.Links = testnet.SimLinks{Latency: c.Duration("latency"), Jitter: c.Duration("jitter"), Bandwidth: bw, Loss: c.Float64("loss")}
		if err := cfg.Links.Validate(); err != nil {
			return cfg, cli.Exit(fmt.Sprintf("the simulated links: %v (see --latency, --jitter, --bandwidth, --loss)", err), 2)
		}
		if !c.IsSet("sleep") {
			cfg.Sleep = testnet.SimSleep
		}
	} else {
		for _, f := range []string{"latency", "jitter", "bandwidth", "loss"} {
			if c.IsSet(f) {
				return cfg, cli.Exit(fmt.Sprintf("--%s sets the simulated links: add --network sim", f), 2)
			}
		}
	}
	cfg.Dir = c.String("homes")
	cfg.Params.PhaseTimeout = c.Duration("phase-timeout")
	cfg.Params.PublishEvery = c.Duration("publish-every")
	cfg.Params.Memory.State = protocol.StateParams{N: c.Int("quorum"), W: c.Duration("window")}
	phases, err := testnet.ParseScenario(c.String("scenario"))
	if err != nil {
		return cfg, cli.Exit(err.Error(), 2)
	}
	cfg.Phases = phases
	if m := c.String("mesh"); m != "" {
		if err := parseMesh(m, &cfg); err != nil {
			return cfg, cli.Exit(err.Error(), 2)
		}
	}
	return cfg, nil
}

// parseBandwidth reads bits per second: a number with an optional k, M
// or G suffix (powers of 1000), e.g. 50M.
func parseBandwidth(s string) (int, error) {
	mult := 1.0
	num := strings.TrimSpace(s)
	for suffix, m := range map[string]float64{"k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9} {
		if rest, ok := strings.CutSuffix(num, suffix); ok {
			num, mult = rest, m
			break
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v <= 0 || v*mult > 1e12 {
		return 0, fmt.Errorf("%q is not a bandwidth: want bits per second such as 50M, 800k or 1G", s)
	}
	return int(v * mult), nil
}

func phaseNames() string {
	names := make([]string, len(testnet.Phases))
	for i, p := range testnet.Phases {
		names[i] = string(p)
	}
	return strings.Join(names, ", ")
}

// parseMesh reads D,Dlo,Dhi,Dlazy.
func parseMesh(s string, cfg *testnet.Config) error {
	parts := strings.Split(s, ",")
	if len(parts) != 4 {
		return fmt.Errorf("--mesh %q: want four numbers D,Dlo,Dhi,Dlazy, e.g. 4,3,8,6", s)
	}
	var v [4]int
	for i, p := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < 0 {
			return fmt.Errorf("--mesh %q: %q is not a count", s, p)
		}
		v[i] = n
	}
	d, lo, hi, lazy := v[0], v[1], v[2], v[3]
	if !(lo <= d && d <= hi) || d < 1 {
		return fmt.Errorf("--mesh %q: want 1 ≤ D and Dlo ≤ D ≤ Dhi", s)
	}
	g := &cfg.Params.Gossip
	g.D, g.Dlo, g.Dhi, g.Dlazy = d, lo, hi, lazy
	// GossipSub wants Dout < Dlo and Dout < D/2, and Dscore ≤ D.
	g.Dout = max(0, min(g.Dout, lo-1, d/2-1))
	g.Dscore = min(g.Dscore, d)
	return nil
}
