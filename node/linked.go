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
	mask    originSet
	full    bool // strength 1: it can rise no more
	// prep is group prepared for scoring, kept across deliveries while the
	// group stays the same and holds at most maxKeptGroup bytes of text:
	// then the index keeps at most linkedCandidates such groups a kind.
	prep *consolidate.PreparedGroup
}

// maxKeptGroup bounds the text of a group whose prepared form the index
// keeps: a lesson of MaxTextChars and a few episodes. A larger group is
// prepared again in each delivery that compares with it.
const maxKeptGroup = 4 << 10

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
	g := groupOf(l)
	if !sameGroup(c.group, g) {
		c.prep = nil
	}
	c.group, c.origins, c.full = g, slices.Clone(l.Corroborators), l.Strength >= 1
	c.mask = originSet{}
}

// counted reports whether origin is among the candidate's origins.
func (c *recentCandidate) counted(o originOf) bool {
	return c.mask.has(c.origins, o)
}

// sameGroup reports whether a and b hold the same texts.
func sameGroup(a, b consolidate.Group) bool {
	return a.Text == b.Text && slices.Equal(a.Episodes, b.Episodes)
}

// sameMeaning returns the local lessons of rec's kind, other than its own
// hash, that say the same as rec by average linkage and that rec's origin
// may still raise: own lessons, candidates this batch made and the newest
// other candidates.
func (dc *deliverContext) sameMeaning(ctx context.Context, rec *protocol.Record) ([]*store.Lesson, error) {
	m := dc.m
	if !dc.admit.Admits(rec.Origin) {
		return nil, nil // a stranger's lesson raises nothing (SPEC §8): no need to compare it
	}
	text := &preparedText{text: rec.Text, many: true}
	origin := dc.originOf(rec.Origin)
	var out []*store.Lesson
	match := func(l *store.Lesson) {
		if l.Kind == rec.Kind && l.Hash != rec.Hash && dc.countsFor(l, origin) && !slices.Contains(out, l) &&
			dc.sameLesson(ctx, text, l) {
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
			c.counted(origin) || !dc.sameCandidate(ctx, text, c) {
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

// preparedText is a text compared with many groups in one batch: with the
// lexical similarity, its profile, worked out once, on the first
// comparison.
type preparedText struct {
	text  string
	many  bool // compared with many groups
	ready bool
	lex   *consolidate.Lexical // nil: another similarity
	prep  consolidate.Prepared
}

// ready prepares text to be compared. A received lesson is compared with
// many groups, so its terms go into hash tables (Indexed); an event is
// compared with one group per new candidate, which is fewer in small
// batches.
func (dc *deliverContext) ready(text *preparedText) {
	if text.ready {
		return
	}
	text.ready = true
	if text.lex, _ = dc.m.sim.(*consolidate.Lexical); text.lex == nil {
		return
	}
	text.prep = text.lex.Prepare(text.text)
	if text.many {
		text.prep = text.prep.Indexed()
	}
}

// sameLesson is same for a held lesson's group, prepared once per batch:
// a held lesson's texts do not change during a delivery.
func (dc *deliverContext) sameLesson(ctx context.Context, text *preparedText, l *store.Lesson) bool {
	dc.ready(text)
	if text.lex == nil {
		return dc.m.similar(ctx, text.text, groupOf(*l)) >= dc.m.cfg.Params.Threshold
	}
	pg := dc.preps[l]
	if pg == nil {
		g := groupOf(*l)
		if c := dc.m.recent.byHash[l.Hash]; c != nil && c.prep != nil && sameGroup(c.group, g) {
			pg = c.prep
		} else {
			pg = text.lex.PrepareGroup(g)
		}
		if dc.preps == nil {
			dc.preps = map[*store.Lesson]*consolidate.PreparedGroup{}
		}
		dc.preps[l] = pg
	}
	return dc.samePrepared(text, pg)
}

// sameCandidate is same for an indexed candidate's group, prepared once
// and kept in the index (see recentCandidate.prep).
func (dc *deliverContext) sameCandidate(ctx context.Context, text *preparedText, c *recentCandidate) bool {
	dc.ready(text)
	if text.lex == nil {
		return dc.m.similar(ctx, text.text, c.group) >= dc.m.cfg.Params.Threshold
	}
	pg := c.prep
	if pg == nil {
		pg = dc.bigPreps[c]
	}
	if pg == nil {
		pg = text.lex.PrepareGroup(c.group)
		if pg.Size() <= maxKeptGroup {
			c.prep = pg
		} else {
			if dc.bigPreps == nil {
				dc.bigPreps = map[*recentCandidate]*consolidate.PreparedGroup{}
			}
			dc.bigPreps[c] = pg
		}
	}
	return dc.samePrepared(text, pg)
}

// samePrepared reports whether a ready text says the same as a prepared
// group: it shares a word with g (when the filter applies) and its linkage
// to g, what m.similar returns, reaches the threshold.
func (dc *deliverContext) samePrepared(text *preparedText, g *consolidate.PreparedGroup) bool {
	if dc.filter && !text.prep.SharesTerm(g) {
		return false
	}
	return text.prep.GroupLinkage(g) >= dc.m.cfg.Params.Threshold
}

// useFilter reports whether a delivery may skip, before scoring, a text
// and a group that share no word: with the lexical similarity and a
// threshold above its trigram weight, every member of the group then
// scores below the threshold, and so does their average. Scoring is what a
// delivery spends its time on (a new lesson is compared with own lessons,
// this batch's candidates, the newest candidates and the newest events),
// and most pairs share no word. Otherwise every pair is scored.
func (m *Memory) useFilter() bool {
	lex, ok := m.sim.(*consolidate.Lexical)
	return ok && m.cfg.Params.Threshold > lex.TrigramWeight()
}
