package consolidate

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/remem/remem/internal/testutil"
)

// failureEpisodes are testutil.FailureEvents as error episodes, with the
// number of each one's label (its command and way of failing).
func failureEpisodes(n int, seed uint64) ([]Episode, []int) {
	evs := testutil.FailureEvents(n, seed)
	out := make([]Episode, len(evs))
	labels := make([]int, len(evs))
	num := make(map[string]int)
	for i, e := range evs {
		out[i] = Episode{Kind: "error", Title: e.Title, Happened: e.Happened}
		if _, ok := num[e.Label]; !ok {
			num[e.Label] = len(num)
		}
		labels[i] = num[e.Label]
	}
	return out, labels
}

// clusterOf maps each episode to the first episode of its new cluster.
func clusterOf(n int, a Assignment) []int {
	out := make([]int, n)
	for _, c := range a.NewClusters {
		for _, i := range c {
			out[i] = c[0]
		}
	}
	return out
}

// agreement compares two clusterings of the same episodes: of the pairs
// one puts together, the share the other does too (both ways), and the
// episodes not in the cluster of b that holds most of their cluster of a.
type agreement struct {
	pairsA, pairsB, both int
	moved                int
}

func compare(a, b []int) agreement {
	var g agreement
	joint := make(map[[2]int]int)
	na, nb := make(map[int]int), make(map[int]int)
	for i := range a {
		joint[[2]int{a[i], b[i]}]++
		na[a[i]]++
		nb[b[i]]++
	}
	pairs := func(n int) int { return n * (n - 1) / 2 }
	for _, n := range na {
		g.pairsA += pairs(n)
	}
	for _, n := range nb {
		g.pairsB += pairs(n)
	}
	major := make(map[int]int) // cluster of a → its largest overlap with a cluster of b
	for k, n := range joint {
		g.both += pairs(n)
		major[k[0]] = max(major[k[0]], n)
	}
	for k, n := range na {
		g.moved += n - major[k]
	}
	return g
}

func (g agreement) String() string {
	return fmt.Sprintf("pairs together: exact %d, sparse %d, both %d (sparse keeps %.4f of exact's, %.4f of its own are exact's); episodes outside their exact cluster's main sparse cluster: %d",
		g.pairsA, g.pairsB, g.both, ratio(float64(g.both), float64(g.pairsA)), ratio(float64(g.both), float64(g.pairsB)), g.moved)
}

// TestSparseMatchesExact holds the sparse clustering Assign uses to the
// exact all-pairs average linkage it replaced: on the labelled pairs
// (every text an episode; a pair is predicted same when both land in one
// cluster), precision and recall may move by at most 0.01; on generated
// failure events it reports how many cluster assignments differ, with the
// default chunk and with chunks small enough that joining formed clusters
// does most of the work.
//
//	go test ./node/consolidate -run TestSparseMatchesExact -v
func TestSparseMatchesExact(t *testing.T) {
	ctx := context.Background()
	lex := NewLexical()
	t.Run("labelled pairs", func(t *testing.T) {
		pairs := loadPairs(t)
		var eps []Episode
		at := make(map[string]int)
		for _, p := range pairs {
			for _, s := range []string{p.A, p.B} {
				if _, ok := at[s]; !ok {
					at[s] = len(eps)
					eps = append(eps, Episode{Kind: "error", Happened: s})
				}
			}
		}
		quality := func(name string, cl clusterFunc) (quality, []int) {
			a, err := assign(ctx, lex, DefaultThreshold, nil, eps, cl)
			if err != nil {
				t.Fatal(err)
			}
			of := clusterOf(len(eps), a)
			var q quality
			for _, p := range pairs {
				together := 0.0
				if of[at[p.A]] == of[at[p.B]] {
					together = 1
				}
				q.add(together, p.Same, 0.5)
			}
			t.Logf("%-22s %d pairs (%d same): precision %.3f recall %.3f (%d clusters)", name, q.n, q.same, q.precision(), q.recall(), len(a.NewClusters))
			return q, of
		}
		exact, ofExact := quality("exact", clusterExact)
		for _, c := range []struct {
			name string
			sp   sparse
		}{
			{"sparse (default)", defaultSparse},
			{"sparse, chunks of 64", sparse{chunk: 64, floor: defaultSparse.floor, reps: defaultSparse.reps}},
		} {
			got, of := quality(c.name, c.sp.cluster)
			t.Logf("%-22s %v", c.name, compare(ofExact, of))
			if c.sp == defaultSparse && (math.Abs(got.precision()-exact.precision()) > 0.01 || math.Abs(got.recall()-exact.recall()) > 0.01) {
				t.Errorf("sparse precision %.3f recall %.3f, exact %.3f %.3f: more than 0.01 apart",
					got.precision(), got.recall(), exact.precision(), exact.recall())
			}
		}
	})
	t.Run("generated events", func(t *testing.T) {
		const n = 3000
		eps, truth := failureEpisodes(n, 1)
		exact, err := assign(ctx, lex, DefaultThreshold, nil, eps, clusterExact)
		if err != nil {
			t.Fatal(err)
		}
		ofExact := clusterOf(n, exact)
		// Against the generator's labels: of the pairs with one label, the
		// share put together (recall); of the pairs put together, the share
		// with one label (precision).
		vsTruth := func(of []int) (p, r float64) {
			g := compare(truth, of)
			return ratio(float64(g.both), float64(g.pairsB)), ratio(float64(g.both), float64(g.pairsA))
		}
		pe, re := vsTruth(ofExact)
		t.Logf("%d events: exact %d clusters; against the labels precision %.3f recall %.3f", n, len(exact.NewClusters), pe, re)
		variants := []struct {
			name string
			sp   sparse
		}{
			{"default", defaultSparse},
			{"one chunk, no floor", sparse{chunk: n, floor: 0, reps: defaultSparse.reps}},
			{"one chunk", sparse{chunk: n, floor: defaultSparse.floor, reps: defaultSparse.reps}},
			{"every member a rep", sparse{chunk: defaultSparse.chunk, floor: defaultSparse.floor, reps: n}},
			{"chunks of 500", sparse{chunk: 500, floor: defaultSparse.floor, reps: defaultSparse.reps}},
			{"floor 0.1", sparse{chunk: defaultSparse.chunk, floor: 0.1, reps: defaultSparse.reps}},
			{"floor 0.3", sparse{chunk: defaultSparse.chunk, floor: 0.3, reps: defaultSparse.reps}},
		}
		if !testing.Verbose() {
			variants = variants[:1] // the others say what each setting changes, for whoever tunes them (-v)
		}
		for _, c := range variants {
			got, err := assign(ctx, lex, DefaultThreshold, nil, eps, c.sp.cluster)
			if err != nil {
				t.Fatal(err)
			}
			of := clusterOf(n, got)
			p, r := vsTruth(of)
			t.Logf("%-20s %d clusters; against the labels precision %.3f recall %.3f; against exact: %v", c.name, len(got.NewClusters), p, r, compare(ofExact, of))
			if c.sp == defaultSparse && (math.Abs(p-pe) > 0.01 || math.Abs(r-re) > 0.01) {
				t.Errorf("against the labels, sparse precision %.3f recall %.3f, exact %.3f %.3f: more than 0.01 apart", p, r, pe, re)
			}
		}
	})
}

