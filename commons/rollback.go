package commons

import (
	"bytes"
	"fmt"
	"time"

	"github.com/remem/remem/protocol"
)

// ReasonRollback: a PUT would take the origin's file back in time (SPEC §10
// "No rollback"): it lacks a stored revocation, or a stored record at least
// as new as its own oldest record, or holds an older version of one.
const ReasonRollback protocol.Reason = "rollback"

// WireKey is a record key as a 409 names it.
type WireKey struct {
	Type   string `json:"type"`
	Origin string `json:"origin"`
	Hash   string `json:"hash"`
}

// rollbackError is the first stored record a new file lacks.
type rollbackError struct {
	stored *protocol.Record // the stored record the new file lacks
	have   *protocol.Record // the new file's record of that key (older), or nil
	oldest time.Time        // the new file's oldest record
}

func (e *rollbackError) key() WireKey {
	return WireKey{Type: e.stored.Type.String(), Origin: e.stored.Origin, Hash: e.stored.Hash}
}

func (e *rollbackError) Error() string {
	what := fmt.Sprintf("the stored file holds the %s of lesson %s (%s)", e.stored.Type, e.stored.Hash, protocol.FormatTime(e.stored.Time))
	var why string
	switch {
	case e.have != nil:
		why = fmt.Sprintf("the new file holds an older one (%s)", protocol.FormatTime(e.have.Time))
	case e.stored.Type == protocol.TypeRevocation:
		why = "the new file lacks it, and a revocation is never dropped"
	default:
		why = fmt.Sprintf("the new file lacks it, though its oldest record (%s) is not newer", protocol.FormatTime(e.oldest))
	}
	return fmt.Sprintf("%s: %s, and %s; a file may drop only its oldest records, never a revocation or a newer record, "+
		"so this looks like an older file replayed: push a file built from the origin's current records "+
		"(GET the stored file to see what it holds)", ReasonRollback, what, why)
}

// checkRollback applies SPEC §10 "No rollback" to a new file (its verified
// records) against the stored file's bytes: every stored revocation, and
// every stored record at least as new as the new file's oldest lesson or
// confirmation, must be in the new file with the same or a newer version (protocol.Supersedes:
// `updated`/`at`, ties broken by the line bytes). It returns the first
// stored record, in file order, that is not. Stored lines that do not
// decode are passed over: they prove nothing about the origin.
//
// A lesson or a confirmation the new file revokes is excepted: the
// origin's revocation of that hash, at or after the stored record, stands
// for it. An origin revokes its own lesson; a memory that published or
// confirmed a lesson revoked since (by its origins or by a quorum, SPEC
// §8) signs its own revocation of it before its file drops the record, as
// no holder sends a revoked lesson's records but the revocations
// (node.RevocationOf, node.Memory.FileLines). The revocation must be at or
// after the record it stands for.
func checkRollback(stored []byte, next []*protocol.Record) error {
	if len(stored) == 0 || len(next) == 0 {
		return nil
	}
	best := make(map[protocol.RecordKey]*protocol.Record, len(next))
	// The oldest record a file keeps is its oldest lesson or confirmation:
	// revocations are kept whatever their age, so an old one must not
	// forbid dropping the oldest lessons to stay under the limits.
	// Records signed in the same second are ordered by their bytes, as the
	// merge rule orders them, so a file cut inside such a group is no
	// rollback when it keeps the group's upper part.
	var oldest *protocol.Record
	revoked := map[string]time.Time{} // lesson hash → the origin's revocation in next
	for _, r := range next {
		if r.Type == protocol.TypeRevocation {
			revoked[r.Hash] = r.Time
		} else if oldest == nil || olderThan(r, oldest) {
			oldest = r
		}
		if b, ok := best[r.SetKey()]; !ok || protocol.Supersedes(r, b) {
			best[r.SetKey()] = r
		}
	}
	for _, l := range protocol.SplitLines(stored) {
		s, err := protocol.Decode(l.Bytes)
		if err != nil {
			continue
		}
		if s.Type != protocol.TypeRevocation && (oldest == nil || olderThan(s, oldest)) {
			continue // an old record the file may drop
		}
		if at, ok := revoked[s.Hash]; ok && s.Type != protocol.TypeRevocation && !at.Before(s.Time) {
			continue // the origin withdrew its lesson or confirmation: its revocation stands for it
		}
		n, ok := best[s.SetKey()]
		if ok && (bytes.Equal(n.Raw, s.Raw) || protocol.Supersedes(n, s)) {
			continue
		}
		e := &rollbackError{stored: s, oldest: oldest.Time}
		if ok {
			e.have = n
		}
		return e
	}
	return nil
}

// olderThan orders records by time, then by their bytes: the order in
// which a file drops its oldest records (node.Memory.FileLines).
func olderThan(a, b *protocol.Record) bool {
	if c := a.Time.Compare(b.Time); c != 0 {
		return c < 0
	}
	return bytes.Compare(a.Raw, b.Raw) < 0
}
