package commons

import (
	"encoding/json"
	"fmt"
	"github.com/prometheus/client_golang/prometheus"
	"strings"
	"sync"
	"testing"
)

// TestBudgetsBoundNewOrigins: the commons' global budgets (origins held,
// bytes held) and the per-token budget of origins refuse a PUT of a new
// origin beyond them (507, or 403 for the token's), saying which budget
// and what the operator can do; an existing origin's file is still
// replaced; the counts survive a restart, being counted from the storage.
func TestBudgetsBoundNewOrigins(t *testing.T) {
	const other = "other-token-0123456789"
	a, a1 := originFile(t, "budget-a", 1, "v1")
	_, a2 := originFile(t, "budget-a", 2, "v1")
	b, b1 := originFile(t, "budget-b", 1, "v1")
	_, b2 := originFile(t, "budget-b", 2, "v1")
	c, c1 := originFile(t, "budget-c", 1, "v1")
	refused := func(t *testing.T, ts *testServer, token, origin string, body []byte, code int, words ...string) {
		t.Helper()
		got, _, msg := ts.put(t, origin+".jsonl", token, body)
		if got != code {
			t.Fatalf("PUT of new origin %s: %d %s, want %d", origin, got, msg, code)
		}
		var eb struct {
			Error  string `json:"error"`
			Budget string `json:"budget"`
		}
		if err := json.Unmarshal([]byte(msg), &eb); err != nil || eb.Budget == "" {
			t.Fatalf("refusal %q does not name its budget (%v)", msg, err)
		}
		for _, w := range words {
			if !strings.Contains(eb.Error, w) {
				t.Errorf("refusal %q does not say %q", eb.Error, w)
			}
		}
	}
	ok := func(t *testing.T, ts *testServer, token, origin string, body []byte, code int) {
		t.Helper()
		if got, _, msg := ts.put(t, origin+".jsonl", token, body); got != code {
			t.Fatalf("PUT of %s: %d %s, want %d", origin, got, msg, code)
		}
	}
	limits := func(t *testing.T, ts *testServer) Limits {
		t.Helper()
		_, _, msg := ts.get(t, "/.well-known/remem")
		var wk WellKnown
		if err := json.Unmarshal([]byte(msg), &wk); err != nil {
			t.Fatal(err)
		}
		return wk.Limits
	}

	t.Run("origins", func(t *testing.T) {
		dir := t.TempDir()
		mod := func(c *ServerConfig) { c.MaxOrigins = 2 }
		ts := newTestServerAt(t, dir, mod)
		if l := limits(t, ts); l.Origins != 2 || l.OriginsPerToken == 0 || l.TotalBytes == 0 {
			t.Fatalf("info limits %+v, want the budgets", l)
		}
		ok(t, ts, testToken, a, a1, 201)
		ok(t, ts, testToken, b, b1, 201)
		refused(t, ts, testToken, c, c1, 507, "2 origins", "--max-origins")
		ok(t, ts, testToken, a, a2, 200)
		ts.stop()
		ts = newTestServerAt(t, dir, mod)
		refused(t, ts, testToken, c, c1, 507, "--max-origins")
		ok(t, ts, testToken, b, b2, 200)
	})
	// The byte budget on a directory, and on a bucket, where it is
	// counted from a listing at start (a second replica started after the
	// files were stored counts them too).
	bytesBudget := func(t *testing.T, start func(t *testing.T, mod func(*ServerConfig)) *testServer) {
		mod := func(c *ServerConfig) { c.MaxBytes = int64(len(a1) + len(b1) + len(c1) - 1) }
		ts := start(t, mod)
		ok(t, ts, testToken, a, a1, 201)
		ok(t, ts, testToken, b, b1, 201)
		refused(t, ts, testToken, c, c1, 507, "bytes", "--max-bytes")
		ok(t, ts, testToken, a, a2, 200) // a replacement may grow past the budget
		ts.stop()
		ts = start(t, mod)
		refused(t, ts, testToken, c, c1, 507, "--max-bytes")
		ok(t, ts, testToken, b, b2, 200)
	}
	t.Run("bytes", func(t *testing.T) {
		dir := t.TempDir()
		bytesBudget(t, func(t *testing.T, mod func(*ServerConfig)) *testServer { return newTestServerAt(t, dir, mod) })
	})
	t.Run("bytes on S3", func(t *testing.T) {
		m := needMinio(t)
		bucket := m.newBucket(t)
		bytesBudget(t, func(t *testing.T, mod func(*ServerConfig)) *testServer {
			cfg := ServerConfig{Store: m.open(t, bucket, "b"), Tokens: []string{testToken}, Registry: prometheus.NewRegistry(), IndexSettle: testSettle}
			mod(&cfg)
			return newTestServerWith(t, cfg, "")
		})
	})
	t.Run("token", func(t *testing.T) {
		dir := t.TempDir()
		mod := func(c *ServerConfig) { c.Tokens, c.MaxOriginsPerToken = []string{testToken, other}, 1 }
		ts := newTestServerAt(t, dir, mod)
		ok(t, ts, testToken, a, a1, 201)
		refused(t, ts, testToken, b, b1, 403, "this token", "--max-origins-per-token")
		ok(t, ts, other, b, b1, 201)
		ok(t, ts, testToken, a, a2, 200)
		ts.stop()
		ts = newTestServerAt(t, dir, mod)
		refused(t, ts, testToken, c, c1, 403, "--max-origins-per-token")
		refused(t, ts, other, c, c1, 403, "--max-origins-per-token")
		ok(t, ts, testToken, b, b2, 200) // a replacement needs no budget, whoever sends it
	})
}

// TestBudgetHoldsUnderConcurrentPUTs: new origins PUT at once never pass
// the origin budget together: exactly MaxOrigins are taken.
func TestBudgetHoldsUnderConcurrentPUTs(t *testing.T) {
	const n, max = 8, 3
	ts := newTestServer(t, func(c *ServerConfig) { c.MaxOrigins = max })
	type file struct {
		origin string
		body   []byte
	}
	files := make([]file, n)
	for i := range files {
		files[i].origin, files[i].body = originFile(t, fmt.Sprintf("budget-race-%d", i), 1, "v1")
	}
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i, f := range files {
		wg.Go(func() { codes[i], _, _ = ts.put(t, f.origin+".jsonl", testToken, f.body) })
	}
	wg.Wait()
	taken := 0
	for _, c := range codes {
		switch c {
		case 201:
			taken++
		case 507:
		default:
			t.Fatalf("codes %v: want only 201 and 507", codes)
		}
	}
	if taken != max {
		t.Fatalf("codes %v: %d new origins taken, want %d", codes, taken, max)
	}
}
