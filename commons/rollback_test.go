package commons

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/remem/remem/internal/testutil"
	"github.com/remem/remem/protocol"
)

// rollbackBody is the JSON of a 409.
type rollbackBody struct {
	Error  string          `json:"error"`
	Reason protocol.Reason `json:"reason"`
	Key    struct {
		Type, Origin, Hash string
	} `json:"key"`
}

// rollbackFixture is one origin's history: l1 and l2 at t0, l3 a minute
// later, then the revocation of l1, then l4 and l5.
type rollbackFixture struct {
	id                      protocol.Identity
	l1, l2, l3, l4, l5      *protocol.Record
	l3old, l3new, rev, rev2 *protocol.Record
	lx                      *protocol.Record
}

func newRollbackFixture(t *testing.T) rollbackFixture {
	id := testutil.Identity(t, "alice")
	t0 := recTime
	f := rollbackFixture{id: id}
	f.l1 = lessonAt(t, id, "the deploy script skips the migration step when the staging flag is missing", t0)
	f.l2 = lessonAt(t, id, "the cache warmer times out when the registry mirror is down", t0)
	f.l3 = lessonAt(t, id, "the nightly build fails when two jobs share the module cache", t0.Add(time.Minute))
	f.l3old = lessonAt(t, id, "the nightly build fails when two jobs share the module cache", t0)
	f.rev = revocationAt(t, id, f.l1.Hash, t0.Add(2*time.Minute))
	f.l4 = lessonAt(t, id, "the release notes generator drops entries without a ticket number", t0.Add(3*time.Minute))
	f.l5 = lessonAt(t, id, "the linter reports unused imports only after a clean build", t0.Add(4*time.Minute))
	f.l3new = lessonAt(t, id, "the nightly build fails when two jobs share the module cache", t0.Add(5*time.Minute))
	f.rev2 = revocationAt(t, id, f.l1.Hash, t0.Add(5*time.Minute))
	f.lx = lessonAt(t, id, "the test database keeps its data between runs unless the volume is removed", t0.Add(time.Minute))
	return f
}

