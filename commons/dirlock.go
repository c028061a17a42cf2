package commons

import (
	"errors"
	"fmt"
	"os"

	"github.com/remem/remem/internal/pidlock"
)

// DirLockedError: another server (this process or another) holds the
// data directory.
type DirLockedError struct {
	Dir string
	PID int // 0 when the holder's pid could not be read
}

func (e *DirLockedError) Error() string {
	who := pidlock.Holding(e.PID)
	return fmt.Sprintf("the commons data directory %s is in use by %s (a running \"remem commons serve\"?); "+
		"one server owns a directory: stop that one, or give this one another --data (replicas share an S3 bucket, --storage)", e.Dir, who)
}

// lockDir takes root's lock (internal/pidlock, as a memory's home is
// locked) or returns a *DirLockedError naming the pid that holds it.
// Closing the file lets it go (so does the process's end).
func lockDir(root string) (*os.File, error) {
	f, err := pidlock.Lock(root)
	var held *pidlock.HeldError
	if errors.As(err, &held) {
		return nil, &DirLockedError{Dir: root, PID: held.PID}
	}
	if err != nil {
		return nil, fmt.Errorf("commons storage: %w", err)
	}
	return f, nil
}
