package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/remem/remem/node"
	"github.com/remem/remem/node/consolidate"
)

var (
	writerFlag = &cli.StringFlag{Name: "writer", Usage: "a command that reads a cluster as JSON on stdin and prints one sentence", EnvVars: []string{"REMEM_WRITER"}}
	embedFlag  = &cli.StringFlag{Name: "embed-url", Usage: "an OpenAI-compatible embeddings endpoint for similarity (default: lexical)", EnvVars: []string{"REMEM_EMBED_URL"}}

	writerURLFlag   = &cli.StringFlag{Name: "writer-url", Usage: "an OpenAI-compatible chat endpoint (API base, e.g. http://127.0.0.1:11434/v1) that writes the lessons", EnvVars: []string{"REMEM_WRITER_URL"}}
	writerModelFlag = &cli.StringFlag{Name: "writer-model", Usage: "the model --writer-url asks", EnvVars: []string{"REMEM_WRITER_MODEL"}}
	writerTokenFlag = &cli.StringFlag{Name: "writer-token-file", Usage: "FILE with --writer-url's bearer token (or REMEM_WRITER_TOKEN)"}
	thresholdFlag   = &cli.Float64Flag{Name: "threshold", Usage: "similarity in (0, 1] at which events join; remem calibrate picks one", DefaultText: "0.48 lexical, 0.8 embeddings"}
)

// memoryFlags are the flags of `remem node` that set up the memory itself;
// the commands that open the memory take them too, over config.toml.
var memoryFlags = []string{"model", "writer", "writer-url", "writer-model", "writer-token-file", "embed-url", "threshold"}

// openService opens the memory of --home for a command that reads or
// changes it. When a running node holds the home, the command talks to that
// node's local API instead, with the same results; while the home is held
// by a short command or by a node that is still starting, it waits up to
// node.DefaultLockWait.
func openService(c *cli.Context) (node.Service, error) {
	return openServiceWithin(c, c.Context, node.DefaultLockWait)
}

// openServiceWithin is openService waiting up to wait for a held home. The
// memory it opens composes the layers of home's config.toml, as a node
// running on home does; a layer file it cannot read is left out with a
// warning on stderr.
func openServiceWithin(c *cli.Context, ctx context.Context, wait time.Duration) (node.Service, error) {
	cfg, err := memoryConfig(c)
	if err != nil {
		return nil, err
	}
	return node.OpenOrDial(ctx, cfg, wait)
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
func withService[T any](c *cli.Context, do func(node.Service) (T, error), human func(T) error) (err error) {
	svc, err := openService(c)
	if err != nil {
		return err
	}
	defer closeInto(&err, svc)
	out, err := do(svc)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return printJSON(c.App.Writer, out)
	}
	return human(out)
}

// embedThreshold is the similarity at which events join lessons with an
// embeddings backend; DefaultThreshold is calibrated for the lexical one
// only, and this one is a common cosine cut, not measured here.
const embedThreshold = 0.8

// useEmbeddings sets the embeddings backend at url: the model from
// REMEM_EMBED_MODEL, the key from REMEM_EMBED_KEY, the threshold from
// REMEM_SIMILARITY_THRESHOLD (default 0.8).
func useEmbeddings(cfg *node.Config, url string) error {
	cfg.Similarity = &consolidate.Embedding{URL: url, Model: os.Getenv("REMEM_EMBED_MODEL"), APIKey: os.Getenv("REMEM_EMBED_KEY")}
	if cfg.Params == (node.Params{}) {
		cfg.Params = node.DefaultParams()
	}
	cfg.Params.Threshold = embedThreshold
	if s := os.Getenv("REMEM_SIMILARITY_THRESHOLD"); s != "" {
		t, err := strconv.ParseFloat(s, 64)
		if err != nil || t <= 0 || t > 1 {
			return fmt.Errorf("REMEM_SIMILARITY_THRESHOLD=%q must be a number in (0, 1]", s)
		}
		cfg.Params.Threshold = t
	}
	return nil
}

// checkEndpoint refuses a writer or embeddings endpoint that is not an
// http:// or https:// URL with a host, before a request fails on it in
// the middle of a sleep with Go's "first path segment in URL cannot
// contain colon".
func checkEndpoint(name, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return cli.Exit(fmt.Sprintf("%s = %q: want an http:// or https:// URL, like http://127.0.0.1:11434/v1", name, raw), usageExit)
	}
	return nil
}

// closeInto closes c and joins its error into *err: closing a memory
// flushes its store, so a failed close fails the command.
func closeInto(err *error, c io.Closer) {
	if cerr := c.Close(); cerr != nil {
		*err = errors.Join(*err, fmt.Errorf("closing: %w", cerr))
	}
}
