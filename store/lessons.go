package store

import (
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/remem/remem/protocol"
)

// MaxEpisodes caps the episode texts kept per lesson; the most recent are
// kept.
const MaxEpisodes = 50

// Layers of a lesson (SPEC §9).
const (
	LayerPersonal = "personal"
	LayerDomain   = "domain"
	LayerCommon   = "common"
)

// Lesson is one of this memory's local lessons (SPEC §3, §7): its own, or a
// received candidate.
type Lesson struct {
	Hash     string    `json:"hash"`
	ID       string    `json:"id,omitempty"`
	Kind     string    `json:"kind"`
	Text     string    `json:"text"`
	Seen     int64     `json:"seen"`
	Strength float64   `json:"strength"`
	Updated  time.Time `json:"updated"`
	// Own: written by this memory's sleep (false: a received candidate).
	Own bool `json:"own,omitempty"`
	// Arrived: for received ones, when it first arrived.
	Arrived time.Time `json:"arrived,omitzero"`
	// Scopes a received lesson arrived by (sorted, deduplicated).
	Scopes []string `json:"scopes,omitempty"`
	// Projects: the cwd of the events it came from (sorted, deduplicated).
	Projects []string `json:"projects,omitempty"`
	// WrittenFrom: the projects of the events the text was written from
	// (sorted, deduplicated; "" stands for events without a cwd). Only
	// they decide whether the text may be published (SPEC §6 opt-in):
	// events that join it later raise it but never wrote a word of it.
	// When other events write the same sentence again, it is theirs too
	// if that lets it be published (node's consolidate).
	// Empty for lessons written before it was kept, and for lessons a
	// person published by hand.
	WrittenFrom []string `json:"written_from,omitempty"`
	// Episodes: short texts of the events it absorbed, at most MaxEpisodes
	// (the most recent).
	Episodes []string `json:"episodes,omitempty"`
	// MetBefore: an event older than its arrival already matched it.
	MetBefore bool `json:"met_before,omitempty"`
	// Confirmed: this memory has signed a confirmation for it.
	Confirmed bool `json:"confirmed,omitempty"`
	// Draft: why the lesson is a draft (SPEC §3), e.g. a redaction
	// placeholder glued into a word; a draft is kept and shown locally and
	// never signed. Empty for a lesson that may be shared.
	Draft string `json:"draft,omitempty"`
	// Published: this memory has signed a lesson record for it.
	Published bool `json:"published,omitempty"`
	// Layer: "personal", "domain" or "common".
	Layer string `json:"layer,omitempty"`
	// Corroborators: the other origins counted toward this lesson's
	// strength, each once: those whose lesson of the same hash or meaning,
	// or whose confirmation, raised it, and for a candidate the origin that
	// brought it.
	Corroborators []string `json:"corroborators,omitempty"`
	// Dirty: an own lesson changed since it was last signed.
	Dirty bool `json:"dirty,omitempty"`
}

func lessonKey(hash string) []byte { return []byte("l/" + hash) }

func sortedSet(ss []string) []string {
	if len(ss) == 0 {
		return nil
	}
	out := slices.Clone(ss)
	slices.Sort(out)
	return slices.Compact(out)
}

// PutLesson stores l under its hash, replacing what was there.
func (s *Store) PutLesson(l Lesson) error { return s.PutLessons([]Lesson{l}) }

// PutLessons stores lessons in one transaction (the receive path writes a
// whole delivered batch at once).
func (s *Store) PutLessons(ls []Lesson) error {
	_, err := s.Merge(nil, "", time.Time{}, ls)
	return err
}

// Merge stores records that arrived by scope, merged as PutRecords does,
// and lessons, as PutLessons does, in one transaction: the receive path
// writes a delivered batch and the lessons it changed at once.
func (s *Store) Merge(recs []*protocol.Record, scope string, arrived time.Time, ls []Lesson) ([]Outcome, error) {
	if len(recs) > 0 {
		if err := checkScope(scope); err != nil {
			return nil, fmt.Errorf("storing records: %w", err)
		}
		for i, r := range recs {
			if err := checkRecord(r); err != nil {
				return nil, fmt.Errorf("storing records: record %d: %w", i+1, err)
			}
		}
	}
	vals, err := encodeLessons(ls)
	if err != nil {
		return nil, err
	}
	s.ownMu.Lock()
	defer s.ownMu.Unlock()
	var out []Outcome
	err = s.update(func(w *writer) error {
		if len(recs) > 0 {
			var err error
			if out, err = putRecords(w, recs, scope, arrived); err != nil {
				return err
			}
		}
		return s.putLessons(w, ls, vals)
	})
	if err != nil {
		return nil, fmt.Errorf("storing %d records and %d lessons: %w", len(recs), len(ls), err)
	}
	s.noteOwn(ls)
	return out, nil
}

