package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/remem/remem/node"
	"github.com/remem/remem/node/consolidate"
	"github.com/remem/remem/store"
)

var (
	writerFlag = &cli.StringFlag{Name: "writer", Usage: "a command that reads a cluster as JSON on stdin and prints one sentence", EnvVars: []string{"REMEM_WRITER"}}
	embedFlag  = &cli.StringFlag{Name: "embed-url", Usage: "an OpenAI-compatible embeddings endpoint for similarity (default: lexical)", EnvVars: []string{"REMEM_EMBED_URL"}}
)

// openService opens the memory of --home for a command that reads or
// changes it. When a running node holds the home, the command talks to that
// node's local API instead, with the same results.
func openService(c *cli.Context) (node.Service, error) {
	cfg := node.Config{Home: home(c), Create: true}
	if cmd := c.String("writer"); cmd != "" {
		cfg.Writer = commandWriter(cmd)
	}
	if url := c.String("embed-url"); url != "" {
		cfg.Similarity = &consolidate.Embedding{URL: url}
	}
	m, err := node.Open(cfg)
	if err == nil {
		return node.Local{M: m}, nil
	}
	var locked *store.LockedError
	if !errors.As(err, &locked) {
		return nil, err
	}
	client, derr := node.DialNode(c.Context, cfg.Home)
	if derr != nil {
		return nil, fmt.Errorf("%w (%v)", err, derr)
	}
	return client, nil
}

func absDir(dir string) string {
	if dir == "" {
		return ""
	}
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return dir
}

func commandWriter(cmd string) consolidate.Writer {
	return &consolidate.CommandWriter{Command: cmd, Timeout: time.Minute}
}

// withService opens the memory (or the running node's API), runs do and
// prints its result: as JSON with --json, else with human.
func withService[T any](c *cli.Context, do func(node.Service) (T, error), human func(T) error) error {
	svc, err := openService(c)
	if err != nil {
		return err
	}
	defer svc.Close()
	out, err := do(svc)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return printJSON(c.App.Writer, out)
	}
	return human(out)
}
