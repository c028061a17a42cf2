package commons

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/remem/remem/internal/atomicfile"
	"github.com/remem/remem/protocol"
)

// entry is what the server knows of one origin's file.
type entry struct {
	Origin  string    `json:"origin"`
	Updated time.Time `json:"updated"` // when the server last accepted the file
	Records int       `json:"records"`
	ETag    string    `json:"etag"`
	Size    int64     `json:"size"`     // file size when indexed
	MTime   int64     `json:"mtime_ns"` // file mtime (Unix ns) when indexed
}

type indexFile struct {
	Version int     `json:"version"`
	Entries []entry `json:"entries"`
}

const (
	indexVersion = 1
	dataTemp     = ".tmp-"       // temp files in DataDir/commons
	indexName    = "index.json"  // in DataDir
	indexTemp    = ".index.tmp-" // temp files of the index in DataDir
)

// storage is the commons' disk state: DataDir/commons/<origin>.jsonl, one
// file per origin written atomically, and DataDir/index.json, a cache of
// per-file facts that is rebuilt from the files when missing or stale.
type storage struct {
	dir       string // DataDir/commons
	indexPath string
	now       func() time.Time
	log       *slog.Logger

	locks [256]sync.RWMutex // per-origin (striped) file locks

	mu      sync.Mutex // guards entries, last, ver
	entries map[string]entry
	last    time.Time // latest Updated handed out; stamps only grow
	ver     uint64    // bumped on every change of entries

	persistMu sync.Mutex // one index writer at a time
	persisted uint64     // ver of the index on disk
}

func etagOf(data []byte) string {
	sum := sha256.Sum256(data)
	return `"` + hex.EncodeToString(sum[:16]) + `"`
}

func countRecords(data []byte) int { return len(protocol.SplitLines(data)) }

