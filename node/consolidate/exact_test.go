package consolidate

import (
	"context"
	"math"
	"slices"
)

// The exact all-pairs clustering Assign used before it went sparse: the
// reference TestSparseMatchesExact holds the sparse one to. It keeps an n×n
// matrix, so it lives in the tests, not in the sleep path.

// clusterExact is a clusterFunc by agglomerate over every pair.
func clusterExact(ctx context.Context, sc *scorer, threshold float64, texts []int) ([][]int, error) {
	return agglomerate(ctx, len(texts), threshold, func(a, b int) (float64, bool, error) {
		s, err := sc.score(ctx, texts[a], texts[b])
		return s, true, err
	})
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
