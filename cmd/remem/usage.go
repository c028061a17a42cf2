package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"reflect"
	"slices"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"
)

// usageExit is the exit status of a command line remem cannot run: an
// unknown command or flag, a missing argument.
const usageExit = 2

// usageError is one line naming the command, what was wrong, a "did you
// mean" when a name is close, and where the help is; main puts "remem: "
// before it.
func usageError(helpName, msg, guess string) error {
	if guess != "" {
		msg += fmt.Sprintf("; did you mean %s?", guess)
	}
	if _, sub, ok := strings.Cut(helpName, " "); ok {
		msg = sub + ": " + msg
	}
	return cli.Exit(fmt.Sprintf("%s (see `%s --help`)", msg, helpName), usageExit)
}

// suggest is the name among names closest to typed by edit distance, or ""
// when none is close enough to be a typo (more than a third of it wrong);
// a name that starts with typed counts as one typo away.
func suggest(typed string, names []string) string {
	best, bestD := "", max(2, len(typed)/3)+1
	for _, n := range names {
		d := editDistance(typed, n)
		if len(typed) >= 3 && strings.HasPrefix(n, typed) {
			d = min(d, 1)
		}
		if d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// editDistance is Levenshtein's distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func commandNames(cmds []*cli.Command) []string {
	var names []string
	for _, c := range cmds {
		if !c.Hidden {
			names = append(names, c.Names()...)
		}
	}
	return names
}

func flagNames(flags []cli.Flag) []string {
	names := []string{"help"}
	for _, f := range flags {
		names = append(names, f.Names()...)
	}
	return names
}

func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// onUsageError turns a flag the command does not take (or a bad value) into
// one line, instead of the error and the whole help.
func onUsageError(c *cli.Context, err error, _ bool) error {
	helpName, flags := c.App.HelpName, c.App.Flags
	if c.Command != nil && c.Command.Name != "" {
		helpName, flags = c.Command.HelpName, c.Command.Flags
	}
	msg := err.Error()
	name, unknown := strings.CutPrefix(msg, "flag provided but not defined: ")
	if !unknown {
		return usageError(helpName, msg, "")
	}
	name = strings.TrimLeft(name, "-")
	if helpName != c.App.HelpName && slices.Contains(flagNames(c.App.Flags), name) {
		return usageError(helpName, fmt.Sprintf("%s goes before the command (%s %s …)", dashed(name), c.App.HelpName, dashed(name)), "")
	}
	guess := suggest(name, flagNames(flags))
	if guess != "" {
		guess = dashed(guess)
	}
	return usageError(helpName, "unknown flag "+dashed(name), guess)
}

// unknownCommand answers a name that is no command of cmds.
func unknownCommand(helpName, name string, cmds []*cli.Command) error {
	guess := suggest(name, commandNames(cmds))
	return usageError(helpName, fmt.Sprintf("%q is not a command", name), guess)
}

// rootAction is the app's action when no command matched: the help, `remem
// help [COMMAND]`, or an unknown command.
func rootAction(c *cli.Context) error {
	args := c.Args().Slice()
	switch {
	case len(args) == 0 || (len(args) == 1 && args[0] == "help"):
		return cli.ShowAppHelp(c)
	case args[0] == "help":
		if c.App.Command(args[1]) == nil {
			return unknownCommand(c.App.HelpName, args[1], c.App.Commands)
		}
		if len(args) > 2 { // `remem help commons push`: as `remem commons push --help`
			return c.App.RunContext(c.Context, append(append([]string{c.App.Name}, args[1:]...), "--help"))
		}
		return cli.ShowCommandHelp(c, args[1])
	}
	return unknownCommand(c.App.HelpName, args[0], c.App.Commands)
}

// groupAction is the action of a command that only groups others (`remem
// commons`): its help, or an unknown subcommand.
func groupAction(c *cli.Context) error {
	if !c.Args().Present() {
		return cli.ShowSubcommandHelp(c)
	}
	return unknownCommand(c.Command.HelpName, c.Args().First(), c.Command.Subcommands)
}

// conventions gives every command the app's usage errors: one line for an
// unknown flag or subcommand, and for a missing required flag (urfave/cli
// would print the whole help first).
func conventions(cmds []*cli.Command) {
	for _, cmd := range cmds {
		cmd.OnUsageError = onUsageError
		if len(cmd.Subcommands) > 0 && cmd.Action == nil {
			cmd.Action = groupAction
		}
		// A command's arguments are its own: `remem recall help` recalls.
		cmd.HideHelpCommand = len(cmd.Subcommands) == 0
		if required := takeRequired(cmd.Flags); len(required) > 0 {
			before := cmd.Before
			cmd.Before = func(c *cli.Context) error {
				for _, name := range required {
					if !c.IsSet(name) {
						return usageError(c.Command.HelpName, dashed(name)+" is required", "")
					}
				}
				if before != nil {
					return before(c)
				}
				return nil
			}
		}
		conventions(cmd.Subcommands)
	}
}

// takeRequired clears the Required field of flags and returns their names,
// for conventions' own check.
func takeRequired(flags []cli.Flag) []string {
	var names []string
	for _, f := range flags {
		r, ok := f.(cli.RequiredFlag)
		if !ok || !r.IsRequired() {
			continue
		}
		if field := reflect.ValueOf(f).Elem().FieldByName("Required"); field.IsValid() && field.CanSet() {
			field.SetBool(false)
			names = append(names, f.Names()[0])
		}
	}
	return names
}

// listenError is a listen address that cannot be had, in one line: the
// address once (net's own error names it again) and what to do.
func listenError(flag, addr string, err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		err = op.Err
	}
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("cannot listen on %s: the address is in use (stop what holds it, or give another with %s)", addr, flag)
	}
	return fmt.Errorf("cannot listen on %s: %v (give another with %s)", addr, err, flag)
}

var (
	quietFlag   = &cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print only errors and data"}
	verboseFlag = &cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "print debug logs"}
)

// setVerbosity is the app's part of -q and -v: under -q, what commands
// write to ErrWriter (progress, notes) goes nowhere; logs go through
// newLogger.
func setVerbosity(c *cli.Context) error {
	if c.Bool("quiet") && c.Bool("verbose") {
		return usageError(c.App.HelpName, "--quiet and --verbose exclude each other", "")
	}
	if c.Bool("quiet") {
		if c.App.Metadata == nil {
			c.App.Metadata = map[string]any{}
		}
		c.App.Metadata["stderr"] = c.App.ErrWriter
		c.App.ErrWriter = io.Discard
	}
	return nil
}

// newLogger is a command's logger at level, moved to debug by -v and to
// errors only by -q.
func newLogger(c *cli.Context, level slog.Level) *slog.Logger {
	w := c.App.ErrWriter
	if s, ok := c.App.Metadata["stderr"].(io.Writer); ok {
		w = s
	}
	switch {
	case c.Bool("verbose"):
		level = slog.LevelDebug
	case c.Bool("quiet"):
		level = slog.LevelError
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}
