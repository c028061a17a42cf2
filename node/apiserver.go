package node

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"golang.org/x/net/netutil"
)

// APILimits bound what clients can hold of the local API (SPEC §11): any
// local process, and any web page through the browser, can open
// connections to it, and without limits 20,000 idle ones used up the
// node's file descriptors. A zero field takes its default; Validate
// refuses a negative one.
type APILimits struct {
	// ReadHeaderTimeout cuts a client that sends its headers slowly
	// (slowloris). Default 5s.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request, body included; a 4 MiB
	// body over loopback takes milliseconds. Default 30s.
	ReadTimeout time.Duration
	// WriteTimeout bounds a request from the end of its headers to the end
	// of its answer, so a client that stops reading lets go of its
	// connection. Requests that may run longer (sleep, recall) extend their
	// own deadlines to longRequest. Default 60s.
	WriteTimeout time.Duration
	// IdleTimeout closes a kept-alive connection with no new request.
	// Default 60s.
	IdleTimeout time.Duration
	// MaxHeaderBytes caps the request line and headers. Default 64 KiB.
	MaxHeaderBytes int
	// MaxConns caps the connections served at once; more wait in the
	// listen queue until one closes. Default 256: the CLI, an MCP server
	// and a page or two use a handful, and the node keeps file descriptors
	// for its store and its peers.
	MaxConns int
}

// DefaultAPILimits are the limits of `remem node`.
func DefaultAPILimits() APILimits {
	return APILimits{ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 60 * time.Second,
		IdleTimeout: 60 * time.Second, MaxHeaderBytes: 64 << 10, MaxConns: 256}
}

// server is the http.Server of h with the timeouts of l.
func (l APILimits) server(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: l.ReadHeaderTimeout, ReadTimeout: l.ReadTimeout,
		WriteTimeout: l.WriteTimeout, IdleTimeout: l.IdleTimeout, MaxHeaderBytes: l.MaxHeaderBytes}
}

// ServeAPI serves h on ln with the limits l until ctx ends, then lets the
// requests under way finish for up to 5 seconds. It returns nil on that
// stop.
func ServeAPI(ctx context.Context, ln net.Listener, h http.Handler, l APILimits) error {
	l = l.withDefaults()
	if err := l.Validate(); err != nil {
		return fmt.Errorf("API limits: %w", err)
	}
	srv := l.server(h)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		<-ctx.Done()
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer scancel()
		if srv.Shutdown(sctx) != nil {
			srv.Close() // requests still running after 5s are cut
		}
	}()
	err := srv.Serve(netutil.LimitListener(ln, l.MaxConns))
	cancel() // Serve failing on its own also stops the server
	<-stopped
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// longRequest is how long a request that may run for minutes (a sleep with
// a writer command or an embeddings backend, a recall through embeddings)
// may take to be answered; the CLI waits 5 minutes.
const longRequest = 10 * time.Minute

// allowLong lifts the server's WriteTimeout for this request to
// longRequest: past it, net/http would drop the answer of a request that
// is still working.
func allowLong(w http.ResponseWriter) {
	// The error is for a writer without deadlines (httptest's recorder),
	// which needs none lifted.
	http.NewResponseController(w).SetWriteDeadline(time.Now().Add(longRequest))
}
