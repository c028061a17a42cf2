package commons

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/remem/remem/internal/testutil"
	"github.com/remem/remem/protocol"
)

type handler = func(w http.ResponseWriter, r *http.Request)

// serveHostile starts a "commons" whose index and files are what a test
// says (origins not in files get an empty file). Closing release, which
// happens when the test ends and before the server closes, ends the
// handlers that never answer.
func serveHostile(t *testing.T, release chan struct{}, index handler, files map[string]handler) string {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /commons/index", index)
	mux.HandleFunc("GET /commons/{name}", func(w http.ResponseWriter, r *http.Request) {
		origin, _ := protocol.OriginOfFileName(r.PathValue("name"))
		if f, ok := files[origin]; ok {
			f(w, r)
			return
		}
		w.Header().Set("ETag", `"empty"`)
		w.WriteHeader(http.StatusOK)
	})
	url := newHTTPServer(t, mux)
	t.Cleanup(func() { close(release) }) // runs before the server's Close
	return url
}

// endless writes prefix, then chunk until the client goes away.
func endless(release <-chan struct{}, prefix, chunk string) handler {
	return func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.WriteString(w, prefix); err != nil {
			return
		}
		for {
			select {
			case <-r.Context().Done():
				return
			case <-release:
				return
			default:
			}
			if _, err := io.WriteString(w, chunk); err != nil {
				return
			}
		}
	}
}

// silent never answers.
func silent(release <-chan struct{}) handler {
	return func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}
}

func entryJSON(origin string) string {
	b, _ := json.Marshal(IndexEntry{Origin: origin, Updated: time.Now().UTC(), Records: 3, ETag: `"` + origin + `"`})
	return string(b)
}

// pullWithin pulls with c and fails the test when the pull takes longer
// than limit; a backstop context ends it at twice the limit.
func pullWithin(t *testing.T, c *Client, limit time.Duration) (PullReport, [][]byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*limit)
	defer cancel()
	var got [][]byte
	start := time.Now()
	rep, err := c.Pull(ctx, "", time.Now(), func(_ string, recs []*protocol.Record) error {
		for _, r := range recs {
			got = append(got, r.Raw)
		}
		return nil
	})
	if d := time.Since(start); d > limit {
		t.Errorf("the pull took %v, more than %v", d, limit)
	}
	return rep, got, err
}

// joined lists the errors a pull joined (nil: none).
func joined(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// hasError reports whether one of the errors of err holds every part.
func hasError(err error, parts ...string) bool {
	for _, e := range joined(err) {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(e.Error(), p)
		}
		if ok {
			return true
		}
	}
	return false
}

// TestPullBoundsHostileServer: an endless index, an index of millions of
// origins, an endless file and a server that never answers each end the
// pull in bounded time and bytes, with an error in the report that names
// the limit, and what was pulled is kept.
func TestPullBoundsHostileServer(t *testing.T) {
	a := testutil.Identity(t, "alice")
	good := lessonLines(t, "alice", 3, "v1")
	goodFile := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"`+a.Origin()+`"`) // as the index says
		w.Write(testutil.JoinLines(good...))
	}
	const maxOrigins = 200
	newClient := func(url string) *Client {
		return &Client{BaseURL: url, State: &MemoryState{}, MaxOrigins: maxOrigins, RequestTimeout: 500 * time.Millisecond}
	}
	indexCap := maxIndexBytes(maxOrigins)

	t.Run("endless index body", func(t *testing.T) {
		release := make(chan struct{})
		url := serveHostile(t, release, endless(release, `[{"origin":"`, strings.Repeat("a", 4096)), nil)
		rep, _, err := pullWithin(t, newClient(url), 10*time.Second)
		if rep.Failed != 1 || !hasError(err, "index", "over", fmt.Sprint(indexCap)) {
			t.Errorf("err %v, report %+v", err, rep)
		}
		if rep.Bytes > indexCap+1 {
			t.Errorf("read %d bytes of the index, the cap is %d", rep.Bytes, indexCap)
		}
	})

	t.Run("millions of origins", func(t *testing.T) {
		release := make(chan struct{})
		index := func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "[%s,%s", entryJSON(a.Origin()), entryJSON(a.Origin())) // listed twice
			for i := range 5_000_000 {
				select {
				case <-r.Context().Done():
					return
				case <-release:
					return
				default:
				}
				if _, err := fmt.Fprintf(w, `,{"origin":"%016x","updated":"2020-01-01T00:00:00Z","records":1,"etag":"\"e\""}`, i+1); err != nil {
					return
				}
			}
			w.Write([]byte("]"))
		}
		url := serveHostile(t, release, index, map[string]handler{a.Origin(): goodFile})
		rep, got, err := pullWithin(t, newClient(url), 20*time.Second)
		if rep.Failed != 1 || !hasError(err, "more than", fmt.Sprint(maxOrigins), "origins") {
			t.Errorf("err %v, report %+v", err, rep)
		}
		if rep.Listed != maxOrigins || !equalLines(got, good) || rep.Accepted != len(good) {
			t.Errorf("listed %d, delivered %d records (alice fetched once?): %+v", rep.Listed, len(got), rep)
		}
		if rep.Bytes > indexCap+int64(len(testutil.JoinLines(good...)))+1 {
			t.Errorf("read %d bytes", rep.Bytes)
		}
	})

	t.Run("endless file, silent file, silent index", func(t *testing.T) {
		bob, carol := testutil.Identity(t, "bob").Origin(), testutil.Identity(t, "carol").Origin()
		release := make(chan struct{})
		var indexSilent atomic.Bool
		index := func(w http.ResponseWriter, r *http.Request) {
			if indexSilent.Load() {
				silent(release)(w, r)
				return
			}
			fmt.Fprintf(w, "[%s,%s,%s]", entryJSON(a.Origin()), entryJSON(bob), entryJSON(carol))
		}
		url := serveHostile(t, release, index, map[string]handler{
			a.Origin(): goodFile,
			bob:        endless(release, "", strings.Repeat(string(good[0])+"\n", 8)),
			carol:      silent(release),
		})
		c := newClient(url)
		rep, got, err := pullWithin(t, c, 10*time.Second)
		if !equalLines(got, good) {
			t.Fatalf("err %v, delivered %d records", err, len(got))
		}
		if rep.Refused[protocol.ReasonFileTooLarge] != 1 || rep.Failed != 1 || len(joined(err)) != 1 || !hasError(err, carol, "no complete answer within 500ms") {
			t.Errorf("report %+v, errors %v", rep, err)
		}
		if max := int64(clientMaxFile + 1 + len(testutil.JoinLines(good...)) + 1024); rep.Bytes > max {
			t.Errorf("read %d bytes, more than %d", rep.Bytes, max)
		}
		// Nothing pulled is lost: alice's file is remembered, carol's is
		// asked for again.
		rep, got, err = pullWithin(t, c, 10*time.Second)
		if len(got) != 0 || rep.Unchanged != 1 || !hasError(err, carol) {
			t.Errorf("second pull: %v, %d records, %+v", err, len(got), rep)
		}

		// An index that never answers: Pull returns the error.
		indexSilent.Store(true)
		start := time.Now()
		_, _, err = pullWithin(t, c, 10*time.Second)
		if err == nil || !strings.Contains(err.Error(), "no complete answer within 500ms") {
			t.Errorf("silent index: %v after %v", err, time.Since(start))
		}
	})
}

func equalLines(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}
