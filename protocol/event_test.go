package protocol

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestDecodeEvent(t *testing.T) {
	cases := []struct {
		name, line, err string
	}{
		{"error with title", `{"kind":"error","title":"go test ./...","happened":"undefined: foo"}`, ""},
		{"error with happened only", `{"kind":"error","happened":"timeout"}`, ""},
		{"correction", `{"kind":"correction","said":"no, use tabs","agent_did":"used spaces"}`, ""},
		{"environment", `{"kind":"environment","text":"docker is missing"}`, ""},
		{"note", `{"kind":"note","text":"x","extra":{"a":1}}`, ""},
		{"unknown fields ignored", `{"kind":"note","text":"x","mood":"good"}`, ""},
		{"not json", `kind=error`, "not a JSON object"},
		{"array", `[{"kind":"error"}]`, "not a JSON object"},
		{"truncated", `{"kind":"error","title":"x`, "not a JSON object"},
		{"no kind", `{"title":"x"}`, `no "kind"`},
		{"unknown kind", `{"kind":"lesson","text":"x"}`, "unknown kind"},
		{"correction without said", `{"kind":"correction","agent_did":"x"}`, `needs "said"`},
		{"error without title", `{"kind":"error","expected":"x"}`, `needs "title"`},
		{"surprise without text", `{"kind":"surprise","title":"x"}`, `needs "happened"`},
		{"note blank", `{"kind":"note","text":"  "}`, `needs "text"`},
		{"number field", `{"kind":"note","text":5}`, `must be a string`},
		{"bad utf-8", "{\"kind\":\"note\",\"text\":\"\xff\"}", "UTF-8"},
		{"too large", `{"kind":"note","text":"` + strings.Repeat("a", MaxEventBytes) + `"}`, "limit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeEvent([]byte(c.line))
			if c.err == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("error %v, want one containing %q", err, c.err)
			}
		})
	}
}

func TestEventDedupeKey(t *testing.T) {
	a := Event{Kind: "correction", Agent: "a", Session: "s", Said: "use tabs"}
	b := Event{Kind: "correction", Agent: "a", Session: "s", Said: "use tabs", AgentDid: "other"}
	c := Event{Kind: "correction", Agent: "a", Session: "s2", Said: "use tabs"}
	if a.DedupeKey() != b.DedupeKey() || a.DedupeKey() == c.DedupeKey() {
		t.Fatal("dedupe key does not follow (agent, session, kind, title)")
	}
	if (Event{Kind: "note", Text: "x"}).LessonKind() != KindSurprise || (Event{Kind: "environment"}).LessonKind() != KindSurprise {
		t.Fatal("kind mapping")
	}
}

// FuzzDecodeEvent: any input gives an event or an error, never a panic, and
// an accepted event always validates.
func FuzzDecodeEvent(f *testing.F) {
	f.Add([]byte(`{"kind":"error","title":"go test","happened":"undefined: x"}`))
	f.Add([]byte(`{"kind":"correction","said":"no"}`))
	f.Add([]byte(`{"kind":1}`))
	f.Add([]byte(`{"kind":"error","title":"npm ci","lesson":"npm ci fails with EINTEGRITY.","matches":"l-0123abcd"}`))
	f.Add([]byte(`{"kind":"note","text":"x","matches":["a"]}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		e, err := DecodeEvent(line)
		if err == nil && e.Validate() != nil {
			t.Fatal("accepted an invalid event")
		}
	})
}

// "lesson" and "matches" (SPEC §2): a lesson is bounded like a record's
// text; matches has the form of a hash reference, whether or not the memory
// holds the lesson.
func TestEventLessonAndMatches(t *testing.T) {
	for _, c := range []struct {
		lesson, matches, err string
	}{
		{"npm ci fails with EINTEGRITY.", "0123abcd", ""},
		{"", "0123ABCD0123abcd0123abcd0123abcd", ""},
		{"", " l-0123abcd ", ""},
		{"", "0123abc", `"matches"`},
		{"", "0123abcd0123abcd0123abcd0123abcd0", `"matches"`},
		{"", "zzzzzzzz", `"matches"`},
		{"", "l-", `"matches"`},
		{strings.Repeat("a", MaxTextChars+1), "", `"lesson" has 1001 characters`},
	} {
		_, err := DecodeEvent([]byte(fmt.Sprintf(`{"kind":"note","text":"x","lesson":%q,"matches":%q}`, c.lesson, c.matches)))
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("lesson %.20q matches %q: %v, want %q", c.lesson, c.matches, err, c.err)
		}
	}
	if _, err := DecodeEvent([]byte(`{"kind":"note","text":"x","matches":12345678}`)); err == nil || !strings.Contains(err.Error(), `"matches" must be a string`) {
		t.Errorf("a number for matches: %v", err)
	}
}

func TestEventValidateAt(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct{ at, err string }{
		{"", ""},
		{"2026-05-01T11:00:00Z", ""},
		{"2026-05-01T14:09:00+02:00", ""}, // 12:09 UTC: within the skew
		{"2026-05-01T12:10:00Z", ""},      // exactly the skew
		{"2026-05-01T12:10:01Z", "more than 10m0s ahead"},
		{"2027-01-01T00:00:00Z", "more than 10m0s ahead"},
		{"2026-05-01 11:00", "RFC 3339"},
		{"2026-05-01T11:00:00", "RFC 3339"}, // no zone
		{"yesterday", "RFC 3339"},
	} {
		err := Event{Kind: "note", Text: "x", At: c.at}.ValidateAt(now)
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("at %q: %v, want %q", c.at, err, c.err)
		}
	}
	// the kind's checks still run
	if err := (Event{Kind: "note"}).ValidateAt(now); err == nil {
		t.Error("a note without text passed ValidateAt")
	}
}
