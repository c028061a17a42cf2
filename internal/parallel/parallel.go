// Package parallel spreads independent work over the CPUs: it is the Each
// of protocol.Bound for transports that verify long batches (a gossip
// message, a commons PUT), which protocol, being free of goroutines, does
// not do itself.
package parallel

import (
	"context"
	"runtime"
	"sync"
)

// Each returns a runner that calls do(i) for every i in [0, n): on one
// goroutine for fewer than 2×perWorker items, otherwise on up to
// GOMAXPROCS goroutines, each taking a contiguous chunk (started and
// joined inside the call). It stops early, leaving items undone, once ctx
// ends; the caller checks ctx afterwards.
func Each(ctx context.Context, perWorker int) func(n int, do func(i int)) {
	return func(n int, do func(i int)) {
		workers := min(runtime.GOMAXPROCS(0), n/max(1, perWorker))
		if workers <= 1 {
			run(ctx, 0, n, do)
			return
		}
		var wg sync.WaitGroup
		chunk := (n + workers - 1) / workers
		for lo := 0; lo < n; lo += chunk {
			hi := min(lo+chunk, n)
			wg.Go(func() { run(ctx, lo, hi, do) })
		}
		wg.Wait()
	}
}

// run calls do for [lo, hi), looking at ctx every 64 items.
func run(ctx context.Context, lo, hi int, do func(i int)) {
	for i := lo; i < hi; i++ {
		if i%64 == 63 && ctx.Err() != nil {
			return
		}
		do(i)
	}
}
