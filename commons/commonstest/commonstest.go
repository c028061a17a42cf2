// Package commonstest starts a real commons server on loopback for the
// tests of other packages (node, cmd/remem), the way net/http/httptest
// starts an HTTP server: one call, stopped when the test ends.
package commonstest

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/remem/remem/commons"
)

// Token is the bearer token the servers Start makes accept.
const Token = "tok"

// Start runs a commons server with its own data directory, accepting
// Token, and returns its base URL.
func Start(t testing.TB) string {
	t.Helper()
	return StartWith(t, func(*commons.ServerConfig) {})
}

// StartWith is Start with the config changed by edit first.
func StartWith(t testing.TB, edit func(*commons.ServerConfig)) string {
	t.Helper()
	url, _ := StartServer(t, edit)
	return url
}

// StartServer is StartWith that returns the server too (a test's relay
// host asks its directory).
func StartServer(t testing.TB, edit func(*commons.ServerConfig)) (string, *commons.Server) {
	t.Helper()
	cfg := commons.ServerConfig{DataDir: t.TempDir(), Tokens: []string{Token}, Registry: prometheus.NewRegistry()}
	edit(&cfg)
	srv, err := commons.NewServer(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		hs.Close()
		if err := srv.Close(); err != nil {
			t.Errorf("closing the commons: %v", err)
		}
	})
	return hs.URL, srv
}
