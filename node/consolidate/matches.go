package consolidate

import (
	"context"
	"errors"
	"math"
)

// Matches returns, for each group, the indices of the texts whose Linkage
// to it reaches threshold, in increasing order: what sleep's verify pass
// asks of every candidate lesson and every new event. With Lexical and a
// positive threshold, an inverted index over the groups' members scores
// each text only against the members it shares a word or trigram with
// (the others score 0), and the sums run over each group's members in
// Linkage's order, so the numbers are Linkage's: time grows with the texts
// and the members they touch, not with texts × groups. Other similarities
// score every pair.
func Matches(ctx context.Context, sim Similarity, threshold float64, groups []Group, texts []string) ([][]int, error) {
	if sim == nil {
		return nil, errors.New("consolidate: matches: no similarity")
	}
	if math.IsNaN(threshold) {
		return nil, errors.New("consolidate: matches: threshold is NaN")
	}
	if j, ok := sim.(*JudgedSimilarity); ok && j != nil {
		return j.matches(ctx, threshold, groups, texts)
	}
	out := make([][]int, len(groups))
	sc := newScorer(sim)
	if sc.tab == nil || threshold <= 0 {
		for gi, g := range groups {
			for ti, text := range texts {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				s, err := Linkage(ctx, sim, text, g)
				if err != nil {
					return nil, err
				}
				if s >= threshold {
					out[gi] = append(out[gi], ti)
				}
			}
		}
		return out, nil
	}
	members := make([][]int, len(groups)) // member text indices, in Linkage's order
	var all []int
	groupsOf := make(map[int][]int) // member text → groups holding it, ascending
	for gi, g := range groups {
		for _, m := range g.members() {
			i := sc.add(m)
			members[gi] = append(members[gi], i)
			all = append(all, i)
			if gs := groupsOf[i]; len(gs) == 0 || gs[len(gs)-1] != gi {
				groupsOf[i] = append(gs, gi)
			}
		}
	}
	textAt := make([]int, len(texts))
	for ti, t := range texts {
		textAt[ti] = sc.add(t)
	}
	if err := sc.prepare(ctx); err != nil {
		return nil, err
	}
	idx := newLexIndex(sc.profs, all)
	score := make([]float64, len(sc.texts))
	near := make(map[int]bool)
	for ti := range texts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		idx.scores(sc.tab, sc.profs, textAt[ti], score)
		clear(near)
		for _, m := range idx.touched {
			for _, gi := range groupsOf[m] {
				near[gi] = true
			}
		}
		for gi := range near {
			var sum float64
			for _, m := range members[gi] {
				sum += score[m]
			}
			if sum/float64(len(members[gi])) >= threshold {
				out[gi] = append(out[gi], ti)
			}
		}
	}
	return out, nil
}
