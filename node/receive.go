package node

import (
	"context"
	"slices"
	"time"

	"github.com/remem/remem/internal/scopes"
	"github.com/remem/remem/node/consolidate"
	"github.com/remem/remem/protocol"
	"github.com/remem/remem/store"
)

// Refused is one line that was not accepted.
type Refused = protocol.Refused

// ReceiveReport says what happened to received records.
type ReceiveReport struct {
	Accepted   int            `json:"accepted"`
	Duplicate  int            `json:"duplicate"`
	Skipped    int            `json:"skipped"`
	Refused    []Refused      `json:"refused,omitempty"`
	ByReason   protocol.Tally `json:"refused_by_reason,omitempty"`
	Candidates int            `json:"new_candidates"`
	// OverCap: records left out because their origin holds the most a
	// memory keeps per origin and scope.
	OverCap int `json:"over_cap,omitempty"`
	// OverBudget: strangers' records left out past the strangers' budget
	// (StrangerBudget).
	OverBudget int `json:"over_budget,omitempty"`
}

// Receive verifies raw lines that came by scope and merges the good ones.
// Bad lines are reported with their number and reason; the rest are taken.
// Scope "local" holds only this memory's own records, so lines of another
// origin are refused there.
func (m *Memory) Receive(ctx context.Context, scope string, lines []protocol.Line) (ReceiveReport, error) {
	bound := protocol.Bound{Source: scope}
	if scope == scopes.Local {
		bound.Source, bound.Origin = "scope local", m.Origin()
	}
	b := protocol.VerifyBatch(lines, bound, m.Now())
	rep := ReceiveReport{Skipped: len(b.Skipped), Refused: b.Refused, ByReason: protocol.TallyOf(b.Refused)}
	for _, rec := range b.Records {
		// The caller may reuse its bytes; the store keeps a copy.
		rec.Raw = slices.Clone(rec.Raw)
	}
	m.countRefused(rep.ByReason, rep.Skipped)
	d, err := m.Deliver(ctx, scope, b.Records)
	rep.Accepted, rep.Duplicate, rep.Candidates, rep.OverCap, rep.OverBudget = d.Accepted, d.Duplicate, d.Candidates, d.OverCap, d.OverBudget
	return rep, err
}

// CountRefused lets a transport that verified lines itself report what it
// refused, so refusals by reason cover every scope.
func (m *Memory) CountRefused(reasons protocol.Tally) { m.countRefused(reasons, 0) }

func (m *Memory) countRefused(reasons protocol.Tally, skipped int) {
	m.mu.Lock()
	for r, n := range reasons {
		m.refused[r] += n
		m.stats.Received += n
	}
	m.stats.Received += skipped
	m.stats.Skipped += skipped
	m.mu.Unlock()
	m.metrics.refusedLines(reasons)
	m.metrics.received(0, 0, skipped)
}

