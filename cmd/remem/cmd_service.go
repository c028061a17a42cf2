package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/remem/remem/internal/atomicfile"
	"github.com/remem/remem/node"
	"github.com/remem/remem/node/autostart"
)

func serviceCommand() *cli.Command {
	flags := func(more ...cli.Flag) []cli.Flag {
		return append([]cli.Flag{jsonFlag,
			&cli.StringFlag{Name: "os", Value: runtime.GOOS, Hidden: true, Usage: "the system to write the service for (tests)"},
			&cli.StringFlag{Name: "remem", Usage: "the remem executable the service runs", DefaultText: "this one"},
		}, more...)
	}
	dry := &cli.BoolFlag{Name: "dry-run", Usage: "print the file and the commands, change nothing"}
	return &cli.Command{
		Name:  "service",
		Usage: "keep this machine's node running: a systemd user unit (Linux) or a launchd agent (macOS)",
		UsageText: `remem service install [--dry-run] [--no-start] [--json]
remem service remove [--dry-run] [--json]
remem service status [--json]

install writes the unit (~/.config/systemd/user/remem.service) or the agent
(~/Library/LaunchAgents/dev.remem.node.plist) that runs remem node on this
memory at login and restarts it when it fails, and starts it. remove stops it
and takes the file out; status says whether it is installed and running.

Examples:
  remem service install --dry-run
  remem service install
  remem service status --json
  remem service remove`,
		Subcommands: []*cli.Command{
			{Name: "install", Usage: "write the service and start it", Flags: flags(dry,
				&cli.BoolFlag{Name: "no-start", Usage: "write the file only"}),
				UsageText: "remem service install [--dry-run] [--no-start] [--json]\n\nExamples:\n  remem service install --dry-run\n  remem service install",
				Action:    func(c *cli.Context) error { return runService(c, true) }},
			{Name: "remove", Usage: "stop the service and take its file out", Flags: flags(dry),
				UsageText: "remem service remove [--dry-run] [--json]\n\nExamples:\n  remem service remove",
				Action:    func(c *cli.Context) error { return runService(c, false) }},
			{Name: "status", Usage: "say whether the service is installed and running", Flags: flags(),
				UsageText: "remem service status [--json]\n\nExamples:\n  remem service status",
				Action:    serviceStatus},
		},
	}
}

type serviceReport struct {
	File     string     `json:"file"`
	Text     string     `json:"text,omitempty"`
	Commands [][]string `json:"commands"`
	DryRun   bool       `json:"dry_run,omitempty"`
	Changed  bool       `json:"changed"`
	// Status: installed (the file is there, as install writes it, or
	// differs), active (the service manager says it runs), node (a node
	// holds the home).
	Installed string `json:"installed,omitempty"`
	Active    string `json:"active,omitempty"`
	Node      bool   `json:"node_running"`
}

func serviceOf(c *cli.Context) (autostart.Service, string, error) {
	userHome, err := os.UserHomeDir()
	if err != nil {
		return autostart.Service{}, "", cli.Exit("cannot find your home directory: "+err.Error(), 1)
	}
	argv, err := rememArgv(c, home(c), userHome)
	if err != nil {
		return autostart.Service{}, "", err
	}
	s := autostart.Service{Exe: argv[0], Home: home(c), UserHome: userHome, Path: os.Getenv("PATH"), ConfigHome: os.Getenv("XDG_CONFIG_HOME")}
	goos := c.String("os")
	if _, err := s.Text(goos); err != nil {
		return s, goos, cli.Exit(err.Error(), 1)
	}
	return s, goos, nil
}

