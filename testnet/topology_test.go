package testnet

import (
	"slices"
	"testing"
)

func TestTopologyReproducible(t *testing.T) {
	a, err := NewTopology(50, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewTopology(50, 3, 1)
	c, _ := NewTopology(50, 3, 2)
	if !slices.Equal(a.Ring, b.Ring) || !equalOut(a, b) {
		t.Fatal("the same seed drew two topologies")
	}
	if slices.Equal(a.Ring, c.Ring) && equalOut(a, c) {
		t.Fatal("seeds 1 and 2 drew the same topology")
	}
}

func equalOut(a, b Topology) bool {
	return slices.EqualFunc(a.Out, b.Out, func(x, y []int) bool { return slices.Equal(x, y) })
}

func TestTopologyShape(t *testing.T) {
	cases := []struct {
		name      string
		n, degree int
		exact     bool // every node dials exactly degree others
	}{
		{"two nodes", 2, 3, false},
		{"three nodes", 3, 3, false},
		{"small", 10, 3, false},
		{"twenty", 20, 3, true},
		{"fifty degree two", 50, 2, true},
		{"hundred", 100, 3, true},
		{"hundred degree five", 100, 5, true},
		{"degree one", 30, 1, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for seed := int64(1); seed <= 20; seed++ {
				top, err := NewTopology(tc.n, tc.degree, seed)
				if err != nil {
					t.Fatal(err)
				}
				if !top.Connected() {
					t.Fatalf("seed %d: not connected", seed)
				}
				seen := map[[2]int]bool{}
				for i, out := range top.Out {
					if len(out) > tc.degree {
						t.Fatalf("seed %d: node %d dials %d > %d", seed, i, len(out), tc.degree)
					}
					if tc.exact && len(out) != tc.degree {
						t.Fatalf("seed %d: node %d dials %d, want %d", seed, i, len(out), tc.degree)
					}
					if tc.n > 1 && len(top.Neighbours(i)) == 0 {
						t.Fatalf("seed %d: node %d has no neighbour", seed, i)
					}
					for _, j := range out {
						if j == i || j < 0 || j >= tc.n {
							t.Fatalf("seed %d: node %d dials %d", seed, i, j)
						}
						k := [2]int{min(i, j), max(i, j)}
						if seen[k] {
							t.Fatalf("seed %d: %d and %d are linked twice", seed, i, j)
						}
						seen[k] = true
					}
				}
				if got := top.Edges(); got != len(seen) {
					t.Fatalf("Edges() = %d, counted %d", got, len(seen))
				}
				// Both halves of the ring are connected by themselves.
				if tc.n >= 2 {
					side := top.Halves()
					for s := range 2 {
						if !top.connectedWithin(func(i int) bool { return side[i] == s }) {
							t.Fatalf("seed %d: side %d of the cut is not connected", seed, s)
						}
					}
				}
			}
		})
	}
}

func TestTopologyRejects(t *testing.T) {
	if _, err := NewTopology(0, 3, 1); err == nil {
		t.Error("0 nodes accepted")
	}
	if _, err := NewTopology(10, 0, 1); err == nil {
		t.Error("degree 0 accepted")
	}
}

func TestMedianHops(t *testing.T) {
	// A ring of 5 (each dials the next): from any node, two nodes are 1
	// hop away and two are 2; the median of the 20 ordered pairs is 1.
	ring := Topology{N: 5, Out: [][]int{{1}, {2}, {3}, {4}, {0}}}
	if got := ring.MedianHops(); got != 1 {
		t.Errorf("ring of 5: %d hops, want 1", got)
	}
	// A line of 5: of the 20 ordered pairs, 8 are 1 hop apart, 6 are 2,
	// 4 are 3 and 2 are 4: the 10th is 2 hops.
	line := Topology{N: 5, Out: [][]int{{1}, {2}, {3}, {4}, {}}}
	if got := line.MedianHops(); got != 2 {
		t.Errorf("line of 5: %d hops, want 2", got)
	}
	big, err := NewTopology(1000, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := big.MedianHops(); got < 3 || got > 6 {
		t.Errorf("1,000 nodes of degree 3: median %d hops, want about log(1000)/log(5)", got)
	}
}
