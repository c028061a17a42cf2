package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/remem/remem/internal/display"
	"github.com/remem/remem/node"
)

func shareCommand() *cli.Command {
	return &cli.Command{
		Name:  "share",
		Usage: "opt a project in or out of publishing its lessons",
		UsageText: `remem share --project DIR [--corrections] [--surprises] [--json]
remem share --project DIR --off
remem share --list [--json]

Nothing is published until a project opts in. Then its error lessons,
those written before the opt-in included, are signed on the next sleep;
corrections (lessons about the person) and surprises only when turned on
here, per project. A lesson whose sentence was written from events of
several projects is published only when every one of them is opted in.

Examples:
  remem share --project ~/src/api
  remem share --project ~/src/api --corrections
  remem share --project ~/src/api --off
  remem share --list`,
		Flags: []cli.Flag{jsonFlag,
			&cli.StringFlag{Name: "project", Usage: "the project directory (the cwd of its agents' events)"},
			&cli.BoolFlag{Name: "off", Usage: "opt the project out"},
			&cli.BoolFlag{Name: "corrections", Usage: "also publish correction lessons of this project"},
			&cli.BoolFlag{Name: "surprises", Usage: "also publish surprise lessons of this project"},
			&cli.BoolFlag{Name: "list", Usage: "list the shared projects"}},
		Action: func(c *cli.Context) error {
			project := c.String("project")
			if project == "" && !c.Bool("list") {
				return cli.Exit("share needs --project DIR (or --list); see `remem share --help`", 2)
			}
			return withService(c, func(svc node.Service) (node.ShareSettings, error) {
				s, err := svc.Share(c.Context, node.ShareRequest{List: c.Bool("list"), Off: c.Bool("off"),
					Set: node.ProjectShare{Project: project, Corrections: c.Bool("corrections"), Surprises: c.Bool("surprises")}})
				if s.Projects == nil {
					s.Projects = []node.ProjectShare{}
				}
				return s, err
			}, func(s node.ShareSettings) error { return printShares(c, s) })
		},
	}
}

func printShares(c *cli.Context, s node.ShareSettings) error {
	if len(s.Projects) == 0 {
		fmt.Fprintln(c.App.Writer, "no project is shared: nothing is published (`remem share --project DIR` opts one in)")
		return nil
	}
	w := table(c.App.Writer)
	fmt.Fprintln(w, "PROJECT\tERRORS\tCORRECTIONS\tSURPRISES")
	for _, p := range s.Projects {
		fmt.Fprintf(w, "%s\tyes\t%s\t%s\n", display.Text(p.Project), yes(p.Corrections), yes(p.Surprises))
	}
	return w.Flush()
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func recallCommand() *cli.Command {
	return &cli.Command{
		Name:  "recall",
		Usage: "find the lessons most relevant to a task",
		UsageText: `remem recall [--json] [--limit N] [--layer NAME=FILE ...] QUERY

Lessons are observations of what happened, with how strongly they are held;
what to do with them is the reader's decision.

` + layerHelp + `

Examples:
  remem recall "run the integration tests for the payments service"
  remem recall --limit 3 --json "upgrade go dependencies"
  remem recall --layer team=/mnt/share/team/lessons.jsonl "deploy the billing service"`,
		Flags: []cli.Flag{jsonFlag, embedFlag, &cli.IntFlag{Name: "limit", Value: 5, Usage: "at most N lessons"}, layerFlag},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return cli.Exit("recall needs a QUERY describing the task; see `remem recall --help`", 2)
			}
			layers, err := layerFlags(c)
			if err != nil {
				return err
			}
			return withService(c, func(svc node.Service) ([]node.LessonView, error) {
				views, err := svc.Recall(c.Context, joinArgs(c), c.Int("limit"), layers...)
				if views == nil {
					views = []node.LessonView{}
				}
				return views, err
			}, func(views []node.LessonView) error { return printRecall(c, views) })
		},
	}
}

func printRecall(c *cli.Context, views []node.LessonView) error {
	if len(views) == 0 {
		fmt.Fprintln(c.App.Writer, "no lesson held here relates to that task")
		return nil
	}
	for _, v := range views {
		fmt.Fprintf(c.App.Writer, "- %s (%s, strength %.2f, %s) [%s]\n", display.Text(v.Text), v.State, v.Strength, v.AgentSupport(), v.Hash)
	}
	return nil
}
