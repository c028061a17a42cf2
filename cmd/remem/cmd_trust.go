package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/remem/remem/gossip"
	"github.com/remem/remem/internal/display"
	"github.com/remem/remem/node"
	"github.com/remem/remem/protocol"
)

// maxIDDocument bounds what `remem trust add` reads of an id document (a
// file or stdin): `remem id --json` prints well under 4 KiB.
const maxIDDocument = 64 << 10

func trustCommand() *cli.Command {
	return &cli.Command{
		Name:  "trust",
		Usage: "keep the trust list: the memories whose confirmations count here (config.toml trust)",
		UsageText: `remem trust add ENTRY...
remem trust remove ENTRY...
remem trust list [--json]

A lesson becomes common only through the confirmations of memories this one
admits (SPEC §8): itself, the trust list, the members of its private teams,
the publishers of a token-guarded commons it uses, or every origin when
config.toml says admit_all = true. Keys cost nothing, so a stranger's
confirmations are held and shown but move nothing.

ENTRY is a 64-hex public key, a 16-hex origin, a file holding what
` + "`remem id --json`" + ` printed on the other machine, or - for that document on
stdin. add and remove edit the trust line of config.toml and keep its
comments and other keys; an origin already in the list is not added twice.
Commands that open the memory themselves (no node running) take the list at
once; a running node takes it at its next start.

Examples:
  ssh laptop remem id --json | remem trust add -
  remem trust add 3f9a0c21d4e5b678
  remem trust add ./bob-id.json
  remem trust remove 3f9a0c21d4e5b678
  remem trust list --json | jq -r '.[].origin'`,
		Subcommands: []*cli.Command{
			{Name: "add", Usage: "admit a key, an origin or a `remem id --json` document", Flags: []cli.Flag{jsonFlag}, Action: trustAdd,
				UsageText: "remem trust add [--json] ENTRY...\n\nENTRY: a 64-hex key, a 16-hex origin, a file of `remem id --json`, or - for stdin.\n\nExamples:\n  remem trust add 3f9a0c21d4e5b678\n  ssh laptop remem id --json | remem trust add -\n  remem trust add bob-id.json"},
			{Name: "remove", Usage: "take an origin out of the trust list", Flags: []cli.Flag{jsonFlag}, Action: trustRemove,
				UsageText: "remem trust remove [--json] ENTRY...\n\nENTRY names the origin as add does (its key, its origin, or an id document).\n\nExamples:\n  remem trust remove 3f9a0c21d4e5b678"},
			{Name: "list", Usage: "every admitted origin and where it comes from", Flags: []cli.Flag{jsonFlag}, Action: trustList,
				UsageText: "remem trust list [--json]\n\nExamples:\n  remem trust list\n  remem trust list --json | jq '.[] | select(.source == \"trust\")'"},
		},
	}
}

// trustEntry is one admitted origin as trust list shows it.
type trustEntry struct {
	Origin string `json:"origin"`
	Entry  string `json:"entry"`  // as the file has it: a key or an origin
	Source string `json:"source"` // trust, members, members TEAM, this memory
}

// trustEdit is what trust add or remove did to one ENTRY (--json).
type trustEdit struct {
	Origin string `json:"origin"`
	Result string `json:"result"` // added, already trusted, removed, not trusted
	Said   string `json:"said"`
}

// trustEdits is the answer of trust add and remove --json.
type trustEdits struct {
	Edits []trustEdit `json:"edits"`
	// NodeRunning: a node runs on the home and takes the list at its next
	// start.
	NodeRunning bool `json:"node_running"`
}

// idDocument is what `remem trust add` reads of `remem id --json`: its
// other members (peer id, home, addresses) are not needed and ignored.
type idDocument struct {
	Origin string `json:"origin"`
	Key    string `json:"key"`
}

// trustArg reads one ENTRY: the key or origin to write, and its origin.
func trustArg(c *cli.Context, arg string) (entry, origin string, err error) {
	if o, err := protocol.ParseOrigin(arg); err == nil {
		return strings.ToLower(strings.TrimSpace(arg)), o, nil
	}
	var r io.Reader
	name := arg
	if arg == "-" {
		r, name = c.App.Reader, "stdin"
	} else {
		f, err := os.Open(arg)
		if errors.Is(err, fs.ErrNotExist) {
			_, perr := protocol.ParseOrigin(arg)
			return "", "", cli.Exit(fmt.Sprintf("trust: %s, and no file of that name holds an id document; give a key, an origin, a file of `remem id --json`, or - for stdin", perr), 2)
		}
		if err != nil {
			return "", "", err
		}
		defer func() { _ = f.Close() }() // read only
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, maxIDDocument+1))
	if err != nil {
		return "", "", fmt.Errorf("trust: reading %s: %w", name, err)
	}
	if len(data) > maxIDDocument {
		return "", "", cli.Exit(fmt.Sprintf("trust: %s is over %d KiB: an id document (`remem id --json`) is a few lines; nothing was changed", name, maxIDDocument>>10), 2)
	}
	var doc idDocument
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		return "", "", cli.Exit(fmt.Sprintf("trust: %s is not the JSON `remem id --json` prints (%v); give a key, an origin, or that document", name, err), 2)
	}
	switch {
	case doc.Key != "":
		o, err := protocol.ParseOrigin(doc.Key)
		if err != nil || len(strings.TrimSpace(doc.Key)) != 64 {
			return "", "", cli.Exit(fmt.Sprintf("trust: the key of %s is not a 64-hex public key: %q", name, display.Text(doc.Key)), 2)
		}
		if doc.Origin != "" && !strings.EqualFold(strings.TrimSpace(doc.Origin), o) {
			return "", "", cli.Exit(fmt.Sprintf("trust: in %s the origin %q is not the key's (%s): the document was altered or mixed; ask for it again", name, display.Text(doc.Origin), o), 2)
		}
		return strings.ToLower(strings.TrimSpace(doc.Key)), o, nil
	case doc.Origin != "":
		o, err := protocol.ParseOrigin(doc.Origin)
		if err != nil || len(strings.TrimSpace(doc.Origin)) != 16 {
			return "", "", cli.Exit(fmt.Sprintf("trust: the origin of %s is not a 16-hex origin: %q", name, display.Text(doc.Origin)), 2)
		}
		return o, o, nil
	}
	return "", "", cli.Exit(fmt.Sprintf("trust: %s has neither a key nor an origin: is it what `remem id --json` printed?", name), 2)
}

