package commons

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/remem/remem/internal/httpserve"
)

// HTTPLimits are the commons server's: headers within 10 s (at most 64 KiB), a
// PUT of 256 KiB within 60 s, its answer within 60 s, idle connections
// closed after 2 minutes, 1,024 connections at once, and 10 s for requests
// in flight at a stop. Past 512 connections, headers and body get 5 s each
// (256 KiB at 52 KiB/s), so that slow clients cannot hold the server.
func HTTPLimits() httpserve.Limits {
	return httpserve.Limits{ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 60 * time.Second, WriteTimeout: 60 * time.Second,
		IdleTimeout: 120 * time.Second, CrowdedTimeout: 5 * time.Second, MaxHeaderBytes: 64 << 10, MaxConns: 1024,
		ShutdownGrace: 10 * time.Second}
}

// Serve listens on addr (e.g. "127.0.0.1:8787"; port 0 picks one) and
// serves h until ctx ends, then shuts down gracefully: it stops accepting,
// lets requests in flight finish and returns nil. The address it listens
// on is logged as "addr" with the message "commons listening". The CLI maps
// SIGINT and SIGTERM to ctx.
func Serve(ctx context.Context, addr string, h http.Handler, logger *slog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("commons: listening on %s: %w", addr, err)
	}
	return ServeListener(ctx, ln, h, logger)
}

// ServeListener is Serve on a listener the caller opened; it closes ln.
func ServeListener(ctx context.Context, ln net.Listener, h http.Handler, logger *slog.Logger) error {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	logger.Info("commons listening", "addr", ln.Addr().String())
	defer logger.Info("commons stopped", "addr", ln.Addr().String())
	if err := httpserve.Serve(ctx, ln, h, HTTPLimits(), logger); err != nil {
		return fmt.Errorf("commons: %w", err)
	}
	return nil
}
