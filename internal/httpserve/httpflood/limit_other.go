//go:build !unix

package httpflood

import "testing"

// NeedFiles skips the test where the open-files limit cannot be read.
func NeedFiles(tb testing.TB, n uint64) {
	tb.Helper()
	tb.Skipf("this flood needs %d open files; this system's limit cannot be read", n)
}
