package node

import (
	"sync"

	"github.com/remem/remem/protocol"
)

// A memory holds at most protocol.MaxOriginRecs records per origin and
// scope (SPEC §10), so one key cannot fill the store, nor make every
// delivery compare its lessons with every event. Past the cap an origin's
// revocations and newer versions of records already held are still taken;
// new records are not. (The SPEC keeps the newest lessons; this memory
// keeps the first ones it took, since dropping held records would need an
// index by origin and age that the store does not have yet.)

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

// Room is how many new records of origin the memory still takes in scope;
// its own records are never capped.
func (m *Memory) Room(scope, origin string) int {
	if origin == m.Origin() {
		return protocol.MaxOriginRecs
	}
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
// cap in scope: records new to the memory, other than revocations. It
// returns the records to merge and how many it dropped.
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
	self := m.Origin()
	kept, dropped := recs[:0:0], 0
	added := map[string]int{}
	for _, r := range recs {
		// Far from the cap nothing needs looking up.
		if r.Origin == self || r.Type == protocol.TypeRevocation || counts[r.Origin]+incoming[r.Origin] <= protocol.MaxOriginRecs {
			kept = append(kept, r)
			continue
		}
		if _, held, err := m.store.Get(r.SetKey()); err != nil {
			return nil, 0, err
		} else if held {
			kept = append(kept, r) // a newer version takes no room
			continue
		}
		if counts[r.Origin]+added[r.Origin] >= protocol.MaxOriginRecs {
			dropped++
			continue
		}
		added[r.Origin]++
		kept = append(kept, r)
	}
	return kept, dropped, nil
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
