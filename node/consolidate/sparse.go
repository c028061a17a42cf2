package consolidate

import (
	"cmp"
	"context"
	"slices"

	"github.com/remem/remem/internal/progress"
)

// Sparse average linkage: what Assign clusters the unjoined episodes of one
// lesson kind with. Exact average linkage (agglomerate in the tests) holds an
// n×n matrix and costs n² scores; a sleep over a month of imported events
// (tens of thousands) could not run. Here only pairs that can be alike are
// scored, and memory holds the pairs kept, never all of them:
//
//   - identical texts become one weighted item (they score 1 with each other
//     and alike with everything else, so exact linkage merges them first);
//   - the graph keeps, per pair of clusters, the sum of the similarities
//     between their members, and the linkage is that sum over na·nb: exactly
//     average linkage when the pairs left out score 0. The Lexical inverted
//     index proposes every pair sharing a word or trigram (the others do
//     score 0); pairs under sparse.floor are left out too;
//   - items enter the graph sparse.chunk at a time, in the order of their
//     first episode, and the best pair is merged while its linkage reaches
//     the threshold before the next chunk enters. A new item's edge to a
//     cluster formed earlier is its linkage to up to sparse.reps members of
//     it (as a lesson's is over its last episodes), so the index it is
//     looked up in stays small.
//
// Peak memory grows with the distinct texts (their profiles and clusters)
// plus the pairs kept among one chunk and the clusters formed, not with
// their square; time grows with the texts times (sparse.chunk + the
// representatives of the clusters formed). Input that forms few clusters
// (repeated failures) is the good case; input where nearly every event stays
// alone makes the representatives, and so the time, grow with it.
// TestSparseMatchesExact measures what the chunks and the floor change;
// BenchmarkAssignGrowth the growth.
type sparse struct {
	chunk int     // distinct texts clustered together
	floor float64 // pairs scoring less count as 0
	reps  int     // members of a formed cluster a later text is compared with
}

// defaultSparse is what Assign uses; the numbers are those the equivalence
// test and BenchmarkAssignGrowth were measured with.
var defaultSparse = sparse{chunk: 1024, floor: 0.2, reps: 32}

// item is a distinct text among the episodes clustered, with the positions
// of the episodes that hold it.
type item struct {
	text int     // index in the scorer's table
	w    float64 // len(eps), the weight of its pairs
	eps  []int
}

// cluster clusters texts (indices into sc's table, all of one lesson
// kind) and returns clusters of positions in texts, each in increasing
// order, ordered by their first position.
func (sp sparse) cluster(ctx context.Context, sc *scorer, threshold float64, texts []int) ([][]int, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	if threshold <= 0 { // similarities are never negative: everything merges
		all := make([]int, len(texts))
		for i := range all {
			all[i] = i
		}
		return [][]int{all}, nil
	}
	items, err := distinctItems(ctx, sc, threshold, texts)
	if err != nil {
		return nil, err
	}
	g := newLinkGraph(items)
	for lo := 0; lo < len(items); lo += sp.chunk {
		progress.Report(ctx, "clustering", lo, len(items))
		hi := min(lo+sp.chunk, len(items))
		if err := sp.linkFormed(ctx, sc, g, items, lo, hi); err != nil {
			return nil, err
		}
		if err := sp.linkChunk(ctx, sc, g, items, lo, hi); err != nil {
			return nil, err
		}
		if err := g.merge(ctx, threshold); err != nil {
			return nil, err
		}
	}
	progress.Report(ctx, "clustering", len(items), len(items))
	var clusters [][]int // item indices
	for _, m := range g.mem {
		if m != nil {
			clusters = append(clusters, m)
		}
	}
	out := make([][]int, len(clusters))
	for k, c := range clusters {
		var eps []int
		for _, it := range c {
			eps = append(eps, items[it].eps...)
		}
		slices.Sort(eps)
		out[k] = eps
	}
	slices.SortFunc(out, func(a, b []int) int { return cmp.Compare(a[0], b[0]) })
	return out, nil
}

