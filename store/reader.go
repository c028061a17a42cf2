package store

import (
	"time"

	"github.com/remem/remem/protocol"
)

// Reader is the store's read side, for the code outside node that looks at
// a memory's state (the calibrator, the testnet's measurements, tests):
// only node writes a memory's store ("nothing else writes records", DESIGN),
// so what it hands out cannot write.
type Reader struct{ s *Store }

// Reader is s's read side.
func (s *Store) Reader() Reader { return Reader{s} }

// Lessons is Store.Lessons.
func (r Reader) Lessons() ([]Lesson, error) { return r.s.Lessons() }

// Events is Store.Events.
func (r Reader) Events(since time.Time) ([]StoredEvent, error) { return r.s.Events(since) }

// PendingEvents is Store.PendingEvents.
func (r Reader) PendingEvents() ([]StoredEvent, error) { return r.s.PendingEvents() }

// Each is Store.Each.
func (r Reader) Each(fn func(Held) error) error { return r.s.Each(fn) }

// OwnRecords is Store.OwnRecords.
func (r Reader) OwnRecords() ([]*protocol.Record, error) { return r.s.OwnRecords() }
