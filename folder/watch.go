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

// Watch polls dir every interval and calls fn (from Watch's goroutine, one
// call at a time) whenever a *.jsonl file was created, removed or changed
// size or modification time since the last poll. It needs no file-system
// notification support, so it works on network shares and synced folders.
// It returns nil when ctx ends, and an error only when dir cannot be read
// at the start; later read errors (a share briefly gone) are retried.
func Watch(ctx context.Context, dir string, interval time.Duration, fn func()) error {
	if interval <= 0 {
		return fmt.Errorf("watching %s: interval %v must be positive", dir, interval)
	}
	last, err := snapshot(dir)
	if err != nil {
		return fmt.Errorf("watching %s: %w", dir, err)
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		cur, err := snapshot(dir)
		if err != nil {
			continue
		}
		if !sameSnapshot(last, cur) {
			last = cur
			fn()
		}
	}
}
