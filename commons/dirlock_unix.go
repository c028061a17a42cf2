//go:build unix

package commons

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// lockName is the lock file of a data directory, flock'd by the server
// that owns it and holding its pid (as a memory's home does, store.go).
const lockName = "LOCK"

// lockDir takes root's lock or returns a *DirLockedError naming the pid
// that holds it. Closing the file lets it go (so does the process's end).
func lockDir(root string) (*os.File, error) {
	path := filepath.Join(root, lockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("commons storage: opening the lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close() // not ours: nothing was written
		if errors.Is(err, syscall.EWOULDBLOCK) || errors.Is(err, syscall.EAGAIN) {
			return nil, &DirLockedError{Dir: root, PID: readLockPID(path)}
		}
		return nil, fmt.Errorf("commons storage: locking %s: %w", path, err)
	}
	err = f.Truncate(0)
	if err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		_ = f.Close() // the write's error is the one to report
		return nil, fmt.Errorf("commons storage: writing the pid into %s: %w", path, err)
	}
	return f, nil
}

func readLockPID(path string) int {
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
