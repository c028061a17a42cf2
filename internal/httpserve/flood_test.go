package httpserve

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/remem/remem/internal/httpserve/httpflood"
	"github.com/remem/remem/internal/testutil"
)

// nodeLike are the node's API limits (node.DefaultAPILimits), which this
// package cannot import.
func nodeLike() Limits {
	return Limits{ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 60 * time.Second,
		IdleTimeout: 60 * time.Second, CrowdedTimeout: 2 * time.Second, MaxHeaderBytes: 64 << 10, MaxConns: 256,
		ShutdownGrace: 5 * time.Second}
}

// echo answers GET with "ok" and POST with its body read whole.
var echo = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		_, _ = io.WriteString(w, "ok")
		return
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	_, _ = fmt.Fprintf(w, "echo %s", b)
})

// serveFor serves h with l on loopback until the test ends and returns the
// address; Serve must then return nil.
func serveFor(tb testing.TB, h http.Handler, l Limits) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, h, l, nil) }()
	tb.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				tb.Errorf("Serve: %v", err)
			}
		case <-time.After(30 * time.Second):
			tb.Errorf("Serve did not return 30 s after its context ended")
		}
	})
	return ln.Addr().String()
}

// A flood is what an attacker on this machine can throw at a server whose
// MaxConns is 256; it returns once the flood holds its connections.
type flood struct {
	name  string
	start func(tb testing.TB, f *httpflood.Flood, addr string)
}

// slowBody starts a POST announcing 1,000 bytes of body and sends 8.
func slowBody(addr, path string) string {
	return fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"kind\":", path, addr)
}

// floods are the (1,500 idle keep-alive connections and 300 slow
// bodies) and the attacks a server that drops idle connections at the cap
// must also hold against.
var floods = []flood{
	{"1500 idle and 300 slow bodies", func(tb testing.TB, f *httpflood.Flood, addr string) {
		n, err := f.Idle(1500, fmt.Sprintf("GET / HTTP/1.1\r\nHost: %s\r\n\r\n", addr), "", 10*time.Second)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Logf("%d of 1500 idle connections answered", n)
		if err := f.SlowBodies(300, slowBody(addr, "/")); err != nil {
			tb.Fatal(err)
		}
	}},
	{"1500 idle connections that then send one byte", func(tb testing.TB, f *httpflood.Flood, addr string) {
		n, err := f.Idle(1500, fmt.Sprintf("GET / HTTP/1.1\r\nHost: %s\r\n\r\n", addr), "G", 10*time.Second)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Logf("%d of 1500 idle connections answered", n)
		time.Sleep(time.Second) // the honest requests come once the server has read each byte
	}},
	{"1500 slow headers, a byte a second", func(tb testing.TB, f *httpflood.Flood, addr string) {
		f.KeepSlowHeaders(1500, time.Second)
		testutil.Eventually(tb, 30*time.Second, "1500 slow-header connections", func() bool { return f.Held() >= 1500 })
	}},
	{"300 half-open bodies, started again when cut", func(tb testing.TB, f *httpflood.Flood, addr string) {
		f.KeepSlowBodies(300, slowBody(addr, "/"))
		testutil.Eventually(tb, 30*time.Second, "300 slow bodies", func() bool { return f.Held() >= 300 })
	}},
	{"connections opened and closed at once", func(tb testing.TB, f *httpflood.Flood, addr string) {
		f.Churn(4)
		testutil.Eventually(tb, 30*time.Second, "2000 connections opened and closed", func() bool { return f.Opened() >= 2000 })
	}},
}

// honest sends request i: a GET, or a POST with a whole body, each on a
// fresh connection, and checks its answer.
func honest(addr string) func(c *http.Client, i int) error {
	return func(c *http.Client, i int) error {
		if i%2 == 0 {
			resp, err := c.Get("http://" + addr + "/")
			return httpflood.Expect(resp, err, http.StatusOK, "ok")
		}
		body := fmt.Sprintf(`{"honest":%d}`, i)
		resp, err := c.Post("http://"+addr+"/", "application/json", strings.NewReader(body))
		return httpflood.Expect(resp, err, http.StatusOK, "echo "+body)
	}
}

// TestHonestRequestsAreAnsweredUnderAFlood: with MaxConns 256, twenty
// honest requests on fresh connections are all answered while each flood
// holds the server. Each has a client timeout of 10 s; a server that made
// them wait behind idle connections (60 s) or slow bodies (30 s) fails.
func TestHonestRequestsAreAnsweredUnderAFlood(t *testing.T) {
	httpflood.NeedFiles(t, 8192)
	for _, fl := range floods {
		t.Run(fl.name, func(t *testing.T) {
			ignore := goleak.IgnoreCurrent()
			t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
			addr := serveFor(t, echo, nodeLike())
			f := httpflood.Start(addr)
			t.Cleanup(f.Stop)
			fl.start(t, f, addr)
			r := httpflood.Honest(20, 10*time.Second, honest(addr))
			t.Logf("answered %d of 20: p50 %v, max %v", r.Answered, r.Quantile(0.5), r.Quantile(1))
			if r.Answered != 20 {
				t.Errorf("%d of 20 honest requests answered under the flood; first errors: %v", r.Answered, first(r.Errs, 3))
			}
		})
	}
}

func first(errs []error, n int) []error { return errs[:min(n, len(errs))] }

// BenchmarkHonestUnderFlood measures twenty honest requests (at once, on
// fresh connections) without a flood and then under each flood, on the
// same server, and reports their latencies and the ratio of the two. Run
// with -benchtime=1x: one run takes seconds (a minute on a server that
// makes them wait behind idle connections).
func BenchmarkHonestUnderFlood(b *testing.B) {
	httpflood.NeedFiles(b, 8192)
	for _, fl := range floods {
		b.Run(strings.ReplaceAll(fl.name, " ", "_"), func(b *testing.B) {
			var calm, p50, worst time.Duration
			answered := 0
			for b.Loop() {
				b.StopTimer()
				addr := serveFor(b, echo, nodeLike())
				c := httpflood.Honest(20, 2*time.Minute, honest(addr))
				f := httpflood.Start(addr)
				fl.start(b, f, addr)
				b.StartTimer()
				r := httpflood.Honest(20, 2*time.Minute, honest(addr))
				b.StopTimer()
				f.Stop()
				calm += c.Quantile(0.5)
				p50 += r.Quantile(0.5)
				worst += r.Quantile(1)
				answered += r.Answered
				b.StartTimer()
			}
			n := float64(b.N)
			b.ReportMetric(float64(calm.Microseconds())/n, "calm-p50-µs")
			b.ReportMetric(float64(p50.Microseconds())/n, "flood-p50-µs")
			b.ReportMetric(float64(worst.Microseconds())/n, "flood-max-µs")
			b.ReportMetric(float64(p50)/float64(calm), "p50-ratio")
			b.ReportMetric(float64(worst)/float64(calm), "max-ratio")
			b.ReportMetric(float64(answered)/n, "answered/20")
		})
	}
}