// TestNoRollback: a replayed older file, a subset of the stored one, or a
// file without a stored revocation is refused with 409 naming the first
// missing key, and the stored file stays byte-identical; dropping only the
// oldest records, a newer superset and the same file again are accepted.
func TestNoRollback(t *testing.T) {
	ts := newTestServer(t, nil)
	f := newRollbackFixture(t)
	o := f.id.Origin()
	name := o + ".jsonl"
	v1 := fileOf(f.l1, f.l2, f.l3)
	v2 := fileOf(f.l1, f.l2, f.l3, f.rev)
	if code, _, body := ts.put(t, name, testToken, v1); code != 201 {
		t.Fatalf("v1: %d %s", code, body)
	}
	if code, _, body := ts.put(t, name, testToken, v2); code != 200 {
		t.Fatalf("v2: %d %s", code, body)
	}

	// l1 and l2 were signed in the same second: the merge order puts the
	// one with the lower bytes first, and a file may drop it alone.
	lower, higher := f.l1, f.l2
	if bytes.Compare(lower.Raw, higher.Raw) > 0 {
		lower, higher = higher, lower
	}
	firstMissing := func(kept *protocol.Record) *protocol.Record {
		if kept == higher {
			return f.l3 // the lower one of the second may go
		}
		return higher
	}
	refused := []struct {
		name string
		body []byte
		key  *protocol.Record // the first stored record the body lacks
	}{
		{"older full file", v1, f.rev},
		{"one-line subset", fileOf(f.l2), firstMissing(f.l2)},
		{"one-line subset, the revocation's lesson", fileOf(f.l1), firstMissing(f.l1)},
		{"drops the revocation", fileOf(f.l1, f.l2, f.l3, f.l4), f.rev},
		{"drops the revocation, only newer records", fileOf(f.l4, f.l5), f.rev},
		{"older version of a stored key", fileOf(f.l1, f.l2, f.l3old, f.rev), f.l3},
		{"a newer record but a stored one dropped", fileOf(f.l1, f.l3, f.rev, f.l4), f.l2},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			code, _, body := ts.put(t, name, testToken, c.body)
			if code != http.StatusConflict {
				t.Fatalf("status %d, want 409: %s", code, body)
			}
			var rb rollbackBody
			if err := json.Unmarshal([]byte(body), &rb); err != nil {
				t.Fatalf("body %s: %v", body, err)
			}
			if rb.Reason != ReasonRollback || rb.Key.Type != c.key.Type.String() || rb.Key.Origin != o || rb.Key.Hash != c.key.Hash {
				t.Errorf("reason %q key %+v, want %s %s", rb.Reason, rb.Key, c.key.Type, c.key.Hash)
			}
			if !strings.Contains(rb.Error, c.key.Hash) || !strings.Contains(rb.Error, c.key.Type.String()) {
				t.Errorf("the message does not name the key: %s", rb.Error)
			}
			if got := readFile(t, ts.filePath(o)); !bytes.Equal(got, v2) {
				t.Errorf("the stored file changed (%d bytes, was %d)", len(got), len(v2))
			}
		})
	}

	// A fresh client still sees the revocation.
	pullHas(t, ts, f.rev)

	// The client says what was refused and what to do.
	_, err := ts.client(testToken).Push(context.Background(), o, [][]byte{f.l1.Raw, f.l2.Raw, f.l3.Raw})
	var se *StatusError
	if !errors.As(err, &se) || se.Code != 409 || se.Reason != ReasonRollback || !strings.Contains(err.Error(), f.rev.Hash) || !strings.Contains(err.Error(), "rollback") {
		t.Errorf("client 409 error: %v", err)
	}

	// Accepted: the same file again (nothing changes), a file that drops
	// only its oldest records, a newer superset, and newer versions of
	// stored keys.
	_, hdr, _ := ts.get(t, "/commons/"+name)
	etag := hdr.Get("ETag")
	if code, h, body := ts.put(t, name, testToken, v2); code != 200 || h.Get("ETag") != etag {
		t.Fatalf("same file again: %d %s", code, body)
	}
	for _, c := range []struct {
		name string
		body []byte
	}{
		{"drops its oldest records", fileOf(f.l3, f.rev, f.l4)},
		{"newer superset", fileOf(f.l3, f.rev, f.l4, f.l5)},
		{"newer versions of stored keys", fileOf(f.lx, f.l3new, f.rev2, f.l4, f.l5)},
		{"same order changed, same records", fileOf(f.l5, f.l4, f.rev2, f.l3new, f.lx)},
	} {
		if code, _, body := ts.put(t, name, testToken, c.body); code != 200 {
			t.Fatalf("%s: %d %s", c.name, code, body)
		}
		if got := readFile(t, ts.filePath(o)); !bytes.Equal(got, c.body) {
			t.Fatalf("%s: not stored", c.name)
		}
	}
	// The older revocation is older than the newer one of its key.
	if code, _, body := ts.put(t, name, testToken, fileOf(f.lx, f.l3new, f.rev, f.l4, f.l5)); code != 409 || !strings.Contains(body, f.l1.Hash) {
		t.Errorf("older revocation: %d %s", code, body)
	}
	pullHas(t, ts, f.rev2)
}

// pullHas pulls the commons with a fresh client and checks that want is
// among the records delivered.
func pullHas(t *testing.T, ts *testServer, want *protocol.Record) {
	t.Helper()
	var found bool
	c := ts.client("")
	c.State = &MemoryState{}
	rep, err := c.Pull(context.Background(), "", time.Now(), func(_ string, recs []*protocol.Record) error {
		for _, r := range recs {
			found = found || bytes.Equal(r.Raw, want.Raw)
		}
		return nil
	})
	if err != nil || rep.Failed > 0 {
		t.Fatalf("pull: %v %+v", err, rep)
	}
	if !found {
		t.Errorf("a fresh pull lacks the %s of %s", want.Type, want.Hash)
	}
}

// putFrom calls the handler directly with a PUT from the address remote.
func putFrom(s *Server, remote, origin string, body []byte) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPut, "/commons/"+origin+".jsonl", bytes.NewReader(body))
	req.RemoteAddr = remote
	req.Header.Set("Authorization", "Bearer "+testToken)
	w := httptest.NewRecorder()
	s.ServeHTTP(w, req)
	return w
}

