package commons

import (
	"fmt"
	"strconv"
)

// DirLockedError: another server (this process or another) holds the
// data directory.
type DirLockedError struct {
	Dir string
	PID int // 0 when the holder's pid could not be read
}

func (e *DirLockedError) Error() string {
	who := "another process"
	if e.PID > 0 {
		who = "process " + strconv.Itoa(e.PID)
	}
	return fmt.Sprintf("the commons data directory %s is in use by %s (a running \"remem commons serve\"?); "+
		"one server owns a directory: stop that one, or give this one another --data (replicas share an S3 bucket, --storage)", e.Dir, who)
}
