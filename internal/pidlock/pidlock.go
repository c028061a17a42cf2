// Package pidlock is the lock one process takes on a directory it owns (a
// memory's home, a commons' data directory): an exclusive flock on
// DIR/LOCK, which holds the holder's pid so that a refusal can name it.
// The lock goes with the file's close or the process's end, so a crash
// never leaves a directory locked.
package pidlock

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Name is the lock file in a locked directory.
const Name = "LOCK"

// HeldError: another process (or another lock in this one) holds the
// directory.
type HeldError struct {
	Dir string
	PID int // 0 when the holder's pid could not be read
}

func (e *HeldError) Error() string {
	return fmt.Sprintf("%s is locked by process %d", e.Dir, e.PID)
}

// Holding names the holder of a lock for a message: "process PID", or
// "another process" when its pid could not be read (0).
func Holding(pid int) string {
	if pid > 0 {
		return "process " + strconv.Itoa(pid)
	}
	return "another process"
}

// Lock takes dir's lock without waiting and writes this process's pid into
// it; a held lock is a *HeldError. Release lets it go.
func Lock(dir string) (*os.File, error) {
	path := filepath.Join(dir, Name)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close() // not ours: nothing was written
		if errors.Is(err, syscall.EWOULDBLOCK) || errors.Is(err, syscall.EAGAIN) {
			return nil, &HeldError{Dir: dir, PID: ReadPID(path)}
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
		if err == nil {
			err = f.Sync()
		}
		if err != nil {
			_ = f.Close() // the write's error is the one to report
			return nil, fmt.Errorf("writing the pid into %s: %w", path, err)
		}
	}
	return f, nil
}

// Release empties the lock file (no stale pid is left to name) and lets
// the lock go. A nil f is nothing to release.
func Release(f *os.File) {
	if f == nil {
		return
	}
	_ = f.Truncate(0)
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	_ = f.Close()
}

// Holder reports whether a process holds dir's lock and the pid it wrote.
// It only tests the lock: a shared lock taken and let go at once, never
// written.
func Holder(dir string) (pid int, held bool, err error) {
	path := filepath.Join(dir, Name)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("opening the lock file: %w", err)
	}
	defer func() { _ = f.Close() }() // read only
	switch err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); {
	case err == nil:
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return 0, false, nil
	case errors.Is(err, syscall.EWOULDBLOCK) || errors.Is(err, syscall.EAGAIN):
		return ReadPID(path), true, nil
	default:
		return 0, false, fmt.Errorf("testing the lock %s: %w", path, err)
	}
}

// ReadPID is the pid a lock file holds, 0 when it holds none.
func ReadPID(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid < 0 {
		return 0
	}
	return pid
}
