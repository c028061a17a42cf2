package commons

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/remem/remem/internal/atomicfile"
)

// dirBlobs keeps the objects as files: key "<dir>/<name>" is
// ROOT/<dir>/<name>, replaced atomically (temp file, fsync, rename). A
// server that owned a data directory before keeps it: the files are
// DataDir/commons/<origin>.jsonl and DataDir/peers/<origin>.json as
// always. One process owns the directory (it holds ROOT/LOCK, flock'd,
// with its pid; a second server on it is refused at start), so conditions
// are checked under a lock of this process.
type dirBlobs struct {
	root  string
	locks [64]sync.Mutex // striped by key: a condition and its write are one step

	lockMu sync.Mutex
	lockF  *os.File // ROOT/LOCK while open; nil once closed
}

// dataTemp starts the name of every temp file in a store directory; the
// index key and file names never start with '.'.
const dataTemp = ".tmp-"

// openDirBlobs opens (creating) root, takes its lock (a *DirLockedError
// when another server holds it), and removes the temp files a crash left
// behind in it and its directories.
func openDirBlobs(root string) (_ *dirBlobs, err error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("commons storage: %w", err)
	}
	d := &dirBlobs{root: root}
	if d.lockF, err = lockDir(root); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = d.Close() // the open's error is the one to report
		}
	}()
	removeTemps(root, ".index.tmp-") // the index file of earlier versions
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("commons storage: %w", err)
	}
	for _, e := range ents {
		if e.IsDir() && validDir(e.Name()) {
			removeTemps(filepath.Join(root, e.Name()), dataTemp)
		}
	}
	return d, nil
}

func removeTemps(dir, prefix string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), prefix) && e.Type().IsRegular() {
			_ = os.Remove(filepath.Join(dir, e.Name())) // a stale temp file: the next start tries again
		}
	}
}

func (d *dirBlobs) String() string { return d.root }
func (d *dirBlobs) Shared() bool   { return false }

// Close lets the directory's lock go; it is idempotent.
func (d *dirBlobs) Close() error {
	d.lockMu.Lock()
	defer d.lockMu.Unlock()
	if d.lockF == nil {
		return nil
	}
	err := d.lockF.Close()
	d.lockF = nil
	return err
}

func (d *dirBlobs) path(key string) string { return filepath.Join(d.root, filepath.FromSlash(key)) }

func (d *dirBlobs) lock(key string) *sync.Mutex {
	h := fnv.New32a()
	_, _ = h.Write([]byte(key)) // a hash never fails
	return &d.locks[h.Sum32()%uint32(len(d.locks))]
}

// fileVersion names one write of a file: every write is a rename of a new
// file, so its inode (where the system has one), size and mtime change.
func fileVersion(info fs.FileInfo) string {
	return fmt.Sprintf("%x-%x-%x", inodeOf(info), info.Size(), info.ModTime().UnixNano())
}

func notExist(key string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: %w", key, ErrNotExist)
	}
	return err
}

func (d *dirBlobs) Get(_ context.Context, key string) ([]byte, string, error) {
	if err := checkKey(key); err != nil {
		return nil, "", err
	}
	f, err := os.Open(d.path(key))
	if err != nil {
		return nil, "", notExist(key, err)
	}
	defer func() { _ = f.Close() }() // read only
	info, err := f.Stat()
	if err != nil {
		return nil, "", err
	}
	if !info.Mode().IsRegular() {
		return nil, "", fmt.Errorf("%s is not a regular file: %w", d.path(key), ErrNotExist)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, "", err
	}
	return data, fileVersion(info), nil
}

func (d *dirBlobs) Stat(_ context.Context, key string) (string, error) {
	if err := checkKey(key); err != nil {
		return "", err
	}
	info, err := os.Stat(d.path(key))
	if err != nil {
		return "", notExist(key, err)
	}
	return fileVersion(info), nil
}

func (d *dirBlobs) Put(ctx context.Context, key string, data []byte, cond Cond) (string, error) {
	if err := checkKey(key); err != nil {
		return "", err
	}
	l := d.lock(key)
	l.Lock()
	defer l.Unlock()
	if cond != (Cond{}) {
		cur, err := d.Stat(ctx, key)
		switch {
		case errors.Is(err, ErrNotExist):
			if !cond.IfAbsent {
				return "", fmt.Errorf("%s: %w", key, ErrConflict)
			}
		case err != nil:
			return "", err
		case cond.IfAbsent || cur != cond.IfMatch:
			return "", fmt.Errorf("%s: %w", key, ErrConflict)
		}
	}
	p := d.path(key)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", err
	}
	if err := atomicfile.Write(p, dataTemp, data, 0o644); err != nil {
		return "", fmt.Errorf("storing %s: %w", p, err)
	}
	return d.Stat(ctx, key)
}

func (d *dirBlobs) Delete(_ context.Context, key string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	l := d.lock(key)
	l.Lock()
	defer l.Unlock()
	if err := os.Remove(d.path(key)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

func (d *dirBlobs) List(ctx context.Context, prefix, after string, fn func(key, version string) error) error {
	return d.walk(ctx, prefix, after, func(key string, info fs.FileInfo) error { return fn(key, fileVersion(info)) })
}

func (d *dirBlobs) ListSizes(ctx context.Context, prefix string, fn func(key string, size int64) error) error {
	return d.walk(ctx, prefix, "", func(key string, info fs.FileInfo) error { return fn(key, info.Size()) })
}

// walk calls fn with every file under prefix after after, in key order.
func (d *dirBlobs) walk(ctx context.Context, prefix, after string, fn func(key string, info fs.FileInfo) error) error {
	if err := checkPrefix(prefix); err != nil {
		return err
	}
	ents, err := os.ReadDir(d.path(strings.TrimSuffix(prefix, "/")))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		if e.Type().IsRegular() && validName(e.Name()) && prefix+e.Name() > after {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names) // ReadDir sorts too, but by the name alone; keys sort as prefix+name, the same order
	for _, n := range names {
		if err := ctx.Err(); err != nil {
			return err
		}
		info, err := os.Stat(filepath.Join(d.path(strings.TrimSuffix(prefix, "/")), n))
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted since the listing
		}
		if err != nil {
			return err
		}
		if err := fn(prefix+n, info); err != nil {
			return err
		}
	}
	return nil
}
