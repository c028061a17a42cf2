package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/remem/remem/internal/version"
)

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print the build: module version and VCS revision",
		UsageText: `remem version [--json]

Examples:
  remem version
  remem --version
  remem version --json | jq -r .revision`,
		Flags: []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			if c.Bool("json") {
				return printJSON(c.App.Writer, version.Read())
			}
			printVersion(c)
			return nil
		},
	}
}

// printVersion is the one line of `remem version` and `remem --version`.
func printVersion(c *cli.Context) {
	in := version.Read()
	line := "remem " + in.String()
	if in.Revision != "" {
		line += " (" + in.Revision
		if in.Time != "" {
			line += ", " + in.Time
		}
		line += ")"
	}
	if in.Go != "" {
		line += " " + in.Go
	}
	fmt.Fprintln(c.App.Writer, line)
}
