package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"
	"github.com/urfave/cli/v2"

	"github.com/remem/remem/node/agents"
)

// SetupStateFile and SetupBackups, in the memory's home, are what setup
// keeps: what it created in each file, and each file as it was.
const (
	setupStateFile = "setup.json"
	setupBackups   = "backups"
)

func setupCommand() *cli.Command {
	return &cli.Command{
		Name:      "setup",
		Usage:     "connect an agent tool to this memory: its MCP server, hooks and instruction file",
		ArgsUsage: "TOOL",
		UsageText: `remem setup TOOL [--project DIR | --user] [--dry-run] [--remove] [--json]

TOOL is ` + agents.Names() + `. Setup registers remem's MCP server
where the tool reads it, the hooks that report failed calls and corrections
and start each session with the project's lessons (remem hook TOOL), and a
short section in the tool's instruction file on when to call recall and
remember. It merges into the files there, never drops a key it did not write,
keeps each file as it was under $REMEM_HOME/backups, and a second run changes
nothing. --remove takes out exactly what setup added.

  claude-code  --project: .mcp.json, .claude/settings.json, CLAUDE.md
               --user: claude mcp add --scope user, ~/.claude/settings.json, ~/.claude/CLAUDE.md
  codex        .codex/config.toml, .codex/hooks.json, AGENTS.md (--user: under ~/.codex)
  gemini-cli   .gemini/settings.json, GEMINI.md (--user: under ~/.gemini)

The default is --project . (the current directory).

Examples:
  remem setup claude-code --dry-run
  remem setup claude-code
  remem setup codex --user
  remem setup gemini-cli --project ~/src/api --json
  remem setup claude-code --remove`,
		Flags: []cli.Flag{jsonFlag,
			&cli.StringFlag{Name: "project", Usage: "set up the project in DIR", DefaultText: "."},
			&cli.BoolFlag{Name: "user", Usage: "set up the tool for every project of this user"},
			&cli.BoolFlag{Name: "dry-run", Usage: "print what would change, change nothing"},
			&cli.BoolFlag{Name: "remove", Usage: "take out what setup added"},
			&cli.StringFlag{Name: "remem", Usage: "the remem executable the tool runs", DefaultText: "this one"},
		},
		Action: runSetup,
	}
}

func runSetup(c *cli.Context) error {
	if c.NArg() != 1 {
		return cli.Exit("give one tool: remem setup "+strings.ReplaceAll(agents.Names(), ", ", "|"), 2)
	}
	tool, err := agents.Find(c.Args().First())
	if err != nil {
		return cli.Exit(err.Error(), 2)
	}
	s, err := setupOf(c, tool)
	if err != nil {
		return err
	}
	remove, dry := c.Bool("remove"), c.Bool("dry-run")
	plan, err := agents.PlanSetup(s)
	if remove {
		plan, err = agents.PlanRemove(s)
	}
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	out := setupReport{Plan: plan, DryRun: dry}
	if !dry {
		s.Run = runTool
		applied, err := agents.Apply(s, plan, remove)
		out.Backups = applied.Backups
		if err != nil {
			return cli.Exit(err.Error(), 1)
		}
	}
	for _, ch := range plan.Changes {
		out.Diffs = append(out.Diffs, changeDiff(ch))
	}
	if c.Bool("json") {
		return printJSON(c.App.Writer, out)
	}
	return printSetup(c.App.Writer, out, remove)
}

type setupReport struct {
	agents.Plan
	DryRun  bool     `json:"dry_run"`
	Diffs   []string `json:"diffs"`
	Backups []string `json:"backups,omitempty"`
}

// setupOf reads the flags into what setup is asked to do.
func setupOf(c *cli.Context, tool *agents.Tool) (agents.Setup, error) {
	if c.Bool("user") && c.IsSet("project") {
		return agents.Setup{}, cli.Exit("--user and --project: give one", 2)
	}
	userHome, err := os.UserHomeDir()
	if err != nil {
		return agents.Setup{}, cli.Exit("cannot find your home directory: "+err.Error(), 1)
	}
	s := agents.Setup{Tool: tool, UserHome: userHome}
	if !c.Bool("user") {
		dir := c.String("project")
		if dir == "" {
			dir = "."
		}
		s.Project = absDir(dir)
		if fi, err := os.Stat(s.Project); err != nil || !fi.IsDir() {
			return s, cli.Exit(fmt.Sprintf("--project %s is not a directory", s.Project), 2)
		}
	}
	h := home(c)
	if _, err := os.Stat(filepath.Join(h, "key")); err != nil && !c.Bool("remove") {
		return s, cli.Exit(fmt.Sprintf("no memory at %s yet: run remem init first, so the hooks have somewhere to report", h), 1)
	}
	s.Remem, err = rememArgv(c, h, userHome)
	if err != nil {
		return s, err
	}
	s.StateFile = filepath.Join(h, setupStateFile)
	s.BackupDir = filepath.Join(h, setupBackups)
	return s, nil
}

