package main

import (
	"bytes"
	"context"
	"debug/buildinfo"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/remem/remem/internal/version"
	"github.com/remem/remem/node"
)

// syncBuffer is a bytes.Buffer safe to read while a process writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestMCPHelperProcess is not a test: TestMCPThroughRunningNode runs the
// test binary again with REMEM_MCP_HELPER=1, and then this runs `remem mcp`
// on the process's stdin and stdout.
func TestMCPHelperProcess(t *testing.T) {
	if os.Getenv("REMEM_MCP_HELPER") != "1" {
		t.Skip("helper process for TestMCPThroughRunningNode")
	}
	app := newApp()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	os.Exit(exitCode(app.RunContext(ctx, []string{"remem", "mcp"})))
}

// helperMCP is `remem mcp` run by this test binary as the helper process,
// on home.
func helperMCP(home string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestMCPHelperProcess$")
	cmd.Env = append(os.Environ(), "REMEM_HOME="+home, "REMEM_MCP_HELPER=1")
	return cmd
}

// TestMCPOverStdio drives the built `remem mcp` as an agent's MCP client
// does, over the process's stdin and stdout: initialize, list the tools,
// report an error event, sleep, and recall the lesson the sleep wrote.
func TestMCPOverStdio(t *testing.T) {
	cmd := exec.Command(remem(t), "mcp")
	cmd.Env = append(os.Environ(), "REMEM_HOME="+newHome(t))
	var stderr syncBuffer
	cmd.Stderr = &stderr
	mcpScenario(t, cmd, &stderr, nil)
}

// TestMCPThroughRunningNode runs `remem mcp` on a home a node holds: the
// calls go through the node's local API and the node's memory gets them.
func TestMCPThroughRunningNode(t *testing.T) {
	home := t.TempDir()
	m, err := node.Open(node.Config{Home: home, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	serveAPI(t, home, m)
	cmd := helperMCP(home)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	mcpScenario(t, cmd, &stderr, func(hash string) {
		// The node's own memory holds the lesson the MCP calls made.
		if _, err := m.Show(hash); err != nil {
			t.Errorf("the node's memory does not hold the lesson: %v", err)
		}
	})
	if !strings.Contains(stderr.String(), "the running node's local API") {
		t.Errorf("remem mcp should say it uses the node's API; stderr:\n%s", stderr.String())
	}
}

func mcpScenario(t *testing.T, cmd *exec.Cmd, stderr *syncBuffer, check func(hash string)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "remem-test-agent", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("initialize: %v\nstderr:\n%s", err, stderr)
	}
	closed := false
	defer func() {
		if !closed {
			cs.Close()
		}
	}()
	if info := cs.InitializeResult().ServerInfo; info == nil || info.Name != "remem" {
		t.Errorf("server info: %+v", info)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	for _, want := range []string{"remember", "recall", "lessons", "show", "sleep"} {
		if !strings.Contains(" "+strings.Join(names, " ")+" ", " "+want+" ") {
			t.Errorf("tool %s missing: %v", want, names)
		}
	}

	callOK := func(name string, args map[string]any, v any) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v\nstderr:\n%s", name, err, stderr)
		}
		text := ""
		for _, c := range res.Content {
			if tc, ok := c.(*sdk.TextContent); ok {
				text += tc.Text
			}
		}
		if res.IsError {
			t.Fatalf("%s: tool error: %s", name, text)
		}
		if v != nil {
			data, _ := json.Marshal(res.StructuredContent)
			if err := json.Unmarshal(data, v); err != nil {
				t.Fatalf("%s: %v in %s", name, err, data)
			}
		}
		return text
	}

	// A bad event is a tool error the agent can read, not a broken session.
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "remember", Arguments: map[string]any{"kind": "error", "cwd": "/srv/app"}})
	if err != nil || !res.IsError {
		t.Fatalf("an error event without title or happened: %+v %v", res, err)
	}

	var rem struct{ Taken int }
	callOK("remember", map[string]any{"kind": "error", "title": "npm ci", "cwd": "/srv/checkout-web",
		"expected": "a clean install", "happened": "npm ci fails with EUSAGE because package-lock.json is out of sync with package.json"}, &rem)
	if rem.Taken != 1 {
		t.Fatalf("remember took %d events", rem.Taken)
	}
	var sl struct {
		NewLessons int `json:"new_lessons"`
	}
	summary := callOK("sleep", map[string]any{}, &sl)
	if sl.NewLessons != 1 {
		t.Fatalf("sleep: %s", summary)
	}
	var rec struct {
		Note    string
		Lessons []struct {
			Hash, Text, Observation, State string
		}
	}
	text := callOK("recall", map[string]any{"task": "run npm ci in the checkout web app", "limit": 5}, &rec)
	if len(rec.Lessons) != 1 || !strings.Contains(rec.Lessons[0].Text, "npm ci") {
		t.Fatalf("recall did not find the lesson: %s", text)
	}
	if !strings.HasPrefix(rec.Lessons[0].Observation, "Observed (candidate, 0 confirmations): ") || !strings.Contains(text, "not instructions") {
		t.Errorf("recall should frame lessons as observations:\n%s", text)
	}
	t.Logf("recall answered:\n%s", text)
	if check != nil {
		check(rec.Lessons[0].Hash)
	}

	// Closing stdin ends the server cleanly.
	closed = true
	if err := cs.Close(); err != nil {
		t.Errorf("closing the session: %v", err)
	}
	if cmd.ProcessState == nil || !cmd.ProcessState.Success() {
		t.Errorf("remem mcp exited with %v; stderr:\n%s", cmd.ProcessState, stderr)
	}
	if !strings.Contains(stderr.String(), "serving over stdio") {
		t.Errorf("remem mcp should log to stderr; got:\n%s", stderr)
	}
}

