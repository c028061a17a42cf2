package commons

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/remem/remem/internal/testutil"
	"github.com/remem/remem/protocol"
)

// testSettle is the replicas' IndexSettle in these tests: short, so the
// tests wait little, and still far above a loopback MinIO's latency.
const testSettle = 300 * time.Millisecond

// newReplica serves a commons on bucket/prefix of m over a real HTTP server.
func newReplica(t *testing.T, m minioServer, bucket, prefix string) *testServer {
	t.Helper()
	cfg := ServerConfig{Store: m.open(t, bucket, prefix), Tokens: []string{testToken}, Registry: prometheus.NewRegistry(), IndexSettle: testSettle}
	return newTestServerWith(t, cfg, "")
}

// growing returns versions 1..n of name's file: version k holds k lessons,
// one a second, so each version is newer than the one before and any
// earlier one is a rollback of it.
func growing(t testing.TB, name string, n int) [][]byte {
	id := testutil.Identity(t, name)
	recs := make([]*protocol.Record, n)
	for i := range recs {
		recs[i] = lessonAt(t, id, fmt.Sprintf("the %s service drops request %d when the upstream pool is drained", name, i), recTime.Add(time.Duration(i)*time.Second))
	}
	out := make([][]byte, n)
	for k := range out {
		out[k] = fileOf(recs[:k+1]...)
	}
	return out
}

// originVersions is one origin's growing versions, as a test's clients
// PUT them, with the highest version acknowledged so far.
type originVersions struct {
	origin string
	vs     [][]byte
	byTag  map[string]int // ETag → version index
	acked  atomic.Int64   // highest version index acknowledged, -1 none
}

// newOriginVersions makes n origins (named prefix0, prefix1, ...) of nv
// versions each.
func newOriginVersions(t testing.TB, prefix string, n, nv int) []*originVersions {
	ovs := make([]*originVersions, n)
	for i := range ovs {
		name := fmt.Sprintf("%s%d", prefix, i)
		ov := &originVersions{origin: testutil.Identity(t, name).Origin(), vs: growing(t, name, nv), byTag: map[string]int{}}
		for k, v := range ov.vs {
			ov.byTag[etagOf(v)] = k
		}
		ov.acked.Store(-1)
		ovs[i] = ov
	}
	return ovs
}

// ack records that version k was acknowledged.
func (ov *originVersions) ack(k int) {
	for cur := ov.acked.Load(); int64(k) > cur && !ov.acked.CompareAndSwap(cur, int64(k)); cur = ov.acked.Load() {
	}
}

