package consolidate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/remem/remem/internal/progress"
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
// join no group are clustered among themselves, one family of lesson kinds
// at a time (Families), by average-linkage agglomerative clustering: the two
// clusters with the highest mean pairwise similarity are merged while that
// mean is at least threshold. Episodes whose event kinds map to lesson
// kinds of different families (SPEC §3) are never put in one cluster, and an
// episode never joins a group of another family.
//
// The clustering is sparse (see sparse): equal texts are folded,
// pairs under a floor count as 0 and large batches are taken in chunks, so
// memory never holds all pairs and time grows about linearly with the
// episodes. With Lexical, every text is tokenised once and an inverted index
// proposes the pairs and groups worth scoring. With a Preparer, Prepare is
// called once first. Assign is deterministic for a deterministic Similarity.
func Assign(ctx context.Context, sim Similarity, threshold float64, groups []Group, episodes []Episode) (Assignment, error) {
	return assign(ctx, sim, threshold, groups, episodes, defaultSparse.cluster)
}

// clusterFunc clusters texts (indices into sc's table, all of one lesson
// kind): clusters of positions in texts, each in increasing order, ordered
// by their first position.
type clusterFunc func(ctx context.Context, sc *scorer, threshold float64, texts []int) ([][]int, error)

// assign is Assign with the clustering of the unjoined episodes given, so
// that the tests can put the exact all-pairs clustering beside it.
func assign(ctx context.Context, sim Similarity, threshold float64, groups []Group, episodes []Episode, cluster clusterFunc) (Assignment, error) {
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
	proposal := make([]int, len(episodes)) // the agent's sentence's text, -1: none
	for i, e := range episodes {
		epText[i] = sc.add(e.Content())
		epKind[i] = familyKey(e.Kind)
		proposal[i] = -1
		if l := strings.TrimSpace(e.Lesson); l != "" {
			proposal[i] = sc.add(l)
		}
	}
	type preparedGroup struct {
		id, kind string
		members  []int
	}
	pgs := make([]preparedGroup, len(groups))
	for i, g := range groups {
		pg := preparedGroup{id: g.ID, kind: familyKey(g.Kind)}
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
	// a word with it (the same numbers as pairwise scoring); only the groups
	// of those members can reach a threshold above 0.
	var idx *lexIndex
	var memberScore []float64
	var groupsOf map[int][]int // member text → groups holding it, ascending
	all := make([]int, len(pgs))
	for gi := range pgs {
		all[gi] = gi
	}
	if sc.tab != nil && len(pgs) > 0 {
		var ms []int
		groupsOf = make(map[int][]int)
		for gi, g := range pgs {
			ms = append(ms, g.members...)
			for _, m := range g.members {
				if gs := groupsOf[m]; len(gs) == 0 || gs[len(gs)-1] != gi {
					groupsOf[m] = append(gs, gi)
				}
			}
		}
		idx = newLexIndex(sc.profs, ms)
		memberScore = make([]float64, len(sc.texts))
	}

	out := Assignment{Joined: make(map[int]string)}
	var rest []int
	var near []int
	for i := range episodes {
		if err := ctx.Err(); err != nil {
			return Assignment{}, err
		}
		if i%256 == 0 {
			progress.Report(ctx, "matching lessons", i, len(episodes))
		}
		cands := all
		if idx != nil {
			idx.scores(sc.tab, sc.profs, epText[i], memberScore)
			if threshold > 0 {
				near = near[:0]
				for _, m := range idx.touched {
					near = append(near, groupsOf[m]...)
				}
				slices.Sort(near)
				cands = slices.Compact(near)
			}
		}
		best, bestLink := -1, math.Inf(-1)
		for _, gi := range cands {
			g := pgs[gi]
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

	// The rest, one family at a time (families never share a cluster).
	var kinds []string
	byKind := make(map[string][]int)
	for _, i := range rest {
		k := epKind[i]
		if _, ok := byKind[k]; !ok {
			kinds = append(kinds, k)
		}
		byKind[k] = append(byKind[k], i)
	}
	for _, k := range kinds {
		eps := byKind[k]
		texts := make([]int, len(eps))
		for j, i := range eps {
			texts[j] = epText[i]
		}
		clusters, err := cluster(ctx, sc, threshold, texts)
		if err != nil {
			return Assignment{}, err
		}
		for _, c := range clusters {
			idx := make([]int, len(c))
			for j, p := range c {
				idx[j] = eps[p]
			}
			parts, err := splitByProposals(ctx, sc, max(threshold, DefaultConfirmThreshold), idx, epText, proposal)
			if err != nil {
				return Assignment{}, err
			}
			out.NewClusters = append(out.NewClusters, parts...)
		}
	}
	slices.SortFunc(out.NewClusters, func(a, b []int) int { return cmp.Compare(a[0], b[0]) })
	return out, nil
}

// splitByProposals keeps apart, in one new cluster (episode indices,
// ascending), the episodes whose agents proposed sentences (SPEC §2
// "lesson") that are not alike (similarity under same): the agent, which
// has a model, told two surprises where the words of the events looked
// like one. Assign asks two proposals to be as alike as a confirmation
// needs (DefaultConfirmThreshold): a split is mended by a named match, a
// merge loses an agent's sentence.
//
// The first proposal of each kind leads a part, in the order of the
// episodes; an episode with a proposal goes to the first part whose lead
// proposal is like its own, and one without goes to the part whose
// episodes are most like it (the first on ties). A cluster with at most
// one kind of proposal is returned whole.
func splitByProposals(ctx context.Context, sc *scorer, same float64, cluster, epText, proposal []int) ([][]int, error) {
	var leads []int // proposal texts leading a part
	part := make([]int, len(cluster))
	for j, i := range cluster {
		part[j] = -1
		if proposal[i] < 0 {
			continue
		}
		for k, l := range leads {
			s, err := sc.score(ctx, proposal[i], l)
			if err != nil {
				return nil, err
			}
			if proposal[i] == l || s >= same {
				part[j] = k
				break
			}
		}
		if part[j] < 0 {
			part[j] = len(leads)
			leads = append(leads, proposal[i])
		}
	}
	if len(leads) <= 1 {
		return [][]int{cluster}, nil
	}
	parts := make([][]int, len(leads))
	for j, i := range cluster {
		if part[j] >= 0 {
			parts[part[j]] = append(parts[part[j]], i)
		}
	}
	for j, i := range cluster {
		if part[j] >= 0 {
			continue
		}
		best, bestMean := 0, math.Inf(-1)
		for k, members := range parts {
			var sum float64
			for _, m := range members {
				s, err := sc.score(ctx, epText[i], epText[m])
				if err != nil {
					return nil, err
				}
				sum += s
			}
			if mean := sum / float64(len(members)); mean > bestMean {
				best, bestMean = k, mean
			}
		}
		parts[best] = append(parts[best], i)
	}
	for _, p := range parts {
		slices.Sort(p)
	}
	return parts, nil
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
	touched              []int // the texts the last query shared a word or trigram with
	seen                 []bool
	added                map[int]bool
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
		added:      make(map[int]bool),
	}
	for _, m := range ms {
		x.add(profs, m)
	}
	return x
}

// add indexes text m, unless it is indexed already.
func (x *lexIndex) add(profs []*profile, m int) {
	if x.added[m] {
		return
	}
	x.added[m] = true
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
