package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/remem/remem/node"
	"github.com/remem/remem/protocol"
	"github.com/remem/remem/testnet"
)

// runTestnet runs `remem testnet` in this process.
func runTestnet(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	app := newApp()
	var out, errOut bytes.Buffer
	app.Writer, app.ErrWriter = &out, &errOut
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := app.RunContext(ctx, append([]string{"remem", "testnet"}, args...))
	return out.String(), errOut.String(), err
}

func TestTestnetCommandJSON(t *testing.T) {
	out := t.TempDir()
	stdout, stderr, err := runTestnet(t, "--nodes", "4", "--degree", "2", "--lessons", "3", "--seed", "3",
		"--scenario", "propagate", "--sleep", "300ms", "--out", out, "--json")
	if err != nil {
		t.Fatalf("testnet: %v\nstderr: %s", err, stderr)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("stdout is not the report: %v\n%s", err, stdout)
	}
	if rep["nodes"].(float64) != 4 || rep["seed"].(float64) != 3 || rep["ok"] != true {
		t.Fatalf("report: %v", rep)
	}
	phases := rep["phases"].([]any)
	if len(phases) != 1 || phases[0].(map[string]any)["name"] != "propagate" {
		t.Fatalf("phases: %v", phases)
	}
	if p := phases[0].(map[string]any); p["delivery_ratio"].(float64) != 1 || p["converged"] != true {
		t.Fatalf("propagate: %v", p)
	}
	// The same object is in report.json, and the plot is XML.
	data, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var file map[string]any
	if err := json.Unmarshal(data, &file); err != nil || file["seed"].(float64) != 3 {
		t.Fatalf("report.json: %v %v", err, file)
	}
	svg, err := os.ReadFile(filepath.Join(out, "propagation.svg"))
	if err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(svg, new(struct{})); err != nil {
		t.Fatalf("propagation.svg: %v", err)
	}
	if !strings.Contains(stderr, "propagate") {
		t.Errorf("no progress on stderr: %q", stderr)
	}
}

func TestTestnetCommandTable(t *testing.T) {
	out := t.TempDir()
	stdout, _, err := runTestnet(t, "--nodes", "3", "--degree", "1", "--lessons", "2", "--scenario", "revoke", "--out", out)
	if err != nil {
		t.Fatalf("testnet: %v", err)
	}
	for _, want := range []string{"phase", "revoke", "p99 ms", "report.json"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, stdout)
		}
	}
}

func TestTestnetCommandUsage(t *testing.T) {
	for _, args := range [][]string{
		{"--scenario", "flood"},
		{"--mesh", "4,3"},
		{"--mesh", "2,3,8,6"},
		{"--nodes", "1", "--scenario", "propagate"},
		{"--network", "udp"},
		{"--latency", "20ms"}, // the links of the simulated network, on TCP
		{"--network", "sim", "--bandwidth", "fast"},
		{"--network", "sim", "--jitter", "80ms"}, // more than the latency
		{"--network", "sim", "--loss", "0.9"},
		{"--sweep", "100,30"},
		{"--sweep", "10,x"},
	} {
		_, _, err := runTestnet(t, append(args, "--out", t.TempDir())...)
		if err == nil {
			t.Errorf("%v: accepted", args)
			continue
		}
		var coder cli.ExitCoder
		if errors.As(err, &coder) && coder.ExitCode() == 0 {
			t.Errorf("%v: exit code 0", args)
		}
	}
}

func TestParseBandwidth(t *testing.T) {
	for in, want := range map[string]int{"50M": 50_000_000, "800k": 800_000, "1G": 1_000_000_000, "2.5M": 2_500_000, "64000": 64000} {
		if got, err := parseBandwidth(in); err != nil || got != want {
			t.Errorf("parseBandwidth(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "M", "-5M", "0", "fast", "5T"} {
		if _, err := parseBandwidth(bad); err == nil {
			t.Errorf("parseBandwidth(%q) took it", bad)
		}
	}
}

// The simulated network through the built binary: testing.Main runs the
// bubble, stdout holds the report alone (no PASS), times are simulated,
// and a failed phase still exits 1 (a timeout too short to deliver).
func TestTestnetSimThroughBinary(t *testing.T) {
	out := t.TempDir()
	stdout, stderr, code := run(t, t.TempDir(), nil, "testnet", "--network", "sim", "--nodes", "6", "--degree", "2",
		"--lessons", "3", "--scenario", "propagate", "--latency", "40ms", "--jitter", "0s", "--out", out, "--json")
	if code != 0 {
		t.Fatalf("exit %d\nstderr: %s", code, stderr)
	}
	var rep testnet.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("stdout is not the report alone: %v\n%s", err, stdout)
	}
	if !rep.OK || rep.Network != testnet.NetworkSim || rep.Time != "simulated" || rep.Links == nil || rep.Links.Latency != 40*time.Millisecond {
		t.Fatalf("report: ok %v, network %q, time %q, links %+v", rep.OK, rep.Network, rep.Time, rep.Links)
	}
	if p := rep.Phases[0]; p.P50Ms < 40 {
		t.Errorf("propagate p50 %.1f ms, below one 40 ms link: not simulated time", p.P50Ms)
	}
	if len(rep.Targets) == 0 {
		t.Error("no targets in a simulated report")
	}
	_, stderr, code = run(t, t.TempDir(), nil, "testnet", "--network", "sim", "--nodes", "4", "--degree", "1",
		"--lessons", "2", "--scenario", "propagate", "--latency", "2s", "--jitter", "0s", "--phase-timeout", "1s", "--out", t.TempDir())
	if code != 1 || !strings.Contains(stderr, "phases failed: propagate") {
		t.Errorf("a run that cannot deliver: exit %d, stderr %q", code, stderr)
	}
}

func TestParseMesh(t *testing.T) {
	cfg := testnet.DefaultConfig()
	if err := parseMesh("3,2,6,4", &cfg); err != nil {
		t.Fatal(err)
	}
	g := cfg.Params.Gossip
	if g.D != 3 || g.Dlo != 2 || g.Dhi != 6 || g.Dlazy != 4 || g.Dout >= g.Dlo || g.Dout >= g.D/2 || g.Dscore > g.D {
		t.Fatalf("mesh: %+v", g)
	}
}

// The testnet's small W and its N reach the memories by the field that
// `remem node --quorum/--window` fill: node.Params.State.
func TestTestnetQuorumAndWindow(t *testing.T) {
	configFor := func(args ...string) testnet.Config {
		t.Helper()
		var cfg testnet.Config
		cmd := testnetCommand()
		cmd.Action = func(c *cli.Context) (err error) {
			cfg, err = testnetConfig(c)
			return err
		}
		app := &cli.App{Name: "remem", Commands: []*cli.Command{cmd}, Writer: io.Discard, ErrWriter: io.Discard}
		if err := app.Run(append([]string{"remem", "testnet"}, args...)); err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	if got := configFor().Params.Memory.State; got != node.TestnetParams().State {
		t.Errorf("without flags: %+v, want the testnet's %+v", got, node.TestnetParams().State)
	}
	if got := configFor("--quorum", "2", "--window", "5s").Params.Memory.State; got != (protocol.StateParams{N: 2, W: 5 * time.Second}) {
		t.Errorf("--quorum 2 --window 5s: %+v", got)
	}
}
