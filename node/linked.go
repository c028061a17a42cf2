package node

import (
	"context"
	"slices"

	"github.com/remem/remem/node/consolidate"
	"github.com/remem/remem/protocol"
	"github.com/remem/remem/store"
)

// linkedCandidates bounds the candidates a received lesson is compared
// with by meaning (SPEC §7): the newest of its kind; own lessons are all
// compared. Like metBeforeEvents it keeps a flood of new lessons from
// holding the sleep lock for long. An older candidate is still raised by
// a lesson of its own hash and by confirmations.
const linkedCandidates = 100

// recentCandidates keep, in memory, what the comparison by meaning needs
// of the newest candidates of each kind: their linkage group and the
// origins counted for them. The store holds the lessons; this is an index
// that spares a delivery reading them, and a match is checked again
// against the stored lesson before it is raised. Deliver and sleep's
// verify pass keep it, under sleepMu; the first delivery that needs it
// reads the lessons once.
type recentCandidates struct {
	loaded bool
	byKind map[string][]*recentCandidate // oldest first
	byHash map[string]*recentCandidate
}

type recentCandidate struct {
	hash    string
	group   consolidate.Group
	origins []string // store.Lesson.Corroborators
	full    bool     // strength 1: it can rise no more
}

func (r *recentCandidates) load(s *store.Store) error {
	if r.loaded {
		return nil
	}
	all, err := s.Lessons()
	if err != nil {
		return err
	}
	slices.SortStableFunc(all, func(a, b store.Lesson) int { return a.Arrived.Compare(b.Arrived) })
	r.byKind, r.byHash, r.loaded = map[string][]*recentCandidate{}, map[string]*recentCandidate{}, true
	for _, l := range all {
		if !l.Own {
			r.put(l)
		}
	}
	return nil
}

// note brings the index up to date with lessons just written; isNew (nil:
// none) tells the candidates that arrived with them, newer than every
// other.
func (r *recentCandidates) note(ls []store.Lesson, isNew func(hash string) bool) {
	if !r.loaded {
		return // load reads them all
	}
	for _, l := range ls {
		if c, ok := r.byHash[l.Hash]; ok {
			c.set(l)
		} else if !l.Own && isNew != nil && isNew(l.Hash) {
			r.put(l)
		}
	}
}

// put adds the newest candidate of its kind, forgetting the oldest past
// linkedCandidates.
func (r *recentCandidates) put(l store.Lesson) {
	c := &recentCandidate{hash: l.Hash}
	c.set(l)
	list := append(r.byKind[l.Kind], c)
	if len(list) > linkedCandidates {
		delete(r.byHash, list[0].hash)
		list = slices.Delete(list, 0, 1)
	}
	r.byKind[l.Kind], r.byHash[l.Hash] = list, c
}

func (c *recentCandidate) set(l store.Lesson) {
	c.group, c.origins, c.full = groupOf(l), slices.Clone(l.Corroborators), l.Strength >= 1
}

// sameMeaning returns the local lessons of rec's kind, other than its own
// hash, that say the same as rec by average linkage and that rec's origin
// may still raise: own lessons, candidates this batch made and the newest
// other candidates.
func (dc *deliverContext) sameMeaning(ctx context.Context, rec *protocol.Record) ([]*store.Lesson, error) {
	m := dc.m
	var out []*store.Lesson
	match := func(l *store.Lesson) {
		if l.Kind == rec.Kind && l.Hash != rec.Hash && dc.counts(l, rec.Origin) &&
			m.similar(ctx, rec.Text, groupOf(*l)) >= m.cfg.Params.Threshold && !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	own, err := dc.ownLessons()
	if err != nil {
		return nil, err
	}
	for _, l := range own {
		match(l)
	}
	for _, l := range dc.fresh {
		match(l)
	}
	if err := m.recent.load(m.store); err != nil {
		return nil, err
	}
	for _, c := range m.recent.byKind[rec.Kind] {
		if l, ok := dc.held[c.hash]; ok {
			match(l) // read or changed in this batch: newer than the index
			continue
		}
		if c.full || c.hash == rec.Hash || rec.Origin == m.Origin() || slices.Contains(c.origins, rec.Origin) ||
			m.similar(ctx, rec.Text, c.group) < m.cfg.Params.Threshold {
			continue
		}
		l, ok, err := dc.get(c.hash)
		if err != nil {
			return nil, err
		}
		if ok {
			match(l)
		}
	}
	return out, nil
}
