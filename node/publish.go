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
		l = store.Lesson{Hash: hash, ID: "l-" + hash[:8], Kind: kind, Text: text, Seen: 1, Strength: protocol.InitialStrength(1), Layer: LayerPersonal}
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
// a confirmer's revocation counts toward a quorum (SPEC §8).
func (m *Memory) Revoke(hash, reason string) (*protocol.Record, error) {
	m.sleepMu.Lock()
	defer m.sleepMu.Unlock()
	held, err := m.store.ForHash(hash)
	if err != nil {
		return nil, err
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
// revocations go everywhere ("" = every scope).
func (m *Memory) OwnLines(scope string) ([][]byte, error) {
	recs, err := m.ownRecords(scope)
	if err != nil {
		return nil, err
	}
	out := make([][]byte, len(recs))
	for i, r := range recs {
		out[i] = r.Raw
	}
	return out, nil
}

// ownRecords are the own records that belong in scope, without the lessons
// this memory has itself withdrawn (their revocations go instead).
func (m *Memory) ownRecords(scope string) ([]*protocol.Record, error) {
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

// FileLines are this memory's lines for a per-origin file (a folder or a
// commons), within the limits every reader enforces (SPEC §12: 1,000
// records, 256 KiB). When they do not all fit, revocations go first, then
// the newest records; the rest wait until older ones are revoked.
func (m *Memory) FileLines(scope string) ([][]byte, int, error) {
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
// and the new cursor. Transports call it on every sleep.
func (m *Memory) OutboxSince(scope string, cursor uint64) ([][]byte, uint64, error) {
	entries, err := m.store.Outbox(cursor, 0)
	if err != nil {
		return nil, cursor, err
	}
	var out [][]byte
	for _, e := range entries {
		cursor = e.Seq
		ok, err := m.sendsTo(e.Record, scope)
		if err != nil {
			return nil, cursor, err
		}
		if ok {
			out = append(out, e.Record.Raw)
		}
	}
	return out, cursor, nil
}
