package folder

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"
)

type stamp struct {
	size  int64
	mtime time.Time
}

// snapshot maps each *.jsonl name in dir to its size and mtime.
func snapshot(dir string) (map[string]stamp, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	m := make(map[string]stamp, len(ents))
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".jsonl") {
			continue
		}
		info, err := e.Info()
		if err != nil { // removed since the listing
			continue
		}
		m[e.Name()] = stamp{size: info.Size(), mtime: info.ModTime()}
	}
	return m, nil
}

func sameSnapshot(a, b map[string]stamp) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || w.size != v.size || !w.mtime.Equal(v.mtime) {
			return false
		}
	}
	return true
}

// Watcher polls a directory for changes to its *.jsonl files. It needs no
// file-system notification support, so it works on network shares and
// synced folders.
type Watcher struct {
	dir      string
	interval time.Duration
	fn       func()
	last     map[string]stamp
}

// NewWatcher takes the first snapshot of dir before it returns, so every
// change made after it returns is one Run reports. It returns an error when
// interval is not positive or dir cannot be read.
func NewWatcher(dir string, interval time.Duration, fn func()) (*Watcher, error) {
	if interval <= 0 {
		return nil, fmt.Errorf("watching %s: interval %v must be positive", dir, interval)
	}
	last, err := snapshot(dir)
	if err != nil {
		return nil, fmt.Errorf("watching %s: %w", dir, err)
	}
	return &Watcher{dir: dir, interval: interval, fn: fn, last: last}, nil
}

// Run polls the directory every interval and calls fn (from Run's
// goroutine, one call at a time) whenever a *.jsonl file was created,
// removed or changed size or modification time since the last snapshot.
// Read errors (a share briefly gone) are retried on the next poll. It
// returns nil when ctx ends; a Watcher runs once.
func (w *Watcher) Run(ctx context.Context) error {
	t := time.NewTicker(w.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		w.poll()
	}
}

// poll takes a snapshot and calls fn when it differs from the last one; a
// directory that cannot be read now is left for the next poll.
func (w *Watcher) poll() {
	cur, err := snapshot(w.dir)
	if err != nil {
		return
	}
	if !sameSnapshot(w.last, cur) {
		w.last = cur
		w.fn()
	}
}
