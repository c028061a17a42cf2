package httpserve

import (
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// crowdedShare says when a server is crowded: once more than
// MaxConns/crowdedShare connections are held, the requests it reads get
// CrowdedTimeout for their headers and their body, so slow clients churn
// through the rest of the slots instead of holding them.
const crowdedShare = 2

// newGrace is how long a connection that has not sent its whole headers is
// safe from being dropped at the cap: an honest client sends them at once,
// and the grace covers the time its goroutine waits to be scheduled on a
// busy machine. Past it, the connection is as cheap to drop as an idle one
// (no request is being served) and it is likely a slowloris.
const newGrace = 250 * time.Millisecond

// limiter holds at most maxConns connections of its listener at once. At the
// cap, a new connection closes the oldest idle one (or the oldest still
// sending its headers after newGrace) rather than wait in the listen queue
// behind connections that serve nobody; it waits only while every held
// connection is serving a request. It learns the connections' states from
// http.Server.ConnState.
type limiter struct {
	net.Listener
	maxConns int
	crowded  time.Duration

	mu    sync.Mutex
	held  int                // connections open, each a file descriptor
	conns map[*conn]struct{} // held and not hijacked: those that may be dropped
	// changed wakes an Accept waiting at the cap: a connection closed or
	// went idle.
	changed   chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

func newLimiter(ln net.Listener, maxConns int, crowded time.Duration) *limiter {
	return &limiter{Listener: ln, maxConns: maxConns, crowded: crowded, conns: map[*conn]struct{}{},
		changed: make(chan struct{}, 1), done: make(chan struct{})}
}

// Accept takes the next connection from the listen queue and finds it a
// slot. Accept runs in one goroutine (http.Server's loop), so at most
// maxConns+1 file descriptors are open: the held ones and the one waiting here.
func (l *limiter) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	c := &conn{Conn: nc, l: l}
	if err := l.admit(c); err != nil {
		_ = nc.Close()
		return nil, err
	}
	return c, nil
}

// admit gives c a slot, dropping a connection that serves nobody if every
// slot is held, or waiting for one to close, go idle, or outlive newGrace.
func (l *limiter) admit(c *conn) error {
	var wake *time.Timer
	defer func() {
		if wake != nil {
			wake.Stop()
		}
	}()
	for {
		l.mu.Lock()
		now := time.Now()
		if l.held < l.maxConns {
			l.held++
			c.state, c.since = http.StateNew, now
			l.conns[c] = struct{}{}
			l.mu.Unlock()
			return nil
		}
		victim, wait := l.victimLocked(now)
		if victim != nil {
			delete(l.conns, victim) // chosen once
		}
		l.mu.Unlock()
		if victim != nil {
			_ = victim.Close() // frees its slot for the next turn
			continue
		}
		var tick <-chan time.Time
		if wait > 0 {
			if wake == nil {
				wake = time.NewTimer(wait)
			} else {
				wake.Reset(wait)
			}
			tick = wake.C
		}
		select {
		case <-l.changed:
		case <-tick:
		case <-l.done:
			return net.ErrClosed
		}
	}
}

// victimLocked is the connection to drop for a new one: the oldest idle one
// that has not started its next request, else the one that has been
// sending headers the longest (since it was accepted, or since the first
// byte of its next request) if that is newGrace or more; otherwise nil
// and how long until it is (0: wait for a change). A connection serving a
// request is never one.
func (l *limiter) victimLocked(now time.Time) (*conn, time.Duration) {
	var idle, slow *conn
	var slowSince time.Time
	for c := range l.conns {
		heard := c.heardAt.Load()
		switch {
		case c.state == http.StateIdle && heard == 0:
			if idle == nil || c.since.Before(idle.since) {
				idle = c
			}
		case c.state == http.StateIdle, c.state == http.StateNew:
			// An idle connection that sent a byte or three waits for four
			// before net/http reads its headers, under IdleTimeout.
			since := c.since
			if c.state == http.StateIdle {
				since = time.Unix(0, heard)
			}
			if slow == nil || since.Before(slowSince) {
				slow, slowSince = c, since
			}
		}
	}
	switch {
	case idle != nil:
		return idle, 0
	case slow == nil:
		return nil, 0
	case now.Sub(slowSince) >= newGrace:
		return slow, 0
	default:
		return nil, slowSince.Add(newGrace).Sub(now)
	}
}

// connState is the server's ConnState hook.
func (l *limiter) connState(nc net.Conn, s http.ConnState) {
	c, ok := nc.(*conn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	c.state = s
	switch s {
	case http.StateIdle:
		c.since = time.Now()
		c.heardAt.Store(0)
		l.notify()
	case http.StateHijacked, http.StateClosed:
		delete(l.conns, c) // a hijacked one keeps its slot until closed
	}
}

// notify wakes a waiting Accept; a wake-up already pending is enough.
func (l *limiter) notify() {
	select {
	case l.changed <- struct{}{}:
	default:
	}
}

func (l *limiter) release(c *conn) {
	l.mu.Lock()
	l.held--
	delete(l.conns, c)
	l.mu.Unlock()
	l.notify()
}

// readDeadline is t, or sooner when the server is crowded: then every
// request has CrowdedTimeout for its headers and again for its body. A
// connection waiting idle for its next request keeps IdleTimeout: at the
// cap it is dropped anyway.
func (l *limiter) readDeadline(c *conn, t time.Time) time.Time {
	if t.IsZero() {
		return t // no deadline: a read the server itself will cut
	}
	l.mu.Lock()
	crowded := l.held*crowdedShare > l.maxConns && (c.state != http.StateIdle || c.heardAt.Load() != 0)
	l.mu.Unlock()
	if d := time.Now().Add(l.crowded); crowded && d.Before(t) {
		return d
	}
	return t
}

// Close stops Accept, including one waiting at the cap.
func (l *limiter) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// conn is a connection the limiter holds.
type conn struct {
	net.Conn
	l *limiter
	// state and since (when it was accepted or went idle) are guarded by
	// l.mu.
	state http.ConnState
	since time.Time
	// heardAt is when (Unix ns) the first byte came since the connection
	// went idle, 0 before: a request is on its way, and the connection is
	// dropped only if its headers take longer than newGrace.
	heardAt   atomic.Int64
	closeOnce sync.Once
	closeErr  error
}

func (c *conn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 && c.heardAt.Load() == 0 {
		c.heardAt.Store(time.Now().UnixNano())
	}
	return n, err
}

func (c *conn) SetReadDeadline(t time.Time) error {
	return c.Conn.SetReadDeadline(c.l.readDeadline(c, t))
}

// Close closes the connection and frees its slot, once.
func (c *conn) Close() error {
	c.closeOnce.Do(func() {
		c.closeErr = c.Conn.Close()
		c.l.release(c)
	})
	return c.closeErr
}
