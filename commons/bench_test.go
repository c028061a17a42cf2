package commons

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/remem/remem/internal/testutil"
	"github.com/remem/remem/protocol"
)

// put1000 is two different 1,000-lesson files of one origin (a PUT of the
// same bytes again would skip the write): the same records in reverse
// order, so each may replace the other without a rollback.
var (
	put1000Once sync.Once
	put1000     [2][]byte
)

func put1000Files(b *testing.B) [2][]byte {
	put1000Once.Do(func() {
		lines := lessonLines(b, "bench", 1000, "p0")
		put1000[0] = testutil.JoinLines(lines...)
		reversed := slices.Clone(lines)
		slices.Reverse(reversed)
		put1000[1] = testutil.JoinLines(reversed...)
	})
	return put1000
}

// bareVerify1000 does what BenchmarkBareVerify1000 measures once: 1,000
// ed25519.Verify calls over the signed bytes of the lines of body.
type bareCase struct {
	pub      ed25519.PublicKey
	msg, sig [][]byte
}

func newBareCase(b *testing.B, body []byte) bareCase {
	var c bareCase
	for _, l := range protocol.SplitLines(body) {
		rec, err := protocol.Verify(l.Bytes, time.Now())
		if err != nil {
			b.Fatal(err)
		}
		c.pub, _ = hex.DecodeString(rec.Key)
		i := bytes.Index(l.Bytes, []byte(`,"sig":"`))
		sig, _ := hex.DecodeString(string(l.Bytes[i+8 : i+8+128]))
		msg := append(append([]byte{}, l.Bytes[:i]...), l.Bytes[i+8+128+1:]...)
		if !ed25519.Verify(c.pub, msg, sig) {
			b.Fatal("the cut does not give the signed bytes")
		}
		c.msg, c.sig = append(c.msg, msg), append(c.sig, sig)
	}
	return c
}

func (c bareCase) run(b *testing.B) {
	for i := range c.msg {
		if !ed25519.Verify(c.pub, c.msg[i], c.sig[i]) {
			b.Fatal("bad signature")
		}
	}
}

// BenchmarkBareVerify1000 is the baseline: 1,000 bare ed25519.Verify calls
// over messages of the size of the lines a 1,000-record PUT carries, on
// one core.
func BenchmarkBareVerify1000(b *testing.B) {
	c := newBareCase(b, put1000Files(b)[0])
	for b.Loop() {
		c.run(b)
	}
}

