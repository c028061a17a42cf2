package protocol

import (
	"fmt"
	"strings"
	"time"
)

// ParseTime reads a time a person or an agent gives (an event's "at", the
// --now of `remem verify`): RFC 3339 with a Z or a numeric offset, returned
// in UTC. A time without an offset names no instant and is refused, and so
// is the comma before the fraction that Go's parser takes but RFC 3339
// does not allow.
func ParseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil || strings.ContainsRune(s, ',') {
		return time.Time{}, fmt.Errorf("%q is not an RFC 3339 time with a Z or an offset, such as 2025-06-01T12:00:00Z", s)
	}
	return t.UTC(), nil
}

// parseUTC reads a record's `updated` or `at`: RFC 3339 in UTC with a Z
// suffix (SPEC §5 step 7), nothing else, so every implementation refuses
// the same lines.
func parseUTC(s string) (time.Time, error) {
	if !strings.HasSuffix(s, "Z") {
		return time.Time{}, fmt.Errorf("%q is not in UTC with a Z suffix", s)
	}
	return ParseTime(s)
}

// InUTC returns the event with its "at" written in UTC with Z, the instant
// unchanged, so stored events carry one form of time whatever zone the
// agent wrote. An "at" that does not parse is left as it is; Validate
// refuses it.
func (e Event) InUTC() Event {
	if t, err := ParseTime(e.At); err == nil {
		e.At = t.Format(time.RFC3339Nano)
	}
	return e
}
