package testnet

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// Topology is who dials whom. Out[i] are the nodes node i bootstraps to;
// the graph the network forms is the undirected union of those edges.
type Topology struct {
	N    int
	Ring []int   // the random permutation whose ring keeps the graph connected
	Out  [][]int // sorted
}

// newRand is the seeded generator of everything random in a run, one stream
// per purpose so that changing one use does not reshuffle the others.
func newRand(seed int64, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), 0x7e57_0000+stream))
}

// NewTopology draws a random sparse graph of n nodes from seed: a ring
// through a random permutation (so the graph is connected), then random
// extra edges until each node dials degree others (fewer only when n is too
// small to allow it). No pair is linked twice, in either direction.
func NewTopology(n, degree int, seed int64) (Topology, error) {
	if n < 1 {
		return Topology{}, fmt.Errorf("topology of %d nodes", n)
	}
	if degree < 1 {
		return Topology{}, fmt.Errorf("topology with degree %d: want at least 1", degree)
	}
	r := newRand(seed, 1)
	t := Topology{N: n, Ring: r.Perm(n), Out: make([][]int, n)}
	adj := make([]map[int]bool, n)
	for i := range adj {
		adj[i] = map[int]bool{}
	}
	link := func(a, b int) bool {
		if a == b || adj[a][b] {
			return false
		}
		adj[a][b], adj[b][a] = true, true
		t.Out[a] = append(t.Out[a], b)
		return true
	}
	if n > 1 {
		for k := range n {
			link(t.Ring[k], t.Ring[(k+1)%n])
		}
	}
	for _, i := range r.Perm(n) {
		if len(t.Out[i]) >= degree {
			continue
		}
		cands := make([]int, 0, n)
		for j := range n {
			if j != i && !adj[i][j] {
				cands = append(cands, j)
			}
		}
		r.Shuffle(len(cands), func(a, b int) { cands[a], cands[b] = cands[b], cands[a] })
		for _, j := range cands {
			if len(t.Out[i]) >= degree {
				break
			}
			link(i, j)
		}
	}
	for i := range t.Out {
		slices.Sort(t.Out[i])
	}
	return t, nil
}

// Neighbours are the nodes i is linked to in either direction, sorted.
func (t Topology) Neighbours(i int) []int {
	var out []int
	out = append(out, t.Out[i]...)
	for j, o := range t.Out {
		if slices.Contains(o, i) {
			out = append(out, j)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Edges counts the undirected edges.
func (t Topology) Edges() int {
	n := 0
	for _, o := range t.Out {
		n += len(o)
	}
	return n
}

// Connected reports whether every node reaches every other.
func (t Topology) Connected() bool {
	return t.connectedWithin(func(int) bool { return true })
}

// connectedWithin reports whether the nodes keep(i) selects are connected
// among themselves.
func (t Topology) connectedWithin(keep func(int) bool) bool {
	return connected(t.N, func(i int) []int { return t.Out[i] }, keep)
}

// connected reports whether the nodes keep selects among n reach each other
// over the links out(i) lists (a link counts both ways).
func connected(n int, out func(int) []int, keep func(int) bool) bool {
	adj := make([][]int, n)
	start, total := -1, 0
	for i := range n {
		if !keep(i) {
			continue
		}
		total++
		if start < 0 {
			start = i
		}
		for _, j := range out(i) {
			if keep(j) {
				adj[i] = append(adj[i], j)
				adj[j] = append(adj[j], i)
			}
		}
	}
	if total == 0 {
		return true
	}
	seen := map[int]bool{start: true}
	stack := []int{start}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, j := range adj[i] {
			if !seen[j] {
				seen[j] = true
				stack = append(stack, j)
			}
		}
	}
	return len(seen) == total
}

// Halves cuts the ring in two arcs: side 0 is the first half of the ring's
// permutation, side 1 the rest. Each arc is connected by its ring edges.
func (t Topology) Halves() []int {
	side := make([]int, t.N)
	for k, i := range t.Ring {
		if k >= t.N/2 {
			side[i] = 1
		}
	}
	return side
}

// MedianHops is the median, over every ordered pair of distinct nodes, of
// the number of links on a shortest path between them (links count in
// both directions); unreachable pairs are left out.
func (t Topology) MedianHops() int {
	adj := make([][]int, t.N)
	for i, o := range t.Out {
		for _, j := range o {
			adj[i] = append(adj[i], j)
			adj[j] = append(adj[j], i)
		}
	}
	counts := map[int]int{} // hops → pairs
	pairs := 0
	dist := make([]int, t.N)
	queue := make([]int, 0, t.N)
	for s := range t.N {
		for i := range dist {
			dist[i] = -1
		}
		dist[s] = 0
		queue = append(queue[:0], s)
		for k := 0; k < len(queue); k++ {
			u := queue[k]
			for _, v := range adj[u] {
				if dist[v] < 0 {
					dist[v] = dist[u] + 1
					counts[dist[v]]++
					pairs++
					queue = append(queue, v)
				}
			}
		}
	}
	seen := 0
	for h := 1; seen < pairs; h++ {
		seen += counts[h]
		if 2*seen >= pairs {
			return h
		}
	}
	return 0
}
