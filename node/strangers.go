package node

import (
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/remem/remem/internal/check"
	"github.com/remem/remem/protocol"
	"github.com/remem/remem/store"
)

// StrangerBudget bounds what a memory holds of origins it does not admit
// (SPEC §8). Keys are free: without it, a fresh key per message fills the
// disk at the speed of the network. Strangers' records raise nothing (only
// admitted origins count), so past the budget a new one is taken only when
// it matters here, and then an older one that matters to nothing is
// evicted (strangers.go). Admitted origins and this memory's own records
// are never counted nor evicted.
type StrangerBudget struct {
	// Records is how many records of origins not admitted are held, over
	// every scope (zero: DefaultStrangerRecords).
	Records int `json:"records"`
	// Bytes is what their stored values take, unknown members and all
	// (zero: DefaultStrangerBytes).
	Bytes int64 `json:"bytes"`
}

const (
	// DefaultStrangerRecords is fifty origins' worth of the per-origin cap:
	// an open team of a few dozen members nobody listed fits whole.
	DefaultStrangerRecords = 50_000
	// DefaultStrangerBytes holds those records at about 1.3 KiB each (a
	// lesson line is 0.5–1 KiB): a small part of a laptop's disk, and of
	// the memory that sync and views spend on what is held.
	DefaultStrangerBytes = 64 << 20
	// evictSlack is the share of the budget one eviction frees beyond what
	// the batch needs, so a stream of records that matter evicts (a scan
	// of the store) once per that many, not once per batch.
	evictSlack = 20 // 1/20: 5%
)

func (b StrangerBudget) withDefaults() StrangerBudget {
	if b.Records == 0 {
		b.Records = DefaultStrangerRecords
	}
	if b.Bytes == 0 {
		b.Bytes = DefaultStrangerBytes
	}
	return b
}

func (b StrangerBudget) validate(l *check.List) {
	l.If(b.Records < 0, "Strangers.Records", b.Records, fmt.Sprintf("a count of records, at least 0 (0 takes the default, %d)", DefaultStrangerRecords))
	l.If(b.Bytes < 0, "Strangers.Bytes", b.Bytes, fmt.Sprintf("a size in bytes, at least 0 (0 takes the default, %d)", DefaultStrangerBytes))
}

// strangerTally is the Use of every origin not admitted, summed when the
// admitted set it was summed under changes, and kept current by Deliver
// (the one writer of others' records).
type strangerTally struct {
	mu  sync.Mutex
	set *admittedSet
	use store.Use
	// stuck is the admitted set under which an eviction found that every
	// stranger's record held matters, with stuckRecords strangers' records
	// held then: until one of the two changes no eviction can free
	// anything (a record stops mattering only when the admitted set
	// changes: admitted and own records, and candidates, are deleted by
	// nothing but eviction), so none scans the store again.
	stuck        *admittedSet
	stuckRecords int
}

// strangerUse returns what strangers' records take now.
func (m *Memory) strangerUse() (store.Use, error) {
	t := &m.strangers
	t.mu.Lock()
	defer t.mu.Unlock()
	return m.strangerUseLocked()
}

func (m *Memory) strangerUseLocked() (store.Use, error) {
	t := &m.strangers
	a := m.admission()
	if t.set == a {
		return t.use, nil
	}
	var sum store.Use
	err := m.store.EachUse(func(origin string, u store.Use) {
		if !a.set.Admits(origin) {
			sum.Records += u.Records
			sum.Bytes += u.Bytes
		}
	})
	if err != nil {
		return store.Use{}, err
	}
	t.set, t.use = a, sum
	return sum, nil
}

// StrangerUse is what records of origins not admitted take here, beside
// the budget (remem status).
func (m *Memory) StrangerUse() (used store.Use, budget StrangerBudget, err error) {
	used, err = m.strangerUse()
	return used, m.cfg.Strangers, err
}

// strangerRoom is how many more strangers' records the budget takes (0
// once their bytes are spent to within one line).
func (m *Memory) strangerRoom() int {
	u, err := m.strangerUse()
	if err != nil {
		m.log.Warn("counting strangers' records", "err", err)
		return 0
	}
	b := m.cfg.Strangers
	if b.Bytes-u.Bytes < protocol.MaxLineBytes {
		return 0
	}
	return max(0, b.Records-u.Records)
}

