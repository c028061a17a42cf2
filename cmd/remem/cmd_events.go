package main

import (
	"fmt"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/remem/remem/internal/display"
	"github.com/remem/remem/node"
	"github.com/remem/remem/protocol"
)

func ingestCommand() *cli.Command {
	return &cli.Command{
		Name:  "ingest",
		Usage: "take events (JSONL) from a file or stdin",
		UsageText: `remem ingest [--json] FILE|-

Each line is an event: {"kind":"error","title":"go test ./...","happened":"..."}.
FILE is read like import's and verify's: - (or nothing) reads stdin. Bad
lines are named FILE:LINE with their reason, also through a running node, and
kept in $REMEM_HOME/rejects.jsonl (rotated to rejects.jsonl.1 past 1 MiB; the
lines of the older copy it replaces are counted in rejects.dropped and said
here and by ` + "`remem status`" + `); the rest are taken. Duplicates (same agent,
session, kind and title) are counted and dropped.

Examples:
  remem ingest session.jsonl
  my-agent --report | remem ingest -
  remem ingest --json session.jsonl | jq .rejected`,
		// --events FILE was the only way before FILE became the argument
		// (issue 15); it stays, hidden, for the scripts that use it.
		Flags: []cli.Flag{jsonFlag, &cli.StringFlag{Name: "events", Usage: "deprecated: give FILE as the argument", Hidden: true}},
		Action: func(c *cli.Context) error {
			name, data, err := ingestInput(c)
			if err != nil {
				return err
			}
			bar := newProgressBar(c.App.ErrWriter, "") // on a terminal only
			return withService(c, func(svc node.Service) (node.IngestReport, error) {
				defer bar.finish()
				return svc.Ingest(bar.context(c.Context), name, data)
			}, func(rep node.IngestReport) error { return printIngest(c, rep) })
		},
	}
}

// ingestInput reads the events of `remem ingest`: FILE (the argument), or
// the deprecated --events FILE, or stdin for - or nothing.
func ingestInput(c *cli.Context) (string, []byte, error) {
	src, n := c.String("events"), c.NArg()
	if src != "" {
		n++
	}
	if n > 1 {
		return "", nil, cli.Exit(fmt.Sprintf("ingest takes one FILE (or - for stdin), got %d; see `remem ingest --help`", n), 2)
	}
	if src == "" || src == "-" {
		return readInput(c)
	}
	data, err := os.ReadFile(src)
	if err != nil {
		return src, nil, fmt.Errorf("reading events: %w", err) // the error names the file
	}
	return src, data, nil
}

func printIngest(c *cli.Context, rep node.IngestReport) error {
	for _, r := range rep.Rejected {
		fmt.Fprintln(c.App.ErrWriter, display.Text(r.String()))
	}
	fmt.Fprintf(c.App.Writer, "taken %d, duplicates %d, rejected %d\n", rep.Taken, rep.Duplicates, len(rep.Rejected))
	for _, n := range rep.Notes {
		fmt.Fprintln(c.App.Writer, display.Text("note: "+n.String()))
	}
	if rep.Rejects != nil {
		if rep.RejectsDropped > 0 {
			fmt.Fprintf(c.App.Writer, "%d older rejected lines dropped now past the bound of the rejects files\n", rep.RejectsDropped)
		}
		fmt.Fprintln(c.App.Writer, display.Text(rep.Rejects.String()))
	}
	return nil
}

