package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/remem/remem/internal/display"
	"github.com/remem/remem/node"
	"github.com/remem/remem/protocol"
)

func lessonsCommand() *cli.Command {
	return &cli.Command{
		Name:  "lessons",
		Usage: "list the lessons held, with state, strength, origins and confirmers",
		UsageText: `remem lessons [--json] [--state STATE | --all] [--limit N] [--layer NAME=FILE ...]

STATE is candidate, common, fading, removed or revoked; without it the active
view is shown (no removed or revoked lessons), with --all every lesson.
--state and --all are not given together. --limit shows the first N lessons
(default 50; 0: every one; --all alone shows every one): vouched lessons (own,
and those an admitted origin published or confirmed) first, then the
strongest. ` + layerHelp + `

Examples:
  remem lessons
  remem lessons --state common --json
  remem lessons --layer team=/mnt/share/team/lessons.jsonl
  remem lessons rewrite 3f9a1c0d "npm ci fails with EINTEGRITY when the lockfile came from another npm major version."`,
		Subcommands: []*cli.Command{rewriteCommand()},
		Flags: []cli.Flag{jsonFlag,
			&cli.StringFlag{Name: "state", Usage: "only lessons in this state"},
			&cli.BoolFlag{Name: "all", Usage: "every lesson, removed and revoked ones included"},
			&cli.IntFlag{Name: "limit", Value: defaultLessonsLimit, Usage: "at most N lessons (0: every one)"},
			layerFlag},
		Action: func(c *cli.Context) error {
			f, err := lessonFilter(c)
			if err != nil {
				return err
			}
			held, shown := 0, 0 // lessons held in every state, counted when the view is empty; lessons shown
			// With as many lessons as the limit there may be more: stderr
			// says so, also beside --json.
			defer func() {
				if f.Limit > 0 && shown == f.Limit {
					fmt.Fprintf(c.App.ErrWriter, "the first %d lessons; --limit 0 lists every one\n", f.Limit)
				}
			}()
			return withService(c, func(svc node.Service) ([]node.LessonView, error) {
				views, err := svc.Lessons(c.Context, f)
				shown = len(views)
				if views == nil {
					views = []node.LessonView{}
				}
				if err == nil && len(views) == 0 && !f.All {
					all, err := svc.Lessons(c.Context, node.Filter{All: true})
					if err != nil {
						return views, err
					}
					held = len(all)
				}
				return views, err
			}, func(views []node.LessonView) error {
				if len(views) == 0 && held > 0 {
					what := "no active lessons (the " + fmt.Sprint(held) + " held are removed or revoked)"
					if f.State != "" {
						what = fmt.Sprintf("no lessons are %s (%d held in other states)", f.State, held)
					}
					fmt.Fprintln(c.App.Writer, what+"; `remem lessons --all` lists them")
					return nil
				}
				return printLessons(c, views)
			})
		},
	}
}

// defaultLessonsLimit is how many lessons `remem lessons` shows without
// --limit: keys are free, and a memory may hold any number of strangers'
// candidates, which the list reads only to fill what is left.
const defaultLessonsLimit = 50

