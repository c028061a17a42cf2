package commons

import (
	"strings"

	"github.com/remem/remem/protocol"
)

// Deliver receives the verified records of one origin's file. scope is
// "commons:" + the client's BaseURL. The records are parsed and verified;
// their Raw bytes are owned by the callee. Pull never calls it
// concurrently.
type Deliver func(scope string, recs []*protocol.Record) error

// Reasons this package adds to the protocol's refusal reasons.
const (
	// ReasonOriginMismatch: a line that verifies but was signed by another
	// origin than the one the file is named after.
	ReasonOriginMismatch protocol.Reason = "origin mismatch"
	// ReasonTooManyRecords: more records than a file may hold.
	ReasonTooManyRecords protocol.Reason = "too many records"
	// ReasonFileTooLarge: a file larger than the limit.
	ReasonFileTooLarge protocol.Reason = "file too large"
	// ReasonEmpty: a PUT with no record line (it would prove nothing about
	// who sent it).
	ReasonEmpty protocol.Reason = "empty"
)

// ValidOrigin reports whether s is 16 lowercase hex characters.
func ValidOrigin(s string) bool {
	if len(s) != 16 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// originOf returns the origin of a file name <16 lowercase hex>.jsonl.
func originOf(name string) (string, bool) {
	origin, ok := strings.CutSuffix(name, ".jsonl")
	if !ok || !ValidOrigin(origin) {
		return "", false
	}
	return origin, true
}

// stripe picks one of the per-origin locks: writers of one origin are
// serialised, writers of different origins rarely share a lock.
func stripe(origin string) int {
	return int(unhex(origin[0]))<<4 | int(unhex(origin[1]))
}

func unhex(c byte) byte {
	if c >= 'a' {
		return c - 'a' + 10
	}
	return c - '0'
}
