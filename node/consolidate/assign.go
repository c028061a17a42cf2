package consolidate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Group is an existing lesson with the episodes it has absorbed.
type Group struct {
	// ID identifies the lesson; it must be non-empty and unique among the
	// groups given to Assign.
	ID string
	// Text is the lesson sentence.
	Text string
	// Episodes holds the Content of every episode the lesson has absorbed.
	Episodes []string
	// Kind, when set, is the lesson's kind (error, correction, surprise):
	// only episodes whose event kind maps to it may join. Empty lets any
	// episode join, so callers that keep kinds apart themselves can leave it.
	Kind string
}

// members returns the texts a linkage is averaged over: the absorbed
// episodes and the lesson text, leaving out blank ones (they carry no meaning
// and would only pull the mean down).
func (g Group) members() []string {
	out := make([]string, 0, len(g.Episodes)+1)
	for _, e := range g.Episodes {
		if strings.TrimSpace(e) != "" {
			out = append(out, e)
		}
	}
	if strings.TrimSpace(g.Text) != "" {
		out = append(out, g.Text)
	}
	return out
}

// Linkage is the average-linkage similarity of text to g: the mean of its
// similarity to every episode g has absorbed and to g's text (blank ones left
// out). A group with nothing to compare against has linkage 0.
func Linkage(ctx context.Context, sim Similarity, text string, g Group) (float64, error) {
	if sim == nil {
		return 0, errors.New("consolidate: linkage: no similarity")
	}
	ms := g.members()
	if len(ms) == 0 {
		return 0, nil
	}
	var sum float64
	for _, m := range ms {
		s, err := sim.Similarity(ctx, text, m)
		if err != nil {
			return 0, fmt.Errorf("consolidate: linkage to group %q: %w", g.ID, err)
		}
		sum += s
	}
	return sum / float64(len(ms)), nil
}

// Assignment is where Assign put each episode: every index of the episodes
// given is either a key of Joined or in exactly one of NewClusters.
type Assignment struct {
	// Joined maps an episode index to the ID of the group it joined.
	Joined map[int]string
	// NewClusters are the remaining episodes, clustered among themselves.
	// Each cluster lists episode indices in increasing order; clusters are
	// ordered by their first index. A cluster may hold a single episode.
	NewClusters [][]int
}

// Preparer is implemented by a Similarity that works better when it sees
// every text up front, such as Embedding, which fetches vectors in batches.
// Assign calls Prepare once with all the texts it will compare.
type Preparer interface {
	Prepare(ctx context.Context, texts []string) error
}

// Assign clusters new episodes against existing groups.
//
// Each episode joins the group with the highest Linkage if that linkage is
// at least threshold (ties go to the smallest group ID, so the order of
// groups does not matter). Linkages are computed against the groups as given:
// episodes joining in the same call do not change them. The episodes that
// join no group are clustered among themselves by average-linkage
// agglomerative clustering: the two clusters with the highest mean pairwise
// similarity are merged while that mean is at least threshold (ties go to
// the clusters with the smallest first indices). Episodes whose event kinds
// map to different lesson kinds (SPEC §3) are never put in one cluster, and
// an episode never joins a group whose Kind differs from its own lesson kind.
//
// The cost is one similarity per episode and group member, plus one per pair
// of unjoined episodes (held in memory as a u×u matrix of float64, so callers
// should bound the episodes per call to a few thousand). With Lexical, every
// text is tokenised once. With a Preparer, Prepare is called once first.
// Assign is deterministic for a deterministic Similarity.
func Assign(ctx context.Context, sim Similarity, threshold float64, groups []Group, episodes []Episode) (Assignment, error) {
	if sim == nil {
		return Assignment{}, errors.New("consolidate: assign: no similarity")
	}
	if math.IsNaN(threshold) {
		return Assignment{}, errors.New("consolidate: assign: threshold is NaN")
	}
	seen := make(map[string]bool, len(groups))
	for i, g := range groups {
		switch {
		case g.ID == "":
			return Assignment{}, fmt.Errorf("consolidate: assign: group %d has no ID", i)
		case seen[g.ID]:
			return Assignment{}, fmt.Errorf("consolidate: assign: group ID %q given twice", g.ID)
		}
		seen[g.ID] = true
	}

	// One table of distinct texts; everything below works on its indices.
	sc := newScorer(sim)
	epText := make([]int, len(episodes))
	epKind := make([]string, len(episodes))
	for i, e := range episodes {
		epText[i] = sc.add(e.Content())
		epKind[i] = lessonKind(e.Kind)
	}
	type preparedGroup struct {
		id, kind string
		members  []int
	}
	pgs := make([]preparedGroup, len(groups))
	for i, g := range groups {
		pg := preparedGroup{id: g.ID, kind: lessonKind(g.Kind)}
		for _, m := range g.members() {
			pg.members = append(pg.members, sc.add(m))
		}
		pgs[i] = pg
	}
	slices.SortFunc(pgs, func(a, b preparedGroup) int { return cmp.Compare(a.id, b.id) })
	if err := sc.prepare(ctx); err != nil {
		return Assignment{}, err
	}

	// With Lexical, an index over the group members gives each episode its
	// similarity to every member at once, touching only members that share
	// a word with it (the same numbers as pairwise scoring).
	var idx *lexIndex
	var memberScore []float64
	if sc.tab != nil && len(pgs) > 0 {
		var ms []int
		for _, g := range pgs {
			ms = append(ms, g.members...)
		}
		idx = newLexIndex(sc.profs, ms)
		memberScore = make([]float64, len(sc.texts))
	}

	out := Assignment{Joined: make(map[int]string)}
	var rest []int
	for i := range episodes {
		if err := ctx.Err(); err != nil {
			return Assignment{}, err
		}
		if idx != nil {
			idx.scores(sc.tab, sc.profs, epText[i], memberScore)
		}
		best, bestLink := -1, math.Inf(-1)
		for gi, g := range pgs {
			if len(g.members) == 0 || (g.kind != "" && g.kind != epKind[i]) {
				continue
			}
			var sum float64
			for _, m := range g.members {
				if idx != nil {
					sum += memberScore[m]
					continue
				}
				s, err := sc.score(ctx, epText[i], m)
				if err != nil {
					return Assignment{}, err
				}
				sum += s
			}
			if link := sum / float64(len(g.members)); link >= threshold && link > bestLink {
				best, bestLink = gi, link
			}
		}
		if best >= 0 {
			out.Joined[i] = pgs[best].id
		} else {
			rest = append(rest, i)
		}
	}

	clusters, err := agglomerate(ctx, len(rest), threshold, func(a, b int) (float64, bool, error) {
		if epKind[rest[a]] != epKind[rest[b]] {
			return 0, false, nil
		}
		s, err := sc.score(ctx, epText[rest[a]], epText[rest[b]])
		return s, true, err
	})
	if err != nil {
		return Assignment{}, err
	}
	for _, c := range clusters {
		idx := make([]int, len(c))
		for k, m := range c {
			idx[k] = rest[m]
		}
		out.NewClusters = append(out.NewClusters, idx)
	}
	return out, nil
}

