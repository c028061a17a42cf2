package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/dgraph-io/badger/v4"
)

// Every write to the store is atomic, whatever its size: a crash leaves it
// wholly done or not done at all. A change that fits one Badger transaction
// is one transaction. A bigger one (a sleep that absorbs thousands of
// events, a delivered batch of a thousand records) is first gathered in
// memory and written to a journal, then applied in as many transactions as
// Badger needs; the journal's mark is removed by the last of them. Open
// replays a journal whose mark is present, so a kill during the apply only
// delays the change, and drops the parts of one whose mark never landed.

// update runs fn as one atomic change; writers are serialised. fn may run
// twice (the second time gathering a change too big for one transaction),
// so it must have no effect besides the writer's.
func (s *Store) update(fn func(w *writer) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.db == nil {
		return ErrClosed
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	w := &writer{txn: s.db.NewTransaction(true), held: &s.held}
	err := fn(w)
	if err == nil {
		err = w.txn.Commit()
	} else {
		w.txn.Discard()
	}
	if !w.tooBig {
		if err == nil {
			s.use.apply(w.delta)
		}
		return err
	}
	// Too big for one transaction: gather the writes, journal them, apply.
	read := s.db.NewTransaction(false)
	defer read.Discard()
	w = &writer{txn: read, gather: map[string]int{}, held: &s.held}
	if err := fn(w); err != nil {
		return err
	}
	journaled.Add(1)
	if err := s.journal(w.ops); err != nil {
		// Whether the change landed is decided at the next open: the
		// counts are rebuilt when next asked for.
		s.use.forget()
		return err
	}
	s.use.apply(w.delta)
	return nil
}

// journaled counts changes that went through the journal (read by tests).
var journaled atomic.Int64

// writer is what an update writes through. Directly, it writes into one
// transaction and notes when Badger finds it too big; gathering, it keeps
// the writes in memory (reads see them) for the journal.
type writer struct {
	txn    *badger.Txn
	tooBig bool
	gather map[string]int // gathering: key → index of its latest op
	ops    []op

	entries []badger.Entry // a slab of the transaction's entries
	held    *heldFilter    // the store's record keys (nil: not known)
	delta   map[string]Use // the change to each origin's Use (usage.go)
}

// op is one write of a gathered change.
type op struct {
	del      bool
	key, val []byte
}

func (w *writer) set(k, v []byte) error { return w.write(op{key: k, val: v}) }

func (w *writer) del(k []byte) error { return w.write(op{del: true, key: k}) }

func (w *writer) write(o op) error {
	if w.gather != nil {
		o.key, o.val = append([]byte(nil), o.key...), append([]byte(nil), o.val...)
		w.gather[string(o.key)] = len(w.ops)
		w.ops = append(w.ops, o)
		return nil
	}
	var err error
	if o.del {
		err = w.txn.Delete(o.key)
	} else {
		// The transaction keeps the entry until it commits; entries come
		// from a slab rather than one allocation each (badger.NewEntry).
		if len(w.entries) == cap(w.entries) {
			w.entries = make([]badger.Entry, 0, min(2*cap(w.entries)+16, 1024))
		}
		w.entries = append(w.entries, badger.Entry{Key: o.key, Value: o.val})
		err = w.txn.SetEntry(&w.entries[len(w.entries)-1])
	}
	if errors.Is(err, badger.ErrTxnTooBig) {
		w.tooBig = true
	}
	return err
}

// get returns a copy of the value of k, or nil, false; it sees the writer's
// own earlier writes.
func (w *writer) get(k []byte) ([]byte, bool, error) {
	if i, ok := w.gather[string(k)]; ok {
		o := w.ops[i]
		if o.del {
			return nil, false, nil
		}
		return append([]byte(nil), o.val...), true, nil
	}
	return getIn(w.txn, k)
}

// view calls fn with the value of k, if it is held, and reports whether
// it is; it sees the writer's own earlier writes. The value is valid only
// inside fn.
func (w *writer) view(k []byte, fn func(v []byte) error) (bool, error) {
	if i, ok := w.gather[string(k)]; ok {
		o := w.ops[i]
		if o.del {
			return false, nil
		}
		return true, fn(o.val)
	}
	item, err := w.txn.Get(k)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, item.Value(fn)
}

// Journal keys: "j/" + id (8 bytes) marks a complete journal; its parts are
// "j/" + id + part number (4 bytes).
func journalMark(id uint64) []byte { return append([]byte("j/"), u64(id)...) }

func journalPart(id uint64, part uint32) []byte {
	return binary.BigEndian.AppendUint32(journalMark(id), part)
}

// journalPartBytes bounds one part; Badger keeps such values in its value
// log, so a transaction holds many of them.
const journalPartBytes = 512 << 10

// journal writes ops as a journal, then applies them and removes it.
func (s *Store) journal(ops []op) error {
	id, err := s.nextJournal()
	if err != nil {
		return err
	}
	parts := encodeOps(ops)
	keys := make([][]byte, 0, len(parts)+1)
	b := &batch{db: s.db}
	for i, p := range parts {
		k := journalPart(id, uint32(i))
		keys = append(keys, k)
		if err := b.set(k, p); err != nil {
			return b.fail(err)
		}
	}
	if err := b.flush(); err != nil {
		return fmt.Errorf("writing the journal: %w", err)
	}
	// The mark lands after every part: only then is the change decided.
	if err := s.db.Update(func(txn *badger.Txn) error { return txn.Set(journalMark(id), nil) }); err != nil {
		return fmt.Errorf("writing the journal: %w", err)
	}
	return s.applyJournal(ops, append(keys, journalMark(id)))
}

// nextJournal returns a new journal id.
func (s *Store) nextJournal() (uint64, error) {
	var id uint64
	err := s.db.Update(func(txn *badger.Txn) error {
		w := &writer{txn: txn}
		var err error
		id, err = w.next("journal")
		return err
	})
	return id, err
}

// applyJournal writes ops, then deletes the journal keys, the mark last.
func (s *Store) applyJournal(ops []op, keys [][]byte) error {
	b := &batch{db: s.db}
	for _, o := range ops {
		var err error
		if o.del {
			err = b.del(o.key)
		} else {
			err = b.set(o.key, o.val)
		}
		if err != nil {
			return b.fail(err)
		}
	}
	for _, k := range keys {
		if err := b.del(k); err != nil {
			return b.fail(err)
		}
	}
	if err := b.flush(); err != nil {
		return fmt.Errorf("applying the journal: %w", err)
	}
	return nil
}

// replayJournals finishes, at open, every change whose journal is complete
// and drops the parts of any that is not.
func (s *Store) replayJournals() error {
	type journal struct {
		marked bool
		parts  [][]byte
		keys   [][]byte
	}
	found := map[uint64]*journal{}
	var ids []uint64
	err := s.db.View(func(txn *badger.Txn) error {
		return scanPrefix(txn, []byte("j/"), true, func(k, v []byte) error {
			if len(k) != 10 && len(k) != 14 {
				return nil
			}
			id := binary.BigEndian.Uint64(k[2:10])
			j := found[id]
			if j == nil {
				j = &journal{}
				found[id] = j
				ids = append(ids, id)
			}
			if len(k) == 10 {
				j.marked = true
				return nil
			}
			j.parts = append(j.parts, v) // in part order: keys sort so
			j.keys = append(j.keys, k)
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("reading the journal: %w", err)
	}
	for _, id := range ids {
		j := found[id]
		var ops []op
		if j.marked {
			if ops, err = decodeOps(j.parts); err != nil {
				return fmt.Errorf("journal %d: %w", id, err)
			}
		}
		if err := s.applyJournal(ops, append(j.keys, journalMark(id))); err != nil {
			return err
		}
	}
	return nil
}

// encodeOps packs ops into parts of about journalPartBytes: per op a kind
// byte, then key and value, each prefixed with its length.
func encodeOps(ops []op) [][]byte {
	var parts [][]byte
	var cur []byte
	for _, o := range ops {
		kind := byte(0)
		if o.del {
			kind = 1
		}
		cur = append(cur, kind)
		cur = binary.AppendUvarint(cur, uint64(len(o.key)))
		cur = append(cur, o.key...)
		cur = binary.AppendUvarint(cur, uint64(len(o.val)))
		cur = append(cur, o.val...)
		if len(cur) >= journalPartBytes {
			parts = append(parts, cur)
			cur = nil
		}
	}
	if len(cur) > 0 || len(parts) == 0 {
		parts = append(parts, cur)
	}
	return parts
}

func decodeOps(parts [][]byte) ([]op, error) {
	var ops []op
	for _, p := range parts {
		for len(p) > 0 {
			o := op{del: p[0] == 1}
			p = p[1:]
			var ok bool
			if o.key, p, ok = chunk(p); !ok {
				return nil, errors.New("a journal part is cut short")
			}
			if o.val, p, ok = chunk(p); !ok {
				return nil, errors.New("a journal part is cut short")
			}
			ops = append(ops, o)
		}
	}
	return ops, nil
}

// chunk reads one length-prefixed byte string off p.
func chunk(p []byte) (b, rest []byte, ok bool) {
	n, k := binary.Uvarint(p)
	if k <= 0 || uint64(len(p)-k) < n {
		return nil, nil, false
	}
	return p[k : k+int(n)], p[k+int(n):], true
}

// batch writes in as many transactions as Badger needs; it is atomic only
// as a whole journal is.
type batch struct {
	db  *badger.DB
	txn *badger.Txn
}

func (b *batch) set(k, v []byte) error {
	return b.do(func(txn *badger.Txn) error { return txn.Set(k, v) })
}

func (b *batch) del(k []byte) error {
	return b.do(func(txn *badger.Txn) error { return txn.Delete(k) })
}

func (b *batch) do(fn func(*badger.Txn) error) error {
	if b.txn == nil {
		b.txn = b.db.NewTransaction(true)
	}
	err := fn(b.txn)
	if !errors.Is(err, badger.ErrTxnTooBig) {
		return err
	}
	if err := b.flush(); err != nil {
		return err
	}
	b.txn = b.db.NewTransaction(true)
	return fn(b.txn)
}

func (b *batch) flush() error {
	if b.txn == nil {
		return nil
	}
	err := b.txn.Commit()
	b.txn = nil
	return err
}

func (b *batch) fail(err error) error {
	if b.txn != nil {
		b.txn.Discard()
		b.txn = nil
	}
	return err
}

// getIn returns a copy of the value of k in txn, or nil, false.
func getIn(txn *badger.Txn, k []byte) ([]byte, bool, error) {
	item, err := txn.Get(k)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	v, err := item.ValueCopy(nil)
	return v, err == nil, err
}