// openStorage opens (creating) the storage under dataDir, removes temp
// files a crash left behind, and reconciles the index with the files: an
// entry whose file changed size or mtime is recomputed from the file, and a
// missing or damaged index is rebuilt.
func openStorage(dataDir string, now func() time.Time, log *slog.Logger) (*storage, error) {
	st := &storage{
		dir:       filepath.Join(dataDir, "commons"),
		indexPath: filepath.Join(dataDir, indexName),
		now:       now,
		log:       log,
		entries:   map[string]entry{},
	}
	if err := os.MkdirAll(st.dir, 0o755); err != nil {
		return nil, fmt.Errorf("commons storage: %w", err)
	}
	removeTemps(dataDir, indexTemp)
	removeTemps(st.dir, dataTemp)

	old := map[string]entry{}
	if data, err := os.ReadFile(st.indexPath); err == nil {
		var idx indexFile
		if err := json.Unmarshal(data, &idx); err != nil || idx.Version != indexVersion {
			log.Warn("commons index is damaged; rebuilding it from the files", "path", st.indexPath, "err", err)
		} else {
			for _, e := range idx.Entries {
				if protocol.ValidOrigin(e.Origin) {
					old[e.Origin] = e
				}
			}
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("commons storage: reading index: %w", err)
	}

	ents, err := os.ReadDir(st.dir)
	if err != nil {
		return nil, fmt.Errorf("commons storage: %w", err)
	}
	var stale []entry // files the index does not describe
	for _, de := range ents {
		origin, ok := protocol.OriginOfFileName(de.Name())
		if !ok || !de.Type().IsRegular() {
			continue
		}
		info, err := de.Info()
		if err != nil {
			return nil, fmt.Errorf("commons storage: %w", err)
		}
		if e, ok := old[origin]; ok && e.Size == info.Size() && e.MTime == info.ModTime().UnixNano() {
			st.entries[origin] = e
			if e.Updated.After(st.last) {
				st.last = e.Updated
			}
			continue
		}
		data, err := os.ReadFile(filepath.Join(st.dir, de.Name()))
		if err != nil {
			return nil, fmt.Errorf("commons storage: %w", err)
		}
		e := entry{Origin: origin, Records: countRecords(data), ETag: etagOf(data), Size: info.Size(), MTime: info.ModTime().UnixNano()}
		if o, ok := old[origin]; ok && o.ETag == e.ETag {
			e.Updated = o.Updated // same content, only the stat changed
			st.entries[origin] = e
			if e.Updated.After(st.last) {
				st.last = e.Updated
			}
			continue
		}
		stale = append(stale, e)
	}
	// Content the index did not know gets a fresh stamp, later than any
	// stamp a client may have seen, so `?since=` lists it.
	for _, e := range stale {
		e.Updated = st.stamp()
		st.entries[e.Origin] = e
	}
	changed := len(stale) > 0 || len(old) != len(st.entries)
	if !changed {
		for o, e := range st.entries {
			if old[o] != e {
				changed = true
				break
			}
		}
	}
	st.ver = 1
	if changed {
		if err := st.persist(st.ver); err != nil {
			return nil, fmt.Errorf("commons storage: writing index: %w", err)
		}
		log.Info("commons index rebuilt", "files", len(st.entries), "recomputed", len(stale))
	} else {
		st.persisted = st.ver
	}
	return st, nil
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

// stamp returns a new `updated` time, strictly later than every earlier
// one, so a client that asks `?since=` the latest time it saw never misses
// a later acceptance. Call with mu held (or before the storage is shared).
func (st *storage) stamp() time.Time {
	t := st.now().UTC()
	if !t.After(st.last) {
		t = st.last.Add(time.Nanosecond)
	}
	st.last = t
	return t
}

func (st *storage) path(origin string) string { return filepath.Join(st.dir, origin+".jsonl") }

// put stores body as origin's file if check, given the stored file's bytes
// (nil when there is none), returns nil; check's error is returned as is
// and leaves the stored file untouched. check runs under the origin's lock,
// so two PUTs of one origin never both pass against the same old file. put
// returns the entry, whether the origin is new, and whether anything
// changed (an identical file is not rewritten, not checked again, and
// keeps its `updated`).
func (st *storage) put(origin string, body []byte, records int, check func(old []byte) error) (e entry, created, changed bool, err error) {
	l := &st.locks[stripe(origin)]
	l.Lock()
	defer l.Unlock()

	etag := etagOf(body)
	st.mu.Lock()
	old, exists := st.entries[origin]
	st.mu.Unlock()
	if exists && old.ETag == etag {
		return old, false, false, nil
	}
	path := st.path(origin)
	prev, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return entry{}, false, false, fmt.Errorf("reading the stored %s to check the new one against it: %w", filepath.Base(path), err)
	}
	if err := check(prev); err != nil {
		return entry{}, false, false, err
	}
	if err := atomicfile.Write(path, dataTemp+origin+"-", body, 0o644); err != nil {
		return entry{}, false, false, fmt.Errorf("storing %s: %w", filepath.Base(path), err)
	}
	e = entry{Origin: origin, Records: records, ETag: etag, Size: int64(len(body))}
	if info, err := os.Stat(path); err == nil {
		e.MTime = info.ModTime().UnixNano()
	}
	st.mu.Lock()
	e.Updated = st.stamp()
	st.entries[origin] = e
	st.ver++
	v := st.ver
	st.mu.Unlock()
	if err := st.persist(v); err != nil {
		// The file is stored and durable; the index is rebuilt from the
		// files on the next start, so this PUT still succeeded.
		st.log.Error("commons index not written", "err", err)
	}
	return e, !exists, true, nil
}

// persist writes the index if the one on disk is older than version v.
// Concurrent callers share one write (group commit).
func (st *storage) persist(v uint64) error {
	st.persistMu.Lock()
	defer st.persistMu.Unlock()
	if st.persisted >= v {
		return nil
	}
	st.mu.Lock()
	idx := indexFile{Version: indexVersion, Entries: st.sortedLocked(time.Time{})}
	cur := st.ver
	st.mu.Unlock()
	data, err := json.Marshal(idx)
	if err != nil {
		return err
	}
	if err := atomicfile.Write(st.indexPath, indexTemp, data, 0o644); err != nil {
		return err
	}
	st.persisted = cur
	return nil
}

// list returns the entries updated strictly after since (all when since
// is zero), sorted by origin.
func (st *storage) list(since time.Time) []entry {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.sortedLocked(since)
}

func (st *storage) sortedLocked(since time.Time) []entry {
	out := make([]entry, 0, len(st.entries))
	for _, e := range st.entries {
		if since.IsZero() || e.Updated.After(since) {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b entry) int { return strings.Compare(a.Origin, b.Origin) })
	return out
}

// read returns origin's entry and, unless match says the caller holds the
// current version, the file's bytes. found is false when there is no file.
func (st *storage) read(origin string, match func(etag string) bool) (e entry, data []byte, found bool, err error) {
	l := &st.locks[stripe(origin)]
	l.RLock()
	defer l.RUnlock()
	st.mu.Lock()
	e, found = st.entries[origin]
	st.mu.Unlock()
	if !found || match(e.ETag) {
		return e, nil, found, nil
	}
	data, err = os.ReadFile(st.path(origin))
	if errors.Is(err, fs.ErrNotExist) {
		return e, nil, false, nil
	}
	return e, data, true, err
}

func (st *storage) close() error {
	st.mu.Lock()
	v := st.ver
	st.mu.Unlock()
	return st.persist(v)
}
