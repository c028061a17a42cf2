package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/remem/remem/gossip"
	"github.com/remem/remem/node"
	"github.com/remem/remem/protocol"
)

func initCommand() *cli.Command {
	return &cli.Command{
		Name:  "init",
		Usage: "create the memory's home and its key",
		UsageText: `remem init [--json]

Examples:
  remem init
  REMEM_HOME=/tmp/alice remem init --json`,
		Flags: []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			id, created, err := node.InitHome(home(c))
			if err != nil {
				return err
			}
			out := newIDOutput(id, home(c))
			out.Created = created
			if c.Bool("json") {
				return printJSON(c.App.Writer, out)
			}
			if created {
				fmt.Fprintf(c.App.Writer, "created memory %s in %s\n", out.Origin, out.Home)
			} else {
				fmt.Fprintf(c.App.Writer, "memory %s already exists in %s\n", out.Origin, out.Home)
			}
			return nil
		},
	}
}

type idOutput struct {
	Origin  string `json:"origin"`
	Key     string `json:"key"`
	PeerID  string `json:"peer_id"`
	Home    string `json:"home"`
	Created bool   `json:"created,omitempty"`
}

func newIDOutput(id protocol.Identity, home string) idOutput {
	out := idOutput{Origin: id.Origin(), Key: id.Key(), Home: home}
	if pid, err := gossip.PeerIDOf(id); err == nil {
		out.PeerID = pid.String()
	}
	return out
}

func idCommand() *cli.Command {
	return &cli.Command{
		Name:  "id",
		Usage: "print the memory's origin and public key",
		UsageText: `remem id [--json]

Examples:
  remem id
  remem id --json | jq -r .origin`,
		Flags: []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			id, err := node.LoadIdentity(home(c))
			if err != nil {
				return err
			}
			out := newIDOutput(id, home(c))
			if c.Bool("json") {
				return printJSON(c.App.Writer, out)
			}
			fmt.Fprintf(c.App.Writer, "origin   %s\nkey      %s\npeer id  %s\nhome     %s\n", out.Origin, out.Key, out.PeerID, out.Home)
			return nil
		},
	}
}
