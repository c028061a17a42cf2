package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/remem/remem/node"
	calib "github.com/remem/remem/node/calibrate"
	"github.com/remem/remem/node/consolidate"
)

// writerPromptMax bounds the cluster read on stdin.
const writerPromptMax = 1 << 20

func writerPromptCommand() *cli.Command {
	return &cli.Command{
		Name:  "writer-prompt",
		Usage: "turn a cluster (JSON on stdin, as --writer gets it) into a prompt for a local model CLI",
		UsageText: `remem writer-prompt [--json] < cluster.json

Reads the cluster a --writer command gets on stdin and prints the prompt the
chat writer (--writer-url) sends: the rules of a lesson (one sentence, an
observation, never an instruction, no raw data) and the events as quoted
JSON data; --json prints the two messages, system and user, for a chat API.
Piped into a model CLI that reads a prompt on stdin, it makes a writer; what
the model answers passes the same checks as any writer's, and the default
writer is used when it does not.

Examples:
  remem sleep --writer "remem writer-prompt | ollama run llama3.2"
  remem sleep --writer "remem writer-prompt | llm -m gpt-4o-mini"
  echo '{"kind":"error","episodes":[{"kind":"error","title":"npm ci","happened":"EUSAGE"}]}' | remem writer-prompt`,
		Flags: []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			raw, err := io.ReadAll(io.LimitReader(c.App.Reader, writerPromptMax+1))
			if err != nil {
				return fmt.Errorf("reading the cluster on stdin: %w", err)
			}
			if len(raw) > writerPromptMax {
				return cli.Exit(fmt.Sprintf("writer-prompt: more than %d bytes on stdin; it reads one cluster as --writer gets it", writerPromptMax), 2)
			}
			var cl consolidate.Cluster
			dec := json.NewDecoder(bytes.NewReader(raw))
			if err := dec.Decode(&cl); err != nil || len(cl.Episodes) == 0 {
				if err == nil {
					err = errors.New("no episodes")
				}
				return cli.Exit(fmt.Sprintf(`writer-prompt: stdin is not a cluster (%v); it reads what a --writer command gets, like {"kind":"error","episodes":[{"kind":"error","title":"npm ci","happened":"EUSAGE"}]}`, err), 2)
			}
			system, user, err := consolidate.Prompt(cl)
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return printJSON(c.App.Writer, struct {
					System string `json:"system"`
					User   string `json:"user"`
				}{system, user})
			}
			_, err = fmt.Fprintf(c.App.Writer, "%s\n\n%s\n", system, user)
			return err
		},
	}
}

func calibrateCommand() *cli.Command {
	return &cli.Command{
		Name:  "calibrate",
		Usage: "measure similarity and writer on labelled data: the threshold for pairs, the lessons for clusters",
		UsageText: `remem calibrate --pairs FILE [--embed-url URL] [--json]
remem calibrate --clusters FILE [--json] [--writer CMD | --writer-url URL [--writer-model M] [--writer-token-file F]]
                [--embed-url URL] [--threshold T]

--pairs FILE holds labelled pairs of event texts, one JSON object a line:
  {"a": "npm install fails with EACCES", "b": "EACCES from npm install -g", "same": true}
Each pair is scored with the lexical similarity, or with the embeddings
endpoint of --embed-url (model from REMEM_EMBED_MODEL, key from
REMEM_EMBED_KEY). Pairs at or above the threshold count as the same; the
threshold that maximises F1 is chosen, with its precision and recall and a
table around it, and the config.toml lines to use it are printed. Use
pairs from the events your agents report: a few dozen of each label.

--clusters FILE holds labelled rows of events, one JSON object a line:
  {"id": "r01", "domain": "go",
   "events": [{"kind": "error", "title": "go test ./...", "happened": "..."}, ...],
   "groups": [{"events": [0, 2], "facts": [["ENOSPC", "no space left"], ["docker"]]},
              {"events": [1], "facts": [["undefined"]]}],
   "private": ["dana", "ci-runner-07.corp.acme.io"]}
groups are the lessons the events should make (each event index in exactly
one group), facts the key facts of each lesson (any alternative, found
case-insensitively), private the strings no lesson that may be published
should hold. Each row gets a fresh scratch memory: its events are ingested
in order, one sleep runs with the writer, similarity and threshold that
remem sleep uses (config.toml, overridden by the flags), and the lessons
written are scored: lessons written against expected, whether the events
went to lessons exactly as the groups say, the facts kept, the lessons
that would be signed holding private data (and whether the raw-data check
flags them), the drafts. --json adds every lesson's text. A bad line is
named with its number and reason, the other rows are still scored, and the
command exits 1.

Examples:
  remem calibrate --pairs node/consolidate/testdata/pairs.jsonl
  REMEM_EMBED_MODEL=nomic-embed-text remem calibrate --pairs pairs.jsonl --embed-url http://127.0.0.1:11434/v1
  remem calibrate --pairs pairs.jsonl --json
  remem calibrate --clusters node/calibrate/testdata/clusters.jsonl
  remem calibrate --clusters mine.jsonl --writer "remem writer-prompt | ollama run llama3.2" --json`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "pairs", Usage: "FILE of labelled pairs (JSONL: a, b, same)"},
			&cli.StringFlag{Name: "clusters", Usage: "FILE of labelled rows of events (JSONL: id, events, groups, private)"},
			embedFlag, jsonFlag, writerFlag, writerURLFlag, writerModelFlag, writerTokenFlag, thresholdFlag,
		},
		Action: func(c *cli.Context) error {
			switch pairs, clusters := c.IsSet("pairs"), c.IsSet("clusters"); {
			case pairs == clusters:
				return cli.Exit("calibrate: give one of --pairs FILE (the similarity threshold) or --clusters FILE (the lessons written); see remem calibrate --help", usageExit)
			case clusters:
				return runCalibrateClusters(c)
			}
			// The writer's flags (and their REMEM_WRITER* variables) mean
			// nothing to --pairs, which scores the similarity alone.
			if c.IsSet("threshold") {
				return cli.Exit("calibrate: --threshold is for --clusters; --pairs picks the threshold", usageExit)
			}
			return runCalibrate(c)
		},
	}
}

