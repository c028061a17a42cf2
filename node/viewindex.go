package node

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/remem/remem/protocol"
	"github.com/remem/remem/store"
)

// Keys are free, so strangers can make a memory hold any number of
// candidates (issue 28). A view with a limit therefore reads what may be
// vouched for (LessonView.Vouched: own lessons, the hashes admitted
// origins hold records of, those the layers hold) in full, and strangers'
// candidates from the store's view index, strongest first, only to fill
// what is left: it shows what the full computation shows, and costs what
// it shows.

// strangerWalkCap bounds the strangers' candidates one view examines
// beyond those it shows: past it the view shows what it found. Without it
// a stranger could make every view read all it sent: lessons it signs and
// revokes at once rank high and show nothing, and candidates that decayed
// to a strength of 0 (hours old under a testnet's short window) tie with
// every one of theirs.
const strangerWalkCap = 2000

// recallStrangers is how many strangers' candidates recall scores, the
// strongest, after every vouched lesson: relevance is not in the index,
// so without it recall would score every candidate held.
const recallStrangers = 1000

// countView, when set (by tests), is called for each lesson view computed.
var countView func()

// indexable says whether the view of f can be read from the index: it has
// a limit, shows only active lessons (whose strangers' strengths the index
// orders), and not every origin is admitted (admit_all: no strangers).
func (m *Memory) indexable(f Filter) bool {
	return f.Limit > 0 && !f.All && (f.State == "" || f.State.Active()) && !m.admitted().All
}

// vouchedPool is every lesson that may be vouched for, as views with the
// layers composed, and the lessons held of them.
func (m *Memory) vouchedPool(layers []Layer, now time.Time) ([]LessonView, map[string]store.Lesson, error) {
	hashes := map[string]bool{}
	for _, h := range m.store.OwnHashes() {
		hashes[h] = true
	}
	for o := range m.admitted().Origins {
		hs, err := m.store.HashesOf(o)
		if err != nil {
			return nil, nil, err
		}
		for _, h := range hs {
			hashes[h] = true
		}
	}
	for _, l := range layers {
		for _, ll := range l.Lessons {
			hashes[ll.Hash] = true
		}
	}
	lessons, err := m.store.GetLessons(slices.Sorted(maps.Keys(hashes)))
	if err != nil {
		return nil, nil, err
	}
	held := make([]LessonView, 0, len(lessons))
	for _, h := range slices.Sorted(maps.Keys(lessons)) {
		v, err := m.view(lessons[h], now)
		if err != nil {
			return nil, nil, err
		}
		held = append(held, *v)
	}
	if len(layers) == 0 {
		return held, lessons, nil
	}
	views, err := ComposeLayers(held, layers, func(hash string) (LessonView, bool, error) {
		return m.recordsView(hash, now)
	})
	return views, lessons, err
}

// walkStrangers calls take with the views f keeps of the lessons outside
// pool, highest rank first, skipping those skip names, until stop says
// the next rank cannot make it, take returns false, or it computed the
// views of limit lessons.
func (m *Memory) walkStrangers(f Filter, pool map[string]bool, now time.Time, limit int, skip, stop func(store.Ranked) bool, take func(LessonView, store.Lesson) bool) error {
	examined := 0
	return m.store.WalkRanked(func(r store.Ranked) (bool, error) {
		switch {
		case pool[r.Hash] || skip(r):
			return true, nil
		case stop(r) || examined >= limit:
			return false, nil
		}
		examined++
		l, ok, err := m.store.GetLesson(r.Hash)
		if err != nil || !ok {
			return err == nil, err // deleted since the page was read
		}
		v, err := m.view(l, now)
		if err != nil {
			return false, err
		}
		if !f.keep(*v) {
			return true, nil
		}
		return take(*v, l), nil
	})
}

