package commons

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/remem/remem/internal/testutil"
)

// TestReplicaKilledMidPut: replica A is a server process on a bucket, B
// one in this process on the same bucket. While clients PUT to A in a loop
// and read through B, A is killed (SIGKILL), several times over. Through
// every kill B serves each file whole, old or new; after it, the index
// names the stored file or a pending key says a PUT died (a sweep then
// indexes it); a client's retry of its unanswered PUT, through B, indexes
// it at once; no file goes back.
func TestReplicaKilledMidPut(t *testing.T) {
	m := needMinio(t)
	bucket := m.newBucket(t)
	url := m.url(bucket, "k")
	b := newReplica(t, m, bucket, "k")
	store := m.open(t, bucket, "k")
	defer store.Close()

	const origins, nv = 3, 40
	ovs := newOriginVersions(t, "rkill", origins, nv)
	// read GETs ov's file through B: the version it is, -1 for none yet.
	// floor is the version acknowledged before the GET was sent: a 404 is
	// no loss when nothing was (a PUT acknowledged while the GET was on its
	// way may not be in its answer).
	read := func(ov *originVersions, floor int64) (int, error) {
		code, h, body := b.get(t, "/commons/"+ov.origin+".jsonl")
		if code == http.StatusNotFound && floor < 0 {
			return -1, nil
		}
		k, ok := ov.byTag[etagOf([]byte(body))]
		if code != http.StatusOK || !ok || h.Get("ETag") != etagOf([]byte(body)) {
			return 0, fmt.Errorf("GET %s through B: %d, %d bytes, ETag %s: not one whole version", ov.origin, code, len(body), h.Get("ETag"))
		}
		return k, nil
	}
	readWhole := func(ov *originVersions) int {
		k, err := read(ov, ov.acked.Load())
		if err != nil || k < 0 {
			t.Fatalf("%v (version %d)", err, k)
		}
		return k
	}

	cycles := 4
	if testing.Short() || raceEnabled {
		cycles = 2
	}
	next := 0 // the version each origin's next PUT sends, growing across cycles
	for cycle := range cycles {
		cmd, base := startChild(t, url, m.env()...)
		var sent atomic.Int64
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for _, ov := range ovs {
			wg.Go(func() { // a client PUTting newer and newer versions to A
				for k := next; k < nv; k++ {
					code, err := putRaw(base, ov.origin, ov.vs[k])
					if err != nil {
						return // A is gone
					}
					if code != http.StatusOK && code != http.StatusCreated {
						t.Errorf("PUT v%d of %s through A: %d", k+1, ov.origin, code)
						return
					}
					sent.Add(1)
					ov.ack(k)
				}
			})
			wg.Go(func() { // a reader through B
				for {
					select {
					case <-stop:
						return
					default:
					}
					floor := ov.acked.Load()
					k, err := read(ov, floor)
					if err != nil {
						t.Error(err)
						return
					}
					if int64(k) < floor {
						t.Errorf("%s through B: v%d after v%d was acknowledged", ov.origin, k+1, floor+1)
						return
					}
				}
			})
		}
		deadline := time.Now().Add(20 * time.Second)
		for sent.Load() < int64(3+2*cycle) && time.Now().Before(deadline) {
			time.Sleep(2 * time.Millisecond)
		}
		time.Sleep(time.Duration(3+5*cycle) * time.Millisecond) // land inside a PUT
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		close(stop)
		wg.Wait()

		// After the kill: each file whole, never older than acknowledged;
		// the index names it, or a pending key marks the PUT that died.
		ctx := context.Background()
		pending := map[string]bool{}
		if err := store.List(ctx, pendingDir, "", func(key, _ string) error {
			if o, _, ok := parsePendingKey(key); ok {
				pending[o] = true
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(testSettle + 100*time.Millisecond)
		_, _, body := b.get(t, "/commons/index")
		var idx []IndexEntry
		if err := json.Unmarshal([]byte(body), &idx); err != nil {
			t.Fatal(err)
		}
		named := map[string]string{}
		for _, e := range idx {
			named[e.Origin] = e.ETag
		}
		top := 0
		for _, ov := range ovs {
			k := readWhole(ov)
			if int64(k) < ov.acked.Load() {
				t.Fatalf("cycle %d: %s is v%d, v%d was acknowledged", cycle, ov.origin, k+1, ov.acked.Load()+1)
			}
			if named[ov.origin] != etagOf(ov.vs[k]) && !pending[ov.origin] {
				t.Fatalf("cycle %d: %s is stored as v%d, the index names %s, and no pending key marks a PUT that died", cycle, ov.origin, k+1, named[ov.origin])
			}
			// The client did not hear back: it sends the same file again,
			// through B, which indexes it if it was not.
			if code, err := putRaw(b.URL, ov.origin, ov.vs[k]); err != nil || code != http.StatusOK {
				t.Fatalf("retry of v%d of %s through B: %d %v", k+1, ov.origin, code, err)
			}
			top = max(top, k+1)
		}
		want := map[string]string{}
		for _, ov := range ovs {
			want[ov.origin] = etagOf(ov.vs[readWhole(ov)])
		}
		indexOf(t, b, "", want)
		next = min(top, nv-1)
		t.Logf("cycle %d: %d PUTs answered before the kill; pending keys %d", cycle, sent.Load(), len(pending))
	}
}

// putRaw PUTs body as origin's file to the commons at base; an error is
// a request that got no answer (a killed server).
func putRaw(base, origin string, body []byte) (int, error) {
	req, err := http.NewRequest(http.MethodPut, base+"/commons/"+origin+".jsonl", bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := killClient.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

var killClient = &http.Client{Timeout: 10 * time.Second}

// TestSweepIndexesDiedPut: a PUT that stored its file and died before its
// index key (a pending key left) is indexed by a replica that sweeps, once
// the pending key is older than any PUT in progress could be: a replica
// that starts, or one that runs and answers an index request; on a
// directory, at the next start.
func TestSweepIndexesDiedPut(t *testing.T) {
	o := testutil.Identity(t, "sweep").Origin()
	vs := growing(t, "sweep", 2)
	run := func(t *testing.T, open func() Blobs, restart bool) {
		ctx := context.Background()
		clk := testutil.NewClock(time.Now())
		clock, advance := clk.Now, clk.Add
		st, err := openStorage(ctx, open(), "", testSettle, clock, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, _, err := st.put(ctx, o, vs[0], 1, "", func([]byte) error { return nil }); err != nil {
			t.Fatal(err)
		}
		// The PUT that dies: pending key, then the file, then nothing.
		if _, err := st.b.Put(ctx, pendingKey(o, clock()), nil, Cond{}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.b.Put(ctx, fileKey(o), vs[1], Cond{}); err != nil {
			t.Fatal(err)
		}
		advance(writeTimeout + 3*testSettle)
		if restart {
			st.close()
			if st, err = openStorage(ctx, open(), "", testSettle, clock, slog.New(slog.DiscardHandler)); err != nil {
				t.Fatal(err)
			}
		}
		defer st.close()
		st.list(ctx, time.Time{}) // the request that sweeps, on a running replica
		advance(2 * testSettle)
		es := st.list(ctx, time.Time{})
		if len(es) != 1 || es[0].ETag != etagOf(vs[1]) || es[0].Records != 2 {
			t.Fatalf("after the sweep the index is %+v, want the stored file", es)
		}
		var left []string
		_ = st.b.List(ctx, pendingDir, "", func(k, _ string) error { left = append(left, k); return nil })
		if len(left) != 0 {
			t.Fatalf("pending keys left: %v", left)
		}
	}
	t.Run("dir", func(t *testing.T) {
		dir := t.TempDir()
		run(t, func() Blobs {
			b, err := openDirBlobs(dir)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}, true)
	})
	for _, restart := range []bool{true, false} {
		t.Run(fmt.Sprintf("s3/restart=%v", restart), func(t *testing.T) {
			m := needMinio(t)
			bucket := m.newBucket(t)
			run(t, func() Blobs { return m.open(t, bucket, "sweep") }, restart)
		})
	}
}