// strangerOrigins are the distinct origins of recs not admitted.
func (m *Memory) strangerOrigins(recs []*protocol.Record) []string {
	a := m.admitted()
	var out []string
	for _, r := range recs {
		if !a.Admits(r.Origin) && !slices.Contains(out, r.Origin) {
			out = append(out, r.Origin)
		}
	}
	return out
}

// useOfOrigins sums the Use of origins.
func (m *Memory) useOfOrigins(origins []string) (store.Use, error) {
	var sum store.Use
	for _, o := range origins {
		u, err := m.store.UseOf(o)
		if err != nil {
			return store.Use{}, err
		}
		sum.Records += u.Records
		sum.Bytes += u.Bytes
	}
	return sum, nil
}

// noteStrangerChange adds what a merge changed in origins' Use to the
// tally (before is their Use before the merge).
func (m *Memory) noteStrangerChange(origins []string, before store.Use) {
	after, err := m.useOfOrigins(origins)
	t := &m.strangers
	t.mu.Lock()
	defer t.mu.Unlock()
	if err != nil {
		t.set = nil // sum again when next asked
		return
	}
	t.use.Records += after.Records - before.Records
	t.use.Bytes += after.Bytes - before.Bytes
}

// recordCost is about what a new record takes in the store: its line, a
// header and its scope.
func recordCost(r *protocol.Record, scope string) int64 {
	return int64(len(r.Raw) + len(scope) + 24)
}