// putLessons writes encoded lessons and their own-lesson index entries
// inside an update; the caller holds ownMu and calls noteOwn after the
// update succeeded.
func (s *Store) putLessons(w *writer, ls []Lesson, vals [][]byte) error {
	for i, l := range ls {
		if err := w.set(lessonKey(l.Hash), vals[i]); err != nil {
			return err
		}
		if err := s.indexLesson(w, &ls[i]); err != nil {
			return err
		}
		var err error
		switch {
		case l.Own:
			err = w.set(ownKey(l.Hash), nil)
		case s.own[l.Hash]:
			err = w.del(ownKey(l.Hash))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// noteOwn brings the in-memory own-lesson set up to date with written
// lessons; the caller holds ownMu.
func (s *Store) noteOwn(ls []Lesson) {
	for _, l := range ls {
		if l.Own {
			s.own[l.Hash] = true
		} else {
			delete(s.own, l.Hash)
		}
	}
}

// Step is what sleep or publishing does to one lesson: the events it
// absorbed, the lesson as it now is, and the records signed for it.
type Step struct {
	Lesson   Lesson
	Absorbed []uint64           // events now assigned to Lesson
	Signed   []*protocol.Record // own records for the outbox
	// Replaces is the hash of a lesson Lesson takes the place of (a draft
	// written again, SPEC §3): it is deleted and its events move to Lesson,
	// in the same change.
	Replaces string
}

// Commit writes steps as one atomic change: a crash leaves every lesson,
// its events and its signed records as they were before or as they are
// after, never a lesson marked published without its record or events
// absorbed into a lesson that was not written.
func (s *Store) Commit(steps ...Step) error {
	ls := make([]Lesson, len(steps))
	var signed []*protocol.Record
	for i, st := range steps {
		ls[i] = st.Lesson
		for j, r := range st.Signed {
			if err := checkRecord(r); err != nil {
				return fmt.Errorf("committing lesson %s: record %d: %w", st.Lesson.Hash, j+1, err)
			}
		}
		signed = append(signed, st.Signed...)
	}
	vals, err := encodeLessons(ls)
	if err != nil {
		return err
	}
	now := time.Now()
	s.ownMu.Lock()
	defer s.ownMu.Unlock()
	err = s.update(func(w *writer) error {
		for _, st := range steps {
			if st.Replaces != "" && st.Replaces != st.Lesson.Hash {
				if err := replaceLesson(w, st.Replaces, st.Lesson.Hash); err != nil {
					return err
				}
			}
			if len(st.Absorbed) > 0 {
				if err := assignEvents(w, st.Absorbed, st.Lesson.Hash); err != nil {
					return err
				}
			}
		}
		if err := s.putLessons(w, ls, vals); err != nil {
			return err
		}
		_, err := appendOutbox(w, signed, now)
		return err
	})
	if err != nil {
		return fmt.Errorf("committing %d lessons: %w", len(steps), err)
	}
	for _, st := range steps {
		if st.Replaces != "" && st.Replaces != st.Lesson.Hash {
			delete(s.own, st.Replaces)
		}
	}
	s.noteOwn(ls)
	return nil
}

// replaceLesson deletes the lesson old and moves its events to new.
func replaceLesson(w *writer, old, new string) error {
	var seqs []uint64
	if err := scanPrefix(w.txn, absorbedPrefix(old), false, func(k, _ []byte) error {
		seqs = append(seqs, binary.BigEndian.Uint64(k[len(k)-8:]))
		return nil
	}); err != nil {
		return err
	}
	if err := assignEvents(w, seqs, new); err != nil {
		return err
	}
	return deleteLesson(w, old)
}

// encodeLessons normalises lessons in place and encodes them.
func encodeLessons(ls []Lesson) ([][]byte, error) {
	vals := make([][]byte, len(ls))
	for i := range ls {
		l := &ls[i]
		if l.Hash == "" {
			return nil, fmt.Errorf("storing a lesson: it has no hash")
		}
		l.Scopes = sortedSet(l.Scopes)
		l.Projects = sortedSet(l.Projects)
		l.WrittenFrom = sortedSet(l.WrittenFrom)
		if n := len(l.Episodes); n > MaxEpisodes {
			l.Episodes = slices.Clone(l.Episodes[n-MaxEpisodes:])
		}
		l.Updated = l.Updated.UTC()
		if !l.Arrived.IsZero() {
			l.Arrived = l.Arrived.UTC()
		}
		v, err := marshalLesson(l)
		if err != nil {
			return nil, fmt.Errorf("storing lesson %s: %w", l.Hash, err)
		}
		vals[i] = v
	}
	return vals, nil
}

// loadOwn reads the w/ index once at open; from then on the store, the
// only writer, keeps the set current, so the receive path never scans.
func (s *Store) loadOwn() error {
	s.own = map[string]bool{}
	return s.view(func(txn *badger.Txn) error {
		return scanPrefix(txn, []byte("w/"), false, func(k, _ []byte) error {
			s.own[string(k[2:])] = true
			return nil
		})
	})
}

// ownKey indexes the lessons this memory wrote itself, which the receive
// path compares every new lesson with.
func ownKey(hash string) []byte { return []byte("w/" + hash) }

// OwnLessons returns this memory's own lessons, ordered by hash, without
// reading the received candidates.
func (s *Store) OwnLessons() ([]Lesson, error) {
	s.ownMu.Lock()
	hashes := make([]string, 0, len(s.own))
	for h := range s.own {
		hashes = append(hashes, h)
	}
	s.ownMu.Unlock()
	if len(hashes) == 0 {
		return nil, nil
	}
	slices.Sort(hashes)
	byHash, err := s.GetLessons(hashes)
	if err != nil {
		return nil, fmt.Errorf("reading own lessons: %w", err)
	}
	out := make([]Lesson, 0, len(hashes))
	for _, h := range hashes {
		if l, ok := byHash[h]; ok {
			out = append(out, l)
		}
	}
	return out, nil
}

// GetLesson returns the lesson with hash.
func (s *Store) GetLesson(hash string) (Lesson, bool, error) {
	m, err := s.GetLessons([]string{hash})
	if err != nil {
		return Lesson{}, false, err
	}
	l, ok := m[hash]
	return l, ok, nil
}

// GetLessons returns the lessons held for hashes (missing ones are absent
// from the map), in one read.
func (s *Store) GetLessons(hashes []string) (map[string]Lesson, error) {
	out := make(map[string]Lesson, len(hashes))
	err := s.view(func(txn *badger.Txn) error {
		for _, h := range hashes {
			v, found, err := getIn(txn, lessonKey(h))
			if err != nil {
				return err
			}
			if !found {
				continue
			}
			var l Lesson
			if err := unmarshalLesson(v, &l); err != nil {
				return err
			}
			out[h] = l
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading lessons: %w", err)
	}
	return out, nil
}

// Lessons returns every local lesson, ordered by hash.
func (s *Store) Lessons() ([]Lesson, error) {
	var out []Lesson
	err := s.view(func(txn *badger.Txn) error {
		return scanPrefix(txn, []byte("l/"), true, func(_, v []byte) error {
			var l Lesson
			if err := unmarshalLesson(v, &l); err != nil {
				return err
			}
			out = append(out, l)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("reading lessons: %w", err)
	}
	return out, nil
}

func deleteLesson(w *writer, hash string) error {
	if err := w.del(ownKey(hash)); err != nil {
		return err
	}
	if err := unindexLesson(w, hash); err != nil {
		return err
	}
	return w.del(lessonKey(hash))
}

// DeleteLesson removes the local lesson hash (not its records, nor the
// events absorbed into it). Deleting a missing lesson is not an error.
func (s *Store) DeleteLesson(hash string) error {
	s.ownMu.Lock()
	defer s.ownMu.Unlock()
	err := s.update(func(w *writer) error { return deleteLesson(w, hash) })
	if err == nil {
		delete(s.own, hash)
	}
	if err != nil {
		return fmt.Errorf("deleting lesson %s: %w", hash, err)
	}
	return nil
}
