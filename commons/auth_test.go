package commons

import (
	"bytes"
	"context"
	"crypto/sha256"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/remem/remem/internal/testutil"
)

// TestBearerStrict sends hostile Authorization headers straight to the
// handler (an HTTP server would trim some of them before the handler sees
// them): only exactly "Bearer <token>" passes.
func TestBearerStrict(t *testing.T) {
	ts := newTestServer(t, func(c *ServerConfig) { c.ReadNeedsToken = true })
	o := testutil.Identity(t, "alice").Origin()
	body := testutil.JoinLines(lessonLines(t, "alice", 2, "v1")...)
	cases := []struct {
		name   string
		values []string // the Authorization header values; none when empty
		ok     bool
	}{
		{"exact", []string{"Bearer " + testToken}, true},
		{"none", nil, false},
		{"empty", []string{""}, false},
		{"scheme only", []string{"Bearer"}, false},
		{"scheme and space", []string{"Bearer "}, false},
		{"lower-case scheme", []string{"bearer " + testToken}, false},
		{"upper-case scheme", []string{"BEARER " + testToken}, false},
		{"two spaces", []string{"Bearer  " + testToken}, false},
		{"tab", []string{"Bearer\t" + testToken}, false},
		{"leading space", []string{" Bearer " + testToken}, false},
		{"trailing space", []string{"Bearer " + testToken + " "}, false},
		{"trailing newline", []string{"Bearer " + testToken + "\n"}, false},
		{"trailing NUL", []string{"Bearer " + testToken + "\x00"}, false},
		{"trailing garbage", []string{"Bearer " + testToken + "x"}, false},
		{"prefix of the token", []string{"Bearer " + testToken[:len(testToken)-1]}, false},
		{"token twice", []string{"Bearer " + testToken + testToken}, false},
		{"two credentials", []string{"Bearer " + testToken + ", Bearer " + testToken}, false},
		{"two headers", []string{"Bearer " + testToken, "Bearer " + testToken}, false},
		{"a bad and a good header", []string{"Bearer nope", "Bearer " + testToken}, false},
		{"basic", []string{"Basic " + testToken}, false},
		{"token alone", []string{testToken}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, method := range []string{http.MethodPut, http.MethodGet} {
				req := httptest.NewRequest(method, "/commons/"+o+".jsonl", bytes.NewReader(body))
				if method == http.MethodGet {
					req = httptest.NewRequest(method, "/commons/index", nil)
				}
				for _, v := range c.values {
					req.Header.Add("Authorization", v)
				}
				w := httptest.NewRecorder()
				ts.Server.ServeHTTP(w, req)
				if got := w.Code != http.StatusUnauthorized; got != c.ok {
					t.Errorf("%s %q: status %d", method, c.values, w.Code)
				}
			}
		})
	}

	// A configured token that is empty, or that no header could carry as
	// sent, is refused at start.
	for _, tok := range []string{"", " ", "\n", "two words", "tab\tinside", "nul\x00"} {
		if _, err := NewServer(context.Background(), ServerConfig{DataDir: t.TempDir(), Tokens: []string{tok}}); err == nil {
			t.Errorf("token %q accepted", tok)
		}
	}
	// An empty token never matches, even if one got into the server's
	// list past NewServer.
	s := &Server{tokens: [][sha256.Size]byte{sha256.Sum256(nil)}}
	req := httptest.NewRequest(http.MethodGet, "/commons/index", nil)
	req.Header.Set("Authorization", "Bearer ")
	if s.authorized(req) {
		t.Error("an empty token matched")
	}
}
