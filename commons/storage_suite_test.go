package commons

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/remem/remem/internal/testutil"
)

// testStorage runs the commons storage (storage.go) on a backend: what a
// server promises of files and index, whichever store it keeps them in.
// replicas opens n storages on one store: one on a directory (a directory
// has one owner), two on a bucket.
func testStorage(t *testing.T, replicas func(t *testing.T) []*storage) {
	t.Run("PutReadList", func(t *testing.T) { storagePutReadList(t, replicas(t)) })
	t.Run("OneHistory", func(t *testing.T) { storageOneHistory(t, replicas(t)) })
	t.Run("SinceMissesNothing", func(t *testing.T) { storageSince(t, replicas(t)) })
}

const sOrigin = "00000000000000aa"

func storagePutReadList(t *testing.T, sts []*storage) {
	ctx := context.Background()
	a, b := sts[0], sts[len(sts)-1]
	ok := func([]byte) error { return nil }
	e1, created, changed, err := a.put(ctx, sOrigin, []byte("one\n"), 1, "", ok)
	if err != nil || !created || !changed || e1.ETag != etagOf([]byte("one\n")) {
		t.Fatalf("first put: %+v %v %v %v", e1, created, changed, err)
	}
	// The same bytes again change nothing, not even `updated`, on any replica.
	if e, created, changed, err := b.put(ctx, sOrigin, []byte("one\n"), 1, "", ok); err != nil || created || changed || !e.Updated.Equal(e1.Updated) {
		t.Fatalf("same put: %+v %v %v %v", e, created, changed, err)
	}
	// A refused put leaves the file as it was.
	refuse := errors.New("refused")
	var seen []byte
	if _, _, _, err := b.put(ctx, sOrigin, []byte("two\n"), 1, "", func(old []byte) error { seen = old; return refuse }); !errors.Is(err, refuse) {
		t.Fatalf("refused put: %v", err)
	}
	if string(seen) != "one\n" {
		t.Fatalf("the check saw %q, not the stored file", seen)
	}
	e2, created, changed, err := b.put(ctx, sOrigin, []byte("two\nlines\n"), 2, "", ok)
	if err != nil || created || !changed || !e2.Updated.After(e1.Updated) {
		t.Fatalf("replace: %+v %v %v %v (first %s)", e2, created, changed, err, e1.Updated)
	}
	for _, st := range sts {
		e, data, found, err := st.read(ctx, sOrigin, func(string) bool { return false })
		if err != nil || !found || string(data) != "two\nlines\n" || e.ETag != e2.ETag {
			t.Fatalf("read: %+v %q %v %v", e, data, found, err)
		}
		if _, data, found, _ := st.read(ctx, sOrigin, func(etag string) bool { return etag == e2.ETag }); !found || data != nil {
			t.Fatalf("read with the current ETag gave the bytes again")
		}
		if _, _, found, err := st.read(ctx, "00000000000000bb", func(string) bool { return false }); found || err != nil {
			t.Fatalf("read of nothing: %v %v", found, err)
		}
	}
	waitSettled(sts[0])
	for _, st := range sts {
		es := st.list(ctx, time.Time{})
		if len(es) != 1 || es[0] != e2 {
			t.Fatalf("list: %+v, want %+v", es, e2)
		}
		if es := st.list(ctx, e2.Updated); len(es) != 0 {
			t.Fatalf("list since the latest: %+v", es)
		}
	}
}

// waitSettled waits until the entries stamped so far are past the settle
// time (a shared store holds younger ones back from lists).
func waitSettled(st *storage) {
	time.Sleep(st.settle + 10*time.Millisecond)
}

