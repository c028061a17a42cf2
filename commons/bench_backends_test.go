package commons

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/remem/remem/internal/testutil"
	"github.com/remem/remem/protocol"
)

// BenchmarkBackends measures each storage backend side by side in one
// run, through a real server on a loopback port (for S3, a MinIO on
// loopback): PUT and GET of a 20-record file from 16 clients at once, and
// a first pull of 10,000 origins by one client. Run:
//
//	go test ./commons -run '^$' -bench Backends -benchtime 3s
//
// The numbers in the README's "Running a public commons" come from it.
func BenchmarkBackends(b *testing.B) {
	backends := []struct {
		name string
		open func(b *testing.B) Blobs
	}{
		{"dir", func(b *testing.B) Blobs {
			d, err := openDirBlobs(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			return d
		}},
		{"s3", func(b *testing.B) Blobs {
			m := needMinio(b)
			return m.open(b, m.newBucket(b), "bench")
		}},
	}
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			b.Run("put", func(b *testing.B) { benchPut(b, be.open(b)) })
			b.Run("get", func(b *testing.B) { benchGet(b, be.open(b)) })
			b.Run("pull10k", func(b *testing.B) { benchPull10k(b, be.open(b)) })
		})
	}
}

// benchServer serves a commons on store without rate limits.
func benchServer(b *testing.B, store Blobs) *httptest.Server {
	s, err := NewServer(context.Background(), ServerConfig{Store: store, Tokens: []string{testToken}, Registry: prometheus.NewRegistry(),
		Logger: slog.New(slog.DiscardHandler), IndexSettle: testSettle})
	if err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(s)
	b.Cleanup(func() { hs.Close(); s.Close() })
	return hs
}

const benchClients = 16

// benchFiles is, per client, an origin and two 20-record files of it
// that may replace each other (the same records in reverse order).
func benchFiles(b *testing.B) (origins []string, files [][2][]byte) {
	for i := range benchClients {
		name := fmt.Sprintf("bput%d", i)
		lines := lessonLines(b, name, 20, "b")
		rev := slices.Clone(lines)
		slices.Reverse(rev)
		origins = append(origins, testutil.Identity(b, name).Origin())
		files = append(files, [2][]byte{testutil.JoinLines(lines...), testutil.JoinLines(rev...)})
	}
	return origins, files
}

func benchPut(b *testing.B, store Blobs) {
	hs := benchServer(b, store)
	origins, files := benchFiles(b)
	c := hs.Client()
	var next atomic.Int64
	b.SetParallelism((benchClients + 1) / 2) // 16 clients on 2 cores
	b.SetBytes(int64(len(files[0][0])))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := int(next.Add(1)-1) % benchClients
		for n := 0; pb.Next(); n++ {
			if code := benchDo(b, c, http.MethodPut, hs.URL+"/commons/"+origins[i]+".jsonl", files[i][n%2]); code != 200 && code != 201 {
				b.Errorf("PUT: %d", code)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "puts/s")
}

func benchGet(b *testing.B, store Blobs) {
	hs := benchServer(b, store)
	origins, files := benchFiles(b)
	c := hs.Client()
	for i := range origins {
		if code := benchDo(b, c, http.MethodPut, hs.URL+"/commons/"+origins[i]+".jsonl", files[i][0]); code != 201 && code != 200 {
			b.Fatalf("PUT: %d", code)
		}
	}
	var next atomic.Int64
	b.SetParallelism((benchClients + 1) / 2)
	b.SetBytes(int64(len(files[0][0])))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := int(next.Add(1)-1) % benchClients
		for pb.Next() {
			if code := benchDo(b, c, http.MethodGet, hs.URL+"/commons/"+origins[i]+".jsonl", nil); code != 200 {
				b.Errorf("GET: %d", code)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "gets/s")
}

func benchDo(b *testing.B, c *http.Client, method, url string, body []byte) int {
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := c.Do(req)
	if err != nil {
		b.Error(err)
		return 0
	}
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// pull10k is 10,000 origins' one-lesson files, signed once per run.
var (
	pull10kOnce  sync.Once
	pull10kFiles map[string][]byte
)

func pull10kFixture(b *testing.B) map[string][]byte {
	pull10kOnce.Do(func() {
		const n = 10000
		out := make([]map[string][]byte, 8)
		var wg sync.WaitGroup
		for w := range out {
			out[w] = map[string][]byte{}
			wg.Go(func() {
				for o := w; o < n; o += len(out) {
					id := testutil.Identity(b, fmt.Sprintf("p10k-%d", o))
					rec, err := protocol.SignLesson(id, protocol.LessonDraft{Kind: protocol.KindError,
						Text: fmt.Sprintf("the release job of service %d stalls when the artifact store is full", o),
						Seen: 1, Strength: 0.5, Updated: recTime})
					if err != nil {
						b.Error(err)
						return
					}
					out[w][id.Origin()] = append(rec.Raw, '\n')
				}
			})
		}
		wg.Wait()
		pull10kFiles = map[string][]byte{}
		for _, m := range out {
			for o, f := range m {
				pull10kFiles[o] = f
			}
		}
	})
	return pull10kFiles
}

// benchPull10k stores 10,000 files as a server would (file, then index
// key), then times first pulls of them all through a server on store.
func benchPull10k(b *testing.B, store Blobs) {
	files := pull10kFixture(b)
	ctx := context.Background()
	stamp := time.Now().Add(-time.Minute)
	var wg sync.WaitGroup
	work := make(chan string)
	for range 32 {
		wg.Go(func() {
			for o := range work {
				if _, err := store.Put(ctx, fileKey(o), files[o], Cond{}); err != nil {
					b.Error(err)
					continue
				}
				e := entry{Origin: o, Updated: stamp, Records: 1, ETag: etagOf(files[o])}
				if _, err := store.Put(ctx, indexKey(e), nil, Cond{}); err != nil {
					b.Error(err)
				}
			}
		})
	}
	for o := range files {
		work <- o
	}
	close(work)
	wg.Wait()
	hs := benchServer(b, store)
	self := testutil.Identity(b, "puller").Origin()
	b.ResetTimer()
	for b.Loop() {
		k := &sink{recs: map[protocol.RecordKey]*protocol.Record{}}
		c := &Client{BaseURL: hs.URL, HTTP: hs.Client(), State: &MemoryState{}}
		rep, err := c.Pull(ctx, self, time.Now(), k.deliver)
		if err != nil || len(k.recs) != len(files) {
			b.Fatalf("pull: %v, %d records of %d (%+v)", err, len(k.recs), len(files), rep)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/pull")
	b.ReportMetric(float64(len(files)*b.N)/b.Elapsed().Seconds(), "origins/s")
}
