package commons

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Blobs is where a commons server keeps its state: the origins' files,
// the index and the peer directory, as small objects under keys of the
// form "<dir>/<name>". Two backends implement it, a local directory
// (dirBlobs, the default) and S3-compatible object storage (s3Blobs), and
// both pass one conformance suite (blobs_suite_test.go). The storage
// above it (storage.go, peers.go) needs only what every S3 store offers:
// whole-object writes that are atomic, a write conditional on the
// object's version (or its absence), and listing in key order from a key.
type Blobs interface {
	// Get returns the object's bytes and its version; an error wrapping
	// ErrNotExist when there is none.
	Get(ctx context.Context, key string) (data []byte, version string, err error)
	// Stat returns the object's version without its bytes.
	Stat(ctx context.Context, key string) (version string, err error)
	// Put replaces (or creates) the object whole if cond holds, and
	// returns its new version; an error wrapping ErrConflict if cond does
	// not hold, leaving the stored object as it was. A reader sees the old
	// object or the new one, never a part.
	Put(ctx context.Context, key string, data []byte, cond Cond) (version string, err error)
	// Delete removes the object; an absent one is no error.
	Delete(ctx context.Context, key string) error
	// List calls fn with every key that starts with prefix (a "<dir>/")
	// and sorts after after (all when after is ""), in byte order, with
	// its version. An error of fn stops the listing and is returned.
	List(ctx context.Context, prefix, after string, fn func(key, version string) error) error
	// ListSizes is List with each object's size in bytes instead of its
	// version: what a shared store's byte budget counts at start, without
	// reading every object.
	ListSizes(ctx context.Context, prefix string, fn func(key string, size int64) error) error
	// Shared reports whether other processes may write the same store at
	// once (replicas on one bucket): then what a process keeps in memory
	// is a cache to refresh, never the truth.
	Shared() bool
	// String names the store for logs and errors (never a credential).
	String() string
	Close() error
}

// Cond is the condition of a Put: the zero Cond always holds; IfAbsent
// holds when there is no object; IfMatch when the stored object's version
// is IfMatch.
type Cond struct {
	IfAbsent bool
	IfMatch  string
}

var (
	// ErrNotExist: no object under the key.
	ErrNotExist = errors.New("no such object")
	// ErrConflict: a conditional Put found another version stored.
	ErrConflict = errors.New("the stored object changed (a conditional write lost)")
	// errBadKey: a key outside the form "<dir>/<name>".
	errBadKey = errors.New("not a storage key")
)

// maxKeyName bounds the name part of a key: S3 takes keys of up to 1,024
// bytes and file systems names of 255; what this package writes is far
// shorter (an index key is about 90).
const maxKeyName = 200

// checkKey accepts only "<dir>/<name>": dir lowercase letters, name
// letters, digits, '.', '_' and '-', not starting with '.' (no "..", no
// hidden or temp file), at most maxKeyName bytes. Both backends call it on
// every key, so no key can name a path outside the store.
func checkKey(key string) error {
	dir, name, ok := strings.Cut(key, "/")
	if !ok || !validDir(dir) || !validName(name) {
		return fmt.Errorf("%w: %.80q (want <dir>/<name>: lowercase dir, name of letters, digits, '.', '_', '-' not starting with '.', at most %d bytes)", errBadKey, key, maxKeyName)
	}
	return nil
}

// checkPrefix accepts "<dir>/", the prefix List takes.
func checkPrefix(prefix string) error {
	dir, ok := strings.CutSuffix(prefix, "/")
	if !ok || !validDir(dir) {
		return fmt.Errorf("%w: prefix %.80q (want <dir>/)", errBadKey, prefix)
	}
	return nil
}

func validDir(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 'a' || s[i] > 'z' {
			return false
		}
	}
	return true
}

func validName(s string) bool {
	if s == "" || len(s) > maxKeyName || s[0] == '.' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
