package commons

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/remem/remem/protocol"
)

// entry is what the server knows of one origin's file: one index key.
type entry struct {
	Origin  string
	Updated time.Time // when a server accepted the file
	Records int
	ETag    string // from the content alone, so every replica answers the same
}

const (
	fileDir = "commons/" // commons/<origin>.jsonl: the file exactly as accepted
	// sweepEvery is how often a replica looks for PUTs that died between
	// their write and their index key (pending keys), while it serves.
	sweepEvery = 10 * time.Second
	// putTries bounds the read-check-write rounds of one PUT that other
	// writers of the same origin keep winning.
	putTries = 8
	// writeTimeout bounds the store writes of a PUT once its body is
	// read; they go on if the client goes away, so a PUT is never left
	// half published by a closed connection.
	writeTimeout = 30 * time.Second
)

func fileKey(origin string) string { return fileDir + origin + ".jsonl" }

func etagOf(data []byte) string {
	sum := sha256.Sum256(data)
	return `"` + hex.EncodeToString(sum[:16]) + `"`
}

func countRecords(data []byte) int { return len(protocol.SplitLines(data)) }

// errBusy: other writers of the origin won every round of a PUT (503).
var errBusy = errors.New("other PUTs of this origin kept replacing the file while this one was checked; retry")

// storage is the commons' files and index on a Blobs store, with the
// index in memory. On a store of its own (a directory) the memory is the
// truth and every change is in it at once. On a shared store (a bucket
// that several replicas serve) the store is the truth: a PUT is a
// write conditional on the version it checked (so the rollback rule
// holds across replicas), the memory is refreshed by listing the index
// keys of the last seconds, and an index answer holds back the entries
// younger than settle, the time within which every index key is visible
// to all (see publish): a client that saw an entry never misses an
// earlier one.
type storage struct {
	b      Blobs
	shared bool
	settle time.Duration
	now    func() time.Time
	log    *slog.Logger

	locks [256]sync.RWMutex // per origin (striped): this process's writers of one origin take turns; on a directory a read waits for a write

	mu      sync.Mutex
	entries map[string]entry // origin → its latest entry (whose index key is indexKey of it)
	last    time.Time        // latest `updated` handed out or seen; stamps only grow

	// The budgets on new origins (budget.go) and what they count, under mu.
	budget     budget
	sizes      map[string]int64  // origin → its file's bytes
	bytes      int64             // the sum of sizes
	owners     map[string]string // origin → the owner id of the token that stored it
	perToken   map[string]int    // owner id → the origins it stored
	resOrigins map[string]int    // new origins being written (their claims)
	resBytes   int64
	resToken   map[string]int

	refreshMu sync.Mutex // one refresh at a time; the others wait for it
	refreshed time.Time  // when the last refresh began (st.now)
	began     time.Time  // the same, by this machine's monotonic clock (refreshSince)

	sweepMu    sync.Mutex // one sweep at a time; guards swept
	swept      time.Time  // when pending PUTs were last looked at
	skewWarned time.Time  // when a stamp far ahead of this clock was last logged
}

