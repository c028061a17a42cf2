package node

import (
	"bytes"
	"fmt"
	"slices"
	"time"

	"github.com/remem/remem/protocol"
	"github.com/remem/remem/store"
)

// Publish signs a lesson of this memory directly, outside sleep. It is
// refused with the reason when the text is an instruction or holds raw data.
func (m *Memory) Publish(kind, text string) (*protocol.Record, error) {
	m.sleepMu.Lock()
	defer m.sleepMu.Unlock()
	now := m.Now()
	hash := protocol.LessonHash(kind, text)
	l, ok, err := m.store.GetLesson(hash)
	if err != nil {
		return nil, err
	}
	if !ok {
		l = store.Lesson{Hash: hash, ID: lessonID(hash), Kind: kind, Text: text, Seen: 1, Strength: protocol.InitialStrength(1), Layer: store.LayerPersonal}
	}
	rec, err := protocol.SignLesson(m.id, protocol.LessonDraft{Kind: kind, Text: text, Seen: l.Seen, Strength: l.Strength, Updated: now, ID: l.ID})
	if err != nil {
		return nil, err
	}
	l.Own, l.Published, l.Dirty, l.Updated = true, true, false, now
	if err := m.store.Commit(store.Step{Lesson: l, Signed: []*protocol.Record{rec}}); err != nil {
		return nil, err
	}
	m.changed()
	return rec, nil
}

// Revoke signs the withdrawal of a lesson. An origin revokes its own lesson;
// a confirmer's revocation counts toward a quorum (SPEC §8). ref is
// resolved by ResolveHash.
func (m *Memory) Revoke(ref, reason string) (*protocol.Record, error) {
	hash, err := m.ResolveHash(ref)
	if err != nil {
		return nil, err
	}
	m.sleepMu.Lock()
	defer m.sleepMu.Unlock()
	held, err := m.store.ForHash(hash)
	if err != nil {
		return nil, err
	}
	if len(held) == 0 {
		return nil, fmt.Errorf("%w: %s (`remem lessons` lists the hashes)", ErrUnknownLesson, hash)
	}
	mine := false
	for _, h := range held {
		mine = mine || h.Record.Origin == m.Origin()
	}
	if !mine {
		return nil, fmt.Errorf("this memory neither published nor confirmed lesson %s; only its origin or its confirmers can revoke it (`remem lessons` lists the hashes)", hash)
	}
	rec, err := protocol.SignRevocation(m.id, hash, m.Now(), reason)
	if err != nil {
		return nil, err
	}
	if _, err := m.store.AppendOutbox([]*protocol.Record{rec}); err != nil {
		return nil, err
	}
	m.changed()
	return rec, nil
}

// OwnLines are this memory's current signed records for scope: what its
// folder or commons file holds and what sync offers there. A confirmation
// goes only to the scopes its lesson arrived by; own lessons and
// revocations go everywhere ("" = every scope). Nothing of a revoked
// lesson goes but the revocations (see sendable).
func (m *Memory) OwnLines(scope string) ([][]byte, error) {
	recs, err := m.ownRecords(scope)
	if err != nil {
		return nil, err
	}
	return rawLines(recs), nil
}

// rawLines are the lines of recs, as signed.
func rawLines(recs []*protocol.Record) [][]byte {
	out := make([][]byte, len(recs))
	for i, r := range recs {
		out[i] = r.Raw
	}
	return out
}

// ownRecords are the own records that belong in scope, minus what this
// memory no longer sends: lessons it has itself withdrawn and everything
// of a revoked lesson but the revocations.
func (m *Memory) ownRecords(scope string) ([]*protocol.Record, error) {
	recs, err := m.ownInScope(scope)
	if err != nil {
		return nil, err
	}
	return m.sendable(recs)
}

// ownInScope are the own records that belong in scope, without the lessons
// this memory has itself withdrawn (their revocations go instead).
func (m *Memory) ownInScope(scope string) ([]*protocol.Record, error) {
	recs, err := m.store.OwnRecords()
	if err != nil {
		return nil, err
	}
	return withoutRevoked(recs, func(r *protocol.Record) (bool, error) {
		// Only this memory's origin: a record of another origin in scope
		// local (taken before Import checked it) would be refused by every
		// reader of this memory's file.
		if r.Origin != m.Origin() {
			return false, nil
		}
		return m.sendsTo(r, scope)
	})
}

