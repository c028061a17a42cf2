package store

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/remem/remem/protocol"
)

// StoredEvent is one local event (SPEC §2) as kept.
type StoredEvent struct {
	Seq      uint64
	Event    protocol.Event
	Received time.Time
	// Lesson is the hash of the lesson the event was absorbed into, "" while
	// it is pending.
	Lesson string
}

type eventValue struct {
	Event    protocol.Event `json:"event"`
	Received time.Time      `json:"received"`
	Lesson   string         `json:"lesson,omitempty"`
}

func eventKey(seq uint64) []byte   { return append([]byte("e/"), u64(seq)...) }
func pendingKey(seq uint64) []byte { return append([]byte("p/"), u64(seq)...) }
func dedupeKey(e protocol.Event) []byte {
	sum := sha256.Sum256([]byte(e.DedupeKey()))
	return append([]byte("d/"), sum[:]...)
}
func absorbedPrefix(hash string) []byte { return []byte("a/" + hash + "/") }
func absorbedKey(hash string, seq uint64) []byte {
	return append(absorbedPrefix(hash), u64(seq)...)
}

// timeKey orders times as unsigned big-endian numbers (nanoseconds since
// 1970 with the sign bit flipped, clamped to what int64 nanoseconds hold).
func timeBytes(t time.Time) []byte {
	lo, hi := time.Unix(0, -1<<63), time.Unix(0, 1<<63-1)
	switch {
	case t.Before(lo):
		t = lo
	case t.After(hi):
		t = hi
	}
	return u64(uint64(t.UnixNano()) ^ 1<<63)
}

func receivedKey(t time.Time, seq uint64) []byte {
	k := append([]byte("t/"), timeBytes(t)...)
	return append(k, u64(seq)...)
}

// AddEvents stores the events not held yet (by protocol.Event.DedupeKey,
// also within evs) as pending, in one transaction, and counts both.
func (s *Store) AddEvents(evs []protocol.Event, received time.Time) (added, duplicates int, err error) {
	received = received.UTC()
	err = s.update(func(w *writer) error {
		// A change too big for one transaction runs again through the
		// journal (atomic.go): count that run only.
		added, duplicates = 0, 0
		for _, e := range evs {
			dk := dedupeKey(e)
			_, held, err := w.get(dk)
			if err != nil {
				return err
			}
			if held {
				duplicates++
				continue
			}
			seq, err := w.next("event")
			if err != nil {
				return err
			}
			v, err := json.Marshal(eventValue{Event: e, Received: received})
			if err != nil {
				return err
			}
			for _, kv := range [][2][]byte{
				{eventKey(seq), v},
				{dk, u64(seq)},
				{pendingKey(seq), nil},
				{receivedKey(received, seq), nil},
			} {
				if err := w.set(kv[0], kv[1]); err != nil {
					return err
				}
			}
			added++
		}
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("storing events: %w", err)
	}
	return added, duplicates, nil
}

func loadEvent(get func(k []byte) ([]byte, bool, error), seq uint64) (StoredEvent, bool, error) {
	v, ok, err := get(eventKey(seq))
	if err != nil || !ok {
		return StoredEvent{}, false, err
	}
	var ev eventValue
	if err := json.Unmarshal(v, &ev); err != nil {
		return StoredEvent{}, false, fmt.Errorf("event %d: %w", seq, err)
	}
	return StoredEvent{Seq: seq, Event: ev.Event, Received: ev.Received, Lesson: ev.Lesson}, true, nil
}

// eventsBySeqIndex loads the events whose seqs end the keys under prefix.
func eventsByIndex(txn *badger.Txn, prefix []byte) ([]StoredEvent, error) {
	var seqs []uint64
	if err := scanPrefix(txn, prefix, false, func(k, _ []byte) error {
		if len(k) >= 8 {
			seqs = append(seqs, binary.BigEndian.Uint64(k[len(k)-8:]))
		}
		return nil
	}); err != nil {
		return nil, err
	}
	slices.Sort(seqs)
	out := make([]StoredEvent, 0, len(seqs))
	for _, seq := range seqs {
		e, ok, err := loadEvent(func(k []byte) ([]byte, bool, error) { return getIn(txn, k) }, seq)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, e)
		}
	}
	return out, nil
}

