package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/remem/remem/internal/display"
	"github.com/remem/remem/protocol"
)

type checkOutput struct {
	Text        string                `json:"text"`
	MayBeLesson bool                  `json:"may_be_lesson"`
	Readable    bool                  `json:"readable"`
	Unreadable  string                `json:"unreadable,omitempty"`
	Observation bool                  `json:"observation"`
	Instruction string                `json:"instruction,omitempty"`
	RawData     []protocol.RawFinding `json:"raw_data"`
	Problem     string                `json:"problem,omitempty"`
}

func checkCommand() *cli.Command {
	return &cli.Command{
		Name:  "check",
		Usage: "say whether a text may be a lesson (observation, no raw data)",
		UsageText: `remem check [--json] TEXT

Exits 0 when TEXT may be a lesson and 1 when it may not.

Examples:
  remem check "Running go test without -race hides the data race"
  remem check "Always run make clean first"            # exit 1: an instruction
  remem check --json "The token in /home/al/.netrc expired"  # exit 1: raw data
  remem check "La caché se borra cada domingo por la noche"  # exit 1: not English`,
		Flags: []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return cli.Exit("check needs the TEXT to check; see `remem check --help`", 2)
			}
			text := strings.Join(c.Args().Slice(), " ")
			out := checkOutput{Text: text, Readable: true, Observation: true, RawData: protocol.FindRawData(text)}
			if out.RawData == nil {
				out.RawData = []protocol.RawFinding{}
			}
			var unreadable *protocol.ReadError
			if errors.As(protocol.CheckAgentText(text), &unreadable) {
				// A control character or another language: the checks cannot
				// read the text, so they say nothing of what it says.
				out.Readable, out.Unreadable, out.Observation = false, unreadable.Error(), false
			} else if err := protocol.CheckObservation(text); err != nil {
				out.Observation, out.Instruction = false, err.Error()
			}
			err := protocol.CheckLessonText(text)
			var raw *protocol.RawDataError
			if err != nil && !errors.As(err, &raw) && out.Observation && out.Readable {
				out.Problem = err.Error()
			}
			out.MayBeLesson = err == nil
			if c.Bool("json") {
				if err := printJSON(c.App.Writer, out); err != nil {
					return err
				}
			} else {
				w := c.App.Writer
				if !out.Readable {
					fmt.Fprintln(w, "readable: no,", display.Text(out.Unreadable))
				} else if out.Observation {
					fmt.Fprintln(w, "observation: yes")
				} else {
					fmt.Fprintln(w, "observation: no,", display.Text(out.Instruction))
				}
				for _, f := range out.RawData {
					fmt.Fprintf(w, "raw data: %s %s at bytes %d-%d\n", f.Kind, display.Quote(f.Match), f.Start, f.End)
				}
				if out.Problem != "" {
					fmt.Fprintln(w, "problem:", display.Text(out.Problem))
				}
				if out.MayBeLesson {
					fmt.Fprintln(w, "may be a lesson: yes")
				} else {
					fmt.Fprintln(w, "may be a lesson: no")
				}
			}
			if !out.MayBeLesson {
				return cli.Exit("", 1)
			}
			return nil
		},
	}
}
