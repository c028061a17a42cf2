//go:build unix

package testutil

import (
	"syscall"
	"time"
)

// CPUTime is the user and system CPU time this process has used so far, all
// goroutines and background work (Badger's) included, or 0 when it cannot
// be read. Benchmarks report CPU per operation from it: on a busy machine
// it says more than wall time.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