// budgetStrangers applies the strangers' budget to recs (already past the
// per-origin cap): records of admitted origins, and newer versions of
// records held no longer than the held one, always pass; a longer newer
// version takes what it adds of the bytes left, after the records that
// matter. New records of strangers pass while the
// budget has room. Past it, those that matter here (matters) evict held
// strangers' records that matter to nothing, oldest first, and take the
// room first; the rest take what is left, in order, and are left out once
// it is spent. It returns the records to merge and how many it left out.
func (m *Memory) budgetStrangers(scope string, recs []*protocol.Record) ([]*protocol.Record, int, error) {
	used, err := m.strangerUse()
	if err != nil {
		return nil, 0, err
	}
	b := m.cfg.Strangers
	if used.Records > b.Records || used.Bytes > b.Bytes {
		// Held past the budget (it was lowered, or origins stopped being
		// admitted): what matters to nothing goes first.
		if _, err := m.evictStrangers(store.Use{}, nil); err != nil {
			return nil, 0, err
		}
		if used, err = m.strangerUse(); err != nil {
			return nil, 0, err
		}
	}
	a := m.admitted()
	// Far from the budget nothing needs looking up: count every record
	// of a stranger as new.
	upper := used
	for _, r := range recs {
		if !a.Admits(r.Origin) {
			upper.Records++
			upper.Bytes += recordCost(r, scope)
		}
	}
	if upper.Records <= b.Records && upper.Bytes <= b.Bytes {
		return recs, 0, nil
	}
	var fresh []int // indexes of strangers' records new to the memory
	// Newer versions of held records that are longer: what they add.
	// Keys are free, and so are newer versions, so a version padded with
	// unknown members takes room like a new record's bytes.
	grow := map[int]int64{}
	var grown []int
	need := used
	for i, r := range recs {
		if a.Admits(r.Origin) {
			continue
		}
		if h, held, err := m.store.Get(r.SetKey()); err != nil {
			return nil, 0, err
		} else if held {
			if g := int64(len(r.Raw) - len(h.Record.Raw)); g > 0 && protocol.Supersedes(r, h.Record) {
				grow[i] = g
				grown = append(grown, i)
				need.Bytes += g
			}
			continue
		}
		fresh = append(fresh, i)
		need.Records++
		need.Bytes += recordCost(r, scope)
	}
	if need.Records <= b.Records && need.Bytes <= b.Bytes {
		return recs, 0, nil
	}
	var first, rest []int // fresh records that matter, and the others
	var want store.Use    // what those that matter take
	for _, i := range fresh {
		ok, err := m.matters(recs[i])
		if err != nil {
			return nil, 0, err
		}
		if ok {
			first = append(first, i)
			want.Records++
			want.Bytes += recordCost(recs[i], scope)
		} else {
			rest = append(rest, i)
		}
	}
	if over := (store.Use{Records: used.Records + want.Records - b.Records, Bytes: used.Bytes + want.Bytes - b.Bytes}); len(first) > 0 && (over.Records > 0 || over.Bytes > 0) {
		spare := map[string]bool{}
		for _, i := range first {
			spare[recs[i].Hash] = true
		}
		if _, err := m.evictStrangers(want, spare); err != nil {
			return nil, 0, err
		}
		if used, err = m.strangerUse(); err != nil {
			return nil, 0, err
		}
	}
	keep := make([]bool, len(recs))
	for i := range keep {
		keep[i] = true
	}
	var withdrawn []store.Held // held records revocations take the room of
	for _, i := range first {
		c := recordCost(recs[i], scope)
		if used.Records+1 <= b.Records && used.Bytes+c <= b.Bytes {
			used.Records++
			used.Bytes += c
			continue
		}
		// No room, and nothing could be evicted: an origin's withdrawal of
		// its own lesson or confirmation takes the room of what it
		// withdraws. A revoked lesson is dropped everywhere and its
		// revocation kept (SPEC §8), so it is not resurrected from an
		// older record; kept instead, the withdrawal would be lost.
		k, size, ok, err := m.withdrawnHeld(recs[i])
		if err != nil {
			return nil, 0, err
		}
		if ok && used.Bytes-size+c <= b.Bytes {
			withdrawn = append(withdrawn, k)
			used.Bytes += c - size
			continue
		}
		keep[i] = false
	}
	if len(withdrawn) > 0 {
		hashes := map[string]bool{}
		for _, h := range withdrawn {
			hashes[h.Record.Hash] = true
		}
		if err := m.forgetStrangers(withdrawn, hashes); err != nil {
			return nil, 0, err
		}
		m.log.Info("strangers' budget: withdrawn records gave their room to their revocations", "records", len(withdrawn))
	}
	for _, i := range grown {
		// Past the bytes the held version stays.
		if used.Bytes+grow[i] <= b.Bytes {
			used.Bytes += grow[i]
			continue
		}
		keep[i] = false
	}
	for _, i := range rest {
		c := recordCost(recs[i], scope)
		if used.Records+1 <= b.Records && used.Bytes+c <= b.Bytes {
			used.Records++
			used.Bytes += c
			continue
		}
		keep[i] = false
	}
	kept := make([]*protocol.Record, 0, len(recs))
	for i, r := range recs {
		if keep[i] {
			kept = append(kept, r)
		}
	}
	return kept, len(recs) - len(kept), nil
}

// matters reports whether a stranger's record of hash concerns what this
// memory holds for its own reasons: a lesson it wrote, a hash an admitted
// origin published or confirmed (a stranger's lesson or confirmation of
// it; a revocation only beside its origin's confirmation it withdraws), a
// candidate one of its own events met, or an origin's withdrawal of a
// lesson it published here (and that lesson: a withdrawn lesson is
// dropped everywhere, SPEC §7, and the pair keeps it from coming back as
// new). Nothing else a stranger sends changes a state here: a revocation
// of a hash its origin holds nothing of withdraws nothing.
func (m *Memory) matters(r *protocol.Record) (bool, error) {
	l, ok, err := m.store.GetLesson(r.Hash)
	if err != nil {
		return false, err
	}
	// A candidate this memory's own events met, before it arrived or
	// after (sleep absorbed them: its episodes and rises are this memory's
	// experience, not the stranger's).
	if ok && (l.Own || l.MetBefore || l.Seen > 0 || len(l.Episodes) > 0) {
		return true, nil
	}
	has := func(t protocol.Type) (bool, error) {
		_, held, err := m.store.Get(protocol.RecordKey{Type: t, Origin: r.Origin, Hash: r.Hash})
		return held, err
	}
	switch r.Type {
	case protocol.TypeRevocation:
		// A revocation withdraws its origin's own lesson or confirmation
		// (SPEC §7): of anything else it changes nothing, whoever
		// published the hash, so it matters only beside the lesson it
		// withdraws, or the confirmation when that confirmation matters.
		if ok, err := has(protocol.TypeLesson); err != nil || ok {
			return ok, err
		}
		if ok, err := has(protocol.TypeConfirmation); err != nil || !ok {
			return false, err
		}
	case protocol.TypeLesson:
		// The lesson of a withdrawal held.
		if ok, err := has(protocol.TypeRevocation); err != nil || ok {
			return ok, err
		}
	}
	return m.admittedRecordOf(r.Hash)
}

