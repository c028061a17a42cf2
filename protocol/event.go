package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Event kinds (SPEC §2).
const (
	EventCorrection  = "correction"
	EventError       = "error"
	EventEnvironment = "environment"
	EventSurprise    = "surprise"
	EventNote        = "note"
)

// MaxEventBytes bounds one event line; events are reports, not transcripts.
const MaxEventBytes = 64 << 10

// Event is one raw surprise report from an agent. It never leaves the
// machine; only lessons distilled from it do.
type Event struct {
	Kind     string `json:"kind"`
	Said     string `json:"said,omitempty"`
	AgentDid string `json:"agent_did,omitempty"`
	Title    string `json:"title,omitempty"`
	Expected string `json:"expected,omitempty"`
	Happened string `json:"happened,omitempty"`
	Text     string `json:"text,omitempty"`
	Agent    string `json:"agent,omitempty"`
	Session  string `json:"session,omitempty"`
	Cwd      string `json:"cwd,omitempty"`
	At       string `json:"at,omitempty"`
	// Lesson is the one-sentence observation the reporting agent proposes
	// for this surprise [ext]: sleep takes it when it passes every check
	// of SPEC §6, else writes its own.
	Lesson string `json:"lesson,omitempty"`
	// Matches names a lesson held that the agent judges describes this same
	// surprise [ext]: its hash, a prefix of at least MinHashPrefix hex, or
	// its "l-…" id. It counts as a match by meaning (SPEC §7).
	Matches string `json:"matches,omitempty"`
}

// MinHashPrefix is the shortest hash prefix that names a lesson: the 8 hex
// of its "l-…" id.
const MinHashPrefix = 8

// LessonKind maps an event kind to the kind of lesson it feeds.
func (e Event) LessonKind() string { return LessonKindOf(e.Kind) }

// LessonKindOf maps an event kind to a lesson kind: error→error,
// correction→correction, everything else→surprise.
func LessonKindOf(eventKind string) string {
	switch eventKind {
	case EventError:
		return KindError
	case EventCorrection:
		return KindCorrection
	}
	return KindSurprise
}

// DedupeKey is (agent, session, kind, title), where an empty title is
// replaced by the first non-empty of said, text, happened.
func (e Event) DedupeKey() string {
	title := e.Title
	for _, alt := range []string{e.Said, e.Text, e.Happened} {
		if title != "" {
			break
		}
		title = alt
	}
	return strings.Join([]string{e.Agent, e.Session, e.Kind, title}, "\x00")
}

// Validate checks the kind, the field the kind needs, and that "at", when
// given, names an instant (InUTC then writes it in UTC).
func (e Event) Validate() error {
	has := func(s string) bool { return strings.TrimSpace(s) != "" }
	switch e.Kind {
	case "":
		return fmt.Errorf(`the event has no "kind" (one of correction, error, environment, surprise, note)`)
	case EventCorrection:
		if !has(e.Said) {
			return fmt.Errorf(`a correction needs "said": the person's words, verbatim`)
		}
	case EventError:
		if !has(e.Title) && !has(e.Happened) {
			return fmt.Errorf(`an error needs "title" (the call that failed) or "happened"`)
		}
	case EventEnvironment, EventSurprise:
		if !has(e.Happened) && !has(e.Text) {
			return fmt.Errorf(`%s needs "happened" or "text"`, article(e.Kind))
		}
	case EventNote:
		if !has(e.Text) {
			return fmt.Errorf(`a note needs "text"`)
		}
	default:
		return fmt.Errorf("unknown kind %q (want correction, error, environment, surprise or note)", e.Kind)
	}
	if n := utf8.RuneCountInString(e.Lesson); n > MaxTextChars {
		return fmt.Errorf(`"lesson" has %d characters, the limit is %d: propose one sentence`, n, MaxTextChars)
	}
	if e.Matches != "" && !IsHashRef(e.Matches) {
		return fmt.Errorf(`"matches" must name a lesson by its hash: the 32 hex characters, a prefix of at least %d, or the l-… id (got %q)`, MinHashPrefix, e.Matches)
	}
	if e.At != "" {
		if _, err := ParseTime(e.At); err != nil {
			return fmt.Errorf(`"at" must be an RFC 3339 time with a Z or an offset, such as 2025-06-01T12:00:00Z (got %q); leave it out to use the time the event arrives`, e.At)
		}
	}
	return nil
}

// ValidateAt is Validate, and refuses an "at" more than MaxClockSkew
// ahead of now: the same bound a record's time has (SPEC §5 step 7). An
// event from the future would stand for a surprise not yet met, and sleep
// reads "at" to tell a lesson met before it arrived from one confirmed
// after.
func (e Event) ValidateAt(now time.Time) error {
	if err := e.Validate(); err != nil {
		return err
	}
	if e.At == "" {
		return nil
	}
	t, _ := ParseTime(e.At) // Validate has parsed it
	if t.After(now.Add(MaxClockSkew)) {
		return fmt.Errorf(`"at" %s is more than %v ahead of this clock (%s); give the time the event happened, or leave "at" out to use the time it arrives`,
			FormatTime(t), MaxClockSkew, FormatTime(now))
	}
	return nil
}

func article(kind string) string {
	if kind == EventEnvironment {
		return "an environment event"
	}
	return "a surprise"
}

// DecodeEvent reads one event line: a JSON object with the fields of SPEC
// §2, unknown fields ignored. Every field must be a string; "at" comes back
// in UTC.
func DecodeEvent(line []byte) (Event, error) {
	var e Event
	line = bytes.TrimSpace(line)
	if len(line) > MaxEventBytes {
		return e, fmt.Errorf("the event is %d bytes, the limit is %d", len(line), MaxEventBytes)
	}
	if !utf8.Valid(line) {
		return e, fmt.Errorf("the event is not valid UTF-8")
	}
	if len(line) == 0 || line[0] != '{' {
		return e, fmt.Errorf("the line is not a JSON object")
	}
	if err := json.Unmarshal(line, &e); err != nil {
		var typeErr *json.UnmarshalTypeError
		if ok := asTypeError(err, &typeErr); ok {
			return e, fmt.Errorf("field %q must be a string", typeErr.Field)
		}
		return e, fmt.Errorf("the line is not a JSON object: %v", err)
	}
	if err := e.Validate(); err != nil {
		return e, err
	}
	return e.InUTC(), nil
}

func asTypeError(err error, target **json.UnmarshalTypeError) bool {
	t, ok := err.(*json.UnmarshalTypeError)
	if ok {
		*target = t
	}
	return ok
}

// IsHashRef reports whether ref has the form of a lesson reference: the 32
// hex of a hash, a prefix of at least MinHashPrefix of them, or the
// "l-…" id, in any case and with surrounding space. Whether it names a
// lesson held is for the memory to say.
func IsHashRef(ref string) bool {
	h := strings.TrimPrefix(strings.ToLower(strings.TrimSpace(ref)), "l-")
	if len(h) < MinHashPrefix || len(h) > 32 {
		return false
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
