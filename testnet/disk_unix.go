//go:build unix

package testnet

import (
	"io/fs"
	"syscall"
)

// allocated is what a file takes on disk: its blocks, which count what a
// preallocated or sparse file (Badger's) really uses.
func allocated(info fs.FileInfo) int64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return int64(st.Blocks) * 512
	}
	return info.Size()
}
