package node

import (
	"context"
	"slices"
	"time"

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
}

// Receive verifies raw lines that came by scope and merges the good ones.
// Bad lines are reported with their number and reason; the rest are taken.
// Scope "local" holds only this memory's own records, so lines of another
// origin are refused there.
func (m *Memory) Receive(ctx context.Context, scope string, lines []protocol.Line) (ReceiveReport, error) {
	bound := protocol.Bound{Source: scope}
	if scope == store.ScopeLocal {
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
	rep.Accepted, rep.Duplicate, rep.Candidates, rep.OverCap = d.Accepted, d.Duplicate, d.Candidates, d.OverCap
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
	recs, over, err := m.capOrigins(scope, recs)
	if err != nil {
		return rep, err
	}
	if over > 0 {
		rep.OverCap = over
		m.countRefused(protocol.Tally{protocol.ReasonTooManyRecords: over}, 0)
	}
	// The merge rule decides from the lessons held before the batch; then
	// the records and the lessons they changed are written in one go.
	dc := &deliverContext{m: m}
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
	outcomes, err := m.store.Merge(recs, scope, now, dc.lessons())
	if err != nil {
		return rep, err
	}
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

// noteLesson applies SPEC §7 to a lesson record of another origin: a hash
// the memory does not hold becomes a candidate at strength 0.5; the same
// hash or meaning as an own lesson corroborates it. Changed lessons are
// gathered in dc and written once per batch.
func (m *Memory) noteLesson(ctx context.Context, dc *deliverContext, rec *protocol.Record, scope string, now time.Time) (bool, error) {
	l, ok, err := dc.lesson(rec.Hash)
	if err != nil {
		return false, err
	}
	if ok {
		if !slices.Contains(l.Scopes, scope) {
			l.Scopes = append(l.Scopes, scope)
			dc.changed(l)
		}
		if l.Own && !slices.Contains(l.Corroborators, rec.Origin) {
			corroborate(l, rec.Origin, now)
			dc.changed(l)
		}
		return false, nil
	}
	cand := &store.Lesson{
		Hash: rec.Hash, Kind: rec.Kind, Text: rec.Text, Seen: 0, Strength: protocol.CandidateStrength,
		Updated: now, Arrived: now, Scopes: []string{scope}, Layer: layerOf(scope),
	}
	// Had this memory met the surprise before the lesson arrived?
	events, err := dc.events(rec.Kind)
	if err != nil {
		return false, err
	}
	g := groupOf(*cand)
	for _, content := range events {
		if m.similar(ctx, content, g) >= m.cfg.Params.Threshold {
			cand.MetBefore = true
			break
		}
	}
	// Corroboration by meaning: an own lesson that says the same thing.
	own, err := dc.ownLessons()
	if err != nil {
		return false, err
	}
	for _, o := range own {
		if o.Kind != rec.Kind || slices.Contains(o.Corroborators, rec.Origin) {
			continue
		}
		if m.similar(ctx, rec.Text, groupOf(*o)) >= m.cfg.Params.Threshold {
			corroborate(o, rec.Origin, now)
			dc.changed(o)
		}
	}
	dc.changed(cand)
	return true, nil
}

// corroborate raises an own lesson once per other origin that holds it too.
func corroborate(l *store.Lesson, origin string, now time.Time) {
	l.Corroborators = append(l.Corroborators, origin)
	l.Strength = protocol.Rise(l.Strength)
	l.Updated = now
	l.Dirty = true
}

// deliverContext loads, once per delivered batch, what the merge rule
// compares new lessons with, and gathers the lessons it changes.
type deliverContext struct {
	m       *Memory
	evs     map[string][]string // by lesson kind, newest first
	evsDone bool
	own     []*store.Lesson
	ownDone bool
	touched map[string]*store.Lesson
	order   []string
	held    map[string]store.Lesson // lessons held before the batch
}

// preload reads, in one go, the lessons the batch's lesson records are about.
func (dc *deliverContext) preload(recs []*protocol.Record, self string) error {
	var hashes []string
	for _, r := range recs {
		if r.Type == protocol.TypeLesson && r.Origin != self {
			hashes = append(hashes, r.Hash)
		}
	}
	if len(hashes) == 0 {
		return nil
	}
	var err error
	dc.held, err = dc.m.store.GetLessons(hashes)
	return err
}

// lesson returns the lesson held for hash, as changed so far in the batch.
func (dc *deliverContext) lesson(hash string) (*store.Lesson, bool, error) {
	if l, ok := dc.touched[hash]; ok {
		return l, true, nil
	}
	for _, o := range dc.own {
		if o.Hash == hash {
			return o, true, nil
		}
	}
	l, ok := dc.held[hash]
	if !ok {
		return nil, false, nil
	}
	return &l, true, nil
}

func (dc *deliverContext) changed(l *store.Lesson) {
	if dc.touched == nil {
		dc.touched = map[string]*store.Lesson{}
	}
	if _, ok := dc.touched[l.Hash]; !ok {
		dc.order = append(dc.order, l.Hash)
	}
	dc.touched[l.Hash] = l
}

// lessons are the lessons the batch changed, in the order first changed.
func (dc *deliverContext) lessons() []store.Lesson {
	ls := make([]store.Lesson, len(dc.order))
	for i, h := range dc.order {
		ls[i] = *dc.touched[h]
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
func (dc *deliverContext) events(kind string) ([]string, error) {
	if !dc.evsDone {
		stored, err := dc.m.store.Events(time.Time{}) // oldest first
		if err != nil {
			return nil, err
		}
		dc.evs = map[string][]string{}
		for i := len(stored) - 1; i >= 0; i-- {
			ev := stored[i].Event
			k := protocol.LessonKindOf(ev.Kind)
			if len(dc.evs[k]) < metBeforeEvents {
				dc.evs[k] = append(dc.evs[k], episodeOf(ev).Content())
			}
		}
		dc.evsDone = true
	}
	return dc.evs[kind], nil
}

// ownLessons are this memory's own lessons, kept current within the batch.
func (dc *deliverContext) ownLessons() ([]*store.Lesson, error) {
	if !dc.ownDone {
		all, err := dc.m.store.OwnLessons()
		if err != nil {
			return nil, err
		}
		for _, l := range all {
			if t, ok := dc.touched[l.Hash]; ok {
				dc.own = append(dc.own, t)
				continue
			}
			dc.own = append(dc.own, &l)
		}
		dc.ownDone = true
	}
	return dc.own, nil
}

// layerOf maps a scope to its composition layer (SPEC §9).
func layerOf(scope string) string {
	switch {
	case scope == "local":
		return LayerPersonal
	case len(scope) >= 8 && scope[:8] == "commons:":
		return LayerCommon
	}
	return LayerDomain
}

// Layers of SPEC §9, lowest first.
const (
	LayerCommon   = "common"
	LayerDomain   = "domain"
	LayerPersonal = "personal"
)