// TestRateLimitFallsOnSender: refused replays and accepted replays from
// other addresses never use up the PUTs of the origin's owner; a flood of
// refused PUTs is still limited on the address that sends it.
func TestRateLimitFallsOnSender(t *testing.T) {
	now := time.Now()
	ts := newTestServer(t, func(c *ServerConfig) {
		c.Now = func() time.Time { return now }
		c.RatePerOrigin = DefaultOriginRate
		c.RatePerClient = DefaultClientRate
	})
	f := newRollbackFixture(t)
	o := f.id.Origin()
	const owner, attacker, other = "198.51.100.2:4444", "203.0.113.7:5555", "[2001:db8::1]:443"
	v1 := fileOf(f.l1, f.l2, f.l3)
	v2 := fileOf(f.l1, f.l2, f.l3, f.rev)
	if w := putFrom(ts.Server, owner, o, v1); w.Code != 201 {
		t.Fatalf("owner v1: %d %s", w.Code, w.Body)
	}
	if w := putFrom(ts.Server, owner, o, v2); w.Code != 200 {
		t.Fatalf("owner v2: %d %s", w.Code, w.Body)
	}
	for i := range 10 {
		if w := putFrom(ts.Server, attacker, o, v1); w.Code != 409 {
			t.Fatalf("rollback %d: %d %s", i, w.Code, w.Body)
		}
	}
	if w := putFrom(ts.Server, owner, o, fileOf(f.l1, f.l2, f.l3, f.rev, f.l4)); w.Code != 200 {
		t.Fatalf("owner after 10 rollbacks: %d %s", w.Code, w.Body)
	}
	// The flood is limited on the attacker's address: its burst is 30.
	code, n := 0, 10
	for ; n < 100 && code != 429; n++ {
		code = putFrom(ts.Server, attacker, o, v1).Code
	}
	if code != 429 || n != DefaultClientRate.Burst+1 {
		t.Errorf("the attacker got %d after %d PUTs, want 429 after %d", code, n, DefaultClientRate.Burst+1)
	}
	// Accepted replays of the current file from another address use that
	// address's PUTs, not the owner's.
	cur := fileOf(f.l1, f.l2, f.l3, f.rev, f.l4)
	for range DefaultOriginRate.Burst + 3 {
		putFrom(ts.Server, other, o, cur)
	}
	if w := putFrom(ts.Server, other, o, cur); w.Code != 429 {
		t.Errorf("replays from one address are not limited: %d", w.Code)
	}
	if w := putFrom(ts.Server, owner, o, fileOf(f.l1, f.l2, f.l3, f.rev, f.l4, f.l5)); w.Code != 200 {
		t.Errorf("owner after the flood: %d %s", w.Code, w.Body)
	}
}

func TestClientKey(t *testing.T) {
	for _, c := range []struct{ remote, key string }{
		{"203.0.113.7", "203.0.113.7"},
		{"::ffff:203.0.113.7", "203.0.113.7"},
		{"2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"},
		{"2001:db8:1:2:bbbb::2", "2001:db8:1:2::/64"},
		{"fe80::1%eth0", "fe80::/64"},
		{"not an address", "not an address"},
	} {
		if got := clientKey(c.remote); got != c.key {
			t.Errorf("clientKey(%q) = %q, want %q", c.remote, got, c.key)
		}
	}
}

// TestRollbackDropsARevokedConfirmation: a memory that confirmed a lesson
// and then revoked it (its confirmer's revocation, SPEC §8) may drop its
// stored confirmation, as an origin may drop a lesson it revokes; without
// that revocation, or with one older than the confirmation, it may not.
func TestRollbackDropsARevokedConfirmation(t *testing.T) {
	ts := newTestServer(t, nil)
	id := testutil.Identity(t, "carol")
	name := id.Origin() + ".jsonl"
	t0 := recTime
	l := lessonAt(t, id, "the cache warmer times out when the registry mirror is down", t0)
	hash := protocol.LessonHash(protocol.KindError, "the deploy script skips the migration step when the staging flag is missing")
	conf, err := protocol.SignConfirmation(id, hash, t0.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if code, _, body := ts.put(t, name, testToken, fileOf(l, conf)); code != 201 {
		t.Fatalf("first file: %d %s", code, body)
	}
	for _, c := range []struct {
		name string
		body []byte
	}{
		{"no revocation", fileOf(l)},
		{"a revocation older than the confirmation", fileOf(l, revocationAt(t, id, hash, t0))},
	} {
		if code, _, body := ts.put(t, name, testToken, c.body); code != http.StatusConflict || !strings.Contains(body, hash) {
			t.Errorf("%s: %d %s, want 409 naming %s", c.name, code, body, hash)
		}
	}
	next := fileOf(l, revocationAt(t, id, hash, t0.Add(2*time.Minute)))
	if code, _, body := ts.put(t, name, testToken, next); code != 200 {
		t.Fatalf("the confirmation dropped for its revocation: %d %s", code, body)
	}
	if got := readFile(t, ts.filePath(id.Origin())); !bytes.Equal(got, next) {
		t.Fatal("not stored")
	}
}
