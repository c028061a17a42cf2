package calibrate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/remem/remem/protocol"
)

// Limits of a rows file. A row holds at most MaxRowEvents events, each at
// most protocol.MaxEventBytes, in a line of at most MaxRowBytes.
const (
	MaxRowBytes  = 8 << 20
	MaxRowEvents = 1000
)

// Row is one labelled row of a clusters file (JSON Lines, one row a line):
//
//	{"id":"r01","domain":"go",
//	 "events":[{"kind":"error","title":"go test ./...","happened":"..."}, ...],
//	 "groups":[{"events":[0,2],"facts":[["ENOSPC","no space left"],["docker"]],"lesson":"..."},{"events":[1]}],
//	 "private":["dana","ci-runner-07.corp.acme.io"]}
//
// Groups are the expected partition of the events into lessons (each event
// index in exactly one group); a group's facts are the key facts of its
// lesson, each a list of acceptable alternatives (found as case-insensitive
// substrings); private lists strings that must never appear in a lesson
// that may be published. Unknown fields are ignored.
type Row struct {
	ID      string            `json:"id"`
	Domain  string            `json:"domain,omitempty"`
	Events  []json.RawMessage `json:"events"`
	Groups  []Group           `json:"groups"`
	Private []string          `json:"private,omitempty"`

	// Line is the row's line in its file (0 when it was not read from one).
	Line int `json:"-"`
	// events are Events decoded as ingest decodes them.
	events []protocol.Event
}

// Group is one expected lesson of a row.
type Group struct {
	Events []int      `json:"events"`
	Facts  [][]string `json:"facts,omitempty"`
	// Lesson is a reference sentence, for a person reading the report.
	Lesson string `json:"lesson,omitempty"`
}

// BadRow is a line of a clusters file that could not be scored, and why.
type BadRow struct {
	Line   int    `json:"line"`
	ID     string `json:"id,omitempty"`
	Reason string `json:"reason"`
}

func (b BadRow) String() string {
	if b.ID != "" {
		return fmt.Sprintf("line %d (row %q): %s", b.Line, b.ID, b.Reason)
	}
	return fmt.Sprintf("line %d: %s", b.Line, b.Reason)
}

// DecodeRow decodes and checks one row: JSON an object whose members have
// the types above, at least one event, every event one ingest takes
// (protocol.DecodeEvent), every event index in exactly one group, every
// group with events, no empty fact alternative or private string.
func DecodeRow(line []byte) (Row, error) {
	var r Row
	line = bytes.TrimSpace(line)
	if len(line) > MaxRowBytes {
		return r, fmt.Errorf("the row is %d bytes, the limit is %d", len(line), MaxRowBytes)
	}
	if !utf8.Valid(line) {
		return r, errors.New("the row is not valid UTF-8")
	}
	if len(line) == 0 || line[0] != '{' {
		return r, errors.New(`the row is not a JSON object; each line is {"id": "...", "events": [...], "groups": [...]}`)
	}
	if err := json.Unmarshal(line, &r); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return r, fmt.Errorf("field %q is a JSON %s, want %s", te.Field, te.Value, jsonType(te.Type.String()))
		}
		return r, fmt.Errorf("bad JSON: %v", err)
	}
	if len(r.Events) == 0 {
		return r, errors.New(`the row has no "events"`)
	}
	if len(r.Events) > MaxRowEvents {
		return r, fmt.Errorf("the row has %d events, the limit is %d", len(r.Events), MaxRowEvents)
	}
	r.events = make([]protocol.Event, len(r.Events))
	for i, raw := range r.Events {
		ev, err := protocol.DecodeEvent(raw)
		if err != nil {
			return r, fmt.Errorf("event %d: %v", i, err)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, raw); err != nil {
			return r, fmt.Errorf("event %d: %v", i, err)
		}
		r.events[i], r.Events[i] = ev, compact.Bytes()
	}
	if len(r.Groups) == 0 {
		return r, errors.New(`the row has no "groups": give the expected lessons, each with the indices of its events`)
	}
	in := make([]int, len(r.Events)) // group+1 of each event, 0: none yet
	for g, grp := range r.Groups {
		if len(grp.Events) == 0 {
			return r, fmt.Errorf("group %d has no events", g)
		}
		for _, i := range grp.Events {
			switch {
			case i < 0 || i >= len(r.Events):
				return r, fmt.Errorf("group %d: event index %d is out of range (the row has %d events, 0 to %d)", g, i, len(r.Events), len(r.Events)-1)
			case in[i] != 0:
				return r, fmt.Errorf("event %d is in two groups, %d and %d", i, in[i]-1, g)
			}
			in[i] = g + 1
		}
		for f, alts := range grp.Facts {
			if len(alts) == 0 {
				return r, fmt.Errorf("group %d: fact %d has no alternatives", g, f)
			}
			if slices.ContainsFunc(alts, func(s string) bool { return strings.TrimSpace(s) == "" }) {
				return r, fmt.Errorf("group %d: fact %d has an empty alternative (it would match every lesson)", g, f)
			}
		}
	}
	if i := slices.Index(in, 0); i >= 0 {
		return r, fmt.Errorf("event %d is in no group (each event index is in exactly one)", i)
	}
	if slices.ContainsFunc(r.Private, func(s string) bool { return strings.TrimSpace(s) == "" }) {
		return r, errors.New(`"private" holds an empty string (it would match every lesson)`)
	}
	return r, nil
}

// jsonType names a Go type as the JSON a row wants there.
func jsonType(goType string) string {
	switch {
	case goType == "string":
		return "string"
	case strings.HasPrefix(goType, "[]"):
		return "array"
	case goType == "int":
		return "number (an event index)"
	case strings.HasPrefix(goType, "calibrate."), strings.HasPrefix(goType, "json."):
		return "object"
	}
	return goType
}

// ReadRows reads a clusters file: one row a line; blank lines and lines
// starting with # are skipped. A line that is not a good row is returned
// in bad with its number and reason, and the other lines are still read;
// err is for a failure to read at all.
func ReadRows(r io.Reader) (rows []Row, bad []BadRow, err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		line, tooLong, rerr := readLine(br, MaxRowBytes)
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return rows, bad, fmt.Errorf("reading line %d: %w", n, rerr)
		}
		trimmed := bytes.TrimSpace(line)
		switch {
		case tooLong:
			bad = append(bad, BadRow{Line: n, Reason: fmt.Sprintf("the line is more than %d bytes", MaxRowBytes)})
		case len(trimmed) == 0 || trimmed[0] == '#':
		default:
			row, derr := DecodeRow(trimmed)
			if derr != nil {
				bad = append(bad, BadRow{Line: n, ID: row.ID, Reason: derr.Error()})
			} else {
				row.Line = n
				rows = append(rows, row)
			}
		}
		if errors.Is(rerr, io.EOF) {
			return rows, bad, nil
		}
	}
}

// readLine reads up to the next newline; past limit bytes it keeps
// reading to the newline but keeps nothing, and says the line was too long.
func readLine(br *bufio.Reader, limit int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > limit+1 { // +1: the newline
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == nil || errors.Is(err, io.EOF) {
			if errors.Is(err, io.EOF) && len(line) == 0 && !tooLong {
				return nil, false, io.EOF
			}
			return line, tooLong, err
		}
		return nil, tooLong, err
	}
}
