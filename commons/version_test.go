package commons

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/remem/remem/internal/forge"
	"github.com/remem/remem/internal/testutil"
	"github.com/remem/remem/protocol"
)

// v2Line is a lesson of id that a newer writer signed as version 2: this
// commons cannot tell whether it is sound, or even who wrote it.
func v2Line(id protocol.Identity, text string) []byte {
	m := forge.LessonMembers(id, text, protocol.FormatTime(recTime))
	m["v"], m["novelty"] = "2", `{"what":"a member v1 never heard of"}`
	return forge.Sign(id, m)
}

// TestPutSkipsUnknownVersion: SPEC §5 step 2 skips a line of another `v`
// ("not an error, not stored"), so a memory whose newer version writes v2
// lines still pushes to this commons. The PUT is taken, answered with the
// records stored and the lines skipped, and the file is served (and
// pulled) holding the v1 lines only, each byte for byte.
func TestPutSkipsUnknownVersion(t *testing.T) {
	ts := newTestServer(t, nil)
	id := testutil.Identity(t, "alice")
	v1 := lessonLines(t, "alice", 3, "mixed")
	mixed := [][]byte{v1[0], v2Line(id, "the nightly build of the docs site takes four minutes"), v1[1], v1[2]}

	// Through the client, as a memory pushes.
	res, err := ts.client(testToken).Push(context.Background(), id.Origin(), mixed)
	if err != nil {
		t.Fatalf("push of 3 v1 lines and 1 v2 line: %v", err)
	}
	if res.Records != 3 || res.Skipped != 1 || !res.Created {
		t.Fatalf("push answer %+v, want 3 records stored and 1 line skipped", res)
	}
	code, _, body := ts.get(t, "/commons/"+protocol.OriginFileName(id.Origin()))
	if want := string(testutil.JoinLines(v1...)); code != http.StatusOK || body != want {
		t.Fatalf("GET: %d\n%s\nwant the v1 lines only:\n%s", code, body, want)
	}

	// The same file again, raw: the same bytes stored, nothing changes.
	code, _, body = ts.put(t, protocol.OriginFileName(id.Origin()), testToken, testutil.JoinLines(mixed...))
	var a PutAnswer
	if err := json.Unmarshal([]byte(body), &a); err != nil || code != http.StatusOK || a.Records != 3 || a.Skipped != 1 {
		t.Fatalf("PUT again: %d %s", code, body)
	}

	// A puller gets the three records and nothing to skip.
	var got int
	rep, err := (&Client{BaseURL: ts.URL}).Pull(context.Background(), "", time.Now(), func(_ string, recs []*protocol.Record) error {
		got += len(recs)
		return nil
	})
	if err != nil || got != 3 || rep.Skipped != 0 {
		t.Fatalf("pull: %d records, report %+v, %v", got, rep, err)
	}
}

// TestPutOfOnlyUnknownVersionRefused: a file with no line this commons can
// verify proves nothing about who sent it, so it is refused (400, reason
// "unknown version") and the stored file stays as it was.
func TestPutOfOnlyUnknownVersionRefused(t *testing.T) {
	ts := newTestServer(t, nil)
	id := testutil.Identity(t, "alice")
	name := protocol.OriginFileName(id.Origin())
	v1 := lessonLines(t, "alice", 1, "single")
	if code, _, body := ts.put(t, name, testToken, testutil.JoinLines(v1...)); code != http.StatusCreated {
		t.Fatalf("first PUT: %d %s", code, body)
	}
	code, _, body := ts.put(t, name, testToken, v2Line(id, "the staging database is wiped every night"))
	var e errorBody
	if err := json.Unmarshal([]byte(body), &e); err != nil || code != http.StatusBadRequest || e.Reason != protocol.ReasonUnknownVersion || !strings.Contains(e.Error, "version") {
		t.Fatalf("PUT of a v2 line only: %d %s", code, body)
	}
	if _, _, got := ts.get(t, "/commons/"+name); !bytes.Equal([]byte(got), testutil.JoinLines(v1...)) {
		t.Fatalf("the stored file changed:\n%s", got)
	}
}
