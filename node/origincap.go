package node

import (
	"sync"

	"github.com/remem/remem/protocol"
)

// A memory holds at most protocol.MaxOriginRecs records per origin and
// scope (SPEC §10), so one key cannot fill the store, nor make every
// delivery compare its lessons with every event. Every type of record
// counts. Past the cap an origin's newer versions of records already held
// are still taken, and so are its revocations of hashes this memory holds
// a lesson or confirmation of (its own or another origin's, or one the
// same batch brings): only those change anything. A revocation of a hash
// never held is new record like any other, left out past the cap. (The
// SPEC keeps the newest lessons; this memory keeps the first ones it took,
// since dropping held records would need an index by origin and age that
// the store does not have yet.)

// originCounts counts the records held per scope and origin, loaded from
// the store the first time a scope is asked about and kept current by
// Deliver.
type originCounts struct {
	mu      sync.Mutex
	byScope map[string]map[string]int
}

// originCountsOf returns the counts of scope (the caller holds
// m.origins.mu).
func (m *Memory) originCountsOf(scope string) (map[string]int, error) {
	oc := &m.origins
	if c, ok := oc.byScope[scope]; ok {
		return c, nil
	}
	held, err := m.store.InScope(scope)
	if err != nil {
		return nil, err
	}
	c := map[string]int{}
	for _, h := range held {
		c[h.Record.Origin]++
	}
	if oc.byScope == nil {
		oc.byScope = map[string]map[string]int{}
	}
	oc.byScope[scope] = c
	return c, nil
}

// Room is how many new records of origin the memory still takes in scope:
// what the per-origin cap leaves, and for an origin not admitted no more
// than the strangers' budget leaves. Its own records are never capped.
func (m *Memory) Room(scope, origin string) int {
	if origin == m.Origin() {
		return protocol.MaxOriginRecs
	}
	if !m.admitted().Admits(origin) {
		return min(m.strangerRoom(), m.originRoom(scope, origin))
	}
	return m.originRoom(scope, origin)
}

// originRoom is what the per-origin cap leaves origin in scope.
func (m *Memory) originRoom(scope, origin string) int {
	m.origins.mu.Lock()
	defer m.origins.mu.Unlock()
	c, err := m.originCountsOf(scope)
	if err != nil {
		// Without the counts nothing new is taken: the validator ignores
		// the message, and the next one asks the store again.
		m.log.Warn("counting the records held per origin", "scope", scope, "err", err)
		return 0
	}
	return max(0, protocol.MaxOriginRecs-c[origin])
}

// capOrigins drops the records of recs that would take an origin past the
// cap in scope: records new to the memory, other than revocations of a
// hash it holds. It returns the records to merge and how many it dropped.
func (m *Memory) capOrigins(scope string, recs []*protocol.Record) ([]*protocol.Record, int, error) {
	m.origins.mu.Lock()
	defer m.origins.mu.Unlock()
	counts, err := m.originCountsOf(scope)
	if err != nil {
		return nil, 0, err
	}
	incoming := map[string]int{}
	for _, r := range recs {
		incoming[r.Origin]++
	}
	keep := make([]bool, len(recs))
	dropped := 0
	added := map[string]int{}
	batch := map[string]bool{} // hashes of the lessons and confirmations kept
	// Lessons and confirmations first, so that a revocation finds the
	// hash a record of the same batch makes held.
	for _, revocations := range []bool{false, true} {
		for i, r := range recs {
			if (r.Type == protocol.TypeRevocation) != revocations {
				continue
			}
			ok, err := m.takes(r, counts, incoming, added, batch)
			if err != nil {
				return nil, 0, err
			}
			if !ok {
				dropped++
				continue
			}
			keep[i] = true
			if !revocations {
				batch[r.Hash] = true
			}
		}
	}
	kept := make([]*protocol.Record, 0, len(recs)-dropped)
	for i, r := range recs {
		if keep[i] {
			kept = append(kept, r)
		}
	}
	return kept, dropped, nil
}

// takes reports whether capOrigins keeps r, noting in added the room it
// takes.
func (m *Memory) takes(r *protocol.Record, counts, incoming, added map[string]int, batch map[string]bool) (bool, error) {
	// Far from the cap nothing needs looking up.
	if r.Origin == m.Origin() || counts[r.Origin]+incoming[r.Origin] <= protocol.MaxOriginRecs {
		return true, nil
	}
	if _, held, err := m.store.Get(r.SetKey()); err != nil {
		return false, err
	} else if held {
		return true, nil // a newer version takes no room
	}
	if r.Type == protocol.TypeRevocation {
		holds := batch[r.Hash]
		if !holds {
			var err error
			if holds, err = m.holdsHash(r.Hash); err != nil {
				return false, err
			}
		}
		if holds {
			return true, nil // it changes what the memory holds: no room needed
		}
	}
	if counts[r.Origin]+added[r.Origin] >= protocol.MaxOriginRecs {
		return false, nil
	}
	added[r.Origin]++
	return true, nil
}

// holdsHash reports whether the memory holds a lesson or a confirmation of
// hash, of any origin and scope, its own included: what a revocation of
// hash changes. Most hashes a flood names were never held, and the store's
// filter answers for those without reading Badger.
//
// Keys come lessons first, then confirmations, revocations last: the first
// key answers, however many origins hold records of hash.
func (m *Memory) holdsHash(hash string) (bool, error) {
	holds := false
	err := m.store.EachKeyOfHash(hash, func(k protocol.RecordKey) bool {
		holds = k.Type != protocol.TypeRevocation
		return false
	})
	return holds, err
}

// HoldsHash reports whether a revocation of hash would change what the
// memory holds (a lesson or confirmation of it is held), so past the cap
// it takes no room.
func (m *Memory) HoldsHash(hash string) bool {
	ok, err := m.holdsHash(hash)
	if err != nil {
		m.log.Warn("reading the records of a hash", "hash", hash, "err", err)
	}
	return ok
}

// countAdded notes records newly held in scope.
func (m *Memory) countAdded(scope string, recs []*protocol.Record) {
	m.origins.mu.Lock()
	defer m.origins.mu.Unlock()
	if c, ok := m.origins.byScope[scope]; ok {
		for _, r := range recs {
			c[r.Origin]++
		}
	}
}
