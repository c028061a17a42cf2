// Package httpserve is the one way this project serves HTTP: the node's
// local API and the commons both run through Serve, with limits on what a
// client can hold (time to send headers and body, to read the answer, to
// idle, how many connections at once, shorter times when crowded, idle
// connections dropped at the cap for new ones) and a graceful stop when
// the context ends.
package httpserve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/remem/remem/internal/check"
)

// Limits bound what clients can hold of a server; a zero field takes its
// value from the defaults the caller passes to OrDefaults.
type Limits struct {
	// ReadHeaderTimeout cuts a client that sends its headers slowly
	// (slowloris).
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request, body included.
	ReadTimeout time.Duration
	// WriteTimeout bounds a request from the end of its headers to the end
	// of its answer, so a client that stops reading lets go of its
	// connection. A handler that may run longer lifts its own deadline
	// (AllowLong).
	WriteTimeout time.Duration
	// IdleTimeout closes a kept-alive connection with no new request.
	IdleTimeout time.Duration
	// MaxHeaderBytes caps the request line and headers.
	MaxHeaderBytes int
	// CrowdedTimeout replaces ReadHeaderTimeout, and ReadTimeout for the
	// body once the headers are in, for requests read while more than half
	// of MaxConns are held, so that slow clients cannot hold the slots
	// fresh requests need.
	CrowdedTimeout time.Duration
	// MaxConns caps the connections held at once (each a file
	// descriptor). At the cap a new connection closes the oldest idle one,
	// or the oldest still sending its first headers; it waits in the listen
	// queue only while every connection is serving a request.
	MaxConns int
	// ShutdownGrace is how long requests in flight may finish once the
	// context ends; past it they are cut.
	ShutdownGrace time.Duration
}

// OrDefaults fills the zero fields of l from d; a negative one stays, for
// Validate to refuse.
func (l Limits) OrDefaults(d Limits) Limits {
	pick := func(v *time.Duration, def time.Duration) {
		if *v == 0 {
			*v = def
		}
	}
	pick(&l.ReadHeaderTimeout, d.ReadHeaderTimeout)
	pick(&l.ReadTimeout, d.ReadTimeout)
	pick(&l.WriteTimeout, d.WriteTimeout)
	pick(&l.IdleTimeout, d.IdleTimeout)
	pick(&l.CrowdedTimeout, d.CrowdedTimeout)
	pick(&l.ShutdownGrace, d.ShutdownGrace)
	if l.MaxHeaderBytes == 0 {
		l.MaxHeaderBytes = d.MaxHeaderBytes
	}
	if l.MaxConns == 0 {
		l.MaxConns = d.MaxConns
	}
	return l
}

// Validate refuses a limit that is not positive, naming it.
func (l Limits) Validate() error {
	var v check.List
	v.Positive("ReadHeaderTimeout", l.ReadHeaderTimeout)
	v.Positive("ReadTimeout", l.ReadTimeout)
	v.Positive("WriteTimeout", l.WriteTimeout)
	v.Positive("IdleTimeout", l.IdleTimeout)
	v.Positive("CrowdedTimeout", l.CrowdedTimeout)
	v.AtLeast("MaxHeaderBytes", l.MaxHeaderBytes, 1)
	v.AtLeast("MaxConns", l.MaxConns, 1)
	v.Positive("ShutdownGrace", l.ShutdownGrace)
	return v.Err()
}

// Serve serves h on ln with the limits l until ctx ends, then stops
// accepting, lets requests in flight finish for up to l.ShutdownGrace and
// returns nil. Requests do not see ctx end: their contexts end with their
// connections. Serve closes ln. logger receives the server's own errors
// (nil discards them).
func Serve(ctx context.Context, ln net.Listener, h http.Handler, l Limits, logger *slog.Logger) error {
	if err := l.Validate(); err != nil {
		_ = ln.Close()
		return err
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	lim := newLimiter(ln, l.MaxConns, l.CrowdedTimeout)
	srv := &http.Server{Handler: h, ConnState: lim.connState, ReadHeaderTimeout: l.ReadHeaderTimeout, ReadTimeout: l.ReadTimeout,
		WriteTimeout: l.WriteTimeout, IdleTimeout: l.IdleTimeout, MaxHeaderBytes: l.MaxHeaderBytes,
		ErrorLog:    slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) }}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(lim) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serving on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), l.ShutdownGrace)
	defer cancel()
	err := srv.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = srv.Close() // requests still running past the grace are cut
	}
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	if err != nil {
		return fmt.Errorf("stopping the server on %s: %w", ln.Addr(), err)
	}
	return nil
}

// AllowLong lifts the server's WriteTimeout for this request to d: past
// it, net/http would drop the answer of a request that is still working.
func AllowLong(w http.ResponseWriter, d time.Duration) {
	// The error is for a writer without deadlines (httptest's recorder),
	// which needs none lifted.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(d))
}
