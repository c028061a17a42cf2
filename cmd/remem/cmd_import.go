package main

import (
	"fmt"
	"sort"

	"github.com/urfave/cli/v2"

	"github.com/remem/remem/internal/display"
	"github.com/remem/remem/node"
	"github.com/remem/remem/protocol"
)

func importCommand() *cli.Command {
	return &cli.Command{
		Name:  "import",
		Usage: "verify record lines and merge them into the memory",
		UsageText: `remem import [--json] [--scope SCOPE] [FILE|-]

Bad lines are named with their line number and reason; the good lines of the
same file are still taken. The scope "local" holds only this memory's own
records (to restore a backup of its export); a record of another origin is
refused there, since it would be exported under this memory's name.

Examples:
  remem import alice.jsonl
  ssh build-box remem export | remem import -
  remem import --scope folder:/mnt/team team.jsonl`,
		Flags: []cli.Flag{jsonFlag,
			&cli.StringFlag{Name: "scope", Value: "import", Usage: "the scope the records arrive by (\"local\": only this memory's own records, e.g. a backup)"}},
		Action: func(c *cli.Context) error {
			name, data, err := readInput(c)
			if err != nil {
				return err
			}
			return withService(c, func(svc node.Service) (node.ReceiveReport, error) {
				return svc.Import(c.Context, c.String("scope"), data)
			}, func(rep node.ReceiveReport) error { return printImport(c, name, rep) })
		},
	}
}

// printImport names every refused line and sums up by reason.
func printImport(c *cli.Context, name string, rep node.ReceiveReport) error {
	for _, r := range rep.Refused {
		fmt.Fprintf(c.App.Writer, "%s:%d: refused: %s\n", display.Text(name), r.Line, display.Text(r.Detail))
	}
	fmt.Fprintf(c.App.Writer, "accepted %d, duplicate %d, skipped %d, refused %d", rep.Accepted, rep.Duplicate, rep.Skipped, len(rep.Refused))
	reasons := make([]string, 0, len(rep.ByReason))
	for r := range rep.ByReason {
		reasons = append(reasons, string(r))
	}
	sort.Strings(reasons)
	for i, r := range reasons {
		sep := ", "
		if i == 0 {
			sep = " ("
		}
		fmt.Fprintf(c.App.Writer, "%s%s: %d", sep, r, rep.ByReason[protocol.Reason(r)])
	}
	if len(reasons) > 0 {
		fmt.Fprint(c.App.Writer, ")")
	}
	fmt.Fprintln(c.App.Writer)
	if rep.OverCap > 0 {
		fmt.Fprintf(c.App.Writer, "left out %d records of origins that hold 1,000 in this scope already (the per-origin cap)\n", rep.OverCap)
	}
	if rep.OverBudget > 0 {
		fmt.Fprintf(c.App.Writer, "left out %d records of origins this memory does not admit: their budget is spent (remem status shows it; `remem trust add` admits an origin, --stranger-records and --stranger-bytes raise the budget)\n", rep.OverBudget)
	}
	return nil
}