func runService(c *cli.Context, install bool) error {
	s, goos, err := serviceOf(c)
	if err != nil {
		return err
	}
	file, _ := s.File(goos)
	text, _ := s.Text(goos)
	rep := serviceReport{File: file, Commands: s.Commands(goos, install), DryRun: c.Bool("dry-run")}
	if install {
		rep.Text = text
		if _, err := os.Stat(home(c)); err != nil {
			return cli.Exit(fmt.Sprintf("no memory at %s yet: run remem init first", home(c)), 1)
		}
		if c.Bool("no-start") {
			rep.Commands = rep.Commands[:0]
		}
	}
	old, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return cli.Exit(fmt.Sprintf("reading %s: %v", file, err), 1)
	}
	rep.Changed = (install && string(old) != text) || (!install && old != nil)
	if !rep.DryRun {
		if !install { // stop first, then take the file out
			_ = runServiceCommands(c, rep.Commands, true) // a service that was not running is no reason to keep the file
			if err := os.Remove(file); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return cli.Exit(fmt.Sprintf("removing %s: %v", file, err), 1)
			}
		} else {
			if rep.Changed {
				if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
					return cli.Exit(err.Error(), 1)
				}
				if err := atomicfile.Write(file, "", []byte(text), 0o644); err != nil {
					return cli.Exit(fmt.Sprintf("writing %s: %v", file, err), 1)
				}
			}
			if err := runServiceCommands(c, rep.Commands, false); err != nil {
				return cli.Exit(fmt.Sprintf("wrote %s, but starting it failed: %v\nRun the commands yourself once a login session with a service manager runs:\n  %s", file, err, joinCommands(rep.Commands)), 1)
			}
		}
	}
	if c.Bool("json") {
		return printJSON(c.App.Writer, rep)
	}
	w := c.App.Writer
	switch {
	case rep.DryRun && install:
		fmt.Fprintf(w, "Would write %s:\n\n%s\nand run:\n  %s\n", file, text, joinCommands(rep.Commands))
	case rep.DryRun:
		fmt.Fprintf(w, "Would run:\n  %s\nand remove %s.\n", joinCommands(rep.Commands), file)
	case install && rep.Changed:
		fmt.Fprintf(w, "Wrote %s; the node starts at login and restarts when it fails.\n", file)
	case install:
		fmt.Fprintf(w, "%s is installed as this version writes it.\n", file)
	case rep.Changed:
		fmt.Fprintf(w, "Stopped the service and removed %s.\n", file)
	default:
		fmt.Fprintf(w, "No service was installed (%s is not there).\n", file)
	}
	return nil
}

// runServiceCommands runs the service manager's commands; on remove a
// failure (the service was not running) does not matter.
func runServiceCommands(c *cli.Context, cmds [][]string, ignore bool) error {
	for _, cmd := range cmds {
		path, err := exec.LookPath(cmd[0])
		if err == nil {
			var out []byte
			out, err = exec.CommandContext(c.Context, path, cmd[1:]...).CombinedOutput()
			if err != nil {
				err = fmt.Errorf("%s: %v: %s", strings.Join(cmd, " "), err, bytes.TrimSpace(out))
			}
		}
		if err != nil && !ignore {
			return err
		}
	}
	return nil
}

func joinCommands(cmds [][]string) string {
	var out []string
	for _, c := range cmds {
		out = append(out, strings.Join(c, " "))
	}
	return strings.Join(out, "\n  ")
}

func serviceStatus(c *cli.Context) error {
	s, goos, err := serviceOf(c)
	if err != nil {
		return err
	}
	file, _ := s.File(goos)
	text, _ := s.Text(goos)
	rep := serviceReport{File: file, Commands: [][]string{}}
	switch old, err := os.ReadFile(file); {
	case errors.Is(err, fs.ErrNotExist):
		rep.Installed = "no"
	case err != nil:
		return cli.Exit(fmt.Sprintf("reading %s: %v", file, err), 1)
	case string(old) == text:
		rep.Installed = "yes"
	default:
		rep.Installed = "differs"
	}
	if cmd := autostart.StatusCommand(goos); cmd != nil {
		if path, err := exec.LookPath(cmd[0]); err == nil {
			out, err := exec.CommandContext(c.Context, path, cmd[1:]...).CombinedOutput()
			rep.Active = "yes"
			if err != nil {
				rep.Active = "no: " + strings.Join(strings.Fields(string(out)), " ")
			}
		} else {
			rep.Active = "unknown: " + cmd[0] + " is not on PATH"
		}
	}
	if client, err := node.ReachNode(home(c), hookNodeWait); err == nil {
		_ = client.Close()
		rep.Node = true
	}
	if c.Bool("json") {
		return printJSON(c.App.Writer, rep)
	}
	w := c.App.Writer
	switch rep.Installed {
	case "no":
		fmt.Fprintf(w, "service: not installed (remem service install writes %s)\n", file)
	case "differs":
		fmt.Fprintf(w, "service: %s differs from what this version writes (remem service install rewrites it)\n", file)
	default:
		fmt.Fprintf(w, "service: installed at %s\n", file)
	}
	if rep.Active != "" {
		fmt.Fprintf(w, "running under the service manager: %s\n", rep.Active)
	}
	fmt.Fprintf(w, "a node holds %s: %v\n", home(c), rep.Node)
	return nil
}
