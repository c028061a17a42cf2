// Package httpflood floods an HTTP server on loopback the way a hostile
// local process would (idle keep-alive connections, bodies that never
// finish, headers sent a byte at a time, connections opened and closed at
// once) and sends honest requests through the flood, counting those
// answered. The tests and benchmarks of internal/httpserve and node use it;
// only _test.go files import it.
//
// It imports the standard library only.
package httpflood

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// Flood holds an attacker's connections and goroutines until Stop.
type Flood struct {
	addr   string
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	opened int
}

// Start readies a flood of the server at addr (host:port).
func Start(addr string) *Flood {
	ctx, cancel := context.WithCancel(context.Background())
	return &Flood{addr: addr, ctx: ctx, cancel: cancel, conns: map[net.Conn]struct{}{}}
}

// Stop ends the flood's goroutines and closes every connection it holds.
// It is idempotent.
func (f *Flood) Stop() {
	f.cancel()
	f.mu.Lock()
	for c := range f.conns {
		_ = c.Close()
	}
	clear(f.conns)
	f.mu.Unlock()
	f.wg.Wait()
}

// dial opens a connection the flood holds until Stop or drop.
func (f *Flood) dial() (net.Conn, error) {
	d := net.Dialer{Timeout: 10 * time.Second}
	c, err := d.DialContext(f.ctx, "tcp", f.addr)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ctx.Err() != nil {
		_ = c.Close()
		return nil, f.ctx.Err()
	}
	f.conns[c] = struct{}{}
	f.opened++
	return c, nil
}

// Held is how many connections the flood holds open now.
func (f *Flood) Held() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.conns)
}

// Opened is how many connections the flood has opened so far.
func (f *Flood) Opened() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.opened
}

func (f *Flood) drop(c net.Conn) {
	f.mu.Lock()
	delete(f.conns, c)
	f.mu.Unlock()
	_ = c.Close()
}

// Idle opens n connections, sends req on each (it must leave the
// connection open: HTTP/1.1 without "Connection: close") and keeps them
// open. It then reads the answers until within has passed and returns how
// many were answered: a server that makes new connections wait behind the
// idle ones answers fewer than n. Then it sends next on each connection
// still open (the start of a request that never ends, or nothing).
func (f *Flood) Idle(n int, req, next string, within time.Duration) (answered int, err error) {
	conns := make([]net.Conn, 0, n)
	for i := range n {
		c, err := f.dial()
		if err != nil {
			return answered, fmt.Errorf("idle connection %d: %w", i, err)
		}
		conns = append(conns, c)
		if _, err := io.WriteString(c, req); err != nil {
			return answered, fmt.Errorf("idle connection %d: %w", i, err)
		}
	}
	deadline := time.Now().Add(within)
	for _, c := range conns {
		if readAnswer(c, deadline) == nil {
			answered++
		}
	}
	if next != "" {
		for _, c := range conns {
			_, _ = io.WriteString(c, next) // one the server closed refuses it
		}
	}
	return answered, nil
}

// readAnswer reads one answer on c by deadline, leaving c open.
func readAnswer(c net.Conn, deadline time.Time) error {
	if err := c.SetReadDeadline(deadline); err != nil {
		return err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	return errors.Join(err, resp.Body.Close())
}

// SlowBodies opens n connections that each send start (a request whose
// headers announce a longer body than start holds) and then nothing.
func (f *Flood) SlowBodies(n int, start string) error {
	for i := range n {
		c, err := f.dial()
		if err != nil {
			return fmt.Errorf("slow body %d: %w", i, err)
		}
		if _, err := io.WriteString(c, start); err != nil {
			return fmt.Errorf("slow body %d: %w", i, err)
		}
	}
	return nil
}

// KeepSlowBodies keeps n slow bodies open until Stop: each sends start and
// waits for the server to cut it, then starts again on a new connection.
func (f *Flood) KeepSlowBodies(n int, start string) {
	f.keep(n, func(c net.Conn) {
		if _, err := io.WriteString(c, start); err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, c) // until the server cuts it, or Stop
	})
}

// KeepSlowHeaders keeps n connections sending headers one byte every
// interval until Stop (slowloris), each starting again on a new
// connection when the server cuts it.
func (f *Flood) KeepSlowHeaders(n int, every time.Duration) {
	const head = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
	f.keep(n, func(c net.Conn) {
		t := time.NewTicker(every)
		defer t.Stop()
		for i := 0; ; i++ {
			b := byte('a')
			if i < len(head) {
				b = head[i]
			}
			if _, err := c.Write([]byte{b}); err != nil {
				return
			}
			select {
			case <-f.ctx.Done():
				return
			case <-t.C:
			}
		}
	})
}

// Churn keeps n goroutines opening connections and closing them at once
// until Stop.
func (f *Flood) Churn(n int) {
	f.keep(n, func(net.Conn) {})
}

// keep runs n goroutines that each, until Stop, open a connection, run use
// on it and drop it.
func (f *Flood) keep(n int, use func(net.Conn)) {
	for range n {
		f.wg.Go(func() {
			for f.ctx.Err() == nil {
				c, err := f.dial()
				if err != nil {
					// A full listen queue: wait a little, as a client's
					// kernel would, rather than spin.
					select {
					case <-f.ctx.Done():
					case <-time.After(10 * time.Millisecond):
					}
					continue
				}
				use(c)
				f.drop(c)
			}
		})
	}
}

// Result is what honest requests got.
type Result struct {
	// Answered counts the requests answered correctly; Latencies holds
	// their times, sorted.
	Answered  int
	Latencies []time.Duration
	// Errs holds the others' errors, one per request.
	Errs []error
}

// Quantile is the q-quantile (0..1) of the answered requests' latencies,
// or 0 when none was answered.
func (r Result) Quantile(q float64) time.Duration {
	if len(r.Latencies) == 0 {
		return 0
	}
	return r.Latencies[int(q*float64(len(r.Latencies)-1))]
}

// Honest sends n requests at once, each on a fresh connection with a
// client timeout of timeout; do sends request i with c and says whether
// the answer was right (nil).
func Honest(n int, timeout time.Duration, do func(c *http.Client, i int) error) Result {
	tr := &http.Transport{DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	c := &http.Client{Timeout: timeout, Transport: tr}
	lat := make([]time.Duration, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			start := time.Now()
			errs[i] = do(c, i)
			lat[i] = time.Since(start)
		})
	}
	wg.Wait()
	var r Result
	for i, err := range errs {
		if err != nil {
			r.Errs = append(r.Errs, fmt.Errorf("honest request %d after %v: %w", i, lat[i].Round(time.Millisecond), err))
			continue
		}
		r.Answered++
		r.Latencies = append(r.Latencies, lat[i])
	}
	slices.Sort(r.Latencies)
	return r
}

// Expect reads resp's body and checks its status and that it holds want;
// it closes the body.
func Expect(resp *http.Response, err error, status int, want string) error {
	if err != nil {
		return err
	}
	b, rerr := io.ReadAll(resp.Body)
	if cerr := resp.Body.Close(); rerr == nil {
		rerr = cerr
	}
	if rerr != nil {
		return fmt.Errorf("reading the answer: %w", rerr)
	}
	if resp.StatusCode != status || !strings.Contains(string(b), want) {
		return fmt.Errorf("answered %s %q, want %d with %q", resp.Status, b, status, want)
	}
	return nil
}
