package commons

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/remem/remem/internal/hostile"
	"github.com/remem/remem/internal/testutil"
	"github.com/remem/remem/protocol"
)

// The commons server meets every hostile batch of the transport suite as a
// PUT of its owner's file: one bad line refuses the file; a line of an
// unknown version is skipped (not stored), as every receiver skips it.
func TestServerHostileInputs(t *testing.T) {
	hostile.Run(t, hostile.Transport{
		AllOrNothing: true,
		SizeLimit:    protocol.MaxOriginFile,
		Deliver: func(t *testing.T, owner protocol.Identity, lines [][]byte) hostile.Outcome {
			ts := newTestServer(t, nil)
			code, _, body := ts.put(t, protocol.OriginFileName(owner.Origin()), testToken, testutil.JoinLines(lines...))
			if code == http.StatusOK || code == http.StatusCreated {
				var a PutAnswer
				if err := json.Unmarshal([]byte(body), &a); err != nil {
					t.Fatal(err)
				}
				return hostile.Outcome{Taken: a.Records, Skipped: a.Skipped}
			}
			var e errorBody
			if err := json.Unmarshal([]byte(body), &e); err != nil || e.Reason == "" {
				t.Fatalf("a refused PUT (%d) without a reason: %s", code, body)
			}
			return hostile.Outcome{Refused: protocol.Tally{e.Reason: 1}}
		},
	})
}

// The commons client meets every hostile batch as a file a hostile
// commons serves under its owner's name: it trusts nothing the server
// checked and judges each line itself.
func TestClientHostileInputs(t *testing.T) {
	hostile.Run(t, hostile.Transport{
		SizeLimit: protocol.MaxOriginFile,
		Deliver: func(t *testing.T, owner protocol.Identity, lines [][]byte) hostile.Outcome {
			origin := owner.Origin()
			file := string(testutil.JoinLines(lines...))
			index, _ := json.Marshal([]IndexEntry{{Origin: origin, Updated: time.Now().UTC(), Records: len(lines), ETag: `"x"`}})
			mux := http.NewServeMux()
			mux.HandleFunc("GET /commons/index", func(w http.ResponseWriter, r *http.Request) { w.Write(index) })
			mux.HandleFunc("GET /commons/{name}", func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("ETag", `"x"`)
				strings.NewReader(file).WriteTo(w)
			})
			c := &Client{BaseURL: newHTTPServer(t, mux)}
			taken := 0
			rep, err := c.Pull(context.Background(), "", time.Now(), func(_ string, recs []*protocol.Record) error {
				taken += len(recs)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			return hostile.Outcome{Taken: taken, Refused: rep.Refused, Skipped: rep.Skipped}
		},
	})
}
