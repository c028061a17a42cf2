package store

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/dgraph-io/badger/v4"

	"github.com/remem/remem/protocol"
)

// Use is what one origin's records take in the store: how many are held
// and the bytes of their stored values (the raw lines, unknown members and
// all, plus a small header and their scopes), so a budget on strangers'
// records counts what they really cost.
type Use struct {
	Records int
	Bytes   int64
}

func (u Use) add(v Use) Use { return Use{u.Records + v.Records, u.Bytes + v.Bytes} }

// usage is the Use of every origin held. It is built by the first caller
// that asks (a key-only scan: every record stays in the LSM tree, under
// the value threshold, so Badger knows each value's exact size without
// reading it) and kept current by every write after that, so a home
// that never asks pays nothing. Writers update it under Store.wmu after
// their change committed; mu lets readers ask meanwhile.
type usage struct {
	mu    sync.RWMutex
	built bool
	by    map[string]Use
}

// noteDelta is a writer's change to origin's Use, applied after commit.
func (w *writer) noteDelta(origin string, d Use) {
	if w.delta == nil {
		w.delta = map[string]Use{}
	}
	w.delta[origin] = w.delta[origin].add(d)
}

// apply adds a committed change's deltas.
func (u *usage) apply(delta map[string]Use) {
	if len(delta) == 0 {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.built {
		return
	}
	for o, d := range delta {
		n := u.by[o].add(d)
		if n.Records <= 0 {
			delete(u.by, o)
			continue
		}
		u.by[o] = n
	}
}

// forget drops the counts: the next reader rebuilds them (after a change
// whose outcome is not known, such as a journal that failed midway).
func (u *usage) forget() {
	u.mu.Lock()
	u.built, u.by = false, nil
	u.mu.Unlock()
}

// ensure builds the counts if they are not built; the caller holds wmu.
func (s *Store) ensureUsage() error {
	s.use.mu.RLock()
	built := s.use.built
	s.use.mu.RUnlock()
	if built {
		return nil
	}
	by := map[string]Use{}
	err := s.view(func(txn *badger.Txn) error {
		prefix := []byte(recordKeysPrefix)
		o := badger.DefaultIteratorOptions
		o.Prefix, o.PrefetchValues = prefix, false
		it := txn.NewIterator(o)
		defer it.Close()
		for it.Seek(prefix); it.ValidForPrefix(prefix); it.Next() {
			item := it.Item()
			origin := originOfKey(item.Key())
			if origin == "" {
				continue
			}
			by[origin] = by[origin].add(Use{1, item.ValueSize()})
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("counting the records held per origin: %w", err)
	}
	s.use.mu.Lock()
	s.use.built, s.use.by = true, by
	s.use.mu.Unlock()
	return nil
}

// originOfKey is the origin of a record key r/<hash>/<type>/<origin>.
func originOfKey(k []byte) string {
	i := bytes.LastIndexByte(k, '/')
	if i < 0 {
		return ""
	}
	return string(k[i+1:])
}

// UseOf returns what origin's records take in the store.
func (s *Store) UseOf(origin string) (Use, error) {
	if err := s.lockedUsage(); err != nil {
		return Use{}, err
	}
	s.use.mu.RLock()
	defer s.use.mu.RUnlock()
	return s.use.by[origin], nil
}

// EachUse calls fn with the Use of every origin held, in no order.
func (s *Store) EachUse(fn func(origin string, u Use)) error {
	if err := s.lockedUsage(); err != nil {
		return err
	}
	s.use.mu.RLock()
	defer s.use.mu.RUnlock()
	for o, u := range s.use.by {
		fn(o, u)
	}
	return nil
}

// lockedUsage builds the counts under the writers' lock, so no write
// lands between the scan and the first delta.
func (s *Store) lockedUsage() error {
	s.use.mu.RLock()
	built := s.use.built
	s.use.mu.RUnlock()
	if built {
		return nil
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.ensureUsage()
}

// Forget deletes the records of keys (held or not) with their scope
// entries, in one atomic change, and returns how many were held. It is
// how a memory evicts strangers' records past its budget (node); records
// are otherwise never deleted. A key's hash stays in the held filter,
// which only ever says "maybe" of it then.
func (s *Store) Forget(keys []protocol.RecordKey) (int, error) {
	n := 0
	err := s.update(func(w *writer) error {
		n = 0
		var kb []byte
		for _, k := range keys {
			kb = appendRecordKey(kb[:0], k)
			var scopes []string
			size := 0
			found, err := w.view(kb, func(v []byte) error {
				size = len(v)
				st, err := decodeStored(v)
				scopes = st.Scopes
				return err
			})
			if err != nil {
				return err
			}
			if !found {
				continue
			}
			n++
			rk := append([]byte(nil), kb...)
			if err := w.del(rk); err != nil {
				return err
			}
			for _, sc := range scopes {
				if err := w.del(scopeKey(sc, k)); err != nil {
					return err
				}
			}
			w.noteDelta(k.Origin, Use{-1, -int64(size)})
		}
		return unindexOrigins(w, keys)
	})
	if err != nil {
		return 0, fmt.Errorf("forgetting %d records: %w", len(keys), err)
	}
	return n, nil
}
