package main

import (
	"fmt"
	"os/exec"

	"github.com/urfave/cli/v2"

	"github.com/remem/remem/gossip"
	"github.com/remem/remem/node"
	"github.com/remem/remem/node/agents"
	"github.com/remem/remem/protocol"
)

func initCommand() *cli.Command {
	return &cli.Command{
		Name:  "init",
		Usage: "create the memory's home and its key",
		UsageText: `remem init [--json]

It also looks for the model CLIs people already run (claude, codex,
gemini, ollama, llm) on PATH and prints the line that makes one the
memory's model, e.g. ` + "`remem config set model claude`" + `.

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
			out.Models = findModels()
			if c.Bool("json") {
				return printJSON(c.App.Writer, out)
			}
			if created {
				fmt.Fprintf(c.App.Writer, "created memory %s in %s\n", out.Origin, out.Home)
			} else {
				fmt.Fprintf(c.App.Writer, "memory %s already exists in %s\n", out.Origin, out.Home)
			}
			if s, _, err := loadNodeSettings(home(c)); err == nil && s.Model != "" {
				fmt.Fprintf(c.App.Writer, "model: %s is configured (`remem doctor --try-model` asks it once)\n", s.Model)
			} else {
				fmt.Fprintln(c.App.Writer, "model: "+modelAdvice(out.Models))
			}
			for _, t := range agents.Tools {
				if _, err := exec.LookPath(t.Binary); err == nil {
					fmt.Fprintf(c.App.Writer, "agent: %s is on PATH: `remem setup %s` connects it (in a project, or --user for all)\n", t.Title, t.Name)
				}
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
	// Models are the model CLIs init found on PATH, each with the config
	// line that makes it the memory's model.
	Models []foundModel `json:"models_found,omitempty"`
	// With a node running on the home (remem id): its dialable addresses
	// (relayed ones too) and what AutoNAT says of its reachability.
	Running      bool     `json:"running,omitempty"`
	Addrs        []string `json:"addrs,omitempty"`
	Reachability string   `json:"reachability,omitempty"`
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

It prints what another machine needs to trust this one: the key (or the
origin) for ` + "`remem trust add`" + ` there, which also takes this --json document.
With a node running on the home it also prints the node's dialable
addresses, each ending in /p2p/<peer id> (relayed ones through
/p2p-circuit when it is behind NAT), ready for another node's --bootstrap
or ` + "`remem connect`" + `, and whether it is reachable (AutoNAT: public, private
or unknown).

Examples:
  remem id
  remem id --json | jq -r .origin
  remem id --json | jq -r '.addrs[]'
  remem id --json > my-id.json   # then on the other machine: remem trust add my-id.json`,
		Flags: []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			id, err := node.LoadIdentity(home(c))
			if err != nil {
				return err
			}
			out := newIDOutput(id, home(c))
			if client, err := dialNode(c.Context, home(c)); err == nil {
				if st, err := client.Status(c.Context); err == nil {
					out.Running, out.Addrs, out.Reachability = true, st.Addrs, st.Reachability
				}
			}
			if c.Bool("json") {
				return printJSON(c.App.Writer, out)
			}
			w := c.App.Writer
			fmt.Fprintf(w, "origin   %s\nkey      %s\npeer id  %s\nhome     %s\n", out.Origin, out.Key, out.PeerID, out.Home)
			fmt.Fprintf(w, "trust    another memory counts this one's confirmations after `remem trust add %s` there (or `remem id --json | remem trust add -`)\n", out.Key)
			switch {
			case !out.Running:
				fmt.Fprintln(w, "node     not running (`remem node` listens; then remem id prints its addresses)")
			case len(out.Addrs) == 0:
				fmt.Fprintln(w, "node     running without a libp2p host (start it with --team NAME)")
			default:
				fmt.Fprintf(w, "reach    %s\n", out.Reachability)
				for _, a := range out.Addrs {
					fmt.Fprintf(w, "address  %s\n", a)
				}
			}
			return nil
		},
	}
}
