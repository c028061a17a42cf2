package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/remem/remem/node"
	"github.com/remem/remem/node/agents"
	remcp "github.com/remem/remem/node/mcp"
	"github.com/remem/remem/protocol"
)

// A hook never holds up the agent: it gives up on the node after
// hookNodeWait and on everything after hookDeadline, exiting 0 either way.
const (
	hookNodeWait = 800 * time.Millisecond
	// hookInboxWait is how long a hook waits for the inbox's lock before
	// it writes its event into a file of its own beside the inbox.
	hookInboxWait = time.Second
	hookDeadline  = 3 * time.Second
	// Lessons a session starts with: as `remem context` prints them.
	hookContextLimit  = 10
	hookContextBudget = 2000
)

func hookCommand() *cli.Command {
	return &cli.Command{
		Name:      "hook",
		Usage:     "the command an agent tool's hooks run: reads the hook's payload on stdin",
		ArgsUsage: "TOOL",
		UsageText: `remem hook TOOL < payload.json

TOOL is ` + agents.Names() + `. remem setup TOOL registers it; a person
rarely runs it by hand.

On a failed tool call it reports an error event (the call as its title, the
end of the error as what happened); on a session start it prints the
project's lessons in the form the tool adds to its model's context; on the
person's prompt, when it reads as a correction of what the agent just did, it
reports a correction event with the prompt verbatim. Events stay on this
machine, as every event does: only lessons distilled by sleep leave it.

Events go to the running node's API, or to the inbox ($REMEM_HOME/inbox.jsonl)
when no node runs; the next sleep takes them. Whatever happens (no memory, no
node, a locked home, a bad payload) it exits 0 and prints nothing the tool
could misread; what it did is one line in $REMEM_HOME/hook.log, which
remem doctor reads.

Examples:
  printf '{"hook_event_name":"SessionStart","cwd":"%s","session_id":"s1"}' "$PWD" | remem hook claude-code
  tail -n 5 ~/.remem/hook.log`,
		Action: runHook,
	}
}

func runHook(c *cli.Context) error {
	start := time.Now()
	h := home(c)
	tool, err := agents.Find(c.Args().First())
	if err != nil {
		// A hook registered for a tool this version does not know: say
		// so to a person at a terminal, and only in the log otherwise.
		agents.LogHookRun(h, agents.HookRun{At: start, Tool: c.Args().First(), Why: "unknown tool", Error: err.Error()})
		if fi, serr := os.Stdin.Stat(); serr == nil && fi.Mode()&os.ModeCharDevice != 0 {
			return cli.Exit(err.Error(), 2)
		}
		return nil
	}
	// The work runs on its own copy of the run's record: past the
	// deadline the hook logs what it knows and exits, while the work may
	// still hold a lock.
	type result struct {
		printed []byte
		run     agents.HookRun
	}
	done := make(chan result, 1)
	go func() {
		r := result{run: agents.HookRun{At: start.UTC(), Tool: tool.Name}}
		defer func() {
			if p := recover(); p != nil {
				r.printed, r.run.Error = nil, fmt.Sprint("panic: ", p)
			}
			done <- r
		}()
		r.printed = handleHook(c, h, tool, &r.run)
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(hookDeadline):
		r.run = agents.HookRun{At: start.UTC(), Tool: tool.Name, Error: fmt.Sprintf("gave up after %s", hookDeadline)}
	}
	if len(r.printed) > 0 {
		_, _ = c.App.Writer.Write(r.printed)
	}
	r.run.Ms = float64(time.Since(start).Microseconds()) / 1000
	agents.LogHookRun(h, r.run)
	return nil
}

// handleHook does what the payload asks and returns what to print.
func handleHook(c *cli.Context, h string, tool *agents.Tool, run *agents.HookRun) []byte {
	data, err := io.ReadAll(io.LimitReader(os.Stdin, agents.MaxPayloadBytes+1))
	if err != nil {
		run.Error = "reading the payload: " + err.Error()
		return nil
	}
	if len(data) > agents.MaxPayloadBytes {
		_, _ = io.Copy(io.Discard, os.Stdin) // the tool must not block on a full pipe
		run.Why = fmt.Sprintf("payload over %d bytes, not read", agents.MaxPayloadBytes)
		return nil
	}
	a, err := agents.ReadHook(tool, data, time.Now())
	run.Event, run.Why = a.HookEvent, a.Why
	if err != nil {
		run.Error = err.Error()
		return nil
	}
	if _, err := os.Stat(h); err != nil {
		run.Error = "no memory at " + h + ": run remem init"
		return nil
	}
	switch {
	case a.Event != nil:
		if a.Event.Kind == protocol.EventCorrection {
			if userHome, err := os.UserHomeDir(); err == nil {
				a.Event.AgentDid = agents.LastAgentTurn(tool, a.Transcript, userHome)
			}
		}
		run.Sent, err = reportHookEvent(h, *a.Event)
		if err != nil {
			run.Error = err.Error()
		}
	case a.ContextFor != "":
		md, n, err := hookContext(c, h, a.ContextFor)
		if err != nil {
			run.Error = err.Error()
			return nil
		}
		run.Lessons = n
		return agents.ContextOutput(a.HookEvent, md)
	}
	return nil
}

// reportHookEvent sends ev to the node that holds h, or to h's inbox.
func reportHookEvent(h string, ev protocol.Event) (string, error) {
	var apiErr error
	if client, err := node.ReachNode(h, hookNodeWait); err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), hookNodeWait)
		defer cancel()
		rep, err := client.Remember(ctx, []protocol.Event{ev})
		switch {
		case err == nil && rep.Taken+rep.Duplicates > 0:
			return "api", nil
		case err == nil:
			return "", fmt.Errorf("the node refused the event: %v", rep.Rejected)
		}
		apiErr = err
	}
	spilled, err := node.AppendInboxWithin(h, hookInboxWait, ev)
	switch {
	case err != nil:
		return "", errors.Join(apiErr, err)
	case spilled:
		return "inbox-spill", nil // the inbox's lock was held: a file of its own, which the next drain takes
	}
	return "inbox", nil
}

// hookContext is the Markdown of the lessons for the project in dir, from
// the running node or the memory itself, and how many lessons it holds.
func hookContext(c *cli.Context, h, dir string) (string, int, error) {
	ctx, cancel := context.WithTimeout(c.Context, hookDeadline-500*time.Millisecond)
	defer cancel()
	var svc node.Service
	if client, err := node.ReachNode(h, hookNodeWait); err == nil {
		svc = client
	} else {
		cfg, err := memoryConfig(c)
		if err != nil {
			return "", 0, err
		}
		cfg.LockWait = 0
		m, err := node.Open(cfg)
		if err != nil {
			return "", 0, err
		}
		svc = node.Local{M: m}
	}
	defer func() { _ = svc.Close() }()
	views, err := remcp.PickContext(ctx, svc, remcp.ProjectQuery(dir), hookContextLimit, nil)
	if err != nil {
		return "", 0, err
	}
	views = remcp.FitBudget(views, hookContextBudget)
	if len(views) == 0 {
		return "", 0, nil
	}
	return remcp.ContextMarkdown(views), len(views), nil
}
