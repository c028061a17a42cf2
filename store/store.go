package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"

	"github.com/remem/remem/internal/pidlock"
)

// Options tune how a store is opened.
type Options struct {
	// InMemory keeps everything in memory and touches no disk (no lock, no
	// directory): for unit tests of other packages.
	InMemory bool
	// Small shrinks Badger's memtables, tables and caches for testnets that
	// run many stores in one process.
	Small bool
	// Tiny shrinks them further, for the thousand stores of a simulated
	// network in one process; it wins over Small.
	Tiny bool
	// Logger receives Badger's warnings and errors; nil keeps Badger silent.
	Logger *slog.Logger
	// RankWindow is the decay window W the view index ranks lessons with
	// (protocol.StrengthRank); the memory passes its own.
	RankWindow time.Duration
}

// ErrClosed is returned by every method of a closed store.
var ErrClosed = errors.New("the store is closed")

// LockedError says another process (or another Open in this one) holds the
// memory's home.
type LockedError struct {
	Home string
	PID  int // 0 when the holder's pid could not be read
}

func (e *LockedError) Error() string {
	who := pidlock.Holding(e.PID)
	return fmt.Sprintf("the memory at %s is in use by %s (a running \"remem node\"?); "+
		"stop that process, talk to it through its API, or set REMEM_HOME to another home", e.Home, who)
}

// Store is one memory's persistent state. Its methods are safe for
// concurrent use.
type Store struct {
	mu   sync.RWMutex // guards db against Close
	wmu  sync.Mutex   // serialises writers (read-modify-write merges)
	db   *badger.DB
	lock *os.File
	home string

	ownMu sync.Mutex
	own   map[string]bool // hashes of own lessons: the w/ index, kept in memory

	held heldFilter // the record keys held (filter.go); guarded by wmu
	use  usage      // what each origin's records take (usage.go)

	rankWindow time.Duration // Options.RankWindow
}

// Open opens (creating if needed) the store under home. It never waits for
// another holder: a home in use gives a *LockedError at once.
func Open(home string, opts Options) (*Store, error) {
	s := &Store{home: home, rankWindow: opts.RankWindow}
	var bopts badger.Options
	if opts.InMemory {
		bopts = badger.DefaultOptions("").WithInMemory(true)
	} else {
		if home == "" {
			return nil, errors.New("opening the store: no home directory given")
		}
		if err := os.MkdirAll(home, 0o700); err != nil {
			return nil, fmt.Errorf("creating the memory's home: %w", err)
		}
		lock, err := acquireLock(home)
		if err != nil {
			return nil, err
		}
		s.lock = lock
		bopts = badger.DefaultOptions(filepath.Join(home, "db"))
		if err := dropEmptyLogs(bopts.Dir); err != nil {
			s.releaseLock()
			return nil, err
		}
	}
	bopts = tune(bopts, opts)
	db, err := badger.Open(bopts)
	if err != nil {
		s.releaseLock()
		if strings.Contains(err.Error(), "Cannot acquire directory lock") {
			return nil, &LockedError{Home: home, PID: pidlock.ReadPID(filepath.Join(home, "db", "LOCK"))}
		}
		return nil, fmt.Errorf("opening the store at %s: %w", filepath.Join(home, "db"), err)
	}
	s.db = db
	if err := s.replayJournals(); err != nil {
		_ = db.Close() // opening failed already; that error is the one to report
		s.releaseLock()
		return nil, err
	}
	for _, load := range []func() error{s.loadOwn, s.buildViewIndex} {
		if err := load(); err != nil {
			_ = db.Close() // opening failed already; that error is the one to report
			s.releaseLock()
			return nil, err
		}
	}
	return s, nil
}

// tune sets the small, quiet Badger configuration.
func tune(b badger.Options, opts Options) badger.Options {
	b = b.
		WithLogger(nil).
		WithMetricsEnabled(false).
		WithNumVersionsToKeep(1).
		WithDetectConflicts(false). // writers are serialised by Store.wmu
		WithNumCompactors(2).
		WithNumMemtables(2).
		WithNumLevelZeroTables(2).
		WithNumLevelZeroTablesStall(8).
		WithIndexCacheSize(0).
		WithValueThreshold(32 << 10). // every record and event stays in the LSM tree
		WithNumGoroutines(2).
		// Record lines are mostly hex and signatures, which hardly
		// compress; uncompressed blocks are read straight from the mapped
		// tables, so no block cache is needed either.
		WithCompression(options.None).
		WithBlockCacheSize(0)
	if opts.Logger != nil {
		b = b.WithLogger(slogAdapter{opts.Logger})
	}
	switch {
	case opts.Tiny:
		b = b.
			WithMemTableSize(256 << 10).
			WithBaseTableSize(128 << 10).
			WithBaseLevelSize(1 << 20).
			WithValueLogFileSize(1 << 20)
	case opts.Small:
		b = b.
			WithMemTableSize(1 << 20).
			WithBaseTableSize(512 << 10).
			WithBaseLevelSize(2 << 20).
			WithValueLogFileSize(4 << 20)
	default:
		b = b.
			WithMemTableSize(8 << 20).
			WithBaseTableSize(2 << 20).
			WithBaseLevelSize(8 << 20).
			WithValueLogFileSize(16 << 20)
	}
	return b
}