// TestSparseDeterministic: the same episodes give the same clusters, and
// an episode set larger than a chunk is still placed exactly once each.
func TestSparseDeterministic(t *testing.T) {
	ctx := context.Background()
	eps, _ := failureEpisodes(5000, 2)
	first, err := Assign(ctx, NewLexical(), DefaultThreshold, nil, eps)
	if err != nil {
		t.Fatal(err)
	}
	placed := make([]int, len(eps))
	for _, c := range first.NewClusters {
		for _, i := range c {
			placed[i]++
		}
	}
	for i, n := range placed {
		if n != 1 {
			t.Fatalf("episode %d placed %d times", i, n)
		}
	}
	again, err := Assign(ctx, NewLexical(), DefaultThreshold, nil, eps)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(first, again) {
		t.Fatal("two runs of Assign disagree")
	}
}

// BenchmarkAssignGrowth clusters 1k to 64k generated failure events (no
// lessons yet) in one run and reports wall time and peak heap, per event,
// and the growth exponent between 8k and 64k; up to 4k it also runs the
// exact all-pairs clustering, the baseline, and reports the ratio:
//
//	go test ./node/consolidate -run '^$' -bench AssignGrowth -benchtime 1x
func BenchmarkAssignGrowth(b *testing.B) {
	ctx := context.Background()
	sizes := []int{1000, 2000, 4000, 8000, 16000, 64000}
	took := make(map[int]time.Duration)
	measure := func(n int, cluster clusterFunc) (time.Duration, uint64, int) {
		eps, _ := failureEpisodes(n, 3)
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		peak := watchHeap()
		start := time.Now()
		a, err := assign(ctx, NewLexical(), DefaultThreshold, nil, eps, cluster)
		if err != nil {
			b.Fatal(err)
		}
		took := time.Since(start)
		return took, max(peak(), before.HeapAlloc) - before.HeapAlloc, len(a.NewClusters)
	}
	for b.Loop() {
		for _, n := range sizes {
			var high uint64
			var clusters int
			took[n], high, clusters = measure(n, defaultSparse.cluster)
			line := fmt.Sprintf("%6d events: %8.3f s, peak heap %6.1f MB; per event %6.1f µs, %5.1f KB; %d clusters",
				n, took[n].Seconds(), float64(high)/1e6, float64(took[n].Microseconds())/float64(n), float64(high)/1e3/float64(n), clusters)
			if n <= 4000 {
				exact, exactHigh, _ := measure(n, clusterExact)
				line += fmt.Sprintf("; exact %.3f s, %.1f MB: %.2fx its time", exact.Seconds(), float64(exactHigh)/1e6, took[n].Seconds()/exact.Seconds())
			}
			b.Log(line)
		}
	}
	exp := math.Log(took[64000].Seconds()/took[8000].Seconds()) / math.Log(8)
	b.Logf("growth exponent 8k→64k: %.2f", exp)
	b.ReportMetric(took[8000].Seconds(), "s@8k")
	b.ReportMetric(took[64000].Seconds(), "s@64k")
	b.ReportMetric(exp, "exponent")
}

// watchHeap samples the live heap every 5 ms until the returned
// function is called, which returns the highest seen.
func watchHeap() func() uint64 {
	stop := make(chan struct{})
	done := make(chan uint64)
	go func() {
		var high uint64
		var ms runtime.MemStats
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			runtime.ReadMemStats(&ms)
			high = max(high, ms.HeapAlloc)
			select {
			case <-stop:
				done <- high
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 { close(stop); return <-done }
}
