package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"github.com/remem/remem/node"
	remcp "github.com/remem/remem/node/mcp"
)

// contextTitle heads the Markdown a prompt receives.
const contextTitle = "## Observations from other agents (remem)"

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
			if head := utf8.RuneCountInString(contextHead()); budget < head {
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
			query := projectQuery(dir)
			views, err := pickContext(c, svc, query, limit, layers)
			if err != nil {
				return err
			}
			views = fitBudget(views, budget)
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
			_, err = fmt.Fprint(c.App.Writer, contextMarkdown(views))
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

// projectQuery describes the project for recall: the directory's name and
// the first line of its README, if any.
func projectQuery(dir string) string {
	parts := []string{strings.NewReplacer("-", " ", "_", " ", ".", " ").Replace(filepath.Base(dir))}
	for _, name := range []string{"README.md", "README", "README.txt", "README.rst", "readme.md", "Readme.md"} {
		if line := firstLine(filepath.Join(dir, name)); line != "" {
			parts = append(parts, line)
			break
		}
	}
	return strings.Join(parts, " ")
}

// firstLine is a file's first line with text, without Markdown heading
// marks, cut to 200 characters.
func firstLine(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer func() { _ = f.Close() }() // read only
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 64<<10)
	for n := 0; sc.Scan() && n < 50; n++ {
		line := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(sc.Text()), "#=-*"))
		if line == "" || strings.HasPrefix(line, "<") || strings.HasPrefix(line, "[![") {
			continue // blank lines, rules, HTML and badges say nothing of the project
		}
		return short(line, 200)
	}
	return ""
}

// pickContext takes the lessons relevant to the project first, then the
// strongest of the rest, up to limit, with the command's layers composed.
func pickContext(c *cli.Context, svc node.Service, query string, limit int, layers []node.Layer) ([]node.LessonView, error) {
	relevant, err := svc.Recall(c.Context, query, limit, layers...)
	if err != nil {
		return nil, err
	}
	out := relevant
	if len(out) >= limit {
		return out[:limit], nil
	}
	have := map[string]bool{}
	for _, v := range out {
		have[v.Hash] = true
	}
	strongest, err := svc.Lessons(c.Context, node.Filter{Layers: layers})
	if err != nil {
		return nil, err
	}
	// Strongest first; among equals, the more confirmed.
	sort.SliceStable(strongest, func(i, j int) bool {
		a, b := strongest[i], strongest[j]
		if a.Strength != b.Strength {
			return a.Strength > b.Strength
		}
		return remcp.Confirmations(a) > remcp.Confirmations(b)
	})
	for _, v := range strongest {
		if len(out) >= limit {
			break
		}
		if !have[v.Hash] {
			out = append(out, v)
		}
	}
	return out, nil
}

func contextHead() string { return contextTitle + "\n\n" + remcp.Header + "\n\n" }

func contextLine(v node.LessonView) string { return "- " + remcp.Observation(v) + "\n" }

// fitBudget keeps the lessons, in order, while their lines fit in budget
// characters after the header: it stops before the first that would pass it.
func fitBudget(views []node.LessonView, budget int) []node.LessonView {
	used := utf8.RuneCountInString(contextHead())
	var out []node.LessonView
	for _, v := range views {
		n := utf8.RuneCountInString(contextLine(v))
		if used+n > budget {
			break
		}
		used += n
		out = append(out, v)
	}
	return out
}

func contextMarkdown(views []node.LessonView) string {
	var b strings.Builder
	b.WriteString(contextHead())
	for _, v := range views {
		b.WriteString(contextLine(v))
	}
	return b.String()
}
