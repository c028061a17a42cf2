package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/remem/remem/internal/version"
	"github.com/remem/remem/node"
	"github.com/remem/remem/node/consolidate"
	remcp "github.com/remem/remem/node/mcp"
)

func mcpCommand() *cli.Command {
	return &cli.Command{
		Name:  "mcp",
		Usage: "serve the memory to an AI agent over MCP on stdin and stdout",
		UsageText: `remem mcp [--writer CMD | --writer-url URL [--writer-model M]] [--embed-url URL] [--threshold T]
          [--no-sampling] [--sampling-timeout D] [--sampling-max N]

Speaks the Model Context Protocol (JSON-RPC, one message a line) on stdin and
stdout; logs go to stderr only. Tools:
  remember  report one event (correction, error, environment, surprise, note)
  recall    the lessons relevant to a task description
  lessons   the lesson view, optionally in one state
  show      one lesson with every record held for it
  sleep     turn the reported events into lessons now
  revoke    withdraw one of this memory's own lessons (another's is refused:
            it would only count toward a quorum of revokers)
Prompts: context (as remem context prints it, for the project in cwd).
Resources: remem://lessons (the lesson view) and remem://lesson/HASH (one
lesson, as remem show --json prints it), one listed per active lesson.
Lessons come framed as observations with their state and confirmations, never
as instructions. The layers config.toml names (layers) are composed in, as
for every reader.

When the client declares the sampling capability, the sleep tool asks the
client's model to write each new lesson's sentence (sampling/createMessage,
in place of --writer): the events go as quoted data with the rules of a
lesson, one request per new cluster, each within --sampling-timeout, at most
--sampling-max a sleep. Every answer is checked as any writer's is; one that
fails, or none in time, and the default writer writes the lesson.
` + "`remem status`" + ` counts the lessons each writer wrote and the answers refused.
While a node holds the home, the node's own writer writes.

Each tool call opens the memory at $REMEM_HOME and closes it after, so a node
or another command can use the home between calls; while a node holds the
home, calls go through its local API.

Examples:
  remem mcp
  REMEM_HOME=~/.remem-work remem mcp --writer "llm -m small"

An MCP client's configuration:
  { "mcpServers": { "remem": { "command": "remem", "args": ["mcp"] } } }`,
		Flags: []cli.Flag{modelFlag, writerFlag, writerURLFlag, writerModelFlag, writerTokenFlag, embedFlag, thresholdFlag,
			&cli.BoolFlag{Name: "no-sampling", Usage: "never ask the client's model to write lessons", EnvVars: []string{"REMEM_NO_SAMPLING"}},
			&cli.DurationFlag{Name: "sampling-timeout", Value: consolidate.DefaultSamplingTimeout, Usage: "how long one sampling request may take", EnvVars: []string{"REMEM_SAMPLING_TIMEOUT"}},
			&cli.IntFlag{Name: "sampling-max", Value: consolidate.DefaultSamplingMax, Usage: "sampling requests one sleep sends at most (the rest use the default writer)", EnvVars: []string{"REMEM_SAMPLING_MAX"}},
		},
		Action: func(c *cli.Context) error {
			log := newLogger(c, slog.LevelInfo)
			// Open once now, so a broken home is named at start, not at the
			// first tool call.
			svc, err := openService(c)
			if err != nil {
				return err
			}
			via := "the memory opened per call"
			if _, ok := svc.(*node.Client); ok {
				via = "the running node's local API"
			}
			log.Info("remem mcp: serving over stdio", "origin", svc.Origin(), "home", home(c), "via", via)
			if err := svc.Close(); err != nil {
				return fmt.Errorf("closing the memory opened at start: %w", err)
			}
			open := func(ctx context.Context) (node.Service, error) { return openServiceWithin(c, ctx, mcpLockWait) }
			err = remcp.Run(c.Context, remcp.NewServerWith(open, mcpVersion(), remcp.Options{
				NoSampling: c.Bool("no-sampling"), SamplingTimeout: c.Duration("sampling-timeout"), SamplingMax: c.Int("sampling-max")}), os.Stdin, os.Stdout)
			log.Info("remem mcp: the client closed the connection")
			return err
		},
	}
}

// mcpLockWait is how long the MCP server waits for a home another short
// command holds (no node to ask instead): an agent's tool call may take a
// little longer than a person's command.
const mcpLockWait = 10 * time.Second

// mcpVersion is the build's version (module version, else VCS revision),
// the one `remem version` prints.
func mcpVersion() string { return version.String() }
