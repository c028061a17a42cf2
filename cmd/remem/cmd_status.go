package main

import (
	"fmt"
	"sort"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/remem/remem/node"
	"github.com/remem/remem/protocol"
)

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "show the running node: origin, peer id, addresses, topics, last sleep, records, refusals",
		UsageText: `remem status [--json]

Without a running node it shows the memory at rest.

Examples:
  remem status
  remem status --json | jq .refused_by_reason`,
		Flags:  []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error { return showStatus(c, false) },
	}
}

func peersCommand() *cli.Command {
	return &cli.Command{
		Name:  "peers",
		Usage: "list the running node's peers with their origins, topics and scores",
		UsageText: `remem peers [--json]

Examples:
  remem peers
  remem peers --json | jq '.[] | select(.score < 0)'`,
		Flags:  []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error { return showStatus(c, true) },
	}
}

func showStatus(c *cli.Context, peersOnly bool) error {
	st, running, err := fetchStatus(c)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		if peersOnly {
			return printJSON(c.App.Writer, st.Peers)
		}
		return printJSON(c.App.Writer, st)
	}
	w := c.App.Writer
	if peersOnly {
		if !running {
			return fmt.Errorf("no node is running on %s; start one with `remem node`", home(c))
		}
		if len(st.Peers) == 0 {
			fmt.Fprintln(w, "no peers connected")
			return nil
		}
		t := table(w)
		fmt.Fprintln(t, "PEER\tORIGIN\tSCORE\tTOPICS\tADDRESS")
		for _, p := range st.Peers {
			addr := ""
			if len(p.Addrs) > 0 {
				addr = p.Addrs[0]
			}
			fmt.Fprintf(t, "%s\t%s\t%.2f\t%v\t%s\n", p.ID, p.Origin, p.Score, p.Topics, addr)
		}
		return t.Flush()
	}
	state := "not running (the memory at rest)"
	if running {
		state = "running since " + st.Started.Format(time.RFC3339)
	}
	fmt.Fprintf(w, "origin     %s\nhome       %s\nnode       %s\n", st.Origin, st.Home, state)
	if st.PeerID != "" {
		fmt.Fprintf(w, "peer id    %s\n", st.PeerID)
		for _, a := range st.Addrs {
			fmt.Fprintf(w, "address    %s\n", a)
		}
	}
	for _, t := range st.Topics {
		fmt.Fprintf(w, "topic      %s\n", t)
	}
	fmt.Fprintf(w, "peers      %d\nscopes     %s\n", len(st.Peers), list(st.Scopes))
	if st.LastSleep.IsZero() {
		fmt.Fprintln(w, "last sleep never")
	} else {
		fmt.Fprintf(w, "last sleep %s\n", st.LastSleep.Format(time.RFC3339))
	}
	if !st.NextSleep.IsZero() {
		fmt.Fprintf(w, "next sleep %s\n", st.NextSleep.Format(time.RFC3339))
	}
	fmt.Fprintf(w, "records    %d\nlessons    %d\n", st.Records, st.Lessons)
	if !st.Writers.Empty() {
		fmt.Fprintf(w, "writers    %s\n", st.Writers)
	}
	fmt.Fprintf(w, "received   %d (accepted %d, duplicate %d, skipped %d)\n", st.Stats.Received, st.Stats.Accepted, st.Stats.Duplicate, st.Stats.Skipped)
	reasons := make([]string, 0, len(st.Refused))
	for r := range st.Refused {
		reasons = append(reasons, string(r))
	}
	sort.Strings(reasons)
	for _, r := range reasons {
		fmt.Fprintf(w, "refused    %s: %d\n", r, st.Refused[protocol.Reason(r)])
	}
	return nil
}

// fetchStatus asks the running node, or reads the memory at rest (waiting
// a moment while a short command holds it).
func fetchStatus(c *cli.Context) (st node.Status, viaNode bool, err error) {
	cfg, err := memoryConfig(c)
	if err != nil {
		return node.Status{}, false, err
	}
	svc, err := node.OpenOrDial(c.Context, cfg, node.DefaultLockWait)
	if err != nil {
		return node.Status{}, false, err
	}
	defer closeInto(&err, svc)
	if client, ok := svc.(*node.Client); ok {
		st, err = client.Status(c.Context)
		return st, true, err
	}
	st, err = svc.(node.Local).M.Status()
	return st, false, err
}
