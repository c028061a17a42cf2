package commons

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/remem/remem/internal/testutil"
	"github.com/remem/remem/protocol"
)

// FuzzPutBody sends arbitrary bodies as a PUT: the server never panics and
// never answers 5xx, a refused body leaves the stored file as it was, and
// an accepted one is stored as sent, but for the lines of an unknown
// version it skipped: those are never stored.
func FuzzPutBody(f *testing.F) {
	good := lessonLines(f, "alice", 3, "v1")
	f.Add(testutil.JoinLines(good...))
	f.Add(testutil.JoinLines(good...)[:200])
	f.Add([]byte{})
	f.Add([]byte("\n\n\r\n"))
	f.Add([]byte("{}\n[]\nnull\n"))
	f.Add([]byte("\xff\xfe\x00binary"))
	f.Add(bytes.Repeat([]byte("a"), 9000))
	f.Add(append(testutil.JoinLines(lessonLines(f, "bob", 1, "v1")...), testutil.JoinLines(good...)...))
	f.Add(bytes.Replace(testutil.JoinLines(good...), []byte(`"v":1`), []byte(`"v":2`), 1))
	f.Add(bytes.ReplaceAll(testutil.JoinLines(good...), []byte(`"v":1`), []byte(`"v":2`)))
	f.Add(append(testutil.JoinLines(good...), "{\"v\":1.0}\n{\"v\":2}\r\n\n"...))
	s, err := NewServer(context.Background(), ServerConfig{DataDir: f.TempDir(), Tokens: []string{testToken}})
	if err != nil {
		f.Fatal(err)
	}
	defer s.Close()
	origin := testutil.Identity(f, "alice").Origin()
	path := "/commons/" + origin + ".jsonl"
	f.Fuzz(func(t *testing.T, body []byte) {
		before := getBody(s, path)
		req := httptest.NewRequest(http.MethodPut, path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+testToken)
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		switch {
		case w.Code >= 500:
			t.Fatalf("status %d for %q: %s", w.Code, body, w.Body)
		case w.Code == 200 || w.Code == 201:
			var a PutAnswer
			if err := json.Unmarshal(w.Body.Bytes(), &a); err != nil {
				t.Fatalf("accepted with the answer %q: %v", w.Body, err)
			}
			after := getBody(s, path)
			if a.Skipped == 0 && !bytes.Equal(after, body) {
				t.Fatalf("accepted but stored %q", after)
			}
			b := protocol.VerifyBatch(protocol.SplitLines(after), protocol.Bound{Origin: origin}, time.Now())
			if len(b.Records) != a.Records || len(b.Refused)+len(b.Skipped) > 0 {
				t.Fatalf("accepted %+v but stored %q", a, after)
			}
		default:
			if after := getBody(s, path); !bytes.Equal(after, before) {
				t.Fatalf("refused (%d) but the file changed", w.Code)
			}
		}
	})
}

func getBody(s *Server, path string) []byte {
	w := httptest.NewRecorder()
	s.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
	return w.Body.Bytes()
}