// storageOneHistory: writers on every replica replace one origin's file at
// once; each check sees the stored file, and no two accepted writes saw
// the same one: the history is one line, as the rollback rule needs.
func storageOneHistory(t *testing.T, sts []*storage) {
	ctx := context.Background()
	const writers, rounds = 6, 5
	var mu sync.Mutex
	prevOf := map[string]string{} // accepted body → the stored body its check saw
	var wg sync.WaitGroup
	for w := range writers {
		st := sts[w%len(sts)]
		wg.Go(func() {
			for r := range rounds {
				body := fmt.Sprintf("w%d-r%d\n", w, r)
				var saw []byte
				_, _, _, err := st.put(ctx, sOrigin, []byte(body), 1, "", func(old []byte) error { saw = bytes.Clone(old); return nil })
				if errors.Is(err, errBusy) {
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				prevOf[body] = string(saw)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	// Walk back from the stored file: every accepted body is on the path.
	_, data, _, err := sts[0].read(ctx, sOrigin, func(string) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	onPath := 0
	for cur := string(data); cur != ""; cur = prevOf[cur] {
		if _, ok := prevOf[cur]; !ok {
			t.Fatalf("the stored history reaches %q, which no accepted write stored", cur)
		}
		onPath++
		if onPath > len(prevOf) {
			t.Fatal("the history loops")
		}
	}
	if onPath != len(prevOf) {
		t.Fatalf("%d writes accepted, %d on the one history: two writes checked against the same file", len(prevOf), onPath)
	}
}

// storageSince: while writers on every replica PUT, a reader asks each
// replica in turn for `?since` the latest `updated` it saw, as a client
// does. Every acknowledged PUT is seen, or a later one of its origin.
func storageSince(t *testing.T, sts []*storage) {
	ctx := context.Background()
	const writers, rounds = 6, 12
	var acked sync.Map // origin → latest acknowledged `updated`
	var stop atomic.Bool
	var wg sync.WaitGroup
	for w := range writers {
		st := sts[w%len(sts)]
		wg.Go(func() {
			for r := range rounds {
				o := fmt.Sprintf("%016x", 0x100+w*rounds+r) // one PUT an origin: a later one would hide a miss
				e, _, _, err := st.put(ctx, o, []byte(fmt.Sprintf("w%d r%d\n", w, r)), 1, "", func([]byte) error { return nil })
				if err != nil {
					t.Error(err)
					return
				}
				acked.Store(o, e.Updated)
			}
		})
	}
	seen := map[string]time.Time{}
	var cursor time.Time
	read := func(st *storage) {
		for _, e := range st.list(ctx, cursor) {
			if e.Updated.After(seen[e.Origin]) {
				seen[e.Origin] = e.Updated
			}
			if e.Updated.After(cursor) {
				cursor = e.Updated
			}
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; !stop.Load(); i++ {
			read(sts[i%len(sts)])
			time.Sleep(time.Millisecond)
		}
	}()
	wg.Wait()
	stop.Store(true)
	<-done
	waitSettled(sts[0])
	read(sts[0])
	acked.Range(func(k, v any) bool {
		if seen[k.(string)].Before(v.(time.Time)) {
			t.Errorf("%s: acknowledged at %s, the reader's `?since` answers showed only %s", k, v, seen[k.(string)])
		}
		return true
	})
}

func TestStorageDir(t *testing.T) {
	testStorage(t, func(t *testing.T) []*storage {
		b, err := openDirBlobs(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		st, err := openStorage(context.Background(), b, "", 0, time.Now, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.close() })
		return []*storage{st}
	})
}

func TestStorageS3(t *testing.T) {
	m := needMinio(t)
	bucket := m.newBucket(t)
	n := 0
	testStorage(t, func(t *testing.T) []*storage {
		n++
		var sts []*storage
		for range 2 {
			st, err := openStorage(context.Background(), m.open(t, bucket, fmt.Sprintf("st%d", n)), "", testSettle, time.Now, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.close() })
			sts = append(sts, st)
		}
		return sts
	})
}

// TestStaleIndexKeys: at start, an older key of an origin (a crash
// between a PUT's new key and the old key's removal) is removed, on a
// shared store only once it is older than any PUT in progress; a key that
// is not one the server writes is skipped; the latest key wins.
func TestStaleIndexKeys(t *testing.T) {
	run := func(t *testing.T, b Blobs) {
		ctx := context.Background()
		now := time.Now().UTC()
		e := func(o string, age time.Duration, etag string) entry {
			return entry{Origin: o, Updated: now.Add(-age), Records: 1, ETag: etagOf([]byte(etag))}
		}
		old, cur := e(sOrigin, time.Hour, "old"), e(sOrigin, 50*time.Minute, "cur")
		young, younger := e("00000000000000cc", 2*time.Second, "a"), e("00000000000000cc", time.Second, "b")
		for _, x := range []entry{old, cur, young, younger} {
			mustPut(t, b, indexKey(x), nil, Cond{})
		}
		mustPut(t, b, "index/not-a-key", nil, Cond{})
		mustPut(t, b, fileKey(sOrigin), []byte("cur"), Cond{})
		mustPut(t, b, fileKey("00000000000000cc"), []byte("b"), Cond{})
		st, err := openStorage(ctx, b, "", testSettle, func() time.Time { return now }, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		defer st.close()
		if got, _ := st.entry(sOrigin); got != cur {
			t.Fatalf("entry %+v, want the latest key's %+v", got, cur)
		}
		left := map[string]bool{}
		_ = b.List(ctx, indexDir, "", func(k, _ string) error { left[k] = true; return nil })
		if left[indexKey(old)] || !left[indexKey(cur)] || !left[indexKey(younger)] {
			t.Fatalf("keys left: %v", left)
		}
		if left[indexKey(young)] != st.shared { // a PUT may be in progress on a shared store
			t.Fatalf("a young older key: kept %v, on a shared store %v", left[indexKey(young)], st.shared)
		}
	}
	t.Run("dir", func(t *testing.T) {
		b, err := openDirBlobs(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		run(t, b)
	})
	t.Run("s3", func(t *testing.T) {
		m := needMinio(t)
		run(t, m.open(t, m.newBucket(t), "stale"))
	})
}

// faultBlobs is a store shared by replicas (a directory standing for a
// bucket in one process) whose index key writes fail while failIndex is set.
type faultBlobs struct {
	Blobs
	failIndex atomic.Bool
}

func (f *faultBlobs) Shared() bool { return true }

func (f *faultBlobs) Put(ctx context.Context, key string, data []byte, cond Cond) (string, error) {
	if f.failIndex.Load() && strings.HasPrefix(key, indexDir) {
		return "", errors.New("injected: the store refused the index key")
	}
	return f.Blobs.Put(ctx, key, data, cond)
}

// TestIndexFailsAfterFileStored: when the store fails a PUT's index key
// after its file is stored, the PUT has succeeded (the file is the new
// one, and every GET serves it); its pending key stays, and the next sweep
// indexes the file.
func TestIndexFailsAfterFileStored(t *testing.T) {
	ctx := context.Background()
	d, err := openDirBlobs(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fb := &faultBlobs{Blobs: d}
	clk := testutil.NewClock(time.Now())
	clock, advance := clk.Now, clk.Add
	st, err := openStorage(ctx, fb, "", testSettle, clock, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer st.close()
	ok := func([]byte) error { return nil }
	if _, _, _, err := st.put(ctx, sOrigin, []byte("v0\n"), 1, "", ok); err != nil {
		t.Fatal(err)
	}
	fb.failIndex.Store(true)
	if _, _, changed, err := st.put(ctx, sOrigin, []byte("v1\n"), 1, "", ok); err != nil || !changed {
		t.Fatalf("PUT whose index key fails: changed %v, %v; want it accepted (the file is stored)", changed, err)
	}
	if _, data, _, _ := st.read(ctx, sOrigin, func(string) bool { return false }); string(data) != "v1\n" {
		t.Fatalf("GET serves %q", data)
	}
	fb.failIndex.Store(false)
	advance(writeTimeout + 3*testSettle)
	st.list(ctx, time.Time{}) // a request: the replica refreshes and sweeps
	advance(2 * testSettle)
	if es := st.list(ctx, time.Time{}); len(es) != 1 || es[0].ETag != etagOf([]byte("v1\n")) {
		t.Fatalf("after the sweep the index is %+v", es)
	}
}