// agglomerate clusters n items by average linkage. sim(a, b) gives the
// similarity of items a < b and whether they may share a cluster at all.
// Clusters are merged, best pair first, while their mean pairwise similarity
// is at least threshold. The result lists each cluster's items in increasing
// order, clusters ordered by their first item.
func agglomerate(ctx context.Context, n int, threshold float64, sim func(a, b int) (float64, bool, error)) ([][]int, error) {
	// d[a*n+b] is the mean similarity between clusters a and b (a cluster is
	// named by its first item); -Inf marks a pair that may never merge.
	d := make([]float64, n*n)
	for a := range n {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for b := a + 1; b < n; b++ {
			s, ok, err := sim(a, b)
			if err != nil {
				return nil, err
			}
			if !ok || math.IsNaN(s) {
				s = math.Inf(-1)
			}
			d[a*n+b], d[b*n+a] = s, s
		}
	}
	members := make([][]int, n)
	active := make([]bool, n)
	for i := range n {
		members[i] = []int{i}
		active[i] = true
	}
	// best[a] is the partner of a with the highest linkage (the smallest
	// index on ties), -1 when a has none.
	best := make([]int, n)
	rowBest := func(a int) {
		best[a] = -1
		for b := range n {
			if b == a || !active[b] {
				continue
			}
			if best[a] < 0 || d[a*n+b] > d[a*n+best[a]] {
				best[a] = b
			}
		}
	}
	for a := range n {
		rowBest(a)
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// The globally best pair; ties go to the smallest first cluster.
		a := -1
		for i := range n {
			if active[i] && best[i] >= 0 && (a < 0 || d[i*n+best[i]] > d[a*n+best[a]]) {
				a = i
			}
		}
		if a < 0 || math.IsInf(d[a*n+best[a]], -1) || d[a*n+best[a]] < threshold {
			break
		}
		b := best[a]
		if b < a {
			a, b = b, a
		}
		// Merge b into a; the linkage to every other cluster becomes the
		// size-weighted mean of the two (exact for average linkage).
		na, nb := float64(len(members[a])), float64(len(members[b]))
		for c := range n {
			if !active[c] || c == a || c == b {
				continue
			}
			v := (na*d[a*n+c] + nb*d[b*n+c]) / (na + nb)
			if math.IsInf(d[a*n+c], -1) || math.IsInf(d[b*n+c], -1) {
				v = math.Inf(-1)
			}
			d[a*n+c], d[c*n+a] = v, v
		}
		members[a] = append(members[a], members[b]...)
		members[b] = nil
		active[b] = false
		for c := range n {
			if !active[c] {
				continue
			}
			switch {
			case c == a || best[c] == a || best[c] == b:
				rowBest(c)
			case d[c*n+a] > d[c*n+best[c]] || (d[c*n+a] == d[c*n+best[c]] && a < best[c]):
				best[c] = a
			}
		}
	}
	var out [][]int
	for i := range n {
		if active[i] {
			slices.Sort(members[i])
			out = append(out, members[i])
		}
	}
	return out, nil
}

