package commons

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/remem/remem/internal/testutil"
	"github.com/remem/remem/protocol"
)

const testToken = "test-token-0123456789"

// recTime is the `updated` of every generated record: an hour ago, so no
// record is ever in the future of any test clock.
var recTime = time.Now().UTC().Truncate(time.Second).Add(-time.Hour)

var (
	linesMu    sync.Mutex
	linesCache = map[string][][]byte{}
)

// lessonLines returns n signed lesson lines of the identity name, distinct
// per variant, cached across tests (signing is the slow part): the lines of
// (name, variant) are the first n of one growing list.
func lessonLines(t testing.TB, name string, n int, variant string) [][]byte {
	t.Helper()
	return signedLines(t, name+"/"+variant, name, n, func(id protocol.Identity, i int) (*protocol.Record, error) {
		return protocol.SignLesson(id, protocol.LessonDraft{
			Kind:     protocol.KindError,
			Text:     fmt.Sprintf("the %s build of module %d times out when the shared cache is cold", variant, i),
			Seen:     int64(i%7 + 1),
			Strength: 0.5,
			Updated:  recTime,
		})
	})
}

// signedLines returns the first n lines of the cached list key, signing the
// missing ones with sign on a few goroutines.
func signedLines(t testing.TB, key, name string, n int, sign func(protocol.Identity, int) (*protocol.Record, error)) [][]byte {
	t.Helper()
	linesMu.Lock()
	defer linesMu.Unlock()
	have := linesCache[key]
	if len(have) >= n {
		return have[:n:n]
	}
	id := testutil.Identity(t, name)
	from := len(have)
	out := make([][]byte, n)
	copy(out, have)
	errs := make([]error, n)
	var wg sync.WaitGroup
	const workers = 4
	for w := range workers {
		wg.Go(func() {
			for i := from + w; i < n; i += workers {
				rec, err := sign(id, i)
				if err != nil {
					errs[i] = err
					continue
				}
				out[i] = rec.Raw
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	linesCache[key] = out
	return out[:n:n]
}

// testServer is a commons on a real loopback port.
type testServer struct {
	*Server
	URL  string
	Dir  string
	http *httptest.Server
}

func newTestServer(t testing.TB, mod func(*ServerConfig)) *testServer {
	t.Helper()
	dir := t.TempDir()
	return newTestServerAt(t, dir, mod)
}

func newTestServerAt(t testing.TB, dir string, mod func(*ServerConfig)) *testServer {
	t.Helper()
	cfg := ServerConfig{DataDir: dir, Tokens: []string{testToken}, Registry: prometheus.NewRegistry()}
	if mod != nil {
		mod(&cfg)
	}
	return newTestServerWith(t, cfg, dir)
}

// newTestServerWith serves a server of cfg on a loopback port; dir is the
// data directory (or "" on a Store).
func newTestServerWith(t testing.TB, cfg ServerConfig, dir string) *testServer {
	t.Helper()
	s, err := NewServer(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	ts := &testServer{Server: s, URL: hs.URL, Dir: dir, http: hs}
	t.Cleanup(func() { ts.stop() })
	return ts
}

func (ts *testServer) stop() {
	ts.http.Close()
	ts.Server.Close()
}

func (ts *testServer) filePath(origin string) string {
	return filepath.Join(ts.Dir, "commons", origin+".jsonl")
}

func (ts *testServer) client(token string) *Client {
	return &Client{BaseURL: ts.URL, Token: token, HTTP: ts.http.Client()}
}

// put sends a raw PUT and returns status, headers and body.
func (ts *testServer) put(t testing.TB, name, token string, body []byte) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, ts.URL+"/commons/"+name, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return do(t, ts.http.Client(), req)
}

func (ts *testServer) get(t testing.TB, path string, hdr ...string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, ts.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return do(t, ts.http.Client(), req)
}

func do(t testing.TB, c *http.Client, req *http.Request) (int, http.Header, string) {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// verifyFileBytes checks that data is a complete file of origin: every line
// verifies and has that origin (none is of an unknown version: those are
// never stored). It returns the record count.
func verifyFileBytes(t testing.TB, origin string, data []byte) int {
	t.Helper()
	if len(data) > 0 && data[len(data)-1] != '\n' {
		t.Errorf("file of %s does not end in a newline (%d bytes)", origin, len(data))
	}
	lines := protocol.SplitLines(data)
	if _, skipped, bad := verifyAll(origin, lines, time.Now()); bad != nil || len(skipped) > 0 {
		t.Errorf("file of %s: %v, lines of an unknown version stored: %v", origin, bad, skipped)
	}
	return len(lines)
}

// confirmLines is lessonLines for bulk: n signed confirmations, cheaper to
// sign than lessons (no text checks), cached the same way.
func confirmLines(t testing.TB, name string, n int, variant string) [][]byte {
	t.Helper()
	return signedLines(t, name+"/confirm/"+variant, name, n, func(id protocol.Identity, i int) (*protocol.Record, error) {
		return protocol.SignConfirmation(id, protocol.LessonHash(protocol.KindError, fmt.Sprintf("%s lesson %d", variant, i)), recTime)
	})
}

// lessonAt signs one lesson of id with the given text, updated at.
func lessonAt(t testing.TB, id protocol.Identity, text string, at time.Time) *protocol.Record {
	t.Helper()
	rec, err := protocol.SignLesson(id, protocol.LessonDraft{Kind: protocol.KindError, Text: text, Seen: 1, Strength: 0.5, Updated: at})
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// revocationAt signs id's revocation of lesson hash at the time at.
func revocationAt(t testing.TB, id protocol.Identity, hash string, at time.Time) *protocol.Record {
	t.Helper()
	rec, err := protocol.SignRevocation(id, hash, at, "")
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// fileOf is the file of recs, one line each, in the order given.
func fileOf(recs ...*protocol.Record) []byte {
	lines := make([][]byte, len(recs))
	for i, r := range recs {
		lines[i] = r.Raw
	}
	return testutil.JoinLines(lines...)
}

// confirmsAt is confirmLines signed at the time at (cached per variant
// and time).
func confirmsAt(t testing.TB, name string, n int, variant string, at time.Time) [][]byte {
	t.Helper()
	return signedLines(t, name+"/confirm-at/"+variant+"/"+at.Format(time.RFC3339), name, n, func(id protocol.Identity, i int) (*protocol.Record, error) {
		return protocol.SignConfirmation(id, protocol.LessonHash(protocol.KindError, fmt.Sprintf("%s lesson %d", variant, i)), at)
	})
}