// admittedRecordOf reports whether an admitted origin's lesson or
// confirmation of hash is held. It walks keys only, and stops at the
// first such record or at the revocations.
func (m *Memory) admittedRecordOf(hash string) (bool, error) {
	a := m.admitted()
	found := false
	err := m.store.EachKeyOfHash(hash, func(k protocol.RecordKey) bool {
		if k.Type == protocol.TypeRevocation {
			return false
		}
		found = a.Admits(k.Origin)
		return !found
	})
	return found, err
}

// evictStrangers deletes held strangers' records that matter to nothing,
// oldest arrival first, until need fits with a slack (1/evictSlack of the
// budget, in records and in bytes) to spare, and the candidates no record
// is left of; records of the hashes in spare (what the batch brings that
// matters) stay. It returns what it freed.
func (m *Memory) evictStrangers(need store.Use, spare map[string]bool) (store.Use, error) {
	used, err := m.strangerUse()
	if err != nil {
		return store.Use{}, err
	}
	adm := m.admission()
	t := &m.strangers
	t.mu.Lock()
	stuck := t.stuck == adm && t.stuckRecords == used.Records
	t.mu.Unlock()
	if stuck {
		return store.Use{}, nil
	}
	b := m.cfg.Strangers
	limit := store.Use{Records: b.Records - b.Records/evictSlack, Bytes: b.Bytes - b.Bytes/evictSlack}
	a := adm.set
	type victim struct {
		held store.Held
		size int64
	}
	var vs []victim
	var spared []*protocol.Record // records of spare: not evicted now
	err = m.store.Each(func(h store.Held) error {
		if a.Admits(h.Record.Origin) {
			return nil
		}
		if spare[h.Record.Hash] {
			spared = append(spared, h.Record)
			return nil
		}
		vs = append(vs, victim{h, recordCost(h.Record, "")})
		return nil
	})
	if err != nil {
		return store.Use{}, err
	}
	slices.SortFunc(vs, func(x, y victim) int { return x.held.Arrived.Compare(y.held.Arrived) })
	var keys []protocol.RecordKey
	var gone []store.Held
	var freed store.Use
	hashes := map[string]bool{}
	enough := false
	for _, v := range vs {
		if used.Records-freed.Records+need.Records <= limit.Records && used.Bytes-freed.Bytes+need.Bytes <= limit.Bytes {
			enough = true
			break
		}
		ok, err := m.matters(v.held.Record)
		if err != nil {
			return store.Use{}, err
		}
		if ok {
			continue
		}
		keys = append(keys, v.held.Record.SetKey())
		gone = append(gone, v.held)
		freed.Records++
		freed.Bytes += v.size
		hashes[v.held.Record.Hash] = true
	}
	if !enough {
		// Every record left matters, unless one spared now does not.
		allMatter := true
		for _, r := range spared {
			ok, err := m.matters(r)
			if err != nil {
				return store.Use{}, err
			}
			if !ok {
				allMatter = false
				break
			}
		}
		t.mu.Lock()
		t.stuck, t.stuckRecords = nil, 0
		if allMatter {
			t.stuck, t.stuckRecords = adm, used.Records-freed.Records
		}
		t.mu.Unlock()
	} else {
		// Not stuck now: a count held later may be this one again.
		t.mu.Lock()
		t.stuck = nil
		t.mu.Unlock()
	}
	if len(keys) == 0 {
		return store.Use{}, nil
	}
	if err := m.forgetStrangers(gone, hashes); err != nil {
		return store.Use{}, err
	}
	m.metrics.evicted(len(keys))
	m.log.Info("strangers' budget: evicted records that matter to nothing here", "records", len(keys), "bytes", freed.Bytes)
	return freed, nil
}