// distinctItems folds equal texts into one item, in the order of their
// first episode. A text that does not reach the threshold against itself
// (a Lexical text without a kept word scores 0) stays one item per episode.
func distinctItems(ctx context.Context, sc *scorer, threshold float64, texts []int) ([]item, error) {
	var items []item
	at := make(map[int]int)
	for p, t := range texts {
		if i, ok := at[t]; ok {
			items[i].eps = append(items[i].eps, p)
			items[i].w++
			continue
		}
		self, err := sc.score(ctx, t, t)
		if err != nil {
			return nil, err
		}
		if self >= threshold {
			at[t] = len(items)
		}
		items = append(items, item{text: t, w: 1, eps: []int{p}})
	}
	return items, nil
}

// linkFormed adds the edges from each item of items[lo:hi] to the
// clusters formed from earlier items, each edge's linkage taken over up to
// sp.reps members of the cluster, weighted by their episodes.
func (sp sparse) linkFormed(ctx context.Context, sc *scorer, g *linkGraph, items []item, lo, hi int) error {
	type rep struct {
		cluster, text int
		w             float64
	}
	var formed []int              // clusters
	var reps [][]rep              // by position in formed
	repsOf := make(map[int][]rep) // by text (Lexical)
	var total []float64           // by position in formed
	var repTexts []int
	for k := range lo {
		c := g.mem[k]
		if c == nil {
			continue
		}
		f := len(formed)
		formed = append(formed, k)
		reps = append(reps, nil)
		total = append(total, 0)
		step := max(1, (len(c)+sp.reps-1)/sp.reps)
		for j := 0; j < len(c); j += step {
			it := items[c[j]]
			r := rep{cluster: f, text: it.text, w: it.w}
			reps[f] = append(reps[f], r)
			repsOf[it.text] = append(repsOf[it.text], r)
			repTexts = append(repTexts, it.text)
			total[f] += it.w
		}
	}
	if len(formed) == 0 {
		return nil
	}
	var idx *lexIndex
	var scores []float64
	if sc.tab != nil {
		idx = newLexIndex(sc.profs, repTexts)
		scores = make([]float64, len(sc.texts))
	}
	sum := make([]float64, len(formed))
	var touched []int
	for i := lo; i < hi; i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		for _, f := range touched {
			sum[f] = 0
		}
		touched = touched[:0]
		if idx != nil {
			idx.scores(sc.tab, sc.profs, items[i].text, scores)
			for _, t := range idx.touched {
				for _, r := range repsOf[t] {
					touched = append(touched, r.cluster)
					sum[r.cluster] += r.w * scores[t]
				}
			}
			slices.Sort(touched)
			touched = slices.Compact(touched)
		} else {
			for f := range formed {
				for _, r := range reps[f] {
					s, err := sc.score(ctx, items[i].text, r.text)
					if err != nil {
						return err
					}
					sum[f] += r.w * s
				}
				touched = append(touched, f)
			}
		}
		for _, f := range touched {
			if link := sum[f] / total[f]; link >= sp.floor && link > 0 {
				k := formed[f]
				g.link(k, i, link*g.size[k]*g.size[i])
			}
		}
	}
	return nil
}

// linkChunk adds the edges among the items of items[lo:hi] that score at
// least sp.floor.
func (sp sparse) linkChunk(ctx context.Context, sc *scorer, g *linkGraph, items []item, lo, hi int) error {
	edge := func(a, b int, s float64) {
		if s >= sp.floor && s > 0 {
			g.link(a, b, s*g.size[a]*g.size[b])
		}
	}
	if sc.tab == nil {
		for i := lo; i < hi; i++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			for j := lo; j < i; j++ {
				s, err := sc.score(ctx, items[j].text, items[i].text)
				if err != nil {
					return err
				}
				edge(j, i, s)
			}
		}
		return nil
	}
	local := make(map[int]int, hi-lo) // text → its item
	idx := newLexIndex(sc.profs, nil)
	scores := make([]float64, len(sc.texts))
	for i := lo; i < hi; i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		t := items[i].text
		idx.scores(sc.tab, sc.profs, t, scores)
		for _, u := range idx.touched {
			edge(local[u], i, scores[u])
		}
		if _, dup := local[t]; !dup { // a text left unfolded scores 0
			local[t] = i
			idx.add(sc.profs, t)
		}
	}
	return nil
}