func printLessons(c *cli.Context, views []node.LessonView) error {
	if len(views) == 0 {
		fmt.Fprintln(c.App.Writer, "no lessons yet: agents report events with `remem remember` or the inbox, and `remem sleep` turns them into lessons")
		return nil
	}
	w := table(c.App.Writer)
	fmt.Fprintln(w, "HASH\tSTATE\tSTRENGTH\tWHY\tKIND\tORIGINS\tCONFIRMERS\tSUPPORT\tTEXT")
	drafts := 0
	for _, v := range views {
		text := short(v.Text, 70)
		if v.Draft != "" {
			drafts++
			text = "[draft: " + v.Draft + "] " + text
		}
		fmt.Fprintf(w, "%s\t%s\t%.2f\t%s\t%s\t%d\t%d\t%s\t%s\n", v.Hash, v.State, v.Strength, orNone(v.StrengthWhy()), v.Kind, len(v.Origins), len(v.Confirmers), v.Support, text)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if drafts > 0 {
		fmt.Fprintf(c.App.ErrWriter, "%d drafts: kept here, never shared until written as a sentence (`remem lessons rewrite HASH TEXT`)\n", drafts)
	}
	return nil
}

// lessonFilter reads the flags of `remem lessons`.
func lessonFilter(c *cli.Context) (node.Filter, error) {
	f := node.Filter{All: c.Bool("all"), Limit: c.Int("limit")}
	if f.Limit < 0 {
		return f, cli.Exit(fmt.Sprintf("--limit %d: give 0 (every lesson) or more", f.Limit), 2)
	}
	if f.All && !c.IsSet("limit") {
		f.Limit = 0 // --all lists every lesson
	}
	if s := c.String("state"); s != "" {
		ok := false
		for _, st := range protocol.States {
			ok = ok || string(st) == s
		}
		if !ok {
			return f, cli.Exit(fmt.Sprintf("--state %q is not a state: use candidate, common, fading, removed or revoked", s), 2)
		}
		f.State = protocol.State(s)
		if f.All {
			return f, cli.Exit(fmt.Sprintf("--state %s and --all: give one; --state %s alone lists every lesson in that state, removed and revoked ones too", s, s), 2)
		}
	}
	var err error
	f.Layers, err = layerFlags(c)
	return f, err
}

// layerFlag is --layer of the commands that read lessons.
var layerFlag = &cli.StringSliceFlag{Name: "layer", Usage: "NAME=FILE: a lessons.jsonl composed as a layer (repeatable)"}

// layerHelp says what --layer does, for the help of each reader.
const layerHelp = `--layer NAME=FILE (repeatable) composes a lessons.jsonl (a regular file of at
most 1 MiB) as a layer, above those config.toml's layers names: for a lesson
in several layers the strongest instance is shown with the layers it is in,
and its state, origins and confirmers always come from the records held (a
layer brings back no revoked lesson). The command reads the file itself and
composes it, also over what a running node answers; the node is never sent
a layer.`

// layerFlags reads the files --layer names: the command's own layers.
func layerFlags(c *cli.Context) ([]node.Layer, error) {
	var out []node.Layer
	for _, spec := range c.StringSlice("layer") {
		lf, err := node.ParseLayerFile(spec)
		if err != nil {
			return nil, cli.Exit("--layer: "+err.Error(), 2)
		}
		layer, err := node.ReadLayer(lf.Name, lf.Path)
		if err != nil {
			return nil, err
		}
		out = append(out, layer)
	}
	return out, nil
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
	fmt.Fprintf(w, "%s  %s\n", p.Hash, display.Text(p.Text))
	fmt.Fprintf(w, "kind %s, strength %.2f, seen %d\n", p.Kind, p.Strength, p.Seen)
	fmt.Fprintf(w, "strength %.2f, %s\n", p.Strength, orNone(display.Text(p.StrengthReason)))
	fmt.Fprintf(w, "state %s: %s\n", p.State, display.Text(p.StateReason))
	if p.Draft != "" {
		fmt.Fprintf(w, "draft: %s; kept here, never shared until `remem lessons rewrite %s TEXT` writes it as a sentence\n", display.Text(p.Draft), p.Hash)
	}
	fmt.Fprintf(w, "author %s; origins %s\n", orNone(p.Author), list(p.Origins))
	fmt.Fprintf(w, "confirmers %s\n", list(p.Confirmers))
	fmt.Fprintf(w, "%s\n", p.Support)
	for _, a := range p.Admission {
		fmt.Fprintf(w, "  verifier %s: %s\n", a.Origin, node.AdmissionText(a.Admitted, a.Why))
	}
	fmt.Fprintf(w, "layers %s\n", list(p.Layers))
	if len(p.Revokers) > 0 {
		fmt.Fprintf(w, "revoked by %s\n", list(p.Revokers))
	}
	fmt.Fprintln(w, "records:")
	t := table(w)
	fmt.Fprintln(t, "  TYPE\tORIGIN\tSIGNED\tARRIVED\tSCOPES")
	for _, r := range p.Records {
		fmt.Fprintf(t, "  %s\t%s\t%s\t%s\t%s\n", r.Type, r.Origin, protocol.FormatTime(r.Time), protocol.FormatTime(r.Arrived), display.Text(strings.Join(r.Scopes, ",")))
	}
	if err := t.Flush(); err != nil {
		return err
	}
	for _, r := range p.Records {
		if r.Reason != "" {
			fmt.Fprintf(w, "%s by %s, reason: %s\n", r.Type, r.Origin, display.Quote(r.Reason))
		}
		for _, name := range slices.Sorted(maps.Keys(r.Unknown)) {
			fmt.Fprintf(w, "%s by %s carries an unknown member %s: %s (never shown to agents)\n", r.Type, r.Origin, display.Quote(name), display.Quote(r.Unknown[name]))
		}
	}
	return nil
}

// list joins names for a line, each escaped: scopes and layers may be a
// peer's or a file's words.
func list(ss []string) string {
	if len(ss) == 0 {
		return "none"
	}
	return display.Text(strings.Join(ss, ", "))
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func rewriteCommand() *cli.Command {
	return &cli.Command{
		Name:  "rewrite",
		Usage: "write a draft lesson as a sentence of your own, so it may be shared",
		UsageText: `remem lessons rewrite [--json] HASH TEXT

A draft is a lesson whose sentence carries tool output instead of saying what
happened (log or table lines, stack frames, a placeholder where raw data was,
a cut-off end; SPEC §3): it is kept and used here, never signed. TEXT takes
its place when it passes every check: one sentence that observes what
happened and why, no instruction, no names, hosts, paths or secrets. The
draft's events, seen and strength go to the new lesson, which the next sleep
signs where its project is opted in. HASH is a unique prefix of 8 or more.

Examples:
  remem lessons --all                 # drafts are marked with their reason
  remem lessons rewrite 3f9a1c0d "terraform plan fails with 'Error acquiring the state lock' while another run holds the lock."`,
		Flags: []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			if c.NArg() < 2 {
				return cli.Exit("rewrite needs the draft's HASH and the new TEXT; see `remem lessons rewrite --help`", 2)
			}
			text := strings.Join(c.Args().Slice()[1:], " ")
			return withService(c, func(svc node.Service) (node.Rewritten, error) {
				out, err := svc.RewriteDraft(c.Context, c.Args().First(), text)
				if err != nil {
					return out, fmt.Errorf("not rewritten: %w", err)
				}
				return out, nil
			}, func(out node.Rewritten) error {
				how := "now lesson"
				if out.Joined {
					how = "joined the lesson held with that text,"
				}
				_, err := fmt.Fprintf(c.App.Writer, "draft %s %s %s; the next sleep signs it where its project is opted in\n", out.Draft, how, out.Hash)
				return err
			})
		},
	}
}
