// Package regularfile opens files that a project or a payload names, which
// may be anything: a FIFO blocks a plain open forever, a link to /dev/tty
// reads the person's terminal. Open takes only a regular file, without
// waiting on one that is not.
package regularfile

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// Open opens path for reading when it is a regular file (a link to one
// is followed), else returns an error and has blocked on nothing.
func Open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s is not a regular file (%s)", path, fi.Mode().Type())
	}
	if err != nil {
		_ = f.Close() // nothing was read
		return nil, err
	}
	return f, nil
}

// ReadFile is os.ReadFile of a regular file only.
func ReadFile(path string) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read only
	return io.ReadAll(f)
}
