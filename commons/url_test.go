package commons

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/remem/remem/internal/testutil"
	"github.com/remem/remem/protocol"
)

func TestCanonicalURL(t *testing.T) {
	for _, c := range []struct{ in, want, err string }{
		{"https://commons.example.org", "https://commons.example.org", ""},
		{"https://commons.example.org/", "https://commons.example.org", ""},
		{"https://commons.example.org/commons", "https://commons.example.org", ""},
		{"https://commons.example.org/commons/", "https://commons.example.org", ""},
		{"  HTTPS://Commons.Example.ORG:443/commons/ ", "https://commons.example.org", ""},
		{"http://127.0.0.1:8787/commons", "http://127.0.0.1:8787", ""},
		{"http://[::1]:8787/", "http://[::1]:8787", ""},
		{"http://example.org:80", "http://example.org", ""},
		{"https://example.org:8443/commons/", "https://example.org:8443", ""},
		{"https://example.org/other", "", `path "/other"`},
		{"https://example.org/commons/index", "", `path "/commons/index"`},
		{"https://example.org/api/commons/", "", `path "/api/commons/"`},
		{"https://example.org//commons", "", "path"},
		{"ftp://example.org", "", "http:// or https://"},
		{"example.org/commons", "", "http:// or https://"},
		{"https://", "", "host"},
		{"https://example.org/?since=x", "", "query"},
		{"https://example.org/#top", "", "fragment"},
		{"https://me:secret@example.org", "", "token"},
		{"", "", "http:// or https://"},
	} {
		got, err := CanonicalURL(c.in)
		if c.err == "" && (err != nil || got != c.want) {
			t.Errorf("CanonicalURL(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
		if c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("CanonicalURL(%q) = %q, %v; want an error saying %q", c.in, got, err, c.err)
		}
	}
}

// TestClientURLForms: the four ways to name a commons reach the same real
// server, as the same scope and the same pull state; any other path is
// refused before a request is sent.
func TestClientURLForms(t *testing.T) {
	ts := newTestServer(t, nil)
	a := testutil.Identity(t, "alice")
	lines := lessonLines(t, "alice", 4, "v1")
	state := &MemoryState{}
	var scopes []string
	for i, form := range []string{ts.URL, ts.URL + "/", ts.URL + "/commons", ts.URL + "/commons/"} {
		c := &Client{BaseURL: form, Token: testToken, HTTP: ts.http.Client(), State: state}
		if _, err := c.Push(context.Background(), a.Origin(), lines[:i+1]); err != nil {
			t.Fatalf("push to %s: %v", form, err)
		}
		var got int
		rep, err := c.Pull(context.Background(), "", time.Now(), func(scope string, recs []*protocol.Record) error {
			scopes = append(scopes, scope)
			got += len(recs)
			return nil
		})
		if err != nil || got != i+1 {
			t.Fatalf("pull from %s: %d records, %+v, %v", form, got, rep, err)
		}
		if c.Scope() != "commons:"+ts.URL {
			t.Errorf("scope of %s = %q, want commons:%s", form, c.Scope(), ts.URL)
		}
	}
	for _, s := range scopes {
		if s != "commons:"+ts.URL {
			t.Errorf("records delivered with scope %q", s)
		}
	}
	st, _ := state.Load()
	if len(st.Servers) != 1 {
		t.Errorf("the pull state names %d servers, want one: %+v", len(st.Servers), st.Servers)
	}

	bad := &Client{BaseURL: ts.URL + "/remem/", Token: testToken, HTTP: ts.http.Client()}
	if _, err := bad.Push(context.Background(), a.Origin(), lines); err == nil || !strings.Contains(err.Error(), `path "/remem/"`) {
		t.Errorf("push to another path: %v", err)
	}
	if _, err := bad.Pull(context.Background(), "", time.Now(), func(string, []*protocol.Record) error { return nil }); err == nil ||
		!strings.Contains(err.Error(), `path "/remem/"`) {
		t.Errorf("pull from another path: %v", err)
	}
}