// dropEmptyLogs removes the zero-length write-ahead and value log files a
// process killed while creating one leaves behind: Badger refuses to open
// a directory holding one ("Create a new file", dgraph-io/badger#2207).
// An empty file holds no entry, so nothing is lost.
func dropEmptyLogs(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the store directory %s: %w", dir, err)
	}
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || (!strings.HasSuffix(name, ".mem") && !strings.HasSuffix(name, ".vlog")) {
			continue
		}
		info, err := e.Info()
		if err != nil || info.Size() != 0 {
			continue
		}
		if err := os.Remove(filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("removing the empty log %s left by a crash: %w", name, err)
		}
	}
	return nil
}

// acquireLock takes home's lock (internal/pidlock) or returns a
// *LockedError naming the pid that holds it.
func acquireLock(home string) (*os.File, error) {
	f, err := pidlock.Lock(home)
	var held *pidlock.HeldError
	if errors.As(err, &held) {
		return nil, &LockedError{Home: home, PID: held.PID}
	}
	return f, err
}

// Holder reports whether a process holds home (its Open is running) and
// the pid that process wrote into the lock, without taking it.
func Holder(home string) (pid int, held bool, err error) { return pidlock.Holder(home) }

func (s *Store) releaseLock() {
	pidlock.Release(s.lock)
	s.lock = nil
}

// Close flushes and closes the store and releases the home. Idempotent.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db == nil {
		return nil
	}
	err := s.db.Close()
	s.db = nil
	s.releaseLock()
	if err != nil {
		return fmt.Errorf("closing the store: %w", err)
	}
	return nil
}

// Home is the directory the store was opened in ("" in memory).
func (s *Store) Home() string { return s.home }

// open reports whether the store is not closed yet.
func (s *Store) open() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.db != nil
}

// view runs fn in a read transaction.
func (s *Store) view(fn func(txn *badger.Txn) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.db == nil {
		return ErrClosed
	}
	return s.db.View(fn)
}

// next increments the counter n/<name> and returns the new value.
func (w *writer) next(name string) (uint64, error) {
	k := []byte("n/" + name)
	v, ok, err := w.get(k)
	if err != nil {
		return 0, err
	}
	var n uint64
	if ok && len(v) == 8 {
		n = binary.BigEndian.Uint64(v)
	}
	n++
	return n, w.set(k, u64(n))
}

func u64(n uint64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, n)
	return b
}

// scanPrefix calls fn for every key with prefix, in key order, values
// loaded only when values is set. key and val are copies.
func scanPrefix(txn *badger.Txn, prefix []byte, values bool, fn func(key, val []byte) error) error {
	o := badger.DefaultIteratorOptions
	o.Prefix = prefix
	o.PrefetchValues = values
	if values {
		o.PrefetchSize = 64
	}
	it := txn.NewIterator(o)
	defer it.Close()
	for it.Seek(prefix); it.ValidForPrefix(prefix); it.Next() {
		item := it.Item()
		k := item.KeyCopy(nil)
		var v []byte
		if values {
			var err error
			if v, err = item.ValueCopy(nil); err != nil {
				return err
			}
		}
		if err := fn(k, v); err != nil {
			return err
		}
	}
	return nil
}

// slogAdapter passes Badger's warnings and errors to slog; info and debug
// are dropped.
type slogAdapter struct{ l *slog.Logger }

func (a slogAdapter) Errorf(f string, v ...any) {
	a.l.Error(strings.TrimSpace(fmt.Sprintf(f, v...)), "component", "badger")
}

func (a slogAdapter) Warningf(f string, v ...any) {
	a.l.Warn(strings.TrimSpace(fmt.Sprintf(f, v...)), "component", "badger")
}

func (slogAdapter) Infof(string, ...any)  {}
func (slogAdapter) Debugf(string, ...any) {}