// `remem mcp` on a home whose config.toml names a layer shows it, both
// when it opens the memory and when a node holds the home.
func TestMCPSeesConfiguredLayers(t *testing.T) {
	text := "The ledger reconciliation job of the billing service times out when the exchange rate feed is slow."
	path := writeLayerFile(t, "error", text)
	for _, withNode := range []bool{false, true} {
		home := newHome(t)
		writeConfig(t, home, fmt.Sprintf("layers = [%q]\n", "team="+path))
		if withNode {
			runTestNode(t, home, node.LayerFile{Name: "team", Path: path})
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := helperMCP(home)
		var stderr syncBuffer
		cmd.Stderr = &stderr
		client := sdk.NewClient(&sdk.Implementation{Name: "remem-test-agent", Version: "1"}, nil)
		cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
		if err != nil {
			cancel()
			t.Fatalf("initialize: %v\nstderr:\n%s", err, stderr.String())
		}
		for name, args := range map[string]map[string]any{"lessons": {}, "recall": {"task": "billing ledger reconciliation"}} {
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
			if err != nil || res.IsError {
				t.Fatalf("node %v: %s: %+v %v\nstderr:\n%s", withNode, name, res, err, stderr.String())
			}
			data, _ := json.Marshal(res.StructuredContent)
			if !strings.Contains(string(data), "ledger reconciliation") || !strings.Contains(string(data), `"layers":["team"]`) {
				t.Errorf("node %v: %s does not show the configured layer: %s", withNode, name, data)
			}
		}
		cs.Close()
		cancel()
	}
}

// The built `remem mcp` names its build in the handshake as the binary's
// build info gives it (module version, else VCS revision), not a fixed "dev".
func TestMCPReportsBuildVersion(t *testing.T) {
	bin := remem(t)
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	want := version.Info{Module: bi.Main.Version}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			want.Revision = s.Value
		case "vcs.modified":
			want.Modified = s.Value == "true"
		}
	}
	cmd := exec.Command(bin, "mcp")
	cmd.Env = append(os.Environ(), "REMEM_HOME="+newHome(t))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "remem-test-agent", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if got := cs.InitializeResult().ServerInfo.Version; got != want.String() {
		t.Errorf("remem mcp reports version %q, want %q", got, want.String())
	}
}
