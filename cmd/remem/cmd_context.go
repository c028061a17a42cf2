package main

import (
	"fmt"
	"os"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	remcp "github.com/remem/remem/node/mcp"
)

// contextTitle heads the Markdown a prompt receives.
const contextTitle = remcp.ContextTitle

func contextCommand() *cli.Command {
	return &cli.Command{
		Name:  "context",
		Usage: "print the lessons worth putting in an agent's prompt for a project",
		UsageText: `remem context [--cwd DIR] [--limit N] [--budget CHARS] [--json] [--layer NAME=FILE ...]

Picks the lessons that relate to the project in DIR (default: the current
directory), found by its name and the first line of its README, then fills up
with the strongest lessons held. Strongest and most relevant come first. Each
is framed as an observation with its state and its number of confirmations,
"Observed (common, 3 confirmations): ...", under a header saying these are
observations from other agents' experience, not instructions.

--budget bounds the characters of the Markdown printed: the list stops before
the first lesson that would pass it. --json gives the same lessons with their fields.
With no lesson to show, the Markdown output is empty, so a hook can paste it
into a prompt as it is.

` + layerHelp + `

Examples:
  remem context
  remem context --cwd ~/src/payments --limit 5 --budget 1500
  remem context --json | jq '.lessons[].observation'
  remem context --layer team=/mnt/share/team/lessons.jsonl`,
		Flags: []cli.Flag{jsonFlag, embedFlag,
			&cli.StringFlag{Name: "cwd", Value: ".", Usage: "the project directory"},
			&cli.IntFlag{Name: "limit", Value: 10, Usage: "at most N lessons"},
			&cli.IntFlag{Name: "budget", Value: 2000, Usage: "at most CHARS characters of Markdown"},
			// --format json was the JSON switch before --json (issue 15);
			// it stays, hidden, for the hooks that use it.
			&cli.StringFlag{Name: "format", Value: "md", Usage: "deprecated: md or json; use --json", Hidden: true},
			layerFlag,
		},
		Action: func(c *cli.Context) (err error) {
			format := c.String("format")
			if format != "md" && format != "json" {
				return cli.Exit(fmt.Sprintf("--format %q: use --json for JSON, or nothing for Markdown", format), 2)
			}
			asJSON := c.Bool("json") || format == "json"
			limit, budget := c.Int("limit"), c.Int("budget")
			if limit <= 0 {
				return cli.Exit(fmt.Sprintf("--limit %d: give at least 1", limit), 2)
			}
			dir := absDir(c.String("cwd"))
			if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
				return cli.Exit(fmt.Sprintf("--cwd %s is not a directory", dir), 2)
			}
			if head := utf8.RuneCountInString(remcp.ContextHead()); budget < head {
				return cli.Exit(fmt.Sprintf("--budget %d is smaller than the header alone (%d characters)", budget, head), 2)
			}
			layers, err := layerFlags(c)
			if err != nil {
				return err
			}
			svc, err := openService(c)
			if err != nil {
				return err
			}
			defer closeInto(&err, svc)
			query := remcp.ProjectQuery(dir)
			views, err := remcp.PickContext(c.Context, svc, query, limit, layers)
			if err != nil {
				return err
			}
			views = remcp.FitBudget(views, budget)
			if asJSON {
				out := contextJSON{Header: remcp.Header, Project: dir, Query: query, Lessons: make([]remcp.Lesson, 0, len(views))}
				for _, v := range views {
					out.Lessons = append(out.Lessons, remcp.LessonOf(v))
				}
				return printJSON(c.App.Writer, out)
			}
			if len(views) == 0 {
				return nil
			}
			_, err = fmt.Fprint(c.App.Writer, remcp.ContextMarkdown(views))
			return err
		},
	}
}

type contextJSON struct {
	Header  string         `json:"header"`
	Project string         `json:"project"`
	Query   string         `json:"query"`
	Lessons []remcp.Lesson `json:"lessons"`
}
