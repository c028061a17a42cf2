package node

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/remem/remem/internal/httpserve/httpflood"
	"github.com/remem/remem/internal/testutil"
)

// shortLimits are APILimits shortened so that the tests end in seconds.
func shortLimits() APILimits {
	return APILimits{ReadHeaderTimeout: 500 * time.Millisecond, ReadTimeout: 500 * time.Millisecond,
		WriteTimeout: 500 * time.Millisecond, IdleTimeout: 500 * time.Millisecond, MaxHeaderBytes: 4 << 10, MaxConns: 16}
}

// serveAPI serves the API of a fresh memory on 127.0.0.1 with l until the
// test ends and returns its address and token.
func serveAPI(t *testing.T, l APILimits, opts APIOptions) (string, string) {
	t.Helper()
	m, _ := openTest(t, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ServeAPI(ctx, ln, NewAPI(m, opts), l) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ServeAPI: %v", err)
		}
	})
	return ln.Addr().String(), m.APIToken()
}

// rawConn is a client connection driven by hand.
type rawConn struct {
	net.Conn
	r *bufio.Reader
}

func dialAPI(t *testing.T, addr string) *rawConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{Conn: c, r: bufio.NewReader(c)}
}

// get sends GET path with token on c, keeping the connection open.
func (c *rawConn) get(t *testing.T, addr, token, path string) {
	t.Helper()
	if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n\r\n", path, addr, token); err != nil {
		t.Fatal(err)
	}
}

// answer reads one answer within d and returns its status code.
func (c *rawConn) answer(t *testing.T, d time.Duration) (int, error) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(d))
	resp, err := http.ReadResponse(c.r, nil)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// closedByServer waits up to d for the server to close c, reading what it
// sends first (net/http answers 400 to headers cut off midway), and says
// how long that took.
func (c *rawConn) closedByServer(d time.Duration) (time.Duration, []byte, error) {
	start := time.Now()
	c.SetReadDeadline(start.Add(d))
	sent, err := io.ReadAll(c.r)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return 0, sent, fmt.Errorf("still open after %v", d)
	}
	return time.Since(start), sent, nil // EOF or reset: closed by the server
}

// idleConns opens n connections to addr that are answered once and kept
// open.
func idleConns(t *testing.T, addr, token string, n int) []*rawConn {
	t.Helper()
	idle := make([]*rawConn, n)
	for i := range idle {
		idle[i] = dialAPI(t, addr)
		idle[i].get(t, addr, token, "/status")
		if code, err := idle[i].answer(t, 3*time.Second); err != nil || code != http.StatusOK {
			t.Fatalf("connection %d: %d %v", i, code, err)
		}
	}
	return idle
}

