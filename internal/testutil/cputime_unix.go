//go:build unix

package testutil

import (
	"syscall"
	"time"
)

// CPUTime is the user and system CPU time this process has used so far (0
// when it cannot be read); benchmarks report CPU per operation from it.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
