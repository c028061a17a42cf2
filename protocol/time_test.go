package protocol

import (
	"strings"
	"testing"
	"time"
)

// TestRecordTimestampsStrictUTC: a record's `updated`/`at` is RFC 3339 in
// UTC with Z (SPEC §5 step 7). Go's parser also takes a comma before the
// fraction, which RFC 3339 does not allow; another implementation would
// refuse such a line, so this one must too, or the sets held diverge.
func TestRecordTimestampsStrictUTC(t *testing.T) {
	id := testIdentity(t, "alice")
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	rec, err := SignLesson(id, LessonDraft{Kind: KindError, Text: "go test fails on a clean checkout until go generate has run", Seen: 1, Strength: 0.5, Updated: now})
	if err != nil {
		t.Fatal(err)
	}
	good := `"updated":"2026-11-20T12:00:00Z"`
	if !strings.Contains(string(rec.Raw), good) {
		t.Fatalf("signed line lacks %s: %s", good, rec.Raw)
	}
	for _, ts := range []string{"2026-11-20T12:00:00,5Z", "2026-11-20T13:00:00+01:00", "2026-11-20T12:00:00+00:00", "2026-11-20T12:00:00z", "2026-11-20 12:00:00Z"} {
		line := strings.Replace(string(rec.Raw), good, `"updated":"`+ts+`"`, 1)
		_, err := Verify([]byte(line), now)
		if ReasonOf(err) != ReasonTimestamp {
			t.Errorf("updated %q: %v, want a timestamp refusal", ts, err)
		}
	}
}

// TestParseTime: times people and agents give (an event's "at", --now) are
// RFC 3339 with a Z or an offset, read as the instant they name, in UTC.
// A time without an offset names no instant and is refused.
func TestParseTime(t *testing.T) {
	want := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	for _, s := range []string{"2025-06-01T12:00:00Z", "2025-06-01T14:00:00+02:00", "2025-06-01T07:00:00-05:00"} {
		got, err := ParseTime(s)
		if err != nil || !got.Equal(want) || got.Location() != time.UTC {
			t.Errorf("ParseTime(%q) = %v, %v; want %v in UTC", s, got, err, want)
		}
	}
	for _, s := range []string{"", "yesterday", "2025-06-01", "2025-06-01T12:00:00", "2025-06-01T12:00:00,5Z", "2025-06-01 12:00:00Z", "1749..."} {
		if got, err := ParseTime(s); err == nil {
			t.Errorf("ParseTime(%q) = %v, want an error", s, got)
		}
	}
}

// TestEventAtInUTC: an event's "at" is checked when it is read and kept in
// UTC with Z, so every stored time is in one form whatever zone the agent
// wrote it in.
func TestEventAtInUTC(t *testing.T) {
	ev, err := DecodeEvent([]byte(`{"kind":"note","text":"x","at":"2025-06-01T14:00:00.25+02:00"}`))
	if err != nil {
		t.Fatal(err)
	}
	if ev.At != "2025-06-01T12:00:00.25Z" {
		t.Fatalf("at = %q, want 2025-06-01T12:00:00.25Z", ev.At)
	}
	if ev, err := DecodeEvent([]byte(`{"kind":"note","text":"x"}`)); err != nil || ev.At != "" {
		t.Fatalf("an event without at: %+v, %v", ev, err)
	}
	for _, at := range []string{"yesterday", "2025-06-01T12:00:00", "2025-06-01"} {
		_, err := DecodeEvent([]byte(`{"kind":"note","text":"x","at":"` + at + `"}`))
		if err == nil || !strings.Contains(err.Error(), `"at"`) {
			t.Errorf("at %q: %v, want a refusal naming \"at\"", at, err)
		}
		if err := (Event{Kind: EventNote, Text: "x", At: at}).Validate(); err == nil {
			t.Errorf("Validate took at %q", at)
		}
	}
	if got := (Event{Kind: EventNote, Text: "x", At: "2025-06-01T07:00:00-05:00"}).InUTC().At; got != "2025-06-01T12:00:00Z" {
		t.Fatalf("InUTC: %q", got)
	}
}