// calibration is what `remem calibrate` reports: calib.Pairs' report,
// the similarity it used and the config.toml lines to use its threshold.
type calibration struct {
	Similarity string `json:"similarity"` // "lexical" or "embeddings"
	calib.PairsReport
	Config []string `json:"config"` // config.toml lines
}

func runCalibrate(c *cli.Context) error {
	path := c.String("pairs")
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("reading the pairs: %w", err)
	}
	pairs, err := calib.ReadPairs(f, path)
	_ = f.Close() // read only
	if err != nil {
		return err
	}
	var sim consolidate.Similarity = consolidate.NewLexical()
	kind, config := "lexical", []string(nil)
	if url := c.String("embed-url"); url != "" {
		var cfg node.Config
		if err := useEmbeddings(&cfg, url); err != nil {
			return err
		}
		sim, kind = cfg.Similarity, "embeddings"
		config = append(config, fmt.Sprintf("embed_url = %q", url))
	}
	rep, err := calib.Pairs(c.Context, sim, pairs)
	switch {
	case err != nil && kind == "embeddings":
		return fmt.Errorf("%s: %w (check --embed-url, REMEM_EMBED_MODEL and REMEM_EMBED_KEY)", path, err)
	case err != nil:
		return fmt.Errorf("%s: %w", path, err)
	}
	res := calibration{PairsReport: rep}
	res.Similarity = kind
	res.Config = append(config, fmt.Sprintf("threshold = %s", formatThreshold(res.Threshold)))
	if c.Bool("json") {
		return printJSON(c.App.Writer, res)
	}
	w := c.App.Writer
	fmt.Fprintf(w, "%s similarity on %d pairs (%d same, %d different)\n", kind, res.Pairs, res.Same, res.Pairs-res.Same)
	fmt.Fprintf(w, "threshold %s: precision %.2f, recall %.2f, F1 %.2f\n\n", formatThreshold(res.Threshold), res.Precision, res.Recall, res.F1)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "threshold\tprecision\trecall\tF1")
	for _, r := range res.Table {
		mark := ""
		if r.Threshold == res.Threshold {
			mark = "  <- chosen"
		}
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%.2f%s\n", formatThreshold(r.Threshold), r.Precision, r.Recall, r.F1, mark)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nin %s/config.toml (or --threshold on node, sleep and mcp):\n", home(c))
	for _, l := range res.Config {
		fmt.Fprintln(w, "  "+l)
	}
	return nil
}

// formatThreshold prints a threshold as config.toml takes it: a float with
// a decimal point.
func formatThreshold(t float64) string {
	s := fmt.Sprintf("%g", t)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}
