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
	text := dc.prepare(rec.Text)
	var out []*store.Lesson
	match := func(l *store.Lesson) {
		if l.Kind == rec.Kind && l.Hash != rec.Hash && dc.counts(l, rec.Origin) && !slices.Contains(out, l) &&
			dc.same(ctx, text, groupOf(*l)) {
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
	// The candidates the index says may match are read in one go; those
	// read or changed in this batch are held already, newer than the index.
	recent := m.recent.byKind[rec.Kind]
	var read []string
	for _, c := range recent {
		if _, ok := dc.held[c.hash]; ok || c.full || c.hash == rec.Hash || rec.Origin == m.Origin() ||
			slices.Contains(c.origins, rec.Origin) || !dc.same(ctx, text, c.group) {
			continue
		}
		read = append(read, c.hash)
	}
	if err := dc.read(read); err != nil {
		return nil, err
	}
	for _, c := range recent {
		if l, ok := dc.held[c.hash]; ok {
			match(l)
		}
	}
	return out, nil
}

// preparedText is a text compared with many groups in one batch: its terms
// for the filter and, with the lexical similarity, its profile, each
// worked out once.
type preparedText struct {
	text  string
	terms []uint64 // nil without a filter
	lex   *consolidate.Lexical
	prep  *consolidate.Prepared // made on the first pair that is scored
}

// prepare readies text for same.
func (dc *deliverContext) prepare(text string) *preparedText {
	p := &preparedText{text: text}
	p.lex, _ = dc.m.sim.(*consolidate.Lexical)
	if dc.filter != nil {
		p.terms = dc.filter.termsOf(text)
	}
	return p
}

// same reports whether text says the same as g: it shares a word with g
// (when the filter applies) and its linkage to g reaches the threshold.
func (dc *deliverContext) same(ctx context.Context, text *preparedText, g consolidate.Group) bool {
	if !dc.filter.mayMatch(text.terms, g) {
		return false
	}
	var s float64
	if text.lex != nil {
		if text.prep == nil {
			p := text.lex.Prepare(text.text)
			text.prep = &p
		}
		s = text.prep.Linkage(g) // what m.similar returns, the text prepared once
	} else {
		s = dc.m.similar(ctx, text.text, g)
	}
	return s >= dc.m.cfg.Params.Threshold
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
	texts  map[string][]uint64 // a compared text's terms, for one batch
}

// newTermFilter is nil when the similarity is not the lexical one or the
// threshold is within its trigram weight: then every pair is scored.
func (m *Memory) newTermFilter() *termFilter {
	lex, ok := m.sim.(*consolidate.Lexical)
	if !ok || m.cfg.Params.Threshold <= lex.TrigramWeight() {
		return nil
	}
	return &termFilter{lex: lex, groups: map[string][]uint64{}, texts: map[string][]uint64{}}
}

// termsOf returns the terms of text, worked out once per batch.
func (f *termFilter) termsOf(text string) []uint64 {
	terms, ok := f.texts[text]
	if !ok {
		terms = f.lex.Terms(text)
		f.texts[text] = terms
	}
	return terms
}

// mayMatch reports whether a text of these terms (termsOf) shares a word
// with a member of g.
func (f *termFilter) mayMatch(terms []uint64, g consolidate.Group) bool {
	if f == nil {
		return true
	}
	gt, ok := f.groups[g.ID]
	if !ok {
		gt = f.lex.Terms(g.Text)
		for _, e := range g.Episodes {
			gt = append(gt, f.lex.Terms(e)...)
		}
		slices.Sort(gt)
		gt = slices.Compact(gt)
		f.groups[g.ID] = gt
	}
	return sharesAny(terms, gt)
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
