package protocol

import "strings"

// Per-origin files (SPEC §10): a folder's DIR/<origin>.jsonl and a
// commons' /commons/<origin>.jsonl hold one origin's current records.

// Reasons a line of a per-origin file is refused beyond Verify's own.
const (
	// ReasonOriginMismatch: the line verifies but another origin signed it.
	ReasonOriginMismatch Reason = "origin mismatch"
	// ReasonTooManyRecords: lines past MaxOriginRecs.
	ReasonTooManyRecords Reason = "too many records"
	// ReasonFileTooLarge: the file is larger than MaxOriginFile.
	ReasonFileTooLarge Reason = "file too large"
)

// ValidOrigin reports whether s is an origin: 16 lowercase hex characters.
func ValidOrigin(s string) bool { return isLowerHex(s, 16) }

// OriginFileName is the name of an origin's file.
func OriginFileName(origin string) string { return origin + ".jsonl" }

// OriginOfFileName returns the origin a file name belongs to, or false when
// the name is not <16 lowercase hex>.jsonl.
func OriginOfFileName(name string) (string, bool) {
	origin, ok := strings.CutSuffix(name, ".jsonl")
	if !ok || !ValidOrigin(origin) {
		return "", false
	}
	return origin, true
}