// BenchmarkPut1000 is the server-side handling of a PUT of a 1,000-lesson
// file (auth, body, verifying every line, temp file + fsync + rename + dir
// fsync, index write), calling the handler directly. It also times the
// bare baseline in the same run and reports the ratio.
func BenchmarkPut1000(b *testing.B) {
	files := put1000Files(b)
	bare := newBareCase(b, files[0])
	s, err := NewServer(context.Background(), ServerConfig{DataDir: b.TempDir(), Tokens: []string{testToken},
		MaxFileBytes: 1 << 20, Registry: prometheus.NewRegistry()})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	origin := testutil.Identity(b, "bench").Origin()
	put := func(body []byte) {
		req := httptest.NewRequest(http.MethodPut, "/commons/"+origin+".jsonl", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+testToken)
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		if w.Code != 200 && w.Code != 201 {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	}
	put(files[1])
	b.SetBytes(int64(len(files[0])))
	// The baseline runs interleaved with the PUTs (its time excluded from
	// ns/op), so both see the same machine load.
	// CPU time (the process's, from getrusage) is reported as well: on a
	// shared machine the wall-clock ratio moves with the load.
	var putTime, bareTime, putCPU, bareCPU time.Duration
	i := 0
	for b.Loop() {
		t, c := time.Now(), testutil.CPUTime()
		put(files[i%2])
		putTime += time.Since(t)
		putCPU += testutil.CPUTime() - c
		i++
		b.StopTimer()
		t, c = time.Now(), testutil.CPUTime()
		bare.run(b)
		bareTime += time.Since(t)
		bareCPU += testutil.CPUTime() - c
		b.StartTimer()
	}
	b.ReportMetric(float64(putTime)/float64(bareTime), "x-bare-verify")
	b.ReportMetric(float64(putCPU)/float64(bareCPU), "cpu-x-bare")
	b.ReportMetric(float64(bareTime.Microseconds())/float64(i), "bare-µs/op")
}

// The pull fixture: 1,000 origins x 100 lessons, written straight into a
// data directory once (signing 100,000 lessons takes a while).
var (
	pullOnce    sync.Once
	pullDir     string
	pullRecords int
	pullErr     error
)

func pullFixture(b *testing.B) string {
	pullOnce.Do(func() {
		const origins, per = 1000, 100
		pullDir, pullErr = os.MkdirTemp("", "remem-bench-pull-")
		if pullErr != nil {
			return
		}
		if pullErr = os.MkdirAll(filepath.Join(pullDir, "commons"), 0o755); pullErr != nil {
			return
		}
		var next atomic.Int64
		var wg sync.WaitGroup
		var mu sync.Mutex
		for range 8 {
			wg.Go(func() {
				for {
					o := int(next.Add(1)) - 1
					if o >= origins {
						return
					}
					id := testutil.Identity(b, fmt.Sprintf("pull%d", o))
					var buf bytes.Buffer
					for i := range per {
						rec, err := protocol.SignLesson(id, protocol.LessonDraft{Kind: protocol.KindError,
							Text: fmt.Sprintf("the nightly build of service %d fails when step %d runs before the cache warms up", o, i),
							Seen: 1, Strength: 0.5, Updated: recTime})
						if err != nil {
							mu.Lock()
							pullErr = err
							mu.Unlock()
							return
						}
						buf.Write(rec.Raw)
						buf.WriteByte('\n')
					}
					if err := os.WriteFile(filepath.Join(pullDir, "commons", id.Origin()+".jsonl"), buf.Bytes(), 0o644); err != nil {
						mu.Lock()
						pullErr = err
						mu.Unlock()
						return
					}
				}
			})
		}
		wg.Wait()
		pullRecords = origins * per
	})
	if pullErr != nil {
		b.Fatal(pullErr)
	}
	return pullDir
}

// sink is a fresh Deliver target that keeps what it is given, as a home's
// store would.
type sink struct {
	recs map[protocol.RecordKey]*protocol.Record
}

func (k *sink) deliver(_ string, recs []*protocol.Record) error {
	for _, r := range recs {
		if old, ok := k.recs[r.SetKey()]; !ok || protocol.Supersedes(r, old) {
			k.recs[r.SetKey()] = r
		}
	}
	return nil
}

// BenchmarkPull pulls 1,000 origins x 100 records from a commons on a
// loopback port into a fresh sink ("first"), then pulls again when nothing
// changed ("again"), reporting records/s and the bytes received.
func BenchmarkPull(b *testing.B) {
	dir := pullFixture(b)
	s, err := NewServer(context.Background(), ServerConfig{DataDir: dir, Tokens: []string{testToken}, Registry: prometheus.NewRegistry()})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	hs := httptest.NewServer(s)
	defer hs.Close()
	self := testutil.Identity(b, "puller").Origin()
	state := &MemoryState{}
	// Count what arrives on the wire too (headers included), not only the
	// bodies PullReport.Bytes counts.
	var wire atomic.Int64
	tr := hs.Client().Transport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 16
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		return &countConn{Conn: c, n: &wire}, err
	}
	hc := &http.Client{Transport: tr}

	b.Run("first", func(b *testing.B) {
		var recs int
		var bytes, wireBytes int64
		cpu0 := testutil.CPUTime()
		for b.Loop() {
			st := &MemoryState{}
			k := &sink{recs: map[protocol.RecordKey]*protocol.Record{}}
			c := &Client{BaseURL: hs.URL, HTTP: hc, State: st}
			wire.Store(0)
			rep, err := c.Pull(context.Background(), self, time.Now(), k.deliver)
			if err != nil || len(k.recs) != pullRecords {
				b.Fatalf("pull: %v, %d records", err, len(k.recs))
			}
			recs += len(k.recs)
			bytes, wireBytes = rep.Bytes, wire.Load()
			*state = MemoryState{s: st.s}
		}
		b.ReportMetric(float64(recs)/b.Elapsed().Seconds(), "records/s")
		// Client and server share the process: this is records per CPU
		// second of both, a figure the machine's load does not move.
		b.ReportMetric(float64(recs)/(testutil.CPUTime()-cpu0).Seconds(), "records/cpu-s")
		b.ReportMetric(float64(bytes), "bytes/first-pull")
		b.ReportMetric(float64(wireBytes), "wire-bytes/first-pull")
	})
	b.Run("again", func(b *testing.B) {
		var bytes, wireBytes int64
		for b.Loop() {
			k := &sink{recs: map[protocol.RecordKey]*protocol.Record{}}
			c := &Client{BaseURL: hs.URL, HTTP: hc, State: state}
			wire.Store(0)
			rep, err := c.Pull(context.Background(), self, time.Now(), k.deliver)
			if err != nil || len(k.recs) != 0 || rep.Fetched != 0 {
				b.Fatalf("pull again: %v %+v", err, rep)
			}
			bytes, wireBytes = rep.Bytes, wire.Load()
		}
		b.ReportMetric(float64(bytes), "bytes/again-pull")
		b.ReportMetric(float64(wireBytes), "wire-bytes/again-pull")
	})
}

// countConn counts the bytes read from a connection.
type countConn struct {
	net.Conn
	n *atomic.Int64
}

func (c *countConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.n.Add(int64(n))
	return n, err
}
