package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/remem/remem/commons"
	"github.com/remem/remem/node"
)

var tokenFileFlag = &cli.StringFlag{Name: "token-file", Usage: "FILE with the bearer token (default: $REMEM_COMMONS_TOKEN)"}

func commonsCommand() *cli.Command {
	return &cli.Command{
		Name:  "commons",
		Usage: "run an HTTP commons, or push to and pull from one",
		Subcommands: []*cli.Command{
			{
				Name:  "serve",
				Usage: "serve a commons that any memory can publish to and bootstrap from",
				UsageText: `remem commons serve [--listen 127.0.0.1:8787] --data DIR --token-file FILE [--read-token]

PUT /commons/<origin>.jsonl is accepted only when every line verifies and has
that origin (at most 1,000 records and 256 KiB); GET serves files exactly as
stored with ETags; GET /commons/index lists them (?since=RFC3339).
SIGINT or SIGTERM shuts it down gracefully.

Examples:
  openssl rand -hex 32 > token && remem commons serve --data /var/lib/remem-commons --token-file token
  remem commons serve --listen 0.0.0.0:8787 --data ./commons --token-file token --read-token`,
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "listen", Value: "127.0.0.1:8787", Usage: "address to listen on"},
					&cli.StringFlag{Name: "data", Required: true, Usage: "DIR for the files (kept across restarts)"},
					&cli.StringFlag{Name: "token-file", Required: true, Usage: "FILE with the accepted bearer tokens, one per line"},
					&cli.BoolFlag{Name: "read-token", Usage: "require the token on GET too"},
				},
				Action: commonsServe,
			},
			{
				Name:  "push",
				Usage: "publish this memory's file to a commons",
				UsageText: `remem commons push [--token-file FILE] [--json] URL

URL is the commons' address: https://host, or the seed's
https://host/commons/ (the same commons); no other path.

Examples:
  REMEM_COMMONS_TOKEN=... remem commons push https://commons.example.org
  remem commons push --token-file ~/.remem-token http://127.0.0.1:8787`,
				Flags:  []cli.Flag{jsonFlag, tokenFileFlag},
				Action: commonsPush,
			},
			{
				Name:  "pull",
				Usage: "take the files that changed on a commons, verifying every line here",
				UsageText: `remem commons pull [--token-file FILE] [--json] URL

Reads the index, then only the files changed since the last pull, with
conditional GETs. Records arrive with scope commons:<URL>. URL is the
commons' address: https://host, or the seed's https://host/commons/ (the
same commons, with or without the slashes); no other path.

Examples:
  remem commons pull https://commons.example.org
  remem commons pull --json http://127.0.0.1:8787 | jq .accepted`,
				Flags:  []cli.Flag{jsonFlag, tokenFileFlag},
				Action: commonsPull,
			},
		},
	}
}

func commonsServe(c *cli.Context) (err error) {
	data, err := os.ReadFile(c.String("token-file"))
	if err != nil {
		return fmt.Errorf("reading tokens: %w", err)
	}
	var tokens []string
	for _, t := range strings.Split(string(data), "\n") {
		if t = strings.TrimSpace(t); t != "" {
			tokens = append(tokens, t)
		}
	}
	if len(tokens) == 0 {
		return fmt.Errorf("%s holds no token; write one per line (e.g. `openssl rand -hex 32 > %s`)", c.String("token-file"), c.String("token-file"))
	}
	logger := slog.New(slog.NewTextHandler(c.App.ErrWriter, nil))
	cfg := commons.DefaultServerConfig()
	cfg.DataDir, cfg.Tokens, cfg.ReadNeedsToken, cfg.Logger = c.String("data"), tokens, c.Bool("read-token"), logger
	srv, err := commons.NewServer(cfg)
	if err != nil {
		return err
	}
	defer closeInto(&err, srv)
	fmt.Fprintf(c.App.ErrWriter, "commons serving %s on http://%s\n", c.String("data"), c.String("listen"))
	return commons.Serve(c.Context, c.String("listen"), srv, logger)
}

func commonsClient(c *cli.Context, m *node.Memory) (*commons.Client, error) {
	url, err := oneArg(c, "commons URL")
	if err != nil {
		return nil, err
	}
	if _, err := commons.CanonicalURL(url); err != nil {
		return nil, cli.Exit(err.Error(), 2)
	}
	token, err := commonsToken(c.String("token-file"))
	if err != nil {
		return nil, err
	}
	return m.CommonsClient(url, token), nil
}

func openLocal(c *cli.Context) (*node.Memory, error) {
	cfg, err := memoryConfig(c)
	if err != nil {
		return nil, err
	}
	cfg.LockWait = node.DefaultLockWait
	m, err := node.Open(cfg)
	if err != nil {
		return nil, fmt.Errorf("%w; with a running node, give it --commons instead", err)
	}
	return m, nil
}

// withCommons opens the memory and a client for the URL argument.
func withCommons(c *cli.Context, do func(*node.Memory, *commons.Client) error) (err error) {
	m, err := openLocal(c)
	if err != nil {
		return err
	}
	defer closeInto(&err, m)
	client, err := commonsClient(c, m)
	if err != nil {
		return err
	}
	return do(m, client)
}

func commonsPush(c *cli.Context) error {
	return withCommons(c, func(m *node.Memory, client *commons.Client) error { return push(c, m, client) })
}

func push(c *cli.Context, m *node.Memory, client *commons.Client) error {
	res, err := m.PushCommons(c.Context, client)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return printJSON(c.App.Writer, res)
	}
	fmt.Fprintf(c.App.Writer, "pushed %d records to %s (etag %s)\n", res.Records, client.BaseURL, res.ETag)
	return nil
}

func commonsPull(c *cli.Context) error {
	return withCommons(c, func(m *node.Memory, client *commons.Client) error { return pull(c, m, client) })
}

func pull(c *cli.Context, m *node.Memory, client *commons.Client) error {
	if !c.Bool("json") {
		client.Progress = func(done, total int) {
			if total >= 20 && (done%50 == 0 || done == total) {
				fmt.Fprintf(c.App.ErrWriter, "\rpulling %d/%d files", done, total)
				if done == total {
					fmt.Fprintln(c.App.ErrWriter)
				}
			}
		}
	}
	// A pull goes on past a failed file: the report says what it did, and
	// err every failure.
	rep, err := m.PullCommons(c.Context, client)
	if c.Bool("json") {
		if perr := printJSON(c.App.Writer, rep); perr != nil {
			return errors.Join(err, perr)
		}
		return err
	}
	for _, r := range rep.Refusals {
		fmt.Fprintln(c.App.ErrWriter, "refused:", r)
	}
	fmt.Fprintf(c.App.Writer, "listed %d, fetched %d, unchanged %d, accepted %d records, refused %d lines, failed %d, %d bytes\n",
		rep.Listed, rep.Fetched, rep.Unchanged+rep.NotModified, rep.Accepted, sum(rep.Refused), rep.Failed, rep.Bytes)
	return err
}

func sum[K comparable](m map[K]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
