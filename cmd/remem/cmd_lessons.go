package main

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/urfave/cli/v2"

	"github.com/remem/remem/node"
	"github.com/remem/remem/protocol"
)

func lessonsCommand() *cli.Command {
	return &cli.Command{
		Name:  "lessons",
		Usage: "list the lessons held, with state, strength, origins and confirmers",
		UsageText: `remem lessons [--json] [--state STATE | --all] [--layer NAME=FILE ...]

STATE is candidate, common, fading, removed or revoked; without it the active
view is shown (no removed or revoked lessons). --layer adds a lessons.jsonl
(a regular file of at most 1 MiB) as a domain layer: for a lesson held in
several layers the strongest instance is shown with the layers it is in.
The command reads the file itself, also when a running node answers.

Examples:
  remem lessons
  remem lessons --state common --json
  remem lessons --layer team=/mnt/share/team/lessons.jsonl`,
		Flags: []cli.Flag{jsonFlag,
			&cli.StringFlag{Name: "state", Usage: "only lessons in this state"},
			&cli.BoolFlag{Name: "all", Usage: "every lesson, removed and revoked ones included"},
			&cli.StringSliceFlag{Name: "layer", Usage: "NAME=FILE: a lessons.jsonl to add as a layer"}},
		Action: func(c *cli.Context) error {
			f, err := lessonFilter(c)
			if err != nil {
				return err
			}
			return withService(c, func(svc node.Service) ([]node.LessonView, error) {
				views, err := svc.Lessons(c.Context, f)
				if views == nil {
					views = []node.LessonView{}
				}
				return views, err
			}, func(views []node.LessonView) error { return printLessons(c, views) })
		},
	}
}

func printLessons(c *cli.Context, views []node.LessonView) error {
	if len(views) == 0 {
		fmt.Fprintln(c.App.Writer, "no lessons yet: agents report events with `remem remember` or the inbox, and `remem sleep` turns them into lessons")
		return nil
	}
	w := table(c.App.Writer)
	fmt.Fprintln(w, "HASH\tSTATE\tSTRENGTH\tKIND\tORIGINS\tCONFIRMERS\tTEXT")
	for _, v := range views {
		fmt.Fprintf(w, "%s\t%s\t%.2f\t%s\t%d\t%d\t%s\n", v.Hash, v.State, v.Strength, v.Kind, len(v.Origins), len(v.Confirmers), short(v.Text, 70))
	}
	return w.Flush()
}

// lessonFilter reads the flags of `remem lessons`. The command reads the
// --layer files itself, so a running node is sent their content and never
// a path to open.
func lessonFilter(c *cli.Context) (node.Filter, error) {
	f := node.Filter{All: c.Bool("all")}
	if s := c.String("state"); s != "" {
		ok := false
		for _, st := range protocol.States {
			ok = ok || string(st) == s
		}
		if !ok {
			return f, cli.Exit(fmt.Sprintf("--state %q is not a state: use candidate, common, fading, removed or revoked", s), 2)
		}
		f.State = protocol.State(s)
	}
	for _, l := range c.StringSlice("layer") {
		name, path, ok := strings.Cut(l, "=")
		if !ok || name == "" || path == "" {
			return f, cli.Exit(fmt.Sprintf("--layer %q must be NAME=FILE, e.g. team=/mnt/share/lessons.jsonl", l), 2)
		}
		layer, err := node.ReadLayer(name, path)
		if err != nil {
			return f, err
		}
		f.Layers = append(f.Layers, layer)
	}
	return f, nil
}

func showCommand() *cli.Command {
	return &cli.Command{
		Name:  "show",
		Usage: "show one lesson: every record held, where and when it came, who confirmed it",
		UsageText: `remem show [--json] HASH

Examples:
  remem show 130494cfd9c9e6bf5c1480f5bc906350
  remem show --json 130494cfd9c9e6bf5c1480f5bc906350 | jq .confirmers`,
		Flags: []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			hash, err := oneArg(c, "lesson HASH")
			if err != nil {
				return err
			}
			return withService(c, func(svc node.Service) (node.Provenance, error) {
				return svc.Show(c.Context, hash)
			}, func(p node.Provenance) error { return printProvenance(c, p) })
		},
	}
}

func printProvenance(c *cli.Context, p node.Provenance) error {
	w := c.App.Writer
	fmt.Fprintf(w, "%s  %s\n", p.Hash, printable(p.Text))
	fmt.Fprintf(w, "kind %s, strength %.2f, seen %d\n", p.Kind, p.Strength, p.Seen)
	fmt.Fprintf(w, "state %s: %s\n", p.State, p.StateReason)
	fmt.Fprintf(w, "author %s; origins %s\n", orNone(p.Author), list(p.Origins))
	fmt.Fprintf(w, "confirmers %s\n", list(p.Confirmers))
	fmt.Fprintf(w, "layers %s\n", list(p.Layers))
	if len(p.Revokers) > 0 {
		fmt.Fprintf(w, "revoked by %s\n", list(p.Revokers))
	}
	fmt.Fprintln(w, "records:")
	t := table(w)
	fmt.Fprintln(t, "  TYPE\tORIGIN\tSIGNED\tARRIVED\tSCOPES")
	for _, r := range p.Records {
		fmt.Fprintf(t, "  %s\t%s\t%s\t%s\t%s\n", r.Type, r.Origin, protocol.FormatTime(r.Time), protocol.FormatTime(r.Arrived), strings.Join(r.Scopes, ","))
	}
	if err := t.Flush(); err != nil {
		return err
	}
	for _, r := range p.Records {
		if r.Reason != "" {
			fmt.Fprintf(w, "%s by %s, reason: %q\n", r.Type, r.Origin, r.Reason)
		}
		for _, name := range slices.Sorted(maps.Keys(r.Unknown)) {
			fmt.Fprintf(w, "%s by %s carries an unknown member %q: %q (never shown to agents)\n", r.Type, r.Origin, name, r.Unknown[name])
		}
	}
	return nil
}

// printable escapes what a terminal would act on (control and format
// characters), so a received text is shown as data.
func printable(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }) < 0 {
		return s
	}
	q := strconv.QuoteToGraphic(s)
	return q[1 : len(q)-1]
}

func list(ss []string) string {
	if len(ss) == 0 {
		return "none"
	}
	return strings.Join(ss, ", ")
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
