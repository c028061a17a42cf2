//go:build unix

package httpflood

import (
	"syscall"
	"testing"
)

// NeedFiles raises this process's soft limit of open files to n for the
// test (Go raises it to the hard limit at start-up already, so this is for
// a process that lowered it), or skips the test when the hard limit is
// below n: a flood of thousands of connections needs a file descriptor
// for each end.
func NeedFiles(tb testing.TB, n uint64) {
	tb.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		tb.Fatalf("reading the open-files limit: %v", err)
	}
	if lim.Cur >= n {
		return
	}
	if lim.Max < n {
		tb.Skipf("this flood needs %d open files; the hard limit is %d (raise it with ulimit -Hn)", n, lim.Max)
	}
	was := lim
	lim.Cur = n
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		tb.Fatalf("raising the open-files limit to %d: %v", n, err)
	}
	tb.Cleanup(func() { _ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &was) })
}
