// Package atomicfile replaces files so that a reader, or a machine that
// crashed, sees the old content or the new one, never a mix. Every file the
// project writes for others to read (per-origin record files, the commons'
// storage, lessons.jsonl, node.json) goes through it.
package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
)

// Write replaces path with data: a temp file named prefix+random in the same
// directory, written, chmod'ed to perm and synced, then renamed over path,
// then the directory synced. On error the temp file is removed. An empty
// prefix uses "." + the file's name + ".tmp-", which no reader of *.jsonl
// takes for data.
func Write(path, prefix string, data []byte, perm os.FileMode) (err error) {
	dir := filepath.Dir(path)
	if prefix == "" {
		prefix = "." + filepath.Base(path) + ".tmp-"
	}
	f, err := os.CreateTemp(dir, prefix+"*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil { // the first error is the one to report
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Chmod(perm); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	return SyncDir(dir)
}

// SyncDir makes a rename in dir durable. File systems that cannot sync a
// directory (EINVAL, ENOTSUP) are accepted as they are.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer func() { _ = d.Close() }() // read only: Sync's error is what counts
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOTSUP) {
		return err
	}
	return nil
}
