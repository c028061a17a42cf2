package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/remem/remem/node"
	"github.com/remem/remem/protocol"
	"github.com/remem/remem/store"
)

const layerLines = `{"id":"x2","text":"The staging database is reset every night at midnight","kind":"surprise","seen":2,"strength":0.75,"updated":"2026-11-01T00:00:00Z"}
`

// runLessons runs `remem lessons` in this process.
func runLessons(t *testing.T, home string, args ...string) (string, error) {
	t.Helper()
	return runCommand(t, home, "lessons", args...)
}

// runCommand runs `remem --home home cmd args...` in this process.
func runCommand(t *testing.T, home, cmd string, args ...string) (string, error) {
	t.Helper()
	app := newApp()
	var out, errOut bytes.Buffer
	app.Writer, app.ErrWriter = &out, &errOut
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := app.RunContext(ctx, append([]string{"remem", "--home", home, cmd}, args...))
	return out.String(), err
}

// runTestNode runs a node on home in this process, with its local API on
// 127.0.0.1, until the test ends; commands on home then go through its API.
// The node composes layers, as config.toml's `layers` would name them.
func runTestNode(t *testing.T, home string, layers ...node.LayerFile) {
	t.Helper()
	ready := make(chan struct{})
	d, err := node.NewDaemon(node.DaemonConfig{
		Memory:     node.Config{Home: home, Create: true, Store: store.Options{Small: true}, Layers: layers},
		API:        "127.0.0.1:0",
		SleepEvery: time.Hour,
		Ready:      func(*node.Daemon) { close(ready) },
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("node: %v", err)
		}
	})
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("node stopped at start: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("node did not start")
	}
}

