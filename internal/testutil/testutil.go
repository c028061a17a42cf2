// Package testutil holds the test helpers several packages' tests share:
// polling for a condition instead of sleeping, deterministic identities,
// joining record lines into a file, an HTTP client that sends a bearer
// token, and the process's CPU time for benchmarks. Only _test.go files
// import it.
//
// It imports protocol, internal/check and the standard library only, so that the tests of
// every package above protocol can use it without an import cycle; it must
// not import store, node or any transport.
package testutil

import (
	"crypto/sha256"
	"net/http"
	"testing"
	"time"

	"github.com/remem/remem/internal/check"
	"github.com/remem/remem/protocol"
)

// pollEvery is how often Eventually asks again.
const pollEvery = 20 * time.Millisecond

// Eventually polls cond until it holds, failing t (naming what it waited
// for) when timeout passes first. Tests use it instead of sleeping for a
// guessed time.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(pollEvery)
	}
}

// Identity returns the identity whose key seed is the SHA-256 of seed: the
// same one on every run.
func Identity(t testing.TB, seed string) protocol.Identity {
	t.Helper()
	sum := sha256.Sum256([]byte(seed))
	id, err := protocol.NewIdentity(sum[:])
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// JoinLines is the file of lines: each followed by a newline.
func JoinLines(lines ...[]byte) []byte {
	n := 0
	for _, l := range lines {
		n += len(l) + 1
	}
	out := make([]byte, 0, n)
	for _, l := range lines {
		out = append(append(out, l...), '\n')
	}
	return out
}

// WantField fails the test unless err is a configuration error
// (check.Errors) that names field.
func WantField(t testing.TB, err error, field string) {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted; want an error naming %s", field)
	}
	for _, fe := range check.Fields(err) {
		if fe.Field == field {
			return
		}
	}
	t.Fatalf("the error does not name %s: %v", field, err)
}

// BearerClient is an HTTP client that sends token as "Authorization:
// Bearer TOKEN" on every request, as the CLI sends the node's API token.
func BearerClient(token string) *http.Client {
	return &http.Client{Transport: bearer(token)}
}

type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}
