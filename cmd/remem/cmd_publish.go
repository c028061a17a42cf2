package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/remem/remem/node"
)

func publishCommand() *cli.Command {
	return &cli.Command{
		Name:  "publish",
		Usage: "sign a lesson of this memory directly",
		UsageText: `remem publish --kind KIND [--json] TEXT

Refused, with the reason, when TEXT is an instruction or holds raw data
(paths, e-mail addresses, URLs with credentials, IP addresses, secrets).

Examples:
  remem publish --kind error "go test fails on a clean checkout until go generate has run"
  remem publish --kind surprise --json "The staging database is reset every night"`,
		Flags: []cli.Flag{kindFlag, jsonFlag},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return cli.Exit("publish needs the lesson TEXT; see `remem publish --help`", 2)
			}
			if c.String("kind") == "" {
				return cli.Exit("publish needs --kind: error, correction or surprise; see `remem publish --help`", 2)
			}
			return withService(c, func(svc node.Service) (node.Signed, error) {
				rec, err := svc.Publish(c.Context, c.String("kind"), joinArgs(c))
				if err != nil {
					return rec, fmt.Errorf("not published: %w", err)
				}
				return rec, nil
			}, func(rec node.Signed) error {
				_, err := fmt.Fprintf(c.App.Writer, "published %s\n", rec.Hash)
				return err
			})
		},
	}
}

func revokeCommand() *cli.Command {
	return &cli.Command{
		Name:  "revoke",
		Usage: "sign the withdrawal of a lesson",
		UsageText: `remem revoke [--reason TEXT] [--json] HASH

A lesson this memory published is withdrawn: every memory drops it when the
revocation reaches it. A lesson it only confirmed is not: the revocation
counts toward a quorum (N confirmers, default 3, SPEC §8). A running node
sends the revocation at once; without one it leaves with the next exchange.

Examples:
  remem revoke 130494cfd9c9e6bf5c1480f5bc906350
  remem revoke --reason "fixed in v2.3" 130494cfd9c9e6bf5c1480f5bc906350`,
		Flags: []cli.Flag{jsonFlag, &cli.StringFlag{Name: "reason", Usage: "why it is withdrawn"}},
		Action: func(c *cli.Context) error {
			hash, err := oneArg(c, "lesson HASH")
			if err != nil {
				return err
			}
			return withService(c, func(svc node.Service) (node.RevokeReport, error) {
				return svc.Revoke(c.Context, hash, c.String("reason"))
			}, func(rep node.RevokeReport) error {
				_, err := fmt.Fprintln(c.App.Writer, rep.Message)
				return err
			})
		},
	}
}

func exportCommand() *cli.Command {
	return &cli.Command{
		Name:  "export",
		Usage: "print this memory's signed records as JSONL",
		UsageText: `remem export [--json]

Prints every line this memory would publish (its lessons, confirmations and
revocations). A confirmation goes only to the scopes its lesson came by, so
a folder or commons may get fewer. With --json, one object per record with
the line inside.

Examples:
  remem export > me.jsonl
  remem export | ssh other-box remem import -`,
		Flags: []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) (err error) {
			m, err := openService(c)
			if err != nil {
				return err
			}
			defer closeInto(&err, m)
			lines, err := m.Export(c.Context)
			if err != nil {
				return err
			}
			for _, l := range lines {
				if c.Bool("json") {
					if err := printJSONLine(c.App.Writer, map[string]string{"line": l}); err != nil {
						return err
					}
					continue
				}
				if _, err := fmt.Fprintln(rawOut(c), l); err != nil {
					return err
				}
			}
			return nil
		},
	}
}
