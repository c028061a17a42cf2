package parallel

import (
	"context"
	"sync/atomic"
	"testing"
)

func TestEachRunsEveryItemOnce(t *testing.T) {
	for _, n := range []int{0, 1, 31, 32, 1000, 1001} {
		counts := make([]atomic.Int32, n)
		Each(context.Background(), 16)(n, func(i int) { counts[i].Add(1) })
		for i := range counts {
			if c := counts[i].Load(); c != 1 {
				t.Fatalf("n=%d: item %d ran %d times", n, i, c)
			}
		}
	}
}

func TestEachStopsWhenContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var ran atomic.Int32
	Each(ctx, 16)(10_000, func(int) { ran.Add(1) })
	if ran.Load() >= 10_000 {
		t.Fatalf("all %d items ran after the context ended", ran.Load())
	}
}