// openStorage loads the index from b. On a directory it also reconciles
// the index with the files (a file changed while the server was down, or
// stored just before a crash, is indexed anew) and takes the `updated` of
// the index.json that earlier versions kept in legacyDir.
func openStorage(ctx context.Context, b Blobs, legacyDir string, settle time.Duration, now func() time.Time, log *slog.Logger) (*storage, error) {
	st := &storage{b: b, shared: b.Shared(), settle: settle, now: now, log: log,
		entries: map[string]entry{}, sizes: map[string]int64{}, owners: map[string]string{},
		perToken: map[string]int{}, resToken: map[string]int{}, resOrigins: map[string]int{}}
	var stale []string
	skipped, example := 0, ""
	err := b.List(ctx, indexDir, "", func(key, _ string) error {
		e, ok := parseIndexKey(key)
		if !ok {
			skipped, example = skipped+1, key
			return nil
		}
		st.mu.Lock()
		if old := st.apply(e, key); old != "" {
			stale = append(stale, old)
		}
		st.mu.Unlock()
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("commons storage: reading the index from %s: %w", b, err)
	}
	if skipped > 0 {
		log.Warn("commons index: keys skipped, not ones this server writes", "skipped", skipped, "example", example)
	}
	// An older key of an origin is left by a crash between a PUT's new key
	// and the old key's removal. On a shared store only one older than any
	// PUT in progress is removed: the latest key wins meanwhile anyway.
	for _, k := range stale {
		if e, _ := parseIndexKey(k); st.shared && now().Sub(e.Updated) < writeTimeout+2*settle {
			continue
		}
		if err := b.Delete(ctx, k); err != nil {
			log.Warn("commons index: an old key not removed", "key", k, "err", err)
		}
	}
	if !st.shared {
		if err := st.reconcile(ctx, legacyDir); err != nil {
			return nil, fmt.Errorf("commons storage: %w", err)
		}
	} else if err := st.loadSizes(ctx); err != nil {
		return nil, fmt.Errorf("commons storage: %w", err)
	}
	st.sweep(ctx, !st.shared)
	if err := st.loadOwners(ctx); err != nil {
		return nil, fmt.Errorf("commons storage: %w", err)
	}
	st.refreshed = now()
	return st, nil
}

// apply takes e (with its index key) into memory if it is newer than the
// origin's entry there, and returns the key it replaced, or key itself
// when e is the older one (either is a key to remove). Call with mu held.
func (st *storage) apply(e entry, key string) (stale string) {
	if e.Updated.After(st.last) {
		st.last = e.Updated
	}
	cur, ok := st.entries[e.Origin]
	switch {
	case !ok:
		st.entries[e.Origin] = e
		return ""
	case cur == e:
		return ""
	case !e.Updated.After(cur.Updated):
		return key
	}
	st.entries[e.Origin] = e
	return indexKey(cur)
}

// stamp returns a new `updated` for origin: strictly later than every
// stamp this process handed out or saw, and than the origin's entry, so
// `?since=` the latest time a client saw never misses a later acceptance.
// Call with mu held.
func (st *storage) stamp(origin string) time.Time {
	t := st.now().UTC()
	if !t.After(st.last) {
		t = st.last.Add(time.Nanosecond)
	}
	if c, ok := st.entries[origin]; ok && !t.After(c.Updated) {
		t = c.Updated.Add(time.Nanosecond)
	}
	st.last = t
	return t
}

// put stores body as origin's file if check, given the stored file's bytes
// (nil when there is none), returns nil; check's error is returned as is
// and leaves the stored file untouched. The write is conditional on the
// version checked, so two PUTs of one origin, on any replicas, never both
// pass against the same old file: the loser checks again against the
// winner's file. put returns the entry, whether the origin is new, and
// whether anything changed (an identical file is not rewritten, not
// checked again, and keeps its `updated`).
//
// A new origin must fit the budgets (a *budgetError otherwise) and is
// counted as owner's ("": nobody's); a replacement needs none.
func (st *storage) put(ctx context.Context, origin string, body []byte, records int, owner string, check func(old []byte) error) (e entry, created, changed bool, err error) {
	l := &st.locks[stripe(origin)]
	l.Lock()
	defer l.Unlock()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
	defer cancel()

	etag := etagOf(body)
	key := fileKey(origin)
	for range putTries {
		prev, ver, err := st.b.Get(ctx, key)
		if err != nil && !errors.Is(err, ErrNotExist) {
			return entry{}, false, false, fmt.Errorf("reading the stored %s to check the new one against it: %w", key, err)
		}
		if prev != nil && etagOf(prev) == etag {
			e, err := st.same(ctx, origin, prev, ver)
			return e, false, false, err
		}
		if err := check(prev); err != nil {
			return entry{}, false, false, err
		}
		var res *reservation
		if prev == nil {
			if res, err = st.reserve(ctx, origin, owner, int64(len(body))); err != nil {
				return entry{}, false, false, err
			}
		}
		cond := Cond{IfMatch: ver, IfAbsent: prev == nil}
		e, err := st.commit(ctx, entry{Origin: origin, Records: records, ETag: etag}, body, cond)
		if res != nil {
			st.release(ctx, res, err == nil) // counts the new file's size
		} else if err == nil {
			st.sized(origin, int64(len(body)))
		}
		if errors.Is(err, ErrConflict) {
			continue // another replica stored a file since: check against it
		}
		if err != nil {
			return entry{}, false, false, err
		}
		return e, prev == nil, true, nil
	}
	return entry{}, false, false, fmt.Errorf("storing %s: %w", key, errBusy)
}

// same answers a PUT of the file already stored: its entry, unchanged. On
// a shared store the entry may lag (the PUT that stored it died before
// its index key was written, and this is its retry): then the file is
// indexed now.
func (st *storage) same(ctx context.Context, origin string, data []byte, ver string) (entry, error) {
	etag := etagOf(data)
	cur, ok := st.entry(origin)
	if (!ok || cur.ETag != etag) && st.shared {
		st.refreshSince(ctx, time.Now()) // another replica may have indexed it just now
		cur, ok = st.entry(origin)
	}
	if ok && cur.ETag == etag {
		return cur, nil
	}
	return st.publish(ctx, entry{Origin: origin, Records: countRecords(data), ETag: etag}, ver)
}

func (st *storage) entry(origin string) (entry, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	e, ok := st.entries[origin]
	return e, ok
}

// commit writes the file if cond holds and indexes it. On a shared store
// a pending key marks the PUT from before the write until its index key
// is written, so that if this process dies in between, or the store fails
// it then, another replica indexes the file (sweep): once the file is
// stored the PUT has succeeded.
func (st *storage) commit(ctx context.Context, e entry, body []byte, cond Cond) (entry, error) {
	if !st.shared {
		ver, err := st.b.Put(ctx, fileKey(e.Origin), body, cond)
		if err != nil {
			return entry{}, fmt.Errorf("storing %s: %w", fileKey(e.Origin), err)
		}
		return st.publish(ctx, e, ver)
	}
	st.mu.Lock()
	t := st.stamp(e.Origin)
	st.mu.Unlock()
	pending := pendingKey(e.Origin, t)
	if _, err := st.b.Put(ctx, pending, nil, Cond{}); err != nil {
		return entry{}, fmt.Errorf("marking the PUT of %s: %w", e.Origin, err)
	}
	ver, err := st.b.Put(ctx, fileKey(e.Origin), body, cond)
	if err != nil {
		st.unmark(pending)
		return entry{}, fmt.Errorf("storing %s: %w", fileKey(e.Origin), err)
	}
	pe, err := st.publish(ctx, e, ver)
	if err != nil {
		st.log.Error("commons: a stored file is not indexed yet; the pending key stays and a sweep indexes it", "origin", e.Origin, "err", err)
		e.Updated = t
		return e, nil
	}
	st.unmark(pending)
	return pe, nil
}

// unmark removes a pending key; one left behind only costs a sweep a
// needless look at the file.
func (st *storage) unmark(key string) {
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	if err := st.b.Delete(ctx, key); err != nil {
		st.log.Warn("commons: a pending key not removed; a sweep removes it", "key", key, "err", err)
	}
}

// publish stamps e and writes its index key, for the file stored as
// version ver. On a directory the entry is in memory first, so this
// process's answers see it at once, and a crash before the key is written
// is mended at the next start (reconcile). On a shared store:
//   - the key must be visible within settle/2 of its stamp (a replica's
//     index answer holds back entries younger than settle): a write that
//     took longer is stamped again;
//   - if the file changed since (another replica won a later PUT), this
//     key is removed, the later PUT's key stands;
//   - if another replica's key of the origin is later (its clock ahead),
//     this one is stamped again, later still, so the latest key is always
//     of the stored file.
func (st *storage) publish(ctx context.Context, e entry, ver string) (entry, error) {
	if !st.shared {
		st.mu.Lock()
		e.Updated = st.stamp(e.Origin)
		key := indexKey(e)
		old := st.apply(e, key)
		st.mu.Unlock()
		return e, st.writeKey(ctx, key, old)
	}
	for range putTries {
		st.mu.Lock()
		e.Updated = st.stamp(e.Origin)
		st.mu.Unlock()
		key := indexKey(e)
		if _, err := st.b.Put(ctx, key, nil, Cond{}); err != nil {
			return entry{}, fmt.Errorf("indexing %s: %w", e.Origin, err)
		}
		written := time.Now()
		if st.settle > 0 && st.now().Sub(e.Updated) > st.settle/2 {
			st.dropKey(ctx, key)
			continue // too slow to be seen in time: stamp again
		}
		cur, err := st.b.Stat(ctx, fileKey(e.Origin))
		if err == nil && cur != ver {
			st.dropKey(ctx, key) // a later PUT replaced the file; its key stands
			return e, nil
		}
		if err != nil { // keep the key: a later PUT's check below stamps past it if need be
			st.log.Warn("commons: the stored file not checked after indexing it", "origin", e.Origin, "err", err)
		}
		st.refreshSince(ctx, written)
		st.mu.Lock()
		c := st.entries[e.Origin]
		if c.ETag != e.ETag && c.Updated.After(e.Updated) {
			st.mu.Unlock()
			st.dropKey(ctx, key)
			continue // a later key of an older file: stamp again, later than it
		}
		old := st.apply(e, key)
		st.mu.Unlock()
		if old != "" {
			st.dropKey(ctx, old)
		}
		return e, nil
	}
	return entry{}, fmt.Errorf("indexing %s: %w", e.Origin, errBusy)
}

// writeKey writes a directory's index key and removes the one it replaced.
func (st *storage) writeKey(ctx context.Context, key, old string) error {
	if _, err := st.b.Put(ctx, key, nil, Cond{}); err != nil {
		// The file is stored and durable, and in memory; the next start
		// indexes it from the file, so this PUT still succeeded.
		st.log.Error("commons index key not written", "key", key, "err", err)
		return nil
	}
	if old != "" {
		st.dropKey(ctx, old)
	}
	return nil
}

func (st *storage) dropKey(ctx context.Context, key string) {
	if err := st.b.Delete(ctx, key); err != nil {
		st.log.Warn("commons index: an old key not removed; the latest key of an origin wins", "key", key, "err", err)
	}
}

// refresh takes into memory the index keys other replicas wrote: it
// lists only the keys stamped in the last seconds (a key is visible
// within settle/2 of its stamp, see publish), so its cost grows with the
// PUTs since, never with the index. It runs at most every settle/4,
// which keeps every entry older than settle in memory when an index
// answer is made. On a directory there is nothing to refresh.
// Every sweepEvery at most, a refresh also sweeps (outside the refresh's
// lock: a sweep publishes, and publishing refreshes).
func (st *storage) refresh(ctx context.Context) {
	if !st.shared {
		return
	}
	st.refreshMu.Lock()
	if st.now().Sub(st.refreshed) < st.settle/4 {
		st.refreshMu.Unlock()
		return
	}
	st.refreshLocked(ctx)
	st.refreshMu.Unlock()
	st.maybeSweep(ctx)
}

// maybeSweep sweeps if the last sweep is sweepEvery old and no other
// sweep runs.
func (st *storage) maybeSweep(ctx context.Context) {
	if !st.sweepMu.TryLock() {
		return
	}
	due := st.now().Sub(st.swept) > max(5*st.settle, sweepEvery)
	st.sweepMu.Unlock()
	if due {
		st.sweep(ctx, false)
	}
}

// refreshSince makes sure that a refresh begun at t or later has ended:
// what was visible in the store at t is in memory. PUTs that wait at once
// share one listing (the one begun after they all came).
func (st *storage) refreshSince(ctx context.Context, t time.Time) {
	st.refreshMu.Lock()
	defer st.refreshMu.Unlock()
	if !st.began.Before(t) {
		return
	}
	st.refreshLocked(ctx)
}

// refreshLocked lists the recent index keys. Call with refreshMu held.
func (st *storage) refreshLocked(ctx context.Context) {
	began := time.Now()
	now := st.now()
	st.mu.Lock()
	from := st.last
	if now.Before(from) {
		from = now // a replica's clock ahead must not narrow the window
	}
	from = from.Add(-2*st.settle - time.Second)
	st.mu.Unlock()
	err := st.b.List(ctx, indexDir, indexDir+stampKey(from), func(key, _ string) error {
		if e, ok := parseIndexKey(key); ok {
			st.mu.Lock()
			st.apply(e, key)
			st.mu.Unlock()
		}
		return nil
	})
	if err != nil {
		st.log.Error("commons index not refreshed from the store", "store", st.b.String(), "err", err)
		return
	}
	st.refreshed, st.began = now, began
	st.mu.Lock()
	ahead := st.last.Sub(now)
	st.mu.Unlock()
	if ahead > st.settle && now.Sub(st.skewWarned) > time.Minute {
		// Stamps only grow, so this replica stamps after that one: its
		// acceptances are held back from the index until its clock catches up.
		st.skewWarned = now
		st.log.Warn("commons: an index key is stamped ahead of this clock; keep the replicas' clocks in step (NTP)", "ahead", ahead)
	}
}

// sweep indexes the files of PUTs that died between their write and their
// index key (a pending key older than any PUT in progress could be), or
// all pending ones when all is set (a directory's start: no PUT is in
// progress).
func (st *storage) sweep(ctx context.Context, all bool) {
	st.sweepMu.Lock()
	defer st.sweepMu.Unlock()
	now := st.now()
	st.swept = now
	var found []string
	err := st.b.List(ctx, pendingDir, "", func(key, _ string) error {
		_, t, ok := parsePendingKey(key)
		if all || !ok || now.Sub(t) > writeTimeout+2*st.settle {
			found = append(found, key)
		}
		return nil
	})
	if err != nil {
		st.log.Warn("commons: pending PUTs not listed", "err", err)
		return
	}
	for _, key := range found {
		if origin, _, ok := parsePendingKey(key); ok {
			if err := st.repair(ctx, origin); err != nil {
				st.log.Warn("commons: the file of a PUT that died not indexed; the next sweep tries again", "origin", origin, "err", err)
				continue
			}
		}
		st.unmark(key)
	}
}

// repair indexes origin's stored file if the index names another.
func (st *storage) repair(ctx context.Context, origin string) error {
	data, ver, err := st.b.Get(ctx, fileKey(origin))
	if errors.Is(err, ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if cur, _ := st.entry(origin); cur.ETag == etagOf(data) {
		return nil
	}
	st.log.Info("commons: indexing a file whose PUT died before it was indexed", "origin", origin)
	_, err = st.publish(ctx, entry{Origin: origin, Records: countRecords(data), ETag: etagOf(data)}, ver)
	return err
}

// list returns the entries updated strictly after since (all when since
// is zero), sorted by origin. On a shared store, not those younger than
// settle.
func (st *storage) list(ctx context.Context, since time.Time) []entry {
	st.refresh(ctx)
	var until time.Time
	if st.shared && st.settle > 0 {
		until = st.now().Add(-st.settle)
	}
	st.mu.Lock()
	out := make([]entry, 0, len(st.entries))
	for _, e := range st.entries {
		if (since.IsZero() || e.Updated.After(since)) && (until.IsZero() || !e.Updated.After(until)) {
			out = append(out, e)
		}
	}
	st.mu.Unlock()
	slices.SortFunc(out, func(a, b entry) int { return strings.Compare(a.Origin, b.Origin) })
	return out
}

// read returns origin's entry and, unless match says the caller holds the
// current version, the file's bytes. found is false when there is no file.
// On a shared store the file is read from the store every time (another
// replica may have replaced it); its ETag is its content's, and its
// `updated` is the index's when the index names this content (else zero).
func (st *storage) read(ctx context.Context, origin string, match func(etag string) bool) (e entry, data []byte, found bool, err error) {
	if !st.shared {
		l := &st.locks[stripe(origin)]
		l.RLock()
		defer l.RUnlock()
		st.mu.Lock()
		e, found = st.entries[origin]
		st.mu.Unlock()
		if !found || match(e.ETag) {
			return e, nil, found, nil
		}
	}
	data, _, err = st.b.Get(ctx, fileKey(origin))
	if errors.Is(err, ErrNotExist) {
		return e, nil, false, nil
	}
	if err != nil {
		return e, nil, false, err
	}
	if st.shared {
		e, _ = st.entry(origin)
		if etag := etagOf(data); e.ETag != etag {
			e = entry{Origin: origin, ETag: etag}
		}
		if match(e.ETag) {
			return e, nil, true, nil
		}
	}
	return e, data, true, nil
}

func (st *storage) close() error { return st.b.Close() }