// indexedLessons is Lessons(f) for an indexable f: the vouched pool, then
// strangers' candidates from the index until the limit is full and no
// candidate left can show more strength than the last one kept.
func (m *Memory) indexedLessons(f Filter) ([]LessonView, error) {
	now := m.Now()
	views, lessons, err := m.vouchedPool(append(m.layers.current(), f.Layers...), now)
	if err != nil {
		return nil, err
	}
	kept := f.apply(views)
	vouched := 0
	for vouched < len(kept) && kept[vouched].Vouched {
		vouched++
	}
	if vouched >= f.Limit {
		return f.cut(kept), nil
	}
	W := m.cfg.Params.State.W
	top := strangersTop{need: f.Limit - vouched}
	for _, v := range kept[vouched:] {
		l := lessons[v.Hash]
		top.offer(v, protocol.StrengthRank(l.Strength, l.Updated, W))
	}
	skip := func(r store.Ranked) bool { return top.full() && top.tiesAfter(r) }
	stop := func(r store.Ranked) bool { return top.full() && top.bounded(r, now, W) }
	take := func(v LessonView, l store.Lesson) bool {
		top.offer(v, protocol.StrengthRank(l.Strength, l.Updated, W))
		return true
	}
	if err := m.walkStrangers(f, poolOf(views), now, top.need+strangerWalkCap, skip, stop, take); err != nil {
		return nil, err
	}
	out := kept[:vouched:vouched]
	for _, e := range top.best {
		out = append(out, e.view)
	}
	return out, nil
}

// poolOf is the set of the hashes of views.
func poolOf(views []LessonView) map[string]bool {
	pool := make(map[string]bool, len(views))
	for _, v := range views {
		pool[v.Hash] = true
	}
	return pool
}

// strangersTop keeps the need first strangers' candidates in view order,
// with the rank each has in the index.
type strangersTop struct {
	need int
	best []rankedView
}

type rankedView struct {
	view LessonView
	rank float64
}

func (t *strangersTop) full() bool { return len(t.best) >= t.need }

// offer keeps v if it is among the need first.
func (t *strangersTop) offer(v LessonView, rank float64) {
	i, _ := slices.BinarySearchFunc(t.best, v, func(e rankedView, v LessonView) int {
		if before(e.view, v) {
			return -1
		}
		return 1
	})
	if i < t.need {
		t.best = slices.Insert(t.best, i, rankedView{v, rank})[:min(len(t.best)+1, t.need)]
	}
}

// tiesAfter says whether the lesson of index entry r comes after the last
// one kept for its rank alone: an equal rank is an equal strength (one
// batch's candidates), and then the hash decides.
func (t *strangersTop) tiesAfter(r store.Ranked) bool {
	last := t.best[len(t.best)-1]
	return r.Rank == last.rank && r.Hash > last.view.Hash
}

// bounded says whether the last one kept comes before every lesson of the
// index from entry r on: none of them can show more strength.
func (t *strangersTop) bounded(r store.Ranked, now time.Time, w time.Duration) bool {
	return protocol.RankBound(r.Rank, now, w) < t.best[len(t.best)-1].view.Strength
}

// indexedRecall is Recall for a limit, when the view can be read from the
// index: every vouched lesson is scored, and only when fewer than limit of
// them are relevant, the recallStrangers strongest strangers' candidates.
func (m *Memory) indexedRecall(ctx context.Context, query string, limit int, layers []Layer) ([]LessonView, error) {
	now := m.Now()
	f := Filter{Limit: limit}
	views, lessons, err := m.vouchedPool(append(m.layers.current(), layers...), now)
	if err != nil {
		return nil, err
	}
	var out []LessonView
	relevant := 0
	score := func(v LessonView, l store.Lesson) error {
		n := len(out)
		var err error
		if out, err = m.scoreInto(ctx, out, query, v, l); len(out) > n && v.Vouched {
			relevant++
		}
		return err
	}
	for _, v := range f.apply(views) {
		if err := score(v, lessons[v.Hash]); err != nil {
			return nil, err
		}
	}
	if relevant < limit {
		scored := 0
		var serr error
		never := func(store.Ranked) bool { return false }
		err := m.walkStrangers(f, poolOf(views), now, recallStrangers+strangerWalkCap, never, func(store.Ranked) bool { return scored >= recallStrangers }, func(v LessonView, l store.Lesson) bool {
			scored++
			serr = score(v, l)
			return serr == nil
		})
		if err == nil {
			err = serr
		}
		if err != nil {
			return nil, err
		}
	}
	// rankRecall keeps the order it is given among equals: the view's.
	slices.SortFunc(out, func(a, b LessonView) int {
		if before(a, b) {
			return -1
		}
		return 1
	})
	return rankRecall(out, limit), nil
}