// PendingEvents returns the events not yet absorbed into a lesson, in Seq
// order.
func (s *Store) PendingEvents() ([]StoredEvent, error) {
	var out []StoredEvent
	err := s.view(func(txn *badger.Txn) (err error) {
		out, err = eventsByIndex(txn, []byte("p/"))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("reading pending events: %w", err)
	}
	return out, nil
}

// EventsOf returns the events absorbed into the lesson lessonHash, in Seq
// order.
func (s *Store) EventsOf(lessonHash string) ([]StoredEvent, error) {
	if lessonHash == "" {
		return nil, nil
	}
	var out []StoredEvent
	err := s.view(func(txn *badger.Txn) (err error) {
		out, err = eventsByIndex(txn, absorbedPrefix(lessonHash))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("reading the events of lesson %s: %w", lessonHash, err)
	}
	return out, nil
}

// Events returns the events received at or after since (all of them for
// the zero time), in Seq order.
func (s *Store) Events(since time.Time) ([]StoredEvent, error) {
	var out []StoredEvent
	err := s.view(func(txn *badger.Txn) error {
		prefix := []byte("t/")
		start := prefix
		if !since.IsZero() {
			start = append([]byte("t/"), timeBytes(since)...)
		}
		var seqs []uint64
		o := badger.DefaultIteratorOptions
		o.Prefix, o.PrefetchValues = prefix, false
		it := txn.NewIterator(o)
		for it.Seek(start); it.ValidForPrefix(prefix); it.Next() {
			k := it.Item().Key()
			if len(k) == 2+16 {
				seqs = append(seqs, binary.BigEndian.Uint64(k[10:]))
			}
		}
		it.Close()
		slices.Sort(seqs)
		for _, seq := range seqs {
			e, ok, err := loadEvent(func(k []byte) ([]byte, bool, error) { return getIn(txn, k) }, seq)
			if err != nil {
				return err
			}
			if ok {
				out = append(out, e)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading events: %w", err)
	}
	return out, nil
}

// AssignEvents records that the events seqs were absorbed into the lesson
// lessonHash (moving them from an earlier lesson if need be); an empty
// lessonHash makes them pending again. An unknown seq is an error and
// nothing is changed.
func (s *Store) AssignEvents(seqs []uint64, lessonHash string) error {
	if err := s.update(func(w *writer) error { return assignEvents(w, seqs, lessonHash) }); err != nil {
		return fmt.Errorf("assigning events to lesson %s: %w", lessonHash, err)
	}
	return nil
}

func assignEvents(w *writer, seqs []uint64, lessonHash string) error {
	seqs = slices.Clone(seqs)
	slices.Sort(seqs)
	seqs = slices.Compact(seqs)
	evs := make([]StoredEvent, 0, len(seqs))
	for _, seq := range seqs { // check them all before changing any
		e, ok, err := loadEvent(w.get, seq)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("no event %d", seq)
		}
		evs = append(evs, e)
	}
	for _, e := range evs {
		seq := e.Seq
		var err error
		if e.Lesson == lessonHash {
			continue
		}
		if e.Lesson == "" {
			err = w.del(pendingKey(seq))
		} else {
			err = w.del(absorbedKey(e.Lesson, seq))
		}
		if err != nil {
			return err
		}
		if lessonHash == "" {
			err = w.set(pendingKey(seq), nil)
		} else {
			err = w.set(absorbedKey(lessonHash, seq), nil)
		}
		if err != nil {
			return err
		}
		v, err := json.Marshal(eventValue{Event: e.Event, Received: e.Received, Lesson: lessonHash})
		if err != nil {
			return err
		}
		if err := w.set(eventKey(seq), v); err != nil {
			return err
		}
	}
	return nil
}

// CountEvents returns how many events are held.
func (s *Store) CountEvents() (int, error) {
	n := 0
	err := s.view(func(txn *badger.Txn) error {
		return scanPrefix(txn, []byte("e/"), false, func(_, _ []byte) error { n++; return nil })
	})
	if err != nil {
		return 0, fmt.Errorf("counting events: %w", err)
	}
	return n, nil
}