// rememArgv is how the tool runs this remem: its absolute path, and the
// home when it is not the default one (a tool started from a desktop does
// not see the shell's REMEM_HOME).
func rememArgv(c *cli.Context, h, userHome string) ([]string, error) {
	exe := c.String("remem")
	if exe == "" {
		var err error
		if exe, err = thisRemem(); err != nil {
			return nil, err
		}
	}
	exe = absDir(exe)
	argv := []string{exe}
	if h != filepath.Join(userHome, ".remem") {
		argv = append(argv, "--home", h)
	}
	return argv, nil
}

// thisRemem is the path the tools should run: the remem on PATH when it
// is this executable (through a link, as package managers install it, so
// an upgrade keeps the path), else this executable itself.
func thisRemem() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", cli.Exit("cannot tell where remem is: give --remem PATH", 1)
	}
	if onPath, err := exec.LookPath("remem"); err == nil {
		a, errA := os.Stat(onPath)
		b, errB := os.Stat(exe)
		if errA == nil && errB == nil && os.SameFile(a, b) {
			return absDir(onPath), nil
		}
	}
	if strings.Contains(exe, string(filepath.Separator)+"go-build") {
		return "", cli.Exit("this remem runs from go run's temporary build, which is gone after it exits: install it (go install ./cmd/remem) and run setup from there, or give --remem PATH", 1)
	}
	return exe, nil
}

// runTool runs a tool's own CLI (claude mcp add), saying what it was.
func runTool(name string, args ...string) ([]byte, error) {
	path, err := exec.LookPath(name)
	if err != nil {
		return nil, fmt.Errorf("%s is not on PATH: install it, or set up the project instead (--project)", name)
	}
	return exec.Command(path, args...).CombinedOutput()
}

// changeDiff is a change as a unified diff (or the command it runs).
func changeDiff(ch agents.Change) string {
	if len(ch.Command) > 0 {
		return "$ " + strings.Join(ch.Command, " ") + "\n"
	}
	old, neu := "/dev/null", "/dev/null"
	if ch.Before != nil {
		old = ch.Path
	}
	if ch.After != nil {
		neu = ch.Path
	}
	return udiff.Unified(old, neu, string(ch.Before), string(ch.After))
}

func printSetup(w io.Writer, r setupReport, remove bool) error {
	scope := r.Scope
	if scope != "user" {
		scope = "the project " + scope
	} else {
		scope = "your user"
	}
	if len(r.Changes) == 0 {
		if remove {
			_, err := fmt.Fprintf(w, "%s holds nothing of remem for %s.\n", scope, r.Tool)
			return err
		}
		_, err := fmt.Fprintf(w, "%s is set up for %s already; nothing changed.\n", scope, r.Tool)
		return err
	}
	verb := "Set up"
	switch {
	case r.DryRun && remove:
		verb = "Would take remem out of"
	case r.DryRun:
		verb = "Would set up"
	case remove:
		verb = "Took remem out of"
	}
	fmt.Fprintf(w, "%s %s for %s:\n", verb, scope, r.Tool)
	for _, ch := range r.Changes {
		if len(ch.Command) > 0 {
			fmt.Fprintf(w, "  runs `%s`: %s\n", strings.Join(ch.Command, " "), ch.What)
			continue
		}
		fmt.Fprintf(w, "  %s: %s\n", ch.Path, ch.What)
	}
	if r.DryRun {
		fmt.Fprintln(w)
		for _, d := range r.Diffs {
			fmt.Fprint(w, d)
		}
		return nil
	}
	for _, b := range r.Backups {
		fmt.Fprintf(w, "  kept the file as it was in %s\n", b)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "Note: %s\n", n)
	}
	if !remove {
		whose := "this project's lessons"
		if r.Scope == "user" {
			whose = "the lessons of its project"
		}
		fmt.Fprintf(w, "From the next %s session on, each begins with %s, and failed calls and corrections reach the memory (remem doctor shows when they last did).\n", r.Tool, whose)
	}
	return nil
}
