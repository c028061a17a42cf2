package main

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/remem/remem/internal/display"
	"github.com/remem/remem/protocol"
)

// verdictLine is one line of `remem verify --json`.
type verdictLine struct {
	Line    int              `json:"line"`
	Verdict protocol.Verdict `json:"verdict"`
	Type    string           `json:"type"`
	Origin  string           `json:"origin"`
	Hash    string           `json:"hash"`
	Reason  string           `json:"reason"`
}

func verifyCommand() *cli.Command {
	return &cli.Command{
		Name:  "verify",
		Usage: "check record lines without storing them",
		UsageText: `remem verify [--json] [--now RFC3339] [FILE|-]

Every line goes through the full check of SPEC §5: size, UTF-8, one JSON object
without duplicate keys, version, fields, origin = fingerprint of key, the
Ed25519 signature over the line with "sig" cut out, the lesson hash, the
observation check and the clock. Exits 1 when any line is rejected.

Examples:
  remem verify records.jsonl
  remem export | remem verify --json -
  remem verify --now 2026-12-01T00:00:00Z --json old.jsonl`,
		Flags: []cli.Flag{jsonFlag,
			&cli.StringFlag{Name: "now", Usage: "the clock for the future-timestamp check (RFC 3339; default: $REMEM_NOW, else the system clock)"}},
		Action: func(c *cli.Context) error {
			now := time.Now()
			if t, ok, _ := fixedNow(); ok {
				now = t
			}
			if s := c.String("now"); s != "" {
				t, err := protocol.ParseTime(s)
				if err != nil {
					return cli.Exit(fmt.Sprintf("--now %q is not an RFC 3339 time with a Z or an offset, like 2026-12-01T00:00:00Z", s), 2)
				}
				now = t
			}
			name, data, err := readInput(c)
			if err != nil {
				return err
			}
			rejected, total := 0, 0
			for _, l := range protocol.SplitLines(data) {
				total++
				out := judge(l, now)
				if out.Verdict == protocol.Reject {
					rejected++
				}
				if c.Bool("json") {
					if err := printJSONLine(c.App.Writer, out); err != nil {
						return err
					}
					continue
				}
				switch out.Verdict {
				case protocol.Accept:
					fmt.Fprintf(c.App.Writer, "%s:%d: accept %s %s from %s\n", name, l.N, out.Type, out.Hash, out.Origin)
				default:
					fmt.Fprintf(c.App.Writer, "%s:%d: %s: %s\n", display.Text(name), l.N, out.Verdict, display.Text(out.Reason))
				}
			}
			if !c.Bool("json") {
				fmt.Fprintf(c.App.ErrWriter, "%d lines, %d rejected\n", total, rejected)
			}
			if rejected > 0 {
				return cli.Exit("", 1)
			}
			return nil
		},
	}
}

// judge verifies one line; for a refused line it still names what it could
// parse, so a person can find the record.
func judge(l protocol.Line, now time.Time) verdictLine {
	out := verdictLine{Line: l.N}
	rec, err := protocol.Verify(l.Bytes, now)
	out.Verdict = protocol.VerdictOf(err)
	if err != nil {
		out.Reason = err.Error()
		rec, _ = protocol.Decode(l.Bytes)
	}
	if rec != nil {
		out.Type, out.Origin, out.Hash = rec.Type.String(), rec.Origin, rec.Hash
	}
	return out
}