// withoutRevoked keeps the records keep accepts, minus lesson records that
// a revocation of the same origin in recs withdrew.
func withoutRevoked(recs []*protocol.Record, keep func(*protocol.Record) (bool, error)) ([]*protocol.Record, error) {
	revoked := map[[2]string]time.Time{}
	for _, r := range recs {
		if r.Type == protocol.TypeRevocation {
			revoked[[2]string{r.Origin, r.Hash}] = r.Time
		}
	}
	out := make([]*protocol.Record, 0, len(recs))
	for _, r := range recs {
		if at, ok := revoked[[2]string{r.Origin, r.Hash}]; ok && r.Type == protocol.TypeLesson && !at.Before(r.Time) {
			continue
		}
		if keep != nil {
			ok, err := keep(r)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// Revocation is how a lesson hash is revoked, as a holder computes it
// from every record it holds of the hash (protocol.ComputeState, SPEC §8),
// and so what it still sends of the hash.
type Revocation struct {
	Revoked bool
	// Evidence: revoked by a quorum of its confirmers while a publisher
	// still stands (withdrawn). A confirmer's revocation
	// counts only beside its confirmation, so the confirmations keep
	// travelling with the revocations: a memory that holds the lesson from
	// before, or the author back from a long absence, then counts the
	// quorum too. Once every publisher has withdrawn the lesson (an author
	// does at its next sleep, see Memory.withdrawRevoked), the
	// confirmations stop travelling as well.
	Evidence bool
}

// RevocationOf computes how hash is revoked from held, every record held
// of it (in any scope), with the admitted set admit.
func RevocationOf(hash string, held []*protocol.Record, now time.Time, p protocol.StateParams, admit protocol.Admitted) Revocation {
	st := protocol.ComputeState(hash, held, now, p, admit)
	if st.State != protocol.StateRevoked {
		return Revocation{}
	}
	return Revocation{Revoked: true, Evidence: p.N > 0 && st.Quorum >= p.N && !withdrawn(hash, held, st, admit)}
}

// withdrawn reports whether every publisher of hash has withdrawn it. A
// holder of its lesson records knows its publishers. A memory that holds
// none (it came after the lesson was revoked: a revoked lesson's record
// is never sent) knows an author's withdrawal as the revocation of an
// admitted origin that holds no confirmation of it, since a confirmer's
// revocation stands beside its confirmation; without that rule it kept
// sending the quorum's confirmations that every holder of the record had
// stopped sending, and the two never agreed.
func withdrawn(hash string, held []*protocol.Record, st protocol.Status, admit protocol.Admitted) bool {
	if slices.ContainsFunc(held, func(r *protocol.Record) bool { return r.Hash == hash && r.Type == protocol.TypeLesson }) {
		return len(st.Publishers) == 0
	}
	confirmed := map[string]bool{}
	for _, r := range held {
		if r.Hash == hash && r.Type == protocol.TypeConfirmation {
			confirmed[r.Origin] = true
		}
	}
	return slices.ContainsFunc(held, func(r *protocol.Record) bool {
		return r.Hash == hash && r.Type == protocol.TypeRevocation && !confirmed[r.Origin] && admit.Admits(r.Origin)
	})
}

// Drops reports whether r, a record of a hash revoked as rv, is no longer
// sent: a lesson record of a revoked hash never is; a confirmation is only
// as the quorum's evidence; revocations always are.
func (rv Revocation) Drops(r *protocol.Record) bool {
	switch {
	case !rv.Revoked || r.Type == protocol.TypeRevocation:
		return false
	case r.Type == protocol.TypeConfirmation:
		return !rv.Evidence
	default:
		return true
	}
}

// revocations computes how each hash of a lesson or confirmation in recs is
// revoked, from every record held of it (in any scope).
func (m *Memory) revocations(recs []*protocol.Record) (map[string]Revocation, error) {
	out := map[string]Revocation{}
	now := m.Now()
	// A hash without a revocation held is not revoked: reading its
	// records would tell nothing.
	revoked, err := m.store.RevokedHashes()
	if err != nil {
		return nil, err
	}
	for _, r := range recs {
		if r.Type == protocol.TypeRevocation || !revoked[r.Hash] {
			continue
		}
		if _, done := out[r.Hash]; done {
			continue
		}
		held, err := m.store.ForHash(r.Hash)
		if err != nil {
			return nil, err
		}
		all := make([]*protocol.Record, len(held))
		for i, h := range held {
			all[i] = h.Record
		}
		out[r.Hash] = RevocationOf(r.Hash, all, now, m.cfg.Params.State, m.admitted())
	}
	return out, nil
}

// sendable is recs without what no holder sends of a revoked lesson
// (SPEC §8: every holder drops a revoked lesson from what it sends and
// keeps the revocation): its lesson records, and its confirmations unless
// they are the quorum's evidence (Revocation.Evidence). It is the one rule
// for this memory's export, files, gossip and sync offers.
func (m *Memory) sendable(recs []*protocol.Record) ([]*protocol.Record, error) {
	revs, err := m.revocations(recs)
	if err != nil {
		return nil, err
	}
	out := recs[:0:0]
	for _, r := range recs {
		if !revs[r.Hash].Drops(r) {
			out = append(out, r)
		}
	}
	return out, nil
}

// withdrawReason is the reason of the revocations withdrawRevoked signs.
const withdrawReason = "The lesson was revoked elsewhere; this memory withdraws its record of it."

// withdrawRevoked signs this memory's revocation of every lesson it
// published or confirmed that is revoked (by its origins or by a quorum)
// and whose record it therefore stops sending, unless its own revocation
// at or after that record is held already. The revocation lets its folder
// and commons files drop the record: a commons refuses a file that drops a
// newer record without its origin's revocation (SPEC §10, no rollback). A
// confirmer's revocation also counts toward a quorum, which changes
// nothing for a lesson revoked already. The caller holds sleepMu.
func (m *Memory) withdrawRevoked(now time.Time) ([]*protocol.Record, error) {
	all, err := m.store.OwnRecords()
	if err != nil {
		return nil, err
	}
	var own []*protocol.Record
	revokedAt := map[string]time.Time{}
	for _, r := range all {
		switch {
		case r.Origin != m.Origin():
		case r.Type == protocol.TypeRevocation:
			revokedAt[r.Hash] = r.Time
		default:
			own = append(own, r)
		}
	}
	revs, err := m.revocations(own)
	if err != nil {
		return nil, err
	}
	var out []*protocol.Record
	signed := map[string]bool{}
	for _, r := range own {
		rv := revs[r.Hash]
		if signed[r.Hash] || !rv.Drops(r) {
			continue
		}
		if at, ok := revokedAt[r.Hash]; ok && !at.Before(r.Time) {
			continue
		}
		rec, err := protocol.SignRevocation(m.id, r.Hash, now, withdrawReason)
		if err != nil {
			return nil, err
		}
		signed[r.Hash] = true
		out = append(out, rec)
		m.log.Info("revocation signed for a revoked lesson", "hash", r.Hash, "had", r.Type.String())
	}
	if len(out) == 0 {
		return nil, nil
	}
	if _, err := m.store.AppendOutbox(out); err != nil {
		return nil, err
	}
	m.changed()
	return out, nil
}

// FileLines are this memory's lines for a per-origin file (a folder or a
// commons), within the limits every reader enforces (SPEC §12: 1,000
// records, 256 KiB). When they do not all fit, revocations go first, then
// the newest records; the rest wait until older ones are revoked. It first
// signs the revocations a sleep would (withdrawRevoked), so that a file
// that drops a record of a revoked lesson always holds this memory's
// revocation of it, and a commons takes it (SPEC §10, no rollback).
func (m *Memory) FileLines(scope string) ([][]byte, int, error) {
	m.sleepMu.Lock()
	_, err := m.withdrawRevoked(m.Now())
	m.sleepMu.Unlock()
	if err != nil {
		return nil, 0, err
	}
	recs, err := m.ownRecords(scope)
	if err != nil {
		return nil, 0, err
	}
	// Revocations first, then the newest, records of one second by their
	// bytes: a commons takes a file that drops only the tail of this order
	// (SPEC §10, no rollback).
	byPriority := slices.Clone(recs)
	slices.SortStableFunc(byPriority, func(a, b *protocol.Record) int {
		ar, br := a.Type == protocol.TypeRevocation, b.Type == protocol.TypeRevocation
		if ar != br {
			if ar {
				return -1
			}
			return 1
		}
		if c := b.Time.Compare(a.Time); c != 0 {
			return c
		}
		return bytes.Compare(b.Raw, a.Raw)
	})
	keep := map[*protocol.Record]bool{}
	size := 0
	for _, r := range byPriority {
		if len(keep) == protocol.MaxOriginRecs || size+len(r.Raw)+1 > protocol.MaxOriginFile {
			break
		}
		keep[r] = true
		size += len(r.Raw) + 1
	}
	out := make([][]byte, 0, len(keep))
	for _, r := range recs {
		if keep[r] {
			out = append(out, r.Raw)
		}
	}
	return out, len(recs) - len(out), nil
}

// sendsTo reports whether own record r belongs in scope.
func (m *Memory) sendsTo(r *protocol.Record, scope string) (bool, error) {
	if scope == "" || r.Type != protocol.TypeConfirmation {
		return true, nil
	}
	l, ok, err := m.store.GetLesson(r.Hash)
	if err != nil || !ok {
		return false, err
	}
	return slices.Contains(l.Scopes, scope), nil
}

// OutboxSince returns own records signed after cursor that belong in scope,
// and the new cursor. Transports call it on every sleep. Nothing of a
// lesson revoked by then goes but the revocations (sendable).
func (m *Memory) OutboxSince(scope string, cursor uint64) ([][]byte, uint64, error) {
	entries, err := m.store.Outbox(cursor, 0)
	if err != nil {
		return nil, cursor, err
	}
	var recs []*protocol.Record
	for _, e := range entries {
		cursor = e.Seq
		ok, err := m.sendsTo(e.Record, scope)
		if err != nil {
			return nil, cursor, err
		}
		if ok {
			recs = append(recs, e.Record)
		}
	}
	recs, err = m.sendable(recs)
	if err != nil {
		return nil, cursor, err
	}
	out := make([][]byte, 0, len(recs))
	for _, r := range recs {
		out = append(out, r.Raw)
	}
	return out, cursor, nil
}
