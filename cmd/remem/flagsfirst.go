package main

import (
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// flagsFirst moves a command's flags written after its arguments in front
// of them: urfave/cli stops reading flags at the first argument, so
// `remem recall "go vet" --json` printed text and `remem hash TEXT --kind
// error` said --kind was missing. A token is a flag when it names one of
// the command's flags (with its value, unless the flag is a switch), or
// -h/--help; `--` ends the flags as usual, and "-", negative numbers and
// unknown dashed words stay arguments where they were.
func flagsFirst(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	// Global flags, then the command path.
	i := 1
	for i < len(args) && strings.HasPrefix(args[i], "-") && args[i] != "-" {
		f := flagNamed(app.Flags, args[i])
		i++
		if f != nil && takesValue(f) && !strings.Contains(args[i-1], "=") && i < len(args) {
			i++
		}
	}
	if i >= len(args) {
		return args
	}
	cmd := app.Command(args[i])
	i++
	for cmd != nil && len(cmd.Subcommands) > 0 && i < len(args) {
		sub := cmd.Command(args[i])
		if sub == nil {
			return args
		}
		cmd, i = sub, i+1
	}
	if cmd == nil || cmd.SkipFlagParsing || len(cmd.Subcommands) > 0 {
		return args
	}
	var flags, rest []string
	for j := i; j < len(args); j++ {
		a := args[j]
		if a == "--" {
			rest = append(rest, args[j:]...)
			break
		}
		f := flagNamed(cmd.Flags, a)
		if f == nil && a != "-h" && a != "--help" {
			rest = append(rest, a)
			continue
		}
		flags = append(flags, a)
		if f != nil && takesValue(f) && !strings.Contains(a, "=") && j+1 < len(args) {
			j++
			flags = append(flags, args[j])
		}
	}
	return append(append(slices.Clone(args[:i]), flags...), rest...)
}

// flagNamed is the flag of flags that the token -x, --x or --x=v names.
func flagNamed(flags []cli.Flag, token string) cli.Flag {
	name, ok := strings.CutPrefix(token, "--")
	if !ok {
		if name, ok = strings.CutPrefix(token, "-"); !ok || name == "" {
			return nil
		}
	}
	name, _, _ = strings.Cut(name, "=")
	for _, f := range flags {
		if slices.Contains(f.Names(), name) {
			return f
		}
	}
	return nil
}

// takesValue: every flag but a switch is followed by its value.
func takesValue(f cli.Flag) bool {
	_, isSwitch := f.(*cli.BoolFlag)
	return !isSwitch
}