// forgetStrangers deletes the strangers' records held, keeps the tally
// and the per-origin counts, and drops the candidates of hashes left
// without a lesson record.
func (m *Memory) forgetStrangers(held []store.Held, hashes map[string]bool) error {
	origins := map[string]bool{}
	keys := make([]protocol.RecordKey, len(held))
	for i, h := range held {
		keys[i] = h.Record.SetKey()
		origins[h.Record.Origin] = true
	}
	list := slices.Collect(maps.Keys(origins))
	before, err := m.useOfOrigins(list)
	if err != nil {
		return err
	}
	if _, err := m.store.Forget(keys); err != nil {
		m.resetOriginCounts() // what was deleted is not known
		return err
	}
	m.noteStrangerChange(list, before)
	m.countForgotten(held)
	return m.dropOrphanCandidates(hashes)
}

// countForgotten takes records deleted off the per-scope origin counts
// loaded (a reload reads a whole scope: one per record a stream of
// withdrawals forgets would cost as much as the scope).
func (m *Memory) countForgotten(held []store.Held) {
	m.origins.mu.Lock()
	defer m.origins.mu.Unlock()
	for _, h := range held {
		for _, sc := range h.Scopes {
			if c, ok := m.origins.byScope[sc]; ok && c[h.Record.Origin] > 0 {
				c[h.Record.Origin]--
			}
		}
	}
}

// withdrawnHeld is the held stranger's lesson or confirmation that rev,
// a revocation of the same origin and hash no older than it, withdraws,
// and what it takes (ok false: none).
func (m *Memory) withdrawnHeld(rev *protocol.Record) (h store.Held, size int64, ok bool, err error) {
	if rev.Type != protocol.TypeRevocation || m.admitted().Admits(rev.Origin) {
		return h, 0, false, nil
	}
	for _, t := range []protocol.Type{protocol.TypeLesson, protocol.TypeConfirmation} {
		h, held, err := m.store.Get(protocol.RecordKey{Type: t, Origin: rev.Origin, Hash: rev.Hash})
		if err != nil {
			return h, 0, false, err
		}
		if held && !rev.Time.Before(h.Record.Time) {
			return h, recordCost(h.Record, ""), true, nil
		}
	}
	return store.Held{}, 0, false, nil
}

// dropOrphanCandidates deletes the candidates of hashes that no lesson
// record is held of any more.
func (m *Memory) dropOrphanCandidates(hashes map[string]bool) error {
	for _, h := range slices.Sorted(maps.Keys(hashes)) {
		l, ok, err := m.store.GetLesson(h)
		if err != nil || !ok || l.Own || l.Confirmed || l.MetBefore || l.Seen > 0 || len(l.Episodes) > 0 {
			// A lesson with this memory's own experience in it stays
			// (withdrawn, it leaves the active view; SPEC §8).
			if err != nil {
				return err
			}
			continue
		}
		held, err := m.store.ForHash(h)
		if err != nil {
			return err
		}
		if slices.ContainsFunc(held, func(x store.Held) bool { return x.Record.Type == protocol.TypeLesson }) {
			continue
		}
		if err := m.store.DeleteLesson(h); err != nil {
			return err
		}
	}
	return nil
}

// resetOriginCounts drops the per-scope origin counts (the cap's), so
// they are loaded again after records were deleted.
func (m *Memory) resetOriginCounts() {
	m.origins.mu.Lock()
	m.origins.byScope = nil
	m.origins.mu.Unlock()
}

// NewStranger reports whether origin is neither admitted nor held here:
// gossip caps how many of those one peer brings a minute.
func (m *Memory) NewStranger(origin string) bool {
	if m.admitted().Admits(origin) {
		return false
	}
	u, err := m.store.UseOf(origin)
	if err != nil {
		m.log.Warn("counting an origin's records", "origin", origin, "err", err)
		return true
	}
	return u.Records == 0
}