// linkGraph is average linkage over a sparse graph: nbr[a][b] is the sum of
// the similarities between the members of clusters a and b (absent: 0), and
// a heap holds candidate merges, stale ones skipped by version.
type linkGraph struct {
	size []float64 // episodes in each cluster
	nbr  []map[int32]float64
	ver  []uint32
	mem  [][]int // items of each cluster; nil once merged away
	heap []pairEntry
}

type pairEntry struct {
	link   float64
	a, b   int32 // a < b
	va, vb uint32
}

// before orders the heap: the highest linkage first, ties to the smallest
// clusters (as agglomerate breaks them).
func (e pairEntry) before(f pairEntry) bool {
	if e.link != f.link {
		return e.link > f.link
	}
	if e.a != f.a {
		return e.a < f.a
	}
	return e.b < f.b
}

func newLinkGraph(items []item) *linkGraph {
	g := &linkGraph{
		size: make([]float64, len(items)),
		nbr:  make([]map[int32]float64, len(items)),
		ver:  make([]uint32, len(items)),
		mem:  make([][]int, len(items)),
	}
	for i, it := range items {
		g.size[i] = it.w
		g.mem[i] = []int{i}
	}
	return g
}

// link records the sum of similarities between clusters a and b and offers
// the pair for merging.
func (g *linkGraph) link(a, b int, sum float64) {
	for _, p := range [2][2]int{{a, b}, {b, a}} {
		if g.nbr[p[0]] == nil {
			g.nbr[p[0]] = make(map[int32]float64)
		}
		g.nbr[p[0]][int32(p[1])] = sum
	}
	g.push(a, b)
}

func (g *linkGraph) push(a, b int) {
	if a > b {
		a, b = b, a
	}
	e := pairEntry{link: g.nbr[a][int32(b)] / (g.size[a] * g.size[b]), a: int32(a), b: int32(b), va: g.ver[a], vb: g.ver[b]}
	h := append(g.heap, e)
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if !h[i].before(h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
	g.heap = h
}

func (g *linkGraph) pop() pairEntry {
	h := g.heap
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < len(h) && h[l].before(h[m]) {
			m = l
		}
		if r := l + 1; r < len(h) && h[r].before(h[m]) {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	g.heap = h
	return top
}

// merge joins the pair of clusters with the highest linkage while it is at
// least threshold. The merged cluster keeps the smaller index; its sums to
// every other cluster are the sums of its parts'. Pairs left under the
// threshold keep their sums for the next chunk, and only a merge can lift
// one (it offers the merged cluster's pairs again), so the heap is dropped.
func (g *linkGraph) merge(ctx context.Context, threshold float64) error {
	for n := 0; len(g.heap) > 0; n++ {
		if n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		e := g.pop()
		a, b := int(e.a), int(e.b)
		if g.mem[a] == nil || g.mem[b] == nil || g.ver[a] != e.va || g.ver[b] != e.vb {
			continue // stale: a or b changed since
		}
		if e.link < threshold {
			break // every current pair left is lower
		}
		for c, s := range g.nbr[b] {
			if int(c) == a {
				continue
			}
			g.nbr[a][c] += s
			nc := g.nbr[c]
			nc[int32(a)] += s
			delete(nc, int32(b))
		}
		delete(g.nbr[a], int32(b))
		g.nbr[b] = nil
		g.size[a] += g.size[b]
		g.mem[a] = append(g.mem[a], g.mem[b]...)
		g.mem[b] = nil
		g.ver[a]++
		for c := range g.nbr[a] {
			g.push(a, int(c))
		}
	}
	g.heap = nil
	return nil
}
