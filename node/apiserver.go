package node

import (
	"context"
	"net"
	"net/http"
	"time"

	"github.com/remem/remem/internal/httpserve"
)

// APILimits bound what clients can hold of the local API (SPEC §11): any
// local process, and any web page through the browser, can open
// connections to it, and without limits 20,000 idle ones used up the
// node's file descriptors. A zero field takes its value from
// DefaultAPILimits.
type APILimits = httpserve.Limits

// DefaultAPILimits are the limits of `remem node`: headers within 5 s (at
// most 64 KiB), a request within 30 s, its answer within 60 s (sleep and
// recall lift their own deadline to longRequest), idle connections closed
// after 60 s, and 256 connections at once: the CLI, an MCP server and a
// page or two use a handful, and the node keeps file descriptors for its
// store and its peers. Past 128 connections, headers and body get 2 s each
// (a 4 MiB body takes milliseconds on loopback), and at 256 a new
// connection drops the oldest idle one: 1,500 idle connections and 300
// slow bodies kept every request waiting for 30 to 60 s.
func DefaultAPILimits() APILimits {
	return APILimits{ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 60 * time.Second,
		IdleTimeout: 60 * time.Second, CrowdedTimeout: 2 * time.Second, MaxHeaderBytes: 64 << 10, MaxConns: 256,
		ShutdownGrace: 5 * time.Second}
}

// ServeAPI serves h on ln with the limits l (zero fields: the defaults)
// until ctx ends, then lets the requests under way finish for up to
// ShutdownGrace. It returns nil on that stop.
func ServeAPI(ctx context.Context, ln net.Listener, h http.Handler, l APILimits) error {
	return httpserve.Serve(ctx, ln, h, l.OrDefaults(DefaultAPILimits()), nil)
}

// longRequest is how long a request that may run for minutes (a sleep with
// a writer command or an embeddings backend, a recall through embeddings)
// may take to be answered; the CLI waits 5 minutes.
const longRequest = 10 * time.Minute

// allowLong lifts the server's WriteTimeout for this request to
// longRequest: past it, net/http would drop the answer of a request that
// is still working.
func allowLong(w http.ResponseWriter) { httpserve.AllowLong(w, longRequest) }
