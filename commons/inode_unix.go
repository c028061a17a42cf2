//go:build unix

package commons

import (
	"io/fs"
	"syscall"
)

// inodeOf is the file's inode: a rename puts a new one in place.
func inodeOf(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino) //nolint:unconvert // Ino is uint32 on some systems
	}
	return 0
}