func rememberCommand() *cli.Command {
	return &cli.Command{
		Name:  "remember",
		Usage: "report one event (a surprise) from the command line",
		UsageText: `remem remember --kind KIND [--title T] [--expected E] [--happened H] [--said S]
               [--agent-did A] [--text T] [--agent NAME] [--session ID] [--cwd DIR]
               [--at TIME] [--lesson SENTENCE] [--matches HASH] [--json]

KIND is correction (needs --said), error (needs --title or --happened),
environment or surprise (need --happened or --text) or note (needs --text).
--at is when it happened (RFC 3339 with Z or an offset, at most 10 minutes
ahead of the clock); without it, the time the memory takes the event.
--lesson proposes the lesson's sentence (one observation of what happened
and why; taken when it passes every check, else the memory writes its own);
--matches names a lesson held (remem lessons shows the hashes) that tells
this same surprise: the event joins or confirms it.

Examples:
  remem remember --kind error --title "go test ./..." --happened "undefined: foo.Bar" --cwd .
  remem remember --kind correction --said "we use tabs here" --agent-did "Shall I indent with spaces?"
  remem remember --kind note --text "the staging database is wiped nightly" --at 2026-05-01T09:30:00+02:00
  remem remember --kind error --title "npm ci" --happened "EINTEGRITY sha512 mismatch" \
    --lesson "npm ci fails with EINTEGRITY when package-lock.json was written by another npm major version."
  remem remember --kind error --title "go test ./..." --happened "undefined: mocks.Store" --matches 3f9a1c0d`,
		Flags: []cli.Flag{jsonFlag,
			&cli.StringFlag{Name: "kind", Required: true, Usage: "correction, error, environment, surprise or note"},
			&cli.StringFlag{Name: "title", Usage: "an error: the call that failed"},
			&cli.StringFlag{Name: "expected", Usage: "what the agent expected"},
			&cli.StringFlag{Name: "happened", Usage: "what it met instead"},
			&cli.StringFlag{Name: "said", Usage: "a correction: the person's words, verbatim"},
			&cli.StringFlag{Name: "agent-did", Usage: "a correction: what the agent had just said or done (an offer to act is recognised)"},
			&cli.StringFlag{Name: "text", Usage: "a note"},
			&cli.StringFlag{Name: "agent", Usage: "who reports it"},
			&cli.StringFlag{Name: "session", Usage: "which conversation"},
			&cli.StringFlag{Name: "cwd", Usage: "which project (a directory)"},
			&cli.StringFlag{Name: "at", Usage: "when it happened: RFC 3339, e.g. 2026-05-01T09:30:00Z (default: now)"},
			&cli.StringFlag{Name: "lesson", Usage: "the lesson in your words: one sentence observing what happened and why"},
			&cli.StringFlag{Name: "matches", Usage: "HASH (or a prefix of 8 or more) of a lesson held that tells this same surprise"},
		},
		Action: func(c *cli.Context) error {
			ev := protocol.Event{Kind: c.String("kind"), Title: c.String("title"), Expected: c.String("expected"),
				Happened: c.String("happened"), Said: c.String("said"), AgentDid: c.String("agent-did"), Text: c.String("text"),
				Agent: c.String("agent"), Session: c.String("session"), Cwd: absDir(c.String("cwd")), At: c.String("at"),
				Lesson: c.String("lesson"), Matches: c.String("matches")}
			if err := checkAt(ev.At); err != nil {
				return cli.Exit(err.Error(), 2)
			}
			if err := ev.Validate(); err != nil {
				return cli.Exit(err.Error(), 2)
			}
			return withService(c, func(svc node.Service) (node.IngestReport, error) {
				rep, err := svc.Remember(c.Context, []protocol.Event{ev})
				if err == nil && len(rep.Rejected) > 0 {
					// Refused by the memory (a running node's clock may differ).
					err = fmt.Errorf("the event was not stored: %s", rep.Rejected[0].Reason)
				}
				return rep, err
			}, func(rep node.IngestReport) error { return printIngest(c, rep) })
		},
	}
}

// checkAt refuses a --at that is not RFC 3339 or is more than
// protocol.MaxClockSkew ahead of this command's clock ($REMEM_NOW, else the
// system's), naming the flag. The memory checks again with its own clock.
func checkAt(at string) error {
	if at == "" {
		return nil
	}
	t, err := protocol.ParseTime(at)
	if err != nil {
		return fmt.Errorf("--at: %v", err)
	}
	now, ok, _ := fixedNow()
	if !ok {
		now = time.Now()
	}
	if t.After(now.Add(protocol.MaxClockSkew)) {
		return fmt.Errorf("--at %s is more than %v ahead of this clock (%s): give the time the event happened, or leave --at out to use now",
			protocol.FormatTime(t), protocol.MaxClockSkew, protocol.FormatTime(now))
	}
	return nil
}

func sleepCommand() *cli.Command {
	return &cli.Command{
		Name:  "sleep",
		Usage: "turn events into lessons now: drain the inbox, verify, consolidate, sign",
		UsageText: `remem sleep [--json] [--model M | --writer CMD | --writer-url URL [--writer-model M] [--writer-token-file F]]
            [--embed-url URL] [--threshold T]

The model, writer, embeddings and threshold of config.toml (model, writer,
writer_url, writer_model, writer_token_file, embed_url, threshold) hold
here as for the node; a flag overrides its key. With a model (claude,
codex, gemini, ollama:MODEL, llm:MODEL, or endpoint for writer_url's chat
endpoint) the sleep asks it for new lessons' sentences and drafts' new
ones (at most 10) and about pairs in doubt (at most 20), each request
within 90s and all within 5 minutes; the default writer and the plain
similarity stand for whatever it does not answer well.

Examples:
  remem sleep
  remem sleep --model claude
  remem sleep --writer "remem writer-prompt | ollama run llama3.2" --json
  REMEM_WRITER_TOKEN=sk-... remem sleep --writer-url https://api.openai.com/v1 --writer-model gpt-4o-mini`,
		Flags: []cli.Flag{jsonFlag, modelFlag, writerFlag, writerURLFlag, writerModelFlag, writerTokenFlag, embedFlag, thresholdFlag},
		Action: func(c *cli.Context) error {
			// A bar on a terminal only: piped, stderr stays quiet.
			bar := newProgressBar(c.App.ErrWriter, "")
			return withService(c, func(svc node.Service) (node.SleepReport, error) {
				defer bar.finish() // ends the bar's line before the report
				return svc.Sleep(bar.context(c.Context))
			}, func(rep node.SleepReport) error {
				fmt.Fprintln(c.App.Writer, rep)
				for _, d := range rep.Dropped {
					fmt.Fprintln(c.App.ErrWriter, "dropped:", display.Text(fmt.Sprint(d)))
				}
				return nil
			})
		},
	}
}
