package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/remem/remem/node"
	"github.com/remem/remem/store"
)

const layerLines = `{"id":"x2","text":"The staging database is reset every night at midnight","kind":"surprise","seen":2,"strength":0.75,"updated":"2026-11-01T00:00:00Z"}
`

// runLessons runs `remem lessons` in this process.
func runLessons(t *testing.T, home string, args ...string) (string, error) {
	t.Helper()
	app := newApp()
	var out, errOut bytes.Buffer
	app.Writer, app.ErrWriter = &out, &errOut
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := app.RunContext(ctx, append([]string{"remem", "--home", home, "lessons"}, args...))
	return out.String(), err
}

// runTestNode runs a node on home in this process, with its local API on
// 127.0.0.1, until the test ends; commands on home then go through its API.
func runTestNode(t *testing.T, home string) {
	t.Helper()
	ready := make(chan struct{})
	d, err := node.NewDaemon(node.DaemonConfig{
		Memory:     node.Config{Home: home, Create: true, Store: store.Options{Small: true}},
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
	checkLayered(t, t.TempDir())
}

func TestLessonsLayerThroughRunningNode(t *testing.T) {
	home := t.TempDir()
	runTestNode(t, home)
	if _, err := node.Open(node.Config{Home: home}); err == nil {
		t.Fatal("the home is not held by the running node")
	}
	checkLayered(t, home)
}