// Deliver is the one path in: every transport hands it records it verified
// (gossip in its validator, folder and commons on read). It merges them
// into the store, turns new lessons of other memories into local candidates
// and raises own lessons that others corroborate.
func (m *Memory) Deliver(ctx context.Context, scope string, recs []*protocol.Record) (ReceiveReport, error) {
	var rep ReceiveReport
	if len(recs) == 0 {
		return rep, nil
	}
	now := m.Now()
	m.sleepMu.Lock() // lessons change here and in sleep
	defer m.sleepMu.Unlock()
	recs, err := m.withinBounds(scope, recs, &rep)
	if err != nil || len(recs) == 0 {
		return rep, err
	}
	strangers := m.strangerOrigins(recs)
	before, err := m.useOfOrigins(strangers)
	if err != nil {
		return rep, err
	}
	// The merge rule decides from the lessons held before the batch; then
	// the records and the lessons they changed are written in one go.
	// Lessons go first, so that a confirmation finds the candidate its
	// lesson made in the same batch.
	dc := m.newDeliverContext()
	if err := dc.preload(recs, m.Origin()); err != nil {
		return rep, err
	}
	for _, rec := range recs {
		if rec.Type != protocol.TypeLesson || rec.Origin == m.Origin() {
			continue
		}
		added, err := m.noteLesson(ctx, dc, rec, scope, now)
		if err != nil {
			return rep, err
		}
		if added {
			rep.Candidates++
		}
	}
	for _, rec := range recs {
		if rec.Type != protocol.TypeConfirmation || rec.Origin == m.Origin() {
			continue
		}
		if l, ok := dc.lesson(rec.Hash); ok {
			if err := dc.support(l, rec.Origin, now); err != nil {
				return rep, err
			}
		}
	}
	outcomes, err := m.store.Merge(recs, scope, now, dc.lessons())
	if err != nil {
		return rep, err
	}
	m.noteStrangerChange(strangers, before)
	m.recent.note(dc.lessons(), dc.isFresh)
	var added []*protocol.Record
	for i, rec := range recs {
		if outcomes[i] == store.Added {
			added = append(added, rec)
		}
		switch outcomes[i] {
		case store.Added, store.Replaced:
			rep.Accepted++
			if m.cfg.OnAccept != nil {
				m.cfg.OnAccept(scope, rec, now)
			}
		default:
			rep.Duplicate++
		}
	}
	m.countAdded(scope, added)
	// Even a duplicate may have added its scope, which changes what sync
	// offers there.
	m.changed()
	m.mu.Lock()
	m.stats.Received += len(recs)
	m.stats.Accepted += rep.Accepted
	m.stats.Duplicate += rep.Duplicate
	m.mu.Unlock()
	m.metrics.received(rep.Accepted, rep.Duplicate, 0)
	return rep, nil
}

// withinBounds leaves out of recs what would take an origin past the
// per-origin cap (origincap.go), then what the strangers' budget has no
// room for (strangers.go), and counts both in rep.
func (m *Memory) withinBounds(scope string, recs []*protocol.Record, rep *ReceiveReport) ([]*protocol.Record, error) {
	recs, over, err := m.capOrigins(scope, recs)
	if err != nil {
		return nil, err
	}
	if rep.OverCap = over; over > 0 {
		m.countRefused(protocol.Tally{protocol.ReasonTooManyRecords: over}, 0)
	}
	recs, over, err = m.budgetStrangers(scope, recs)
	if err != nil {
		return nil, err
	}
	if rep.OverBudget = over; over > 0 {
		m.countRefused(protocol.Tally{protocol.ReasonTooManyRecords: over}, 0)
	}
	return recs, nil
}

// noteLesson applies SPEC §7 to a lesson record of another origin: a hash
// the memory does not hold becomes a candidate at strength 0.5; the same
// hash or meaning as a local lesson, own or candidate, corroborates it.
// Changed lessons are gathered in dc and written once per batch.
func (m *Memory) noteLesson(ctx context.Context, dc *deliverContext, rec *protocol.Record, scope string, now time.Time) (bool, error) {
	if l, ok := dc.lesson(rec.Hash); ok {
		if !slices.Contains(l.Scopes, scope) {
			l.Scopes = append(l.Scopes, scope)
			dc.changed(l)
		}
		if (l.Own || len(l.Corroborators) > 0) && !dc.corroboratedBy(l, dc.originOf(rec.Origin)) {
			// A new origin of a held lesson corroborates by meaning
			// too, as it would have had its copy come first.
			if err := dc.supportSameMeaning(ctx, rec, now); err != nil {
				return false, err
			}
		}
		return false, dc.support(l, rec.Origin, now)
	}
	// The origin that brought the candidate is counted, without a rise:
	// its lesson is what the candidate is.
	cand := &store.Lesson{
		Hash: rec.Hash, ID: lessonID(rec.Hash), Kind: rec.Kind, Text: rec.Text, Seen: 0, Strength: protocol.CandidateStrength,
		Updated: now, Arrived: now, Scopes: []string{scope}, Layer: layerOf(scope), Corroborators: []string{rec.Origin},
	}
	// Had this memory met the surprise before the lesson arrived?
	events, err := dc.events(rec.Kind)
	if err != nil {
		return false, err
	}
	cand.MetBefore = dc.metBefore(ctx, events, groupOf(*cand))
	if err := dc.supportSameMeaning(ctx, rec, now); err != nil {
		return false, err
	}
	dc.add(cand)
	// Confirmations held from before the lesson came raise it too.
	held, err := m.store.ForHash(rec.Hash)
	if err != nil {
		return false, err
	}
	for _, h := range held {
		if h.Record.Type == protocol.TypeConfirmation {
			if err := dc.support(cand, h.Record.Origin, now); err != nil {
				return false, err
			}
		}
	}
	return true, nil
}

