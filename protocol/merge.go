package protocol

import "bytes"

// Supersedes reports whether record a replaces record b of the same set key
// (SPEC §5 "Merging"): the later updated/at wins, and at equal times the
// line whose bytes sort higher, so the result never depends on arrival order.
func Supersedes(a, b *Record) bool {
	if !a.Time.Equal(b.Time) {
		return a.Time.After(b.Time)
	}
	return bytes.Compare(a.Raw, b.Raw) > 0
}
