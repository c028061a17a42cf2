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
		if l.Kind == rec.Kind && l.Hash != rec.Hash && dc.counts(l, rec.Origin) && !slices.Contains(out, l) &&
			dc.filter.mayMatch(rec.Text, groupOf(*l)) && m.similar(ctx, rec.Text, groupOf(*l)) >= m.cfg.Params.Threshold {
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
			!dc.filter.mayMatch(rec.Text, c.group) || m.similar(ctx, rec.Text, c.group) < m.cfg.Params.Threshold {
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

// termFilter skips, before scoring, a text and a group that share no word:
// with the lexical similarity and a threshold above its trigram weight,
// every member of the group then scores below the threshold, and so does
// their average. Scoring is what a delivery spends its time on (a new
// lesson is compared with own lessons, this batch's candidates, the newest
// candidates and the newest events), and most pairs share no word.
type termFilter struct {
	lex    *consolidate.Lexical
	groups map[string][]uint64 // a group's terms, by lesson hash, for one batch
}

// newTermFilter is nil when the similarity is not the lexical one or the
// threshold is within its trigram weight: then every pair is scored.
func (m *Memory) newTermFilter() *termFilter {
	lex, ok := m.sim.(*consolidate.Lexical)
	if !ok || m.cfg.Params.Threshold <= lex.TrigramWeight() {
		return nil
	}
	return &termFilter{lex: lex, groups: map[string][]uint64{}}
}

// mayMatch reports whether text shares a word with a member of g.
func (f *termFilter) mayMatch(text string, g consolidate.Group) bool {
	if f == nil {
		return true
	}
	terms, ok := f.groups[g.ID]
	if !ok {
		terms = f.lex.Terms(g.Text)
		for _, e := range g.Episodes {
			terms = append(terms, f.lex.Terms(e)...)
		}
		slices.Sort(terms)
		terms = slices.Compact(terms)
		f.groups[g.ID] = terms
	}
	return sharesAny(f.lex.Terms(text), terms)
}

// sharesAny reports whether the sorted lists a and b have an element in
// common.
func sharesAny(a, b []uint64) bool {
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			return true
		}
	}
	return false
}
