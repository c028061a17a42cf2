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

	"github.com/urfave/cli/v2"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newApp().RunContext(ctx, os.Args)
	stop()
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
			fmt.Fprintln(os.Stderr, "remem:", msg)
		}
		return coder.ExitCode()
	}
	fmt.Fprintln(os.Stderr, "remem:", err)
	return 1
}

func newApp() *cli.App {
	return &cli.App{
		Name:  "remem",
		Usage: "let AI agents share what they learn, as signed one-sentence lessons",
		Description: `A memory turns the surprises agents report (events) into lessons during sleep,
signs them with its Ed25519 key and exchanges them over team gossip topics, shared
folders and an HTTP commons. Lessons are observations, never instructions.

The memory lives in $REMEM_HOME (default ~/.remem).`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "home", Usage: "the memory's directory", EnvVars: []string{"REMEM_HOME"}, Value: defaultHome()},
		},
		ExitErrHandler:  func(*cli.Context, error) {}, // main prints errors once
		HideHelpCommand: true,
		Commands:        commands(),
	}
}

// commands lists every command; each lives in its own file.
func commands() []*cli.Command {
	return []*cli.Command{
		initCommand(), idCommand(), hashCommand(), checkCommand(), verifyCommand(), importCommand(),
		publishCommand(), revokeCommand(), exportCommand(), lessonsCommand(), showCommand(),
		ingestCommand(), rememberCommand(), sleepCommand(), shareCommand(), recallCommand(),
		nodeCommand(), statusCommand(), peersCommand(), folderCommand(), commonsCommand(),
		mcpCommand(), contextCommand(), testnetCommand(),
	}
}
