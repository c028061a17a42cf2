package protocol

import "github.com/remem/remem/protocol/textcheck"

// The text checks of SPEC §6 live in package textcheck with their word
// lists and tagger; these names keep every caller on one definition.

// InstructionError says why a text reads as an instruction to the reader.
type InstructionError = textcheck.InstructionError

// ReadError says the checks cannot read a text: a control character, or
// another language.
type ReadError = textcheck.ReadError

// RawFinding is one piece of raw data in a text.
type RawFinding = textcheck.RawFinding

// CheckObservation returns nil when text reads as an observation, else an
// *InstructionError.
func CheckObservation(text string) error { return textcheck.CheckObservation(text) }

// FindRawData returns the raw data in text, or nil when it is clean.
func FindRawData(text string) []RawFinding { return textcheck.FindRawData(text) }

// RedactRawData removes hidden characters (textcheck.Clean) and replaces
// each piece of raw data with words that say what was there, such as "a
// file in the home directory" (textcheck.RedactRawData).
func RedactRawData(text string) string { return textcheck.RedactRawData(textcheck.Clean(text)) }

// Redaction is what RedactRawDataReport did; Draft says the result is a
// draft (SPEC §3) that is kept locally.
type Redaction = textcheck.Redaction

// RedactRawDataReport redacts as RedactRawData does and says whether the
// result is a draft.
func RedactRawDataReport(text string) Redaction {
	return textcheck.RedactRawDataReport(textcheck.Clean(text))
}

// Pasted says why a lesson sentence reads like pasted tool output (a
// stack frame, table columns, stitched fragments, a cut-off end...), or ""
// when it reads as written (SPEC §3, "Written, not pasted";
// textcheck.Pasted states the rule). Such a sentence is a draft.
func Pasted(text string) string { return textcheck.Pasted(textcheck.Clean(text)) }

// CutOut says why a sentence built by cutting tool output (the default
// writer's) does not read as a finished statement, "" when it does
// (textcheck.CutOut states the rule).
func CutOut(text string) string { return textcheck.CutOut(textcheck.Clean(text)) }

// CheckAgentText runs every check a text passes before an agent may read
// it (SPEC §6): readable, an observation, no raw data.
func CheckAgentText(text string) error {
	v := textcheck.CheckText(text)
	switch {
	case v.Unreadable != nil:
		return v.Unreadable
	case v.Instruction != nil:
		return v.Instruction
	case len(v.Raw) > 0:
		return &RawDataError{Findings: v.Raw}
	}
	return nil
}

// knownMembers are the top-level members of the three record types.
var knownMembers = map[string]bool{
	"v": true, "hash": true, "origin": true, "key": true, "kind": true, "text": true, "seen": true,
	"strength": true, "updated": true, "sig": true, "id": true, "parents": true, "confirm": true,
	"revoke": true, "at": true, "reason": true,
}

// UnknownMembers returns the top-level members of a record line that no
// record type defines, as name and raw JSON value. The signature covers
// them, so they stay in the stored line; they are never shown to an agent,
// and to a person only as escaped data (SPEC §6).
func UnknownMembers(line []byte) map[string]string {
	rec, f, err := parse(line, nil)
	if err != nil || rec == nil {
		return nil
	}
	var out map[string]string
	for _, m := range f.members {
		if knownMembers[m.name] {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[m.name] = string(line[m.valueStart:m.valueEnd])
	}
	return out
}
