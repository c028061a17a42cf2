package commons

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// blobsFactory returns a new, empty store for one test; the test closes it.
type blobsFactory func(t *testing.T) Blobs

// testBlobs is the conformance suite every Blobs backend runs (restic's
// backend tests are the model): what storage.go and peerstore.go rely on,
// hostile keys and interrupted writes included.
func testBlobs(t *testing.T, open blobsFactory) {
	cases := []struct {
		name string
		fn   func(*testing.T, Blobs)
	}{
		{"PutGetReplace", blobsPutGetReplace},
		{"Conditional", blobsConditional},
		{"Missing", blobsMissing},
		{"ListOrder", blobsListOrder},
		{"Since", blobsSince},
		{"HostileKeys", blobsHostileKeys},
		{"Large", blobsLarge},
		{"ConcurrentWriters", blobsConcurrentWriters},
		{"Interrupted", blobsInterrupted},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := open(t)
			defer func() {
				if err := b.Close(); err != nil {
					t.Error(err)
				}
			}()
			c.fn(t, b)
		})
	}
}

func mustGet(t *testing.T, b Blobs, key string) ([]byte, string) {
	t.Helper()
	data, ver, err := b.Get(context.Background(), key)
	if err != nil {
		t.Fatalf("Get %s: %v", key, err)
	}
	return data, ver
}

func mustPut(t *testing.T, b Blobs, key string, data []byte, cond Cond) string {
	t.Helper()
	ver, err := b.Put(context.Background(), key, data, cond)
	if err != nil {
		t.Fatalf("Put %s: %v", key, err)
	}
	if ver == "" {
		t.Fatalf("Put %s returned no version", key)
	}
	return ver
}

