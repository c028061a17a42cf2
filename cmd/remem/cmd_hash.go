package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/remem/remem/protocol"
)

var kindFlag = &cli.StringFlag{Name: "kind", Usage: "lesson kind: error, correction or surprise", Required: true}

func hashCommand() *cli.Command {
	return &cli.Command{
		Name:  "hash",
		Usage: "print the lesson hash of a text",
		UsageText: `remem hash [--json] --kind KIND TEXT

The hash is BLAKE2b-128 over the kind followed by the lowercased,
space-normalised text: two memories writing the same sentence get one hash.

Examples:
  remem hash --kind error "go test fails on a clean checkout"
  remem hash --kind surprise "  The Staging DB   resets nightly "
  remem hash --json --kind error "go test fails on a clean checkout" | jq -r .hash`,
		Flags: []cli.Flag{kindFlag, jsonFlag},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return cli.Exit("hash needs the lesson TEXT; see `remem hash --help`", 2)
			}
			kind := c.String("kind")
			if !protocol.ValidKind(kind) {
				return cli.Exit(fmt.Sprintf("kind %q is not a lesson kind: use error, correction or surprise", kind), 2)
			}
			text := joinArgs(c)
			hash := protocol.LessonHash(kind, text)
			if c.Bool("json") {
				// The names a lesson's fields have everywhere (lessons, show, the API).
				return printJSON(c.App.Writer, struct {
					Hash string `json:"hash"`
					Kind string `json:"kind"`
					Text string `json:"text"`
				}{hash, kind, text})
			}
			fmt.Fprintln(c.App.Writer, hash)
			return nil
		},
	}
}