func trustAdd(c *cli.Context) error { return editTrust(c, true) }

func trustRemove(c *cli.Context) error { return editTrust(c, false) }

func editTrust(c *cli.Context, add bool) error {
	verb := map[bool]string{true: "add", false: "remove"}[add]
	if c.NArg() == 0 {
		return cli.Exit(fmt.Sprintf("trust %s needs an ENTRY: a 64-hex key, a 16-hex origin, a file of `remem id --json` or - for stdin (`remem id` on the other machine prints it)", verb), 2)
	}
	s, _, err := loadNodeSettings(home(c))
	if err != nil {
		return err
	}
	list := slices.Clone(s.Trust)
	originOf := func(e string) string {
		o, err := protocol.ParseOrigin(e)
		if err != nil {
			return ""
		}
		return o
	}
	var said []trustEdit
	note := func(origin, result, text string) {
		said = append(said, trustEdit{Origin: origin, Result: result, Said: text})
	}
	for _, arg := range c.Args().Slice() {
		entry, origin, err := trustArg(c, arg)
		if err != nil {
			return err
		}
		at := slices.IndexFunc(list, func(e string) bool { return originOf(e) == origin })
		switch {
		case add && at >= 0:
			// A key is kept over an origin: it says more.
			if len(entry) > len(list[at]) {
				list[at] = entry
			}
			note(origin, "already trusted", fmt.Sprintf("origin %s is already trusted", origin))
		case add:
			list = append(list, entry)
			note(origin, "added", fmt.Sprintf("trusted origin %s", origin))
		case at < 0:
			note(origin, "not trusted", fmt.Sprintf("origin %s was not in the trust list", origin))
		default:
			list = slices.Delete(list, at, at+1)
			note(origin, "removed", fmt.Sprintf("removed origin %s from the trust list", origin))
		}
	}
	f, err := settingField("trust")
	if err != nil {
		return err
	}
	line := ""
	if len(list) > 0 {
		if line, err = settingLine(f, list); err != nil {
			return err
		}
	}
	if err := editConfig(home(c), "trust", line); err != nil {
		return err
	}
	_, derr := dialNode(c.Context, home(c))
	if c.Bool("json") {
		return printJSON(c.App.Writer, trustEdits{Edits: said, NodeRunning: derr == nil})
	}
	w := c.App.Writer
	for _, s := range said {
		fmt.Fprintln(w, s.Said)
	}
	if derr == nil {
		fmt.Fprintln(w, "a node is running on this home: it takes the new trust list at its next start (restart `remem node`)")
	}
	return nil
}

func trustList(c *cli.Context) error {
	entries, all, err := trustEntries(c)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return printJSON(c.App.Writer, entries)
	}
	w := table(c.App.Writer)
	fmt.Fprintln(w, "ORIGIN\tENTRY\tSOURCE")
	for _, e := range entries {
		fmt.Fprintf(w, "%s\t%s\t%s\n", e.Origin, display.Text(e.Entry), e.Source)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if all {
		fmt.Fprintln(c.App.Writer, "admit_all = true: every origin counts, strangers too (only for a closed network)")
	}
	if len(entries) == 1 && !all {
		fmt.Fprintln(c.App.Writer, "only this memory counts: `remem trust add` admits another (run `remem id` there)")
	}
	return nil
}

// trustEntries are this memory, config.toml's trust list and the members
// of private teams; the publishers of a token-guarded commons are kept in
// the store and shown by `remem show` per verifier.
func trustEntries(c *cli.Context) ([]trustEntry, bool, error) {
	s, src, err := loadNodeSettings(home(c))
	if err != nil {
		return nil, false, err
	}
	out := []trustEntry{}
	if id, err := node.LoadIdentity(home(c)); err == nil {
		out = append(out, trustEntry{Origin: id.Origin(), Entry: id.Key(), Source: "this memory"})
	}
	add := func(e, source string) {
		o, err := protocol.ParseOrigin(e)
		if err != nil {
			o = "(not a key nor an origin)"
		}
		out = append(out, trustEntry{Origin: o, Entry: e, Source: source})
	}
	for _, e := range s.Trust {
		add(e, "trust")
	}
	var g gossip.Config
	if err := readAllMembers(s.Members, &g); err != nil {
		return nil, false, fmt.Errorf("%s: %w", src.name("members"), err)
	}
	for _, e := range g.Members {
		add(e, "members")
	}
	for _, team := range slices.Sorted(maps.Keys(g.TeamMembers)) {
		for _, e := range g.TeamMembers[team] {
			add(e, "members of team "+team)
		}
	}
	return out, s.AdmitAll, nil
}