// scorer computes similarities between the texts of one Assign call,
// identified by their index in a table of distinct texts. With Lexical it
// prepares every text once and scores without locks or map look-ups.
type scorer struct {
	sim   Similarity
	texts []string
	index map[string]int
	tab   *lexTables // set when sim is a *Lexical
	lex   *Lexical
	profs []*profile
}

func newScorer(sim Similarity) *scorer {
	s := &scorer{sim: sim, index: make(map[string]int)}
	if l, ok := sim.(*Lexical); ok && l != nil {
		s.lex, s.tab = l, l.tables()
	}
	return s
}

// add registers a text and returns its index.
func (s *scorer) add(text string) int {
	if i, ok := s.index[text]; ok {
		return i
	}
	s.index[text] = len(s.texts)
	s.texts = append(s.texts, text)
	return len(s.texts) - 1
}

// prepare tokenises every text (Lexical) or hands them all to a Preparer.
func (s *scorer) prepare(ctx context.Context) error {
	if s.tab != nil {
		s.profs = make([]*profile, len(s.texts))
		for i, t := range s.texts {
			s.profs[i] = s.lex.profile(s.tab, t)
		}
		return nil
	}
	if p, ok := s.sim.(Preparer); ok {
		if err := p.Prepare(ctx, s.texts); err != nil {
			return fmt.Errorf("consolidate: preparing %d texts: %w", len(s.texts), err)
		}
	}
	return nil
}

func (s *scorer) score(ctx context.Context, a, b int) (float64, error) {
	if s.profs != nil {
		return s.tab.score(s.profs[a], s.profs[b]), nil
	}
	v, err := s.sim.Similarity(ctx, s.texts[a], s.texts[b])
	if err != nil {
		return 0, fmt.Errorf("consolidate: similarity: %w", err)
	}
	return v, nil
}

// lexIndex is an inverted index over prepared texts: for each word,
// character trigram and specific-word hash, the texts that hold it.
type lexIndex struct {
	uni, tri map[uint64][]posting
	marks    map[uint64][]int
	// per-text accumulators, reset after each query
	uniShared, triShared []float64
	markShared           []int
	touched              []int
	seen                 []bool
}

type posting struct {
	text int
	w    float64
}

// newLexIndex indexes the texts ms (indices into profs; repeats ignored).
func newLexIndex(profs []*profile, ms []int) *lexIndex {
	x := &lexIndex{
		uni:        make(map[uint64][]posting),
		tri:        make(map[uint64][]posting),
		marks:      make(map[uint64][]int),
		uniShared:  make([]float64, len(profs)),
		triShared:  make([]float64, len(profs)),
		markShared: make([]int, len(profs)),
		seen:       make([]bool, len(profs)),
	}
	done := make(map[int]bool)
	for _, m := range ms {
		if done[m] {
			continue
		}
		done[m] = true
		p := profs[m]
		for _, t := range p.uni {
			x.uni[t.h] = append(x.uni[t.h], posting{m, t.w})
		}
		for _, t := range p.tri {
			x.tri[t.h] = append(x.tri[t.h], posting{m, t.w})
		}
		for _, h := range p.marks {
			x.marks[h] = append(x.marks[h], m)
		}
	}
	return x
}

// scores sets out[m] to the similarity of text q to every indexed text m
// (0 for those sharing no word with q). Shared weights are summed in q's
// hash order, as the pairwise merge sums them, so the numbers are the same.
func (x *lexIndex) scores(t *lexTables, profs []*profile, q int, out []float64) {
	for _, m := range x.touched {
		out[m] = 0
		x.uniShared[m], x.triShared[m], x.markShared[m], x.seen[m] = 0, 0, 0, false
	}
	x.touched = x.touched[:0]
	p := profs[q]
	for _, qt := range p.uni {
		for _, ps := range x.uni[qt.h] {
			if !x.seen[ps.text] {
				x.seen[ps.text] = true
				x.touched = append(x.touched, ps.text)
			}
			x.uniShared[ps.text] += qt.w + ps.w
		}
	}
	// A text may share a trigram and no word ("lockfile", "lock file").
	for _, qt := range p.tri {
		for _, ps := range x.tri[qt.h] {
			if !x.seen[ps.text] {
				x.seen[ps.text] = true
				x.touched = append(x.touched, ps.text)
			}
			x.triShared[ps.text] += qt.w + ps.w
		}
	}
	for _, h := range p.marks {
		for _, m := range x.marks[h] {
			x.markShared[m]++
		}
	}
	for _, m := range x.touched {
		out[m] = t.combine(p, profs[m], x.uniShared[m], x.triShared[m], x.markShared[m])
	}
	// A text that shares no word and no trigram with q scores 0 (shared
	// marks alone only scale a score of 0), so the untouched ones rightly
	// keep 0.
}
