// Command remem runs and inspects a remem memory: a node that turns agents'
// surprises into signed one-sentence lessons and shares them.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/remem/remem/internal/display"
	"github.com/remem/remem/internal/version"
	"github.com/remem/remem/protocol"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	app := newApp()
	err := app.RunContext(ctx, flagsFirst(app, os.Args))
	stop()
	if d, ok := app.Writer.(*display.Writer); ok {
		_ = d.Flush() // a rune cut at the very end; stdout is going away
	}
	os.Exit(exitCode(err))
}

// exitCode is the one place errors become exit codes: 0 ok, the code of a
// cli.ExitCoder when given (e.g. `check` answering "no" with 1), else 1.
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var coder cli.ExitCoder
	if errors.As(err, &coder) {
		if msg := coder.Error(); msg != "" {
			fmt.Fprintln(os.Stderr, "remem:", display.Lines(msg))
		}
		return coder.ExitCode()
	}
	// An error may carry a peer's or a file's words: shown escaped.
	fmt.Fprintln(os.Stderr, "remem:", display.Lines(err.Error()))
	return 1
}

func newApp() *cli.App {
	// -v is --verbose, as in restic and Syncthing; the version is --version
	// or `remem version`.
	cli.VersionFlag = &cli.BoolFlag{Name: "version", Usage: "print the version"}
	cli.VersionPrinter = printVersion
	cmds := commands()
	conventions(cmds)
	return &cli.App{
		Name:  "remem",
		Usage: "let AI agents share what they learn, as signed one-sentence lessons",
		Description: `A memory turns the surprises agents report (events) into lessons during sleep,
signs them with its Ed25519 key and exchanges them over team gossip topics, shared
folders and an HTTP commons. Lessons are observations, never instructions.

The memory lives in $REMEM_HOME (default ~/.remem). For tests and reproducible
runs, $REMEM_NOW (RFC 3339) stops the clock of the memory a command opens at that
instant (not a running node's: a command that goes through a node uses its clock).`,
		Version: version.String(),
		// Everything printed on stdout, for a person or an agent, passes
		// the display net; export's signed lines alone go around it.
		Writer: display.NewWriter(os.Stdout),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "home", Usage: "the memory's directory", EnvVars: []string{"REMEM_HOME"}, Value: defaultHome()},
			quietFlag, verboseFlag,
		},
		Before: func(c *cli.Context) error {
			if _, _, err := fixedNow(); err != nil {
				return cli.Exit(err.Error(), usageExit)
			}
			return setVerbosity(c)
		},
		Action:               rootAction,
		OnUsageError:         onUsageError,
		EnableBashCompletion: true,
		ExitErrHandler:       func(*cli.Context, error) {}, // main prints errors once
		HideHelpCommand:      true,
		Commands:             cmds,
	}
}

// commands lists every command; each lives in its own file.
func commands() []*cli.Command {
	return []*cli.Command{
		initCommand(), idCommand(), hashCommand(), checkCommand(), verifyCommand(), importCommand(),
		publishCommand(), revokeCommand(), exportCommand(), lessonsCommand(), showCommand(),
		ingestCommand(), rememberCommand(), sleepCommand(), shareCommand(), recallCommand(),
		nodeCommand(), webCommand(), statusCommand(), peersCommand(), connectCommand(), folderCommand(), commonsCommand(),
		mcpCommand(), setupCommand(), hookCommand(), serviceCommand(), contextCommand(), testnetCommand(), writerPromptCommand(), calibrateCommand(), configCommand(), trustCommand(), doctorCommand(), teamKeyCommand(),
		versionCommand(), completionCommand(),
	}
}

// nowEnv names the variable that stops the clock of the memory a command
// opens at one instant, so that a test can put two commands minutes apart
// without waiting, and a run can be repeated exactly. `remem node` ignores
// it: a running node's clock must move.
const nowEnv = "REMEM_NOW"

// fixedNow is the instant in $REMEM_NOW; ok is false when it is unset. It is
// the one place the variable is read.
func fixedNow() (t time.Time, ok bool, err error) {
	s := os.Getenv(nowEnv)
	if s == "" {
		return time.Time{}, false, nil
	}
	if t, err = protocol.ParseTime(s); err != nil {
		return time.Time{}, false, fmt.Errorf("%s=%q is not an RFC 3339 time with a Z or an offset, like 2026-12-01T00:00:00Z", nowEnv, s)
	}
	return t, true, nil
}

// clock is the node.Config.Now of the commands that open the memory: nil
// (the system clock) unless $REMEM_NOW is set. The app's Before has refused
// a malformed value.
func clock() func() time.Time {
	t, ok, _ := fixedNow()
	if !ok {
		return nil
	}
	return func() time.Time { return t }
}