// supportSameMeaning is corroboration by meaning (SPEC §7): every local
// lesson that says what rec says is raised for rec's origin.
func (dc *deliverContext) supportSameMeaning(ctx context.Context, rec *protocol.Record, now time.Time) error {
	same, err := dc.sameMeaning(ctx, rec)
	if err != nil {
		return err
	}
	for _, l := range same {
		if err := dc.support(l, rec.Origin, now); err != nil {
			return err
		}
	}
	return nil
}

// corroborate raises a lesson for an origin that holds it too or confirmed
// it; the caller has checked that the origin was not counted yet.
func corroborate(l *store.Lesson, origin string, now time.Time) {
	l.Corroborators = append(l.Corroborators, origin)
	l.Strength = protocol.Rise(l.Strength)
	l.Updated = now
	l.Dirty = l.Dirty || l.Own // an own lesson is signed again
}

// deliverContext loads, once per delivered batch, what the merge rule
// compares new lessons with, and gathers the lessons it changes. Every
// lesson it reads is held once, in held, so that changes add up.
type deliverContext struct {
	m       *Memory
	evs     map[string][]*preparedText // by lesson kind, newest first
	evsDone bool
	held    map[string]*store.Lesson // lessons read, as changed so far
	own     []string                 // hashes of the own lessons
	ownDone bool
	touched map[string]bool
	order   []string                     // hashes changed, in the order first changed
	fresh   []*store.Lesson              // candidates made by this batch, in order
	made    map[string]bool              // their hashes
	filter  bool                         // skip pairs that share no word (useFilter)
	origins map[*store.Lesson]*originSet // corroborators of long lists, as sets
	origin  originOf                     // the origin last asked about
	admit   protocol.Admitted            // whose support counts
	// The groups compared with, prepared once per batch: of held lessons,
	// and of indexed candidates too large to keep prepared.
	preps    map[*store.Lesson]*consolidate.PreparedGroup
	bigPreps map[*recentCandidate]*consolidate.PreparedGroup
}

func (m *Memory) newDeliverContext() *deliverContext {
	return &deliverContext{m: m, filter: m.useFilter(), admit: m.admitted()}
}

// preload reads, in one go, the lessons the batch's records are about.
func (dc *deliverContext) preload(recs []*protocol.Record, self string) error {
	dc.held = map[string]*store.Lesson{}
	var hashes []string
	for _, r := range recs {
		if (r.Type == protocol.TypeLesson || r.Type == protocol.TypeConfirmation) && r.Origin != self {
			hashes = append(hashes, r.Hash)
		}
	}
	if len(hashes) == 0 {
		return nil
	}
	held, err := dc.m.store.GetLessons(hashes)
	for h, l := range held {
		dc.held[h] = &l
	}
	return err
}

// lesson returns the lesson held for a hash the batch is about (preload
// read them), as changed so far in the batch.
func (dc *deliverContext) lesson(hash string) (*store.Lesson, bool) {
	l, ok := dc.held[hash]
	return l, ok
}

// read reads the lessons of hashes that are not held yet, in one go.
func (dc *deliverContext) read(hashes []string) error {
	if len(hashes) == 0 {
		return nil
	}
	read, err := dc.m.store.GetLessons(hashes)
	if err != nil {
		return err
	}
	dc.keep(read)
	return nil
}

// keep holds ls, read from the store, unless a copy is held already.
func (dc *deliverContext) keep(ls map[string]store.Lesson) {
	for h, l := range ls {
		if _, ok := dc.held[h]; !ok {
			dc.held[h] = &l
		}
	}
}