func blobsPutGetReplace(t *testing.T, b Blobs) {
	ctx := context.Background()
	v1 := mustPut(t, b, "commons/0123456789abcdef.jsonl", []byte("one\n"), Cond{})
	data, ver := mustGet(t, b, "commons/0123456789abcdef.jsonl")
	if string(data) != "one\n" || ver != v1 {
		t.Fatalf("Get = %q %s, want %q %s", data, ver, "one\n", v1)
	}
	if sv, err := b.Stat(ctx, "commons/0123456789abcdef.jsonl"); err != nil || sv != v1 {
		t.Fatalf("Stat = %s %v, want %s", sv, err, v1)
	}
	v2 := mustPut(t, b, "commons/0123456789abcdef.jsonl", []byte("two, longer\n"), Cond{})
	if v2 == v1 {
		t.Fatal("a replaced object kept its version")
	}
	if data, ver := mustGet(t, b, "commons/0123456789abcdef.jsonl"); string(data) != "two, longer\n" || ver != v2 {
		t.Fatalf("after replace Get = %q %s", data, ver)
	}
	// An empty object (an index key) is an object.
	mustPut(t, b, "index/empty", nil, Cond{})
	if data, _ := mustGet(t, b, "index/empty"); len(data) != 0 {
		t.Fatalf("empty object read back as %q", data)
	}
	if err := b.Delete(ctx, "commons/0123456789abcdef.jsonl"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.Get(ctx, "commons/0123456789abcdef.jsonl"); !errors.Is(err, ErrNotExist) {
		t.Fatalf("Get after Delete: %v, want ErrNotExist", err)
	}
}

func blobsConditional(t *testing.T, b Blobs) {
	ctx := context.Background()
	const k = "peers/0123456789abcdef.json"
	if _, err := b.Put(ctx, k, []byte("x"), Cond{IfMatch: "not-a-version"}); !errors.Is(err, ErrConflict) {
		t.Fatalf("IfMatch on an absent object: %v, want ErrConflict", err)
	}
	v1 := mustPut(t, b, k, []byte("first"), Cond{IfAbsent: true})
	if _, err := b.Put(ctx, k, []byte("second"), Cond{IfAbsent: true}); !errors.Is(err, ErrConflict) {
		t.Fatalf("IfAbsent on a stored object: %v, want ErrConflict", err)
	}
	v2 := mustPut(t, b, k, []byte("second"), Cond{IfMatch: v1})
	if _, err := b.Put(ctx, k, []byte("stale"), Cond{IfMatch: v1}); !errors.Is(err, ErrConflict) {
		t.Fatalf("IfMatch on an old version: %v, want ErrConflict", err)
	}
	if data, ver := mustGet(t, b, k); string(data) != "second" || ver != v2 {
		t.Fatalf("a refused Put changed the object: %q %s", data, ver)
	}
	// IfMatch of the version Get returns holds (S3's version is the MD5
	// of the bytes, a directory's the file's inode, size and mtime).
	_, cur := mustGet(t, b, k)
	mustPut(t, b, k, []byte("third"), Cond{IfMatch: cur})
}

func blobsMissing(t *testing.T, b Blobs) {
	ctx := context.Background()
	if _, _, err := b.Get(ctx, "commons/ffffffffffffffff.jsonl"); !errors.Is(err, ErrNotExist) {
		t.Errorf("Get of nothing: %v, want ErrNotExist", err)
	}
	if _, err := b.Stat(ctx, "commons/ffffffffffffffff.jsonl"); !errors.Is(err, ErrNotExist) {
		t.Errorf("Stat of nothing: %v, want ErrNotExist", err)
	}
	if err := b.Delete(ctx, "commons/ffffffffffffffff.jsonl"); err != nil {
		t.Errorf("Delete of nothing: %v", err)
	}
	n := 0
	if err := b.List(ctx, "nothing/", "", func(string, string) error { n++; return nil }); err != nil || n != 0 {
		t.Errorf("List of an empty dir: %d keys, %v", n, err)
	}
}

func blobsListOrder(t *testing.T, b Blobs) {
	ctx := context.Background()
	var want []string
	for i := range 40 {
		want = append(want, fmt.Sprintf("index/%03d-%s", i*7%40, strings.Repeat("z", i%3)))
	}
	for _, i := range rand.Perm(len(want)) {
		mustPut(t, b, want[i], nil, Cond{})
	}
	mustPut(t, b, "indexes/not-listed", nil, Cond{}) // shares the first letters, not the dir
	mustPut(t, b, "commons/not-listed", nil, Cond{})
	slices.Sort(want)
	list := func(after string) []string {
		var got []string
		if err := b.List(ctx, "index/", after, func(key, ver string) error {
			if ver == "" {
				t.Errorf("List gave %s no version", key)
			}
			got = append(got, key)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := list(""); !slices.Equal(got, want) {
		t.Fatalf("List = %v\nwant %v", got, want)
	}
	if got := list(want[9]); !slices.Equal(got, want[10:]) {
		t.Fatalf("List after %s = %v\nwant %v", want[9], got, want[10:])
	}
	if got := list("index/~"); len(got) != 0 {
		t.Fatalf("List after the last = %v", got)
	}
	stop := errors.New("stop")
	n := 0
	if err := b.List(ctx, "index/", "", func(string, string) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
		t.Fatalf("an error of fn: %v after %d keys, want it returned after 1", err, n)
	}
	// ListSizes: the same keys, each with its size.
	mustPut(t, b, "commons/sized-a", []byte("12345"), Cond{})
	mustPut(t, b, "commons/sized-b", nil, Cond{})
	sizes := map[string]int64{}
	if err := b.ListSizes(ctx, "commons/", func(key string, size int64) error { sizes[key] = size; return nil }); err != nil {
		t.Fatal(err)
	}
	if want := map[string]int64{"commons/not-listed": 0, "commons/sized-a": 5, "commons/sized-b": 0}; !maps.Equal(sizes, want) {
		t.Fatalf("ListSizes = %v, want %v", sizes, want)
	}
	if err := b.ListSizes(ctx, "../", func(string, int64) error { return nil }); !errors.Is(err, errBadKey) {
		t.Errorf("ListSizes of a hostile prefix: %v, want errBadKey", err)
	}
}

// blobsSince is `?since` as storage.go asks it: index keys by time, listed
// from the key of a time.
func blobsSince(t *testing.T, b Blobs) {
	ctx := context.Background()
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for i := range 20 {
		e := entry{Origin: fmt.Sprintf("%016x", i*977), Updated: base.Add(time.Duration(i) * time.Millisecond), Records: i + 1,
			ETag: etagOf([]byte(strconv.Itoa(i)))}
		mustPut(t, b, indexKey(e), nil, Cond{})
	}
	since := base.Add(12 * time.Millisecond)
	var got []entry
	if err := b.List(ctx, indexDir, indexDir+stampKey(since)+".~", func(key, _ string) error {
		e, ok := parseIndexKey(key)
		if !ok {
			t.Fatalf("listed key %q does not parse", key)
		}
		got = append(got, e)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 7 || !got[0].Updated.Equal(base.Add(13*time.Millisecond)) {
		t.Fatalf("since %s: %d entries, first %v; want 7 from +13ms", since, len(got), got)
	}
}

// hostileKeys are keys no backend may take: each would name a path
// outside the store, a hidden or temp file, or something S3 and a file
// system read differently.
var hostileKeys = []string{
	"", "a", "/x", "commons", "commons/", "/commons/x", "commons/../x", "../commons/x", "commons/..", "commons/.",
	"commons/.hidden", "commons/.tmp-123", "commons/a/b", "commons/a/../../x", "COMMONS/x", "commons/x\x00y",
	"commons/x y", `commons/x\y`, `commons\..\x`, "commons/%2e%2e", "commons/" + strings.Repeat("a", maxKeyName+1),
	"commons/é", "commons/x\n", strings.Repeat("a", 33) + "/x", "commons//x",
}

func blobsHostileKeys(t *testing.T, b Blobs) {
	ctx := context.Background()
	for _, k := range hostileKeys {
		if _, err := b.Put(ctx, k, []byte("x"), Cond{}); !errors.Is(err, errBadKey) {
			t.Errorf("Put %q: %v, want errBadKey", k, err)
		}
		if _, _, err := b.Get(ctx, k); !errors.Is(err, errBadKey) {
			t.Errorf("Get %q: %v, want errBadKey", k, err)
		}
		if _, err := b.Stat(ctx, k); !errors.Is(err, errBadKey) {
			t.Errorf("Stat %q: %v, want errBadKey", k, err)
		}
		if err := b.Delete(ctx, k); !errors.Is(err, errBadKey) {
			t.Errorf("Delete %q: %v, want errBadKey", k, err)
		}
	}
	for _, p := range []string{"", "commons", "../", "/", "commons/x/", "commons/../", "COMMONS/"} {
		if err := b.List(ctx, p, "", func(string, string) error { return nil }); !errors.Is(err, errBadKey) {
			t.Errorf("List %q: %v, want errBadKey", p, err)
		}
	}
	// The longest name taken is taken whole, and a non-hex name is a name.
	long := "commons/" + strings.Repeat("b", maxKeyName)
	mustPut(t, b, long, []byte("long"), Cond{})
	if data, _ := mustGet(t, b, long); string(data) != "long" {
		t.Fatalf("the longest key read back %q", data)
	}
	mustPut(t, b, "commons/NOT-hex_name.v2", []byte("n"), Cond{})
}

func blobsLarge(t *testing.T, b Blobs) {
	for _, n := range []int{256 << 10, 1 << 20} {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(i*31 + i>>8)
		}
		key := fmt.Sprintf("commons/large-%d", n)
		mustPut(t, b, key, data, Cond{IfAbsent: true})
		if got, _ := mustGet(t, b, key); !bytes.Equal(got, data) {
			t.Fatalf("%d bytes read back as %d, not the same", n, len(got))
		}
	}
}

// blobsConcurrentWriters: writers on one key, each a read-modify-write
// conditional on the version read, retrying a lost round: no update is
// lost, so the counter ends at the number of increments.
func blobsConcurrentWriters(t *testing.T, b Blobs) {
	ctx := context.Background()
	const key, writers, rounds = "peers/counter", 8, 6
	mustPut(t, b, key, []byte("0"), Cond{IfAbsent: true})
	var wg sync.WaitGroup
	var conflicts sync.Map
	for w := range writers {
		wg.Go(func() {
			for range rounds {
				for {
					data, ver, err := b.Get(ctx, key)
					if err != nil {
						t.Error(err)
						return
					}
					n, _ := strconv.Atoi(string(data))
					_, err = b.Put(ctx, key, []byte(strconv.Itoa(n+1)), Cond{IfMatch: ver})
					if errors.Is(err, ErrConflict) {
						conflicts.Store(w, true)
						continue
					}
					if err != nil {
						t.Error(err)
						return
					}
					break
				}
			}
		})
	}
	wg.Wait()
	if data, _ := mustGet(t, b, key); string(data) != strconv.Itoa(writers*rounds) {
		t.Fatalf("counter = %s, want %d: an update was lost", data, writers*rounds)
	}
}

// blobsInterrupted cancels Puts of a large object at random moments: the
// object read afterwards is always the old one or the new one whole.
func blobsInterrupted(t *testing.T, b Blobs) {
	const key = "commons/interrupted"
	old := bytes.Repeat([]byte("old "), 64<<10)
	mustPut(t, b, key, old, Cond{})
	for i := range 12 {
		next := bytes.Repeat([]byte{byte('a' + i)}, 512<<10)
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rand.IntN(3000))*time.Microsecond)
		_, err := b.Put(ctx, key, next, Cond{})
		cancel()
		got, _ := mustGet(t, b, key)
		if !bytes.Equal(got, old) && !bytes.Equal(got, next) {
			t.Fatalf("after an interrupted Put (%v) the object is neither old nor new: %d bytes", err, len(got))
		}
		old = got
	}
}

func TestDirBlobs(t *testing.T) {
	testBlobs(t, func(t *testing.T) Blobs {
		b, err := openDirBlobs(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return b
	})
	// No hostile key wrote anything beside the store's directory.
	parent := t.TempDir()
	b, err := openDirBlobs(filepath.Join(parent, "store"))
	if err != nil {
		t.Fatal(err)
	}
	blobsHostileKeys(t, b)
	ents, _ := os.ReadDir(parent)
	if len(ents) != 1 || ents[0].Name() != "store" {
		t.Fatalf("hostile keys left %v beside the store", ents)
	}
}
