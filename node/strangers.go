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
	seen := map[string]bool{}
	for _, r := range recs {
		if !a.Admits(r.Origin) && !seen[r.Origin] {
			seen[r.Origin] = true
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
// matter. New records of strangers pass while the budget has room. Past
// it, those that matter here (matters) evict held strangers' records that
// matter to nothing, oldest first, and take the room first; the rest take
// what is left, in order, and are left out once it is spent. It returns
// the records to merge and how many it left out.
func (m *Memory) budgetStrangers(scope string, recs []*protocol.Record) ([]*protocol.Record, int, error) {
	if err := m.meetStrangerBudget(); err != nil {
		return nil, 0, err
	}
	sb := &strangerBatch{m: m, scope: scope, recs: recs, budget: m.cfg.Strangers, admit: m.admitted(), grow: map[int]int64{}}
	var err error
	if sb.used, err = m.strangerUse(); err != nil {
		return nil, 0, err
	}
	// Far from the budget nothing needs looking up: count every record
	// of a stranger as new.
	if sb.fits(sb.upper()) {
		return recs, 0, nil
	}
	if err := sb.sort(); err != nil {
		return nil, 0, err
	}
	if sb.fits(sb.need) {
		return recs, 0, nil
	}
	if err := sb.split(); err != nil {
		return nil, 0, err
	}
	if err := sb.makeRoom(); err != nil {
		return nil, 0, err
	}
	keep, err := sb.take()
	if err != nil {
		return nil, 0, err
	}
	kept := make([]*protocol.Record, 0, len(recs))
	for i, r := range recs {
		if keep[i] {
			kept = append(kept, r)
		}
	}
	return kept, len(recs) - len(kept), nil
}

// meetStrangerBudget evicts what matters to nothing while more is held
// than the budget (it was lowered, or origins stopped being admitted).
func (m *Memory) meetStrangerBudget() error {
	used, err := m.strangerUse()
	if err != nil {
		return err
	}
	if b := m.cfg.Strangers; used.Records > b.Records || used.Bytes > b.Bytes {
		_, err = m.evictStrangers(store.Use{}, nil)
	}
	return err
}

// strangerBatch is one delivery's records on their way through the
// strangers' budget.
type strangerBatch struct {
	m      *Memory
	scope  string
	recs   []*protocol.Record
	budget StrangerBudget
	admit  protocol.Admitted
	used   store.Use // what strangers' records take, as the batch is taken

	fresh []int         // strangers' records new to the memory
	grown []int         // newer versions of held records that are longer
	grow  map[int]int64 // what each of grown adds
	need  store.Use     // used, with every fresh and grown record taken
	first []int         // fresh records that matter
	rest  []int         // the other fresh records
	want  store.Use     // what first takes
}

func (sb *strangerBatch) fits(u store.Use) bool {
	return u.Records <= sb.budget.Records && u.Bytes <= sb.budget.Bytes
}

// upper is used with every stranger's record of the batch taken as new.
func (sb *strangerBatch) upper() store.Use {
	u := sb.used
	for _, r := range sb.recs {
		if !sb.admit.Admits(r.Origin) {
			u.Records++
			u.Bytes += recordCost(r, sb.scope)
		}
	}
	return u
}

// sort finds the fresh and the grown records. Keys are free, and so are
// newer versions, so a version padded with unknown members takes room
// like a new record's bytes.
func (sb *strangerBatch) sort() error {
	sb.need = sb.used
	for i, r := range sb.recs {
		if sb.admit.Admits(r.Origin) {
			continue
		}
		h, held, err := sb.m.store.Get(r.SetKey())
		if err != nil {
			return err
		}
		if !held {
			sb.fresh = append(sb.fresh, i)
			sb.need.Records++
			sb.need.Bytes += recordCost(r, sb.scope)
			continue
		}
		if g := int64(len(r.Raw) - len(h.Record.Raw)); g > 0 && protocol.Supersedes(r, h.Record) {
			sb.grow[i] = g
			sb.grown = append(sb.grown, i)
			sb.need.Bytes += g
		}
	}
	return nil
}

// split sorts the fresh records into those that matter and the rest.
func (sb *strangerBatch) split() error {
	for _, i := range sb.fresh {
		ok, err := sb.m.matters(sb.recs[i])
		if err != nil {
			return err
		}
		if !ok {
			sb.rest = append(sb.rest, i)
			continue
		}
		sb.first = append(sb.first, i)
		sb.want.Records++
		sb.want.Bytes += recordCost(sb.recs[i], sb.scope)
	}
	return nil
}

// makeRoom evicts for the records that matter, when they do not fit.
func (sb *strangerBatch) makeRoom() error {
	if len(sb.first) == 0 || sb.fits(store.Use{Records: sb.used.Records + sb.want.Records, Bytes: sb.used.Bytes + sb.want.Bytes}) {
		return nil
	}
	spare := map[string]bool{}
	for _, i := range sb.first {
		spare[sb.recs[i].Hash] = true
	}
	if _, err := sb.m.evictStrangers(sb.want, spare); err != nil {
		return err
	}
	var err error
	sb.used, err = sb.m.strangerUse()
	return err
}

// room takes one record and c bytes more of the budget, if they fit.
func (sb *strangerBatch) room(c int64) bool {
	if !sb.fits(store.Use{Records: sb.used.Records + 1, Bytes: sb.used.Bytes + c}) {
		return false
	}
	sb.used.Records++
	sb.used.Bytes += c
	return true
}

// roomBytes takes c bytes more of the budget (no record), if they fit.
func (sb *strangerBatch) roomBytes(c int64) bool {
	if sb.used.Bytes+c > sb.budget.Bytes {
		return false
	}
	sb.used.Bytes += c
	return true
}

// take gives the room left to the records that matter, then to longer
// newer versions, then to the rest, and says which records are kept.
func (sb *strangerBatch) take() ([]bool, error) {
	keep := make([]bool, len(sb.recs))
	for i := range keep {
		keep[i] = true
	}
	var withdrawn []store.Held // held records revocations take the room of
	for _, i := range sb.first {
		c := recordCost(sb.recs[i], sb.scope)
		if sb.room(c) {
			continue
		}
		// No room, and nothing could be evicted: an origin's withdrawal of
		// its own lesson or confirmation takes the room of what it
		// withdraws. A revoked lesson is dropped everywhere and its
		// revocation kept (SPEC §8), so it is not resurrected from an
		// older record; kept instead, the withdrawal would be lost.
		k, size, ok, err := sb.m.withdrawnHeld(sb.recs[i])
		if err != nil {
			return nil, err
		}
		if ok && sb.roomBytes(c-size) {
			withdrawn = append(withdrawn, k)
			continue
		}
		keep[i] = false
	}
	if err := sb.m.giveRoomToWithdrawals(withdrawn); err != nil {
		return nil, err
	}
	for _, i := range sb.grown {
		keep[i] = sb.roomBytes(sb.grow[i]) // past the bytes the held version stays
	}
	for _, i := range sb.rest {
		keep[i] = sb.room(recordCost(sb.recs[i], sb.scope))
	}
	return keep, nil
}

// giveRoomToWithdrawals forgets the held records withdrawn whose
// revocations take their room.
func (m *Memory) giveRoomToWithdrawals(withdrawn []store.Held) error {
	if len(withdrawn) == 0 {
		return nil
	}
	hashes := map[string]bool{}
	for _, h := range withdrawn {
		hashes[h.Record.Hash] = true
	}
	if err := m.forgetStrangers(withdrawn, hashes); err != nil {
		return err
	}
	m.log.Info("strangers' budget: withdrawn records gave their room to their revocations", "records", len(withdrawn))
	return nil
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
	if m.strangersStuck(adm, used.Records) {
		return store.Use{}, nil
	}
	vs, spared, err := m.evictionCandidates(adm.set, spare)
	if err != nil {
		return store.Use{}, err
	}
	b := m.cfg.Strangers
	limit := store.Use{Records: b.Records - b.Records/evictSlack, Bytes: b.Bytes - b.Bytes/evictSlack}
	var gone []store.Held
	var freed store.Use
	hashes := map[string]bool{}
	enough := false
	for _, v := range vs {
		if used.Records-freed.Records+need.Records <= limit.Records && used.Bytes-freed.Bytes+need.Bytes <= limit.Bytes {
			enough = true
			break
		}
		ok, err := m.matters(v.Record)
		if err != nil {
			return store.Use{}, err
		}
		if ok {
			continue
		}
		gone = append(gone, v)
		freed.Records++
		freed.Bytes += recordCost(v.Record, "")
		hashes[v.Record.Hash] = true
	}
	if err := m.noteStuck(adm, !enough, spared, used.Records-freed.Records); err != nil {
		return store.Use{}, err
	}
	if len(gone) == 0 {
		return store.Use{}, nil
	}
	if err := m.forgetStrangers(gone, hashes); err != nil {
		return store.Use{}, err
	}
	m.metrics.evicted(len(gone))
	m.log.Info("strangers' budget: evicted records that matter to nothing here", "records", len(gone), "bytes", freed.Bytes)
	return freed, nil
}

// evictionCandidates are the strangers' records held, oldest arrival
// first, but those of the hashes in spare, which it returns apart.
func (m *Memory) evictionCandidates(a protocol.Admitted, spare map[string]bool) (vs []store.Held, spared []*protocol.Record, err error) {
	err = m.store.Each(func(h store.Held) error {
		switch {
		case a.Admits(h.Record.Origin):
		case spare[h.Record.Hash]:
			spared = append(spared, h.Record)
		default:
			vs = append(vs, h)
		}
		return nil
	})
	slices.SortFunc(vs, func(x, y store.Held) int { return x.Arrived.Compare(y.Arrived) })
	return vs, spared, err
}

// strangersStuck reports whether an eviction under adm found, at the same
// count held, that every stranger's record matters: scanning again would
// free nothing.
func (m *Memory) strangersStuck(adm *admittedSet, held int) bool {
	t := &m.strangers
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.stuck == adm && t.stuckRecords == held
}

// noteStuck remembers after an eviction whether the store is stuck: it
// could not free enough (short) and every record spared matters too. An
// eviction that freed enough forgets it, since a count held later may be
// this one again.
func (m *Memory) noteStuck(adm *admittedSet, short bool, spared []*protocol.Record, held int) error {
	allMatter := short
	for _, r := range spared {
		if !allMatter {
			break
		}
		ok, err := m.matters(r)
		if err != nil {
			return err
		}
		allMatter = ok
	}
	t := &m.strangers
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stuck, t.stuckRecords = nil, 0
	if allMatter {
		t.stuck, t.stuckRecords = adm, held
	}
	return nil
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