// ownLessons are the own lessons, read once per batch.
func (dc *deliverContext) ownLessons() ([]*store.Lesson, error) {
	if !dc.ownDone {
		own, err := dc.m.store.OwnLessons()
		if err != nil {
			return nil, err
		}
		byHash := make(map[string]store.Lesson, len(own))
		for _, l := range own {
			byHash[l.Hash] = l
			dc.own = append(dc.own, l.Hash)
		}
		dc.keep(byHash)
		dc.ownDone = true
	}
	out := make([]*store.Lesson, 0, len(dc.own))
	for _, h := range dc.own {
		out = append(out, dc.held[h])
	}
	return out, nil
}

func (dc *deliverContext) isFresh(hash string) bool { return dc.made[hash] }

// add holds a new candidate.
func (dc *deliverContext) add(l *store.Lesson) {
	dc.held[l.Hash] = l
	dc.fresh = append(dc.fresh, l)
	if dc.made == nil {
		dc.made = map[string]bool{}
	}
	dc.made[l.Hash] = true
	dc.changed(l)
}

// counts reports whether origin may still raise l: another memory's origin,
// admitted (SPEC §8: a stranger's support raises nothing), not counted for
// it yet, while l can still rise. Strength reaches 1 after
// about 53 rises, which bounds the origins a lesson keeps.
func (dc *deliverContext) counts(l *store.Lesson, origin string) bool {
	return dc.countsFor(l, dc.originOf(origin))
}

func (dc *deliverContext) countsFor(l *store.Lesson, o originOf) bool {
	return l.Strength < 1 && o.origin != dc.m.Origin() && dc.admit.Admits(o.origin) && !dc.corroboratedBy(l, o)
}

// corroboratedBy reports whether origin is among l's corroborators. A
// delivery asks this for every lesson it compares a received one with, a
// lesson keeps up to about 53 origins, and mostly the answer is no; so a
// long list gets a mask of its origins, kept per batch. Lists only grow
// during a delivery (corroborate and support append), so the mask catches
// up with what was appended.
func (dc *deliverContext) corroboratedBy(l *store.Lesson, o originOf) bool {
	if len(l.Corroborators) <= shortOrigins {
		return slices.Contains(l.Corroborators, o.origin)
	}
	set := dc.origins[l]
	if set == nil {
		if dc.origins == nil {
			dc.origins = map[*store.Lesson]*originSet{}
		}
		set = &originSet{}
		dc.origins[l] = set
	}
	return set.has(l.Corroborators, o)
}

// originOf returns origin with its bit in an originSet, worked out once
// for the lessons one record is compared with.
func (dc *deliverContext) originOf(origin string) originOf {
	if dc.origin.origin != origin || dc.origin.origin == "" {
		dc.origin = originOf{origin: origin, bit: originBit(origin)}
	}
	return dc.origin
}

// originOf is an origin and its bit in an originSet.
type originOf struct {
	origin string
	bit    uint8
}

// shortOrigins: up to this many origins a scan is as quick as a mask.
const shortOrigins = 8

// originSet is a mask of the first n origins of a list that only grows:
// no bit, no such origin.
type originSet struct {
	mask [4]uint64
	n    int
}

// has reports whether o is in list, which holds the origins the set was
// made from and maybe more appended since.
func (s *originSet) has(list []string, o originOf) bool {
	if len(list) <= shortOrigins {
		return slices.Contains(list, o.origin)
	}
	for ; s.n < len(list); s.n++ {
		b := originBit(list[s.n])
		s.mask[b>>6] |= 1 << (b & 63)
	}
	return s.mask[o.bit>>6]&(1<<(o.bit&63)) != 0 && slices.Contains(list, o.origin)
}

// originBit hashes an origin (FNV-1a, folded) to one of 256 bits.
func originBit(origin string) uint8 {
	h := uint32(2166136261)
	for i := 0; i < len(origin); i++ {
		h ^= uint32(origin[i])
		h *= 16777619
	}
	return uint8(h ^ h>>8 ^ h>>16 ^ h>>24)
}

