package store

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/remem/remem/internal/scopes"
	"github.com/remem/remem/protocol"
)

// OutboxEntry is one own signed record in signing order.
type OutboxEntry struct {
	Seq    uint64
	Record *protocol.Record
}

func outboxKey(seq uint64) []byte { return append([]byte("o/"), u64(seq)...) }

// AppendOutbox appends this memory's freshly signed records to the outbox
// and merges them into the record set with scope "local", in the same
// transaction. It returns the Seq of the last one (the current last Seq
// when recs is empty).
func (s *Store) AppendOutbox(recs []*protocol.Record) (lastSeq uint64, err error) {
	for i, r := range recs {
		if err := checkRecord(r); err != nil {
			return 0, fmt.Errorf("appending to the outbox: record %d: %w", i+1, err)
		}
	}
	err = s.update(func(w *writer) error {
		var err error
		lastSeq, err = appendOutbox(w, recs, time.Now())
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("appending to the outbox: %w", err)
	}
	return lastSeq, nil
}

// appendOutbox is AppendOutbox inside an update.
func appendOutbox(w *writer, recs []*protocol.Record, now time.Time) (lastSeq uint64, err error) {
	if len(recs) == 0 {
		v, _, err := w.get([]byte("n/outbox"))
		if len(v) == 8 {
			lastSeq = binary.BigEndian.Uint64(v)
		}
		return lastSeq, err
	}
	for _, r := range recs {
		seq, err := w.next("outbox")
		if err != nil {
			return 0, err
		}
		if err := w.set(outboxKey(seq), r.Raw); err != nil {
			return 0, err
		}
		lastSeq = seq
	}
	_, err = putRecords(w, recs, scopes.Local, now)
	return lastSeq, err
}

// Outbox returns up to limit entries (all for limit <= 0) with Seq greater
// than afterSeq, in Seq order.
func (s *Store) Outbox(afterSeq uint64, limit int) ([]OutboxEntry, error) {
	var out []OutboxEntry
	if afterSeq == math.MaxUint64 {
		return nil, nil
	}
	err := s.view(func(txn *badger.Txn) error {
		prefix := []byte("o/")
		o := badger.DefaultIteratorOptions
		o.Prefix = prefix
		it := txn.NewIterator(o)
		defer it.Close()
		for it.Seek(outboxKey(afterSeq + 1)); it.ValidForPrefix(prefix); it.Next() {
			if limit > 0 && len(out) >= limit {
				break
			}
			item := it.Item()
			k := item.Key()
			if len(k) != 10 {
				continue
			}
			seq := binary.BigEndian.Uint64(k[2:])
			raw, err := item.ValueCopy(nil)
			if err != nil {
				return err
			}
			rec, err := protocol.Decode(raw)
			if err != nil {
				return fmt.Errorf("outbox entry %d: %w", seq, err)
			}
			out = append(out, OutboxEntry{Seq: seq, Record: rec})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the outbox: %w", err)
	}
	return out, nil
}

// OwnRecords returns the current own records (the held version of every set
// key that arrived by "local"), in key order: what this memory's folder or
// commons file holds. The caller leaves out what it must not send (e.g. a
// lesson its own revocation withdrew).
func (s *Store) OwnRecords() ([]*protocol.Record, error) {
	held, err := s.InScope(scopes.Local)
	if err != nil {
		return nil, err
	}
	out := make([]*protocol.Record, len(held))
	for i, h := range held {
		out[i] = h.Record
	}
	return out, nil
}

func cursorKey(name string) []byte { return []byte("c/" + name) }

// Cursor returns the outbox Seq the transport name has taken up to (0 when
// it has taken nothing).
func (s *Store) Cursor(name string) (uint64, error) {
	var n uint64
	err := s.view(func(txn *badger.Txn) error {
		v, ok, err := getIn(txn, cursorKey(name))
		if ok && len(v) == 8 {
			n = binary.BigEndian.Uint64(v)
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("reading cursor %s: %w", name, err)
	}
	return n, nil
}

// SetCursor records that the transport name has taken the outbox up to seq.
func (s *Store) SetCursor(name string, seq uint64) error {
	if name == "" {
		return fmt.Errorf("setting a cursor: the name is empty")
	}
	err := s.update(func(w *writer) error { return w.set(cursorKey(name), u64(seq)) })
	if err != nil {
		return fmt.Errorf("setting cursor %s: %w", name, err)
	}
	return nil
}

func metaKey(key string) []byte { return []byte("m/" + key) }

// GetMeta reads the JSON value under key into v; false when there is none.
func (s *Store) GetMeta(key string, v any) (bool, error) {
	var ok bool
	err := s.view(func(txn *badger.Txn) error {
		b, found, err := getIn(txn, metaKey(key))
		if err != nil || !found {
			return err
		}
		ok = true
		return json.Unmarshal(b, v)
	})
	if err != nil {
		return false, fmt.Errorf("reading setting %s: %w", key, err)
	}
	return ok, nil
}

// SetMeta stores v as JSON under key.
func (s *Store) SetMeta(key string, v any) error {
	if key == "" {
		return fmt.Errorf("storing a setting: the key is empty")
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("storing setting %s: %w", key, err)
	}
	err = s.update(func(w *writer) error { return w.set(metaKey(key), b) })
	if err != nil {
		return fmt.Errorf("storing setting %s: %w", key, err)
	}
	return nil
}

// DeleteMeta removes the value under key.
func (s *Store) DeleteMeta(key string) error {
	err := s.update(func(w *writer) error { return w.del(metaKey(key)) })
	if err != nil {
		return fmt.Errorf("deleting setting %s: %w", key, err)
	}
	return nil
}
