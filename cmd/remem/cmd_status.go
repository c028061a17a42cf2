package main

import (
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/remem/remem/internal/display"
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
		Action: func(c *cli.Context) error { return showStatus(c) },
	}
}

func peersCommand() *cli.Command {
	return &cli.Command{
		Name:  "peers",
		Usage: "list the running node's peers: how each is connected, its round trip, origin, topics and score",
		UsageText: `remem peers [--json]

Each peer is pinged first (at most 2 s). KIND is how it is connected:
direct, relayed (through a circuit relay: both sides are behind NAT), or
hole-punched (a relayed connection that DCUtR made direct).

Examples:
  remem peers
  remem peers --json | jq '.[] | select(.kind == "relayed") | .id'
  remem peers --json | jq '.[] | select(.score < 0)'`,
		Flags:  []cli.Flag{jsonFlag},
		Action: showPeers,
	}
}

func connectCommand() *cli.Command {
	return &cli.Command{
		Name:  "connect",
		Usage: "dial a peer from the running node (like ipfs swarm connect)",
		UsageText: `remem connect [--json] MULTIADDR

MULTIADDR is a peer's full address ending in /p2p/<peer id>, as its
` + "`remem id`" + ` prints it; a relayed one (/p2p/RELAY/p2p-circuit/p2p/ID) dials
through that relay. The node keeps the connection as any other.

Examples:
  remem connect /ip4/203.0.113.7/tcp/4002/p2p/12D3KooW...
  remem connect /ip4/198.51.100.1/tcp/4001/p2p/12D3KooWRelay.../p2p-circuit/p2p/12D3KooW...`,
		Flags: []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			addr, err := oneArg(c, "peer multiaddr")
			if err != nil {
				return err
			}
			client, err := runningNode(c)
			if err != nil {
				return err
			}
			p, err := client.Connect(c.Context, addr)
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return printJSON(c.App.Writer, p)
			}
			_, err = fmt.Fprintf(c.App.Writer, "connected to %s (%s%s)\n", p.ID, p.Kind, latency(p, ", "))
			return err
		},
	}
}

// runningNode dials the node running on the home, or says how to start one.
func runningNode(c *cli.Context) (*node.Client, error) {
	client, err := dialNode(c.Context, home(c))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no node is running on %s; start one with `remem node`", home(c))
	}
	return client, err
}

func latency(p node.PeerStatus, prefix string) string {
	if p.LatencyMs == 0 {
		return ""
	}
	return fmt.Sprintf("%s%.1f ms", prefix, p.LatencyMs)
}

func showPeers(c *cli.Context) error {
	client, err := runningNode(c)
	if err != nil {
		return err
	}
	ps, err := client.Peers(c.Context)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return printJSON(c.App.Writer, ps)
	}
	w := c.App.Writer
	if len(ps) == 0 {
		fmt.Fprintln(w, "no peers connected")
		return nil
	}
	t := table(w)
	fmt.Fprintln(t, "PEER\tORIGIN\tKIND\tRTT\tSCORE\tTOPICS\tADDRESS")
	for _, p := range ps {
		addr, rtt := "", latency(p, "")
		if len(p.Addrs) > 0 {
			addr = p.Addrs[0]
		}
		if rtt == "" {
			rtt = "-"
		}
		fmt.Fprintf(t, "%s\t%s\t%s\t%s\t%.2f\t%s\t%s\n", display.Text(p.ID), display.Text(p.Origin), display.Text(p.Kind), rtt, p.Score, list(p.Topics), display.Text(addr))
	}
	return t.Flush()
}

func showStatus(c *cli.Context) error {
	st, running, err := fetchStatus(c)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return printJSON(c.App.Writer, st)
	}
	w := c.App.Writer
	state := "not running (the memory at rest)"
	if running {
		state = "running since " + st.Started.Format(time.RFC3339)
	}
	fmt.Fprintf(w, "origin     %s\nhome       %s\nnode       %s\n", st.Origin, st.Home, state)
	if st.AdmissionNotice != "" {
		fmt.Fprintf(w, "notice     %s\n", display.Text(st.AdmissionNotice))
	}
	if st.PeerID != "" {
		fmt.Fprintf(w, "peer id    %s\n", st.PeerID)
		for _, a := range st.Addrs {
			fmt.Fprintf(w, "address    %s\n", a)
		}
		if st.Reachability != "" {
			fmt.Fprintf(w, "reachable  %s\n", st.Reachability)
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
	sg := st.Strangers
	fmt.Fprintf(w, "strangers  %d records, %.1f MiB held of origins not admitted (budget %d records, %.1f MiB)\n",
		sg.Records, float64(sg.Bytes)/(1<<20), sg.Budget.Records, float64(sg.Budget.Bytes)/(1<<20))
	if !st.Writers.Empty() {
		fmt.Fprintf(w, "writers    %s\n", display.Text(fmt.Sprint(st.Writers)))
	}
	fmt.Fprintf(w, "received   %d (accepted %d, duplicate %d, skipped %d)\n", st.Stats.Received, st.Stats.Accepted, st.Stats.Duplicate, st.Stats.Skipped)
	reasons := make([]string, 0, len(st.Refused))
	for r := range st.Refused {
		reasons = append(reasons, string(r))
	}
	sort.Strings(reasons)
	for _, r := range reasons {
		fmt.Fprintf(w, "refused    %s: %d\n", display.Text(r), st.Refused[protocol.Reason(r)])
	}
	if rj := st.Rejects; len(rj.Files) > 0 || rj.Dropped > 0 || rj.Error != "" {
		fmt.Fprintf(w, "rejects    %d event lines kept, %d dropped past the bound\n", rj.Kept, rj.Dropped)
		fmt.Fprintf(w, "           %s\n", display.Text(rj.String()))
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