// support raises l for origin, once per origin (SPEC §7): another memory's
// lesson of the same hash or meaning, or its confirmation. A candidate
// kept before origins were counted has none: the origins of the records
// held for it were counted then, so they are noted without a rise.
func (dc *deliverContext) support(l *store.Lesson, origin string, now time.Time) error {
	if !l.Own && len(l.Corroborators) == 0 {
		held, err := dc.m.store.ForHash(l.Hash)
		if err != nil {
			return err
		}
		for _, h := range held {
			if o := h.Record.Origin; h.Record.Type != protocol.TypeRevocation && o != dc.m.Origin() && !slices.Contains(l.Corroborators, o) {
				l.Corroborators = append(l.Corroborators, o)
			}
		}
		dc.changed(l)
	}
	if !dc.counts(l, origin) {
		return nil
	}
	if !l.Own && !dc.anyAdmitted(l.Corroborators) {
		// A candidate only strangers brought: the first admitted origin
		// is what the candidate is, as had it come first, counted without
		// a rise (SPEC §8: a stranger's record raises nothing).
		l.Corroborators = append(l.Corroborators, origin)
		dc.changed(l)
		return nil
	}
	corroborate(l, origin, now)
	dc.changed(l)
	return nil
}

// anyAdmitted reports whether one of origins is admitted.
func (dc *deliverContext) anyAdmitted(origins []string) bool {
	return slices.ContainsFunc(origins, dc.admit.Admits)
}

func (dc *deliverContext) changed(l *store.Lesson) {
	if dc.touched == nil {
		dc.touched = map[string]bool{}
	}
	if !dc.touched[l.Hash] {
		dc.touched[l.Hash] = true
		dc.order = append(dc.order, l.Hash)
	}
}

// lessons are the lessons the batch changed, in the order first changed.
func (dc *deliverContext) lessons() []store.Lesson {
	ls := make([]store.Lesson, len(dc.order))
	for i, h := range dc.order {
		ls[i] = *dc.held[h]
	}
	return ls
}

// metBeforeEvents bounds the events a received lesson is compared with to
// tell whether this memory met it before: the newest of its kind. Each
// comparison costs about a microsecond, and a hostile peer can send a
// thousand lessons per key, so without a bound one delivery could hold
// the sleep lock for seconds (2,000 × 2,000 took 3.1 s).
const metBeforeEvents = 500

// events are the contents of the newest events of this memory whose lesson
// kind is kind, at most metBeforeEvents.
func (dc *deliverContext) events(kind string) ([]*preparedText, error) {
	if !dc.evsDone {
		stored, err := dc.m.store.Events(time.Time{}) // oldest first
		if err != nil {
			return nil, err
		}
		dc.evs = map[string][]*preparedText{}
		for i := len(stored) - 1; i >= 0; i-- {
			ev := stored[i].Event
			k := protocol.LessonKindOf(ev.Kind)
			if len(dc.evs[k]) < metBeforeEvents {
				dc.evs[k] = append(dc.evs[k], &preparedText{text: episodeOf(ev).Content()})
			}
		}
		dc.evsDone = true
	}
	return dc.evs[kind], nil
}

// metBefore reports whether one of the events says the same as g, the
// group of a new candidate.
func (dc *deliverContext) metBefore(ctx context.Context, events []*preparedText, g consolidate.Group) bool {
	var pg *consolidate.PreparedGroup
	for _, ev := range events {
		dc.ready(ev)
		if ev.lex == nil {
			if dc.m.similar(ctx, ev.text, g) >= dc.m.cfg.Params.Threshold {
				return true
			}
			continue
		}
		if pg == nil {
			pg = ev.lex.PrepareGroup(g)
		}
		if dc.samePrepared(ev, pg) {
			return true
		}
	}
	return false
}

// layerOf maps a scope to its composition layer (SPEC §9).
func layerOf(name string) string {
	switch scopes.Of(name) {
	case scopes.KindLocal:
		return store.LayerPersonal
	case scopes.KindCommons:
		return store.LayerCommon
	}
	return store.LayerDomain
}
