package protocol

import (
	"fmt"
	"time"
)

// Type tells the three record kinds apart.
type Type uint8

const (
	TypeLesson Type = iota + 1
	TypeConfirmation
	TypeRevocation
)

func (t Type) String() string {
	switch t {
	case TypeLesson:
		return "lesson"
	case TypeConfirmation:
		return "confirmation"
	case TypeRevocation:
		return "revocation"
	}
	return ""
}

// ParseType reads a type name as String writes it.
func ParseType(s string) (Type, error) {
	for _, t := range []Type{TypeLesson, TypeConfirmation, TypeRevocation} {
		if t.String() == s {
			return t, nil
		}
	}
	return 0, fmt.Errorf("unknown record type %q (want lesson, confirmation or revocation)", s)
}

// Lesson kinds.
const (
	KindError      = "error"
	KindCorrection = "correction"
	KindSurprise   = "surprise"
)

// ValidKind reports whether kind is a lesson kind.
func ValidKind(kind string) bool {
	return kind == KindError || kind == KindCorrection || kind == KindSurprise
}

// Record is one verified (or freshly signed) record. Raw holds the exact
// bytes that were signed and sent; everything else is parsed from them.
type Record struct {
	Type   Type
	Origin string
	Key    string
	// Hash is the lesson hash the record is about: the lesson's own hash, or
	// the hash a confirmation confirms or a revocation revokes.
	Hash string
	// Time is `updated` for a lesson and `at` for the other two.
	Time time.Time

	// Lesson fields. Seen is as received, or math.MaxInt64 for a larger
	// one: Raw keeps its digits, and nothing computes with a received seen.
	Kind     string
	Text     string
	Seen     int64
	Strength float64
	ID       string
	Parents  []string

	// Reason is the optional reason of a revocation.
	Reason string

	Raw []byte
}

// RecordKey identifies a record in the merged set (SPEC §5 "Merging").
type RecordKey struct {
	Type   Type
	Origin string
	Hash   string
}

// Key returns the set key of the record.
func (r *Record) SetKey() RecordKey { return RecordKey{Type: r.Type, Origin: r.Origin, Hash: r.Hash} }

// TimeFormat is how this implementation writes `updated` and `at`.
const TimeFormat = "2006-01-02T15:04:05Z"

// FormatTime writes t as RFC 3339 UTC with second precision.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeFormat) }