// TestAPIServerClosesIdleConnections: idle connections are closed after
// IdleTimeout, and a fresh request is answered then.
func TestAPIServerClosesIdleConnections(t *testing.T) {
	l := shortLimits()
	addr, token := serveAPI(t, l, APIOptions{})
	for i, c := range idleConns(t, addr, token, l.MaxConns) {
		if _, sent, err := c.closedByServer(3 * time.Second); err != nil || len(sent) > 0 {
			t.Fatalf("idle connection %d: %v, sent %q", i, err, sent)
		}
	}
	fresh := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	req, _ := http.NewRequest("GET", "http://"+addr+"/status", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := fresh.Do(req)
	if err != nil {
		t.Fatalf("a fresh request after the idle connections closed: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("a fresh request: %s", resp.Status)
	}
}

// TestAPIServerDropsIdleConnectionsAtTheCap: while idle connections hold
// every slot, each new connection closes an idle one (the oldest the
// server knows idle) and is answered at once, instead of waiting for
// IdleTimeout (here a minute); the other connections stay open.
func TestAPIServerDropsIdleConnectionsAtTheCap(t *testing.T) {
	l := shortLimits()
	l.IdleTimeout = time.Minute
	addr, token := serveAPI(t, l, APIOptions{})
	conns := idleConns(t, addr, token, l.MaxConns)
	const extra = 4
	for i := range extra {
		c := dialAPI(t, addr)
		c.get(t, addr, token, "/status")
		if code, err := c.answer(t, 5*time.Second); err != nil || code != http.StatusOK {
			t.Fatalf("new connection %d over the cap of %d: %d %v", i, l.MaxConns, code, err)
		}
		conns = append(conns, c)
	}
	// A connection is dropped before the one that took its slot is
	// answered, so its end of file is here already; the others time out
	// (all at once: past a deadline, a read reports the timeout first).
	deadline := time.Now().Add(time.Second)
	errs := make([]error, len(conns))
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Go(func() {
			c.SetReadDeadline(deadline)
			_, errs[i] = c.r.ReadByte()
		})
	}
	wg.Wait()
	var dropped []int
	for i, err := range errs {
		var ne net.Error
		switch {
		case errors.As(err, &ne) && ne.Timeout():
		case err != nil:
			dropped = append(dropped, i)
		default:
			t.Fatalf("connection %d: the server sent a byte unasked", i)
		}
	}
	if len(dropped) != extra {
		t.Fatalf("the server dropped connections %v (0-%d idle first, then the new ones), want %d of them", dropped, l.MaxConns-1, extra)
	}
}

// TestAPIServerCutsSlowHeaders: a client sending its headers a byte every
// 100 ms (slowloris) is cut off after ReadHeaderTimeout, long before it
// would have finished.
func TestAPIServerCutsSlowHeaders(t *testing.T) {
	l := shortLimits()
	addr, _ := serveAPI(t, l, APIOptions{})
	c := dialAPI(t, addr)
	req := fmt.Sprintf("GET /status HTTP/1.1\r\nHost: %s\r\nX-Slow: %s\r\n\r\n", addr, strings.Repeat("a", 20))
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for i := range len(req) {
			if _, err := c.Write([]byte{req[i]}); err != nil {
				return
			}
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	took, sent, err := c.closedByServer(4 * time.Second) // the whole request takes 6s
	if err != nil {
		t.Fatalf("slow headers: %v", err)
	}
	if len(sent) > 0 && !strings.HasPrefix(string(sent), "HTTP/1.1 4") {
		t.Errorf("slow headers answered %q, want nothing or a 4xx", sent)
	}
	if took > 2*time.Second {
		t.Errorf("slow headers cut off after %v, ReadHeaderTimeout is %v", took, l.ReadHeaderTimeout)
	}
}

// TestAPIServerRefusesHugeHeaders: headers over MaxHeaderBytes are refused.
func TestAPIServerRefusesHugeHeaders(t *testing.T) {
	l := shortLimits()
	addr, _ := serveAPI(t, l, APIOptions{})
	c := dialAPI(t, addr)
	fmt.Fprintf(c, "GET /status HTTP/1.1\r\nHost: %s\r\nX-Big: %s\r\n\r\n", addr, strings.Repeat("a", 64<<10))
	if code, err := c.answer(t, 3*time.Second); err != nil || code != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("64 KiB of headers: %d %v, want 431", code, err)
	}
}

// TestAPIServerLongSleepOutlivesTimeouts: POST /sleep may run for minutes
// (a writer command, an embeddings backend); the short read and write
// timeouts must neither cancel it nor cut its answer.
func TestAPIServerLongSleepOutlivesTimeouts(t *testing.T) {
	l := shortLimits()
	opts := APIOptions{SleepNow: func(ctx context.Context) (SleepReport, error) {
		select {
		case <-time.After(3 * l.WriteTimeout):
			return SleepReport{}, nil
		case <-ctx.Done():
			return SleepReport{}, fmt.Errorf("the sleep was cancelled: %w", ctx.Err())
		}
	}}
	addr, token := serveAPI(t, l, opts)
	hc := testutil.BearerClient(token)
	hc.Timeout = 5 * time.Second
	resp, err := hc.Post("http://"+addr+"/sleep", "application/json", nil)
	if err != nil {
		t.Fatalf("POST /sleep longer than the write timeout: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /sleep: %s %s", resp.Status, body)
	}
}

// TestAPIServerAnswersUnderAFlood: with the default limits (256
// connections), 1,500 idle keep-alive connections (each answered once and
// kept open) and 300 bodies that never finish must not keep twenty honest
// requests on fresh connections from being answered, each within its
// client timeout of 10 s: a server that makes them wait behind the idle
// connections (60 s) or the slow bodies (30 s) fails.
func TestAPIServerAnswersUnderAFlood(t *testing.T) {
	httpflood.NeedFiles(t, 8192)
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	addr, token := serveAPI(t, DefaultAPILimits(), APIOptions{})
	f := httpflood.Start(addr)
	t.Cleanup(f.Stop)
	// The flood carries the token: a local process of the person's that
	// misbehaves holds its slots longest (one without it is refused early).
	n, err := f.Idle(1500, fmt.Sprintf("GET /status HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n\r\n", addr, token), "", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d of 1500 idle connections answered", n)
	slow := fmt.Sprintf("POST /memory/remember HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"kind\":", addr, token)
	if err := f.SlowBodies(300, slow); err != nil {
		t.Fatal(err)
	}
	r := httpflood.Honest(20, 10*time.Second, func(c *http.Client, i int) error {
		if i%2 == 0 {
			req, _ := http.NewRequest("GET", "http://"+addr+"/status", nil)
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := c.Do(req)
			return httpflood.Expect(resp, err, http.StatusOK, `"origin"`)
		}
		event := fmt.Sprintf(`{"kind":"note","text":"the docs site builds in %d minutes"}`, i)
		req, _ := http.NewRequest("POST", "http://"+addr+"/memory/remember", strings.NewReader(event))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := c.Do(req)
		return httpflood.Expect(resp, err, http.StatusOK, "")
	})
	t.Logf("answered %d of 20: p50 %v, max %v", r.Answered, r.Quantile(0.5), r.Quantile(1))
	if r.Answered != 20 {
		t.Errorf("%d of 20 honest requests answered under the flood; first errors: %v", r.Answered, r.Errs[:min(3, len(r.Errs))])
	}
}