// indexOf polls ts's index until every origin of want is listed with that
// ETag (entries are held back for the settle time), and returns the body.
func indexOf(t *testing.T, ts *testServer, query string, want map[string]string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, _, body := ts.get(t, "/commons/index"+query)
		if code != http.StatusOK {
			t.Fatalf("index: %d %s", code, body)
		}
		var idx []IndexEntry
		if err := json.Unmarshal([]byte(body), &idx); err != nil {
			t.Fatal(err)
		}
		have := map[string]string{}
		for _, e := range idx {
			have[e.Origin] = e.ETag
		}
		ok := true
		for o, etag := range want {
			ok = ok && have[o] == etag
		}
		if ok {
			return body
		}
		if time.Now().After(deadline) {
			t.Fatalf("the index of %s never listed %v; it lists %s", ts.URL, want, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestReplicasAgree: two servers on one bucket serve one commons: what is
// PUT through one is served by the other at once, with the same ETag;
// both index answers (and `?since` answers) are the same bytes; an older
// file replayed to the other replica is refused (409) and changes nothing.
func TestReplicasAgree(t *testing.T) {
	m := needMinio(t)
	bucket := m.newBucket(t)
	a, b := newReplica(t, m, bucket, "c"), newReplica(t, m, bucket, "c")
	vs := growing(t, "agree", 3)
	o := testutil.Identity(t, "agree").Origin()

	if code, _, body := a.put(t, o+".jsonl", testToken, vs[0]); code != http.StatusCreated {
		t.Fatalf("PUT v1 through A: %d %s", code, body)
	}
	code, h, body := b.get(t, "/commons/"+o+".jsonl")
	if code != http.StatusOK || body != string(vs[0]) || h.Get("ETag") != etagOf(vs[0]) {
		t.Fatalf("GET through B after a PUT through A: %d %s %q", code, h.Get("ETag"), body)
	}
	if code, _, body := b.put(t, o+".jsonl", testToken, vs[2]); code != http.StatusOK {
		t.Fatalf("PUT v3 through B: %d %s", code, body)
	}
	// The replay of an older file, to the replica that did not take the
	// newer one, is a rollback.
	for _, r := range []*testServer{a, b} {
		if code, _, body := r.put(t, o+".jsonl", testToken, vs[1]); code != http.StatusConflict {
			t.Fatalf("replay of v2 through %s: %d %s", r.URL, code, body)
		}
	}
	for _, r := range []*testServer{a, b} {
		code, h, body := r.get(t, "/commons/"+o+".jsonl")
		if code != http.StatusOK || body != string(vs[2]) || h.Get("ETag") != etagOf(vs[2]) {
			t.Fatalf("GET through %s: %d %s, not v3", r.URL, code, h.Get("ETag"))
		}
		if code, _, _ := r.get(t, "/commons/"+o+".jsonl", "If-None-Match", etagOf(vs[2])); code != http.StatusNotModified {
			t.Fatalf("conditional GET through %s: %d", r.URL, code)
		}
	}
	// A second origin, PUT through B only, for `?since`.
	o2 := testutil.Identity(t, "agree2").Origin()
	v2s := growing(t, "agree2", 1)
	want := map[string]string{o: etagOf(vs[2])}
	ia := indexOf(t, a, "", want)
	var first []IndexEntry
	_ = json.Unmarshal([]byte(ia), &first)
	if code, _, body := b.put(t, o2+".jsonl", testToken, v2s[0]); code != http.StatusCreated {
		t.Fatalf("PUT through B: %d %s", code, body)
	}
	want[o2] = etagOf(v2s[0])
	ia, ib := indexOf(t, a, "", want), indexOf(t, b, "", want)
	if ia != ib {
		t.Fatalf("the replicas' indexes differ:\nA %s\nB %s", ia, ib)
	}
	since := "?since=" + first[0].Updated.Format(time.RFC3339Nano)
	sa, sb := indexOf(t, a, since, map[string]string{o2: want[o2]}), indexOf(t, b, since, map[string]string{o2: want[o2]})
	if sa != sb || bytes.Contains([]byte(sa), []byte(o+"\"")) {
		t.Fatalf("?since answers differ or list the older entry:\nA %s\nB %s", sa, sb)
	}
}

// TestReplicasConcurrentClients: 50 clients PUT growing versions of 10
// origins through two replicas at once and read them back through the
// other. Every PUT is accepted or refused as a rollback; every read is one
// whole version, never older than a version acknowledged before the read
// began; at the end both replicas serve, and index, the newest version
// acknowledged of each origin.
func TestReplicasConcurrentClients(t *testing.T) {
	m := needMinio(t)
	bucket := m.newBucket(t)
	reps := []*testServer{newReplica(t, m, bucket, ""), newReplica(t, m, bucket, "")}
	const origins, perOrigin, nv, rounds = 10, 5, 8, 6
	ovs := newOriginVersions(t, "conc", origins, nv)
	var wg sync.WaitGroup
	var accepted, refused, busy atomic.Int64
	for c := range origins * perOrigin {
		ov := ovs[c%origins]
		wg.Go(func() {
			for r := range rounds {
				k := (c + r*3) % nv
				w, rd := reps[(c+r)%2], reps[(c+r+1)%2]
				code, _, body := w.put(t, ov.origin+".jsonl", testToken, ov.vs[k])
				switch code {
				case http.StatusOK, http.StatusCreated:
					accepted.Add(1)
					ov.ack(k)
				case http.StatusConflict:
					refused.Add(1)
				case http.StatusServiceUnavailable:
					busy.Add(1)
				default:
					t.Errorf("PUT v%d of %s: %d %s", k+1, ov.origin, code, body)
					return
				}
				floor := ov.acked.Load()
				code, h, body := rd.get(t, "/commons/"+ov.origin+".jsonl")
				got, ok := ov.byTag[etagOf([]byte(body))]
				switch {
				case code != http.StatusOK:
					t.Errorf("GET %s: %d", ov.origin, code)
				case !ok || h.Get("ETag") != etagOf([]byte(body)):
					t.Errorf("GET %s: %d bytes, ETag %s: not one whole version", ov.origin, len(body), h.Get("ETag"))
				case int64(got) < floor:
					t.Errorf("GET %s: v%d, older than v%d acknowledged before the read: rolled back", ov.origin, got+1, floor+1)
				}
			}
		})
	}
	wg.Wait()
	t.Logf("%d PUTs accepted, %d refused as rollbacks, %d busy (503)", accepted.Load(), refused.Load(), busy.Load())
	if refused.Load() == 0 {
		t.Error("no PUT was refused: the clients never raced an older version against a newer one")
	}
	want := map[string]string{}
	for _, ov := range ovs {
		final := ov.vs[ov.acked.Load()]
		want[ov.origin] = etagOf(final)
		for _, r := range reps {
			if code, _, body := r.get(t, "/commons/"+ov.origin+".jsonl"); code != 200 || body != string(final) {
				t.Errorf("%s at %s: not the newest version acknowledged (v%d)", ov.origin, r.URL, ov.acked.Load()+1)
			}
		}
	}
	ia, ib := indexOf(t, reps[0], "", want), indexOf(t, reps[1], "", want)
	if ia != ib {
		t.Fatalf("the replicas' indexes differ:\nA %s\nB %s", ia, ib)
	}
	var idx []IndexEntry
	_ = json.Unmarshal([]byte(ia), &idx)
	if len(idx) != origins || !slices.IsSortedFunc(idx, func(a, b IndexEntry) int { return strings.Compare(a.Origin, b.Origin) }) {
		t.Fatalf("index: %d entries (want %d), sorted %v", len(idx), origins, idx)
	}
}