// checkLayered runs `remem lessons --layer` on home: the layer's lesson is
// listed, a FIFO or a missing file is refused promptly by the command.
func checkLayered(t *testing.T, home string) {
	dir := t.TempDir()
	layer := filepath.Join(dir, "lessons.jsonl")
	if err := os.WriteFile(layer, []byte(layerLines), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runLessons(t, home, "--json", "--layer", "team="+layer)
	if err != nil {
		t.Fatal(err)
	}
	var views []node.LessonView
	if err := json.Unmarshal([]byte(out), &views); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(views) != 1 || !strings.Contains(views[0].Text, "staging database") || views[0].Layers[0] != "team" {
		t.Errorf("lessons with a layer: %+v", views)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fifo, "/dev/zero", filepath.Join(dir, "missing.jsonl")} {
		start := time.Now()
		if _, err := runLessons(t, home, "--layer", "x="+path); err == nil {
			t.Errorf("--layer x=%s was accepted", path)
		} else if !strings.Contains(err.Error(), path) {
			t.Errorf("--layer x=%s: the error does not name the file: %v", path, err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("--layer x=%s took %v", path, d)
		}
	}
}

func TestLessonsLayerWithoutNode(t *testing.T) {
	checkLayered(t, newHome(t))
}

func TestLessonsLayerThroughRunningNode(t *testing.T) {
	home := t.TempDir()
	runTestNode(t, home)
	if _, err := node.Open(node.Config{Home: home}); err == nil {
		t.Fatal("the home is not held by the running node")
	}
	checkLayered(t, home)
}

// jsonViews runs a command with --json and decodes the lessons it prints.
func jsonViews(t *testing.T, home, cmd string, args ...string) []node.LessonView {
	t.Helper()
	out, err := runCommand(t, home, cmd, append([]string{"--json"}, args...)...)
	if err != nil {
		t.Fatalf("remem %s %v: %v", cmd, args, err)
	}
	var views []node.LessonView
	if err := json.Unmarshal([]byte(out), &views); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return views
}

func findView(views []node.LessonView, hash string) (node.LessonView, bool) {
	for _, v := range views {
		if v.Hash == hash {
			return v, true
		}
	}
	return node.LessonView{}, false
}

// writeLayerFile writes a lessons.jsonl holding one lesson at strength
// 0.99 that claims to be common, and returns its path.
func writeLayerFile(t *testing.T, kind, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "team.jsonl")
	line, _ := json.Marshal(map[string]any{"id": "x", "kind": kind, "text": text, "seen": 9, "strength": 0.99,
		"updated": "2026-11-01T00:00:00Z", "state": "common", "origins": []string{"00000000000000aa"}})
	if err := os.WriteFile(path, append(line, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// revokedHome holds one lesson it published and then revoked.
func revokedHome(t *testing.T) (home, hash, text string) {
	t.Helper()
	home = t.TempDir()
	m, err := node.Open(node.Config{Home: home, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	text = "The payments sandbox rejects cards issued in the last hour."
	rec, err := m.Publish("error", text)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Revoke(rec.Hash, "fixed"); err != nil {
		t.Fatal(err)
	}
	return home, rec.Hash, text
}

// --layer never brings back a revoked lesson, whether the command opens
// the memory or a running node answers it.
func TestLayerFlagKeepsRevokedRevoked(t *testing.T) {
	for _, withNode := range []bool{false, true} {
		home, hash, text := revokedHome(t)
		if withNode {
			runTestNode(t, home)
		}
		flag := "team=" + writeLayerFile(t, "error", text)
		if v, ok := findView(jsonViews(t, home, "lessons", "--layer", flag), hash); ok {
			t.Errorf("node %v: the layer brought the revoked lesson back: %+v", withNode, v)
		}
		v, ok := findView(jsonViews(t, home, "lessons", "--all", "--layer", flag), hash)
		if !ok || v.State != protocol.StateRevoked || !slices.Contains(v.Layers, "team") {
			t.Errorf("node %v: --all --layer: %+v, want revoked and in layer team", withNode, v)
		}
		if v, ok := findView(jsonViews(t, home, "recall", "--layer", flag, "payments sandbox cards"), hash); ok {
			t.Errorf("node %v: recall --layer found the revoked lesson: %+v", withNode, v)
		}
	}
}

// recall and context take --layer as lessons does.
func TestRecallAndContextTakeLayers(t *testing.T) {
	text := "The ledger reconciliation job of the billing service times out when the exchange rate feed is slow."
	hash := protocol.LessonHash("error", text)
	for _, withNode := range []bool{false, true} {
		home := newHome(t)
		if withNode {
			runTestNode(t, home)
		}
		flag := "team=" + writeLayerFile(t, "error", text)
		if _, ok := findView(jsonViews(t, home, "recall", "--layer", flag, "billing ledger reconciliation"), hash); !ok {
			t.Errorf("node %v: recall --layer does not find the layer's lesson", withNode)
		}
		out, err := runContext(t, home, "--cwd", billingProject(t), "--layer", flag)
		if err != nil || !strings.Contains(out, "ledger reconciliation") {
			t.Errorf("node %v: context --layer: %v\n%s", withNode, err, out)
		}
	}
}

// The layers of config.toml reach lessons, recall and context, whether the
// command opens the memory or a node running with them answers; a bad
// entry is refused naming the key.
func TestConfigLayersReachCLIReaders(t *testing.T) {
	text := "The ledger reconciliation job of the billing service times out when the exchange rate feed is slow."
	hash := protocol.LessonHash("error", text)
	path := writeLayerFile(t, "error", text)
	for _, withNode := range []bool{false, true} {
		home := newHome(t)
		writeConfig(t, home, fmt.Sprintf("layers = [%q]\n", "team="+path))
		if withNode {
			runTestNode(t, home, node.LayerFile{Name: "team", Path: path})
		}
		if v, ok := findView(jsonViews(t, home, "lessons"), hash); !ok || !slices.Equal(v.Layers, []string{"team"}) {
			t.Errorf("node %v: lessons does not show the configured layer: %+v", withNode, v)
		}
		if _, ok := findView(jsonViews(t, home, "recall", "billing ledger reconciliation"), hash); !ok {
			t.Errorf("node %v: recall does not show the configured layer", withNode)
		}
		if out, err := runContext(t, home, "--cwd", billingProject(t)); err != nil || !strings.Contains(out, "ledger reconciliation") {
			t.Errorf("node %v: context does not show the configured layer: %v\n%s", withNode, err, out)
		}
	}
	home := t.TempDir()
	writeConfig(t, home, `layers = ["team"]`+"\n")
	if _, err := runLessons(t, home); err == nil || !strings.Contains(err.Error(), "config.toml: layers") {
		t.Errorf("a bad layers entry: %v, want an error naming config.toml: layers", err)
	}
}

func writeConfig(t *testing.T, home, toml string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
}
