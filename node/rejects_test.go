package node_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/remem/remem/node"
)

// TestRejectsAccountedAfterRotations: SPEC §2 says a rejected event line is
// never silently lost. 2,400 rejected lines (about 2.6 MB, two rotations of
// the rejects file) are all accounted for: the lines still in the files the
// status names plus the lines it counts as dropped past the bound. Each
// ingest (every other one through POST /memory/remember) says how many
// older lines it dropped, and those add up too.
func TestRejectsAccountedAfterRotations(t *testing.T) {
	home := t.TempDir()
	m, err := node.Open(node.Config{Home: home, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = m.Close() }()
	junk := strings.Repeat("x", 1000)
	const batches, perBatch = 24, 100
	var droppedByIngests int64
	for b := 0; b < batches; b++ {
		var in strings.Builder
		for i := 0; i < perBatch; i++ {
			fmt.Fprintf(&in, "garbage %d/%d %s\n", b, i, junk)
		}
		rep := ingestBy(t, m, b%2 == 1, in.String())
		if len(rep.Rejected) != perBatch || rep.Rejects == nil || len(rep.Rejects.Files) == 0 {
			t.Fatalf("batch %d: report %d rejected, rejects %+v", b, len(rep.Rejected), rep.Rejects)
		}
		droppedByIngests += rep.RejectsDropped
		if rep.Rejects.Dropped != droppedByIngests {
			t.Fatalf("batch %d: the report counts %d dropped in all, the ingests %d", b, rep.Rejects.Dropped, droppedByIngests)
		}
	}
	st, err := m.Status()
	if err != nil {
		t.Fatal(err)
	}
	var kept int64
	for _, path := range st.Rejects.Files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		kept += int64(bytes.Count(data, []byte("\n")))
	}
	want := []string{filepath.Join(home, node.RejectsFile), filepath.Join(home, node.RejectsFile+".1")}
	if fmt.Sprint(st.Rejects.Files) != fmt.Sprint(want) {
		t.Errorf("status names %v, want %v", st.Rejects.Files, want)
	}
	if st.Rejects.Kept != kept {
		t.Errorf("status counts %d kept, the files hold %d", st.Rejects.Kept, kept)
	}
	if st.Rejects.Dropped == 0 || kept+st.Rejects.Dropped != batches*perBatch {
		t.Fatalf("%d kept + %d counted as dropped, want %d rejected lines in all", kept, st.Rejects.Dropped, batches*perBatch)
	}
	if st.Rejects.Dropped != droppedByIngests {
		t.Errorf("status counts %d dropped, the ingests said %d", st.Rejects.Dropped, droppedByIngests)
	}
}

// TestRejectsDroppedCountRefusedWhenGarbled: a count file a hostile process
// overwrote is reported by name, never read as zero; rotation refuses to
// drop more lines it cannot count, and the ingest says so.
func TestRejectsDroppedCountRefusedWhenGarbled(t *testing.T) {
	home := t.TempDir()
	m, err := node.Open(node.Config{Home: home, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = m.Close() }()
	if err := os.WriteFile(filepath.Join(home, node.RejectsDroppedFile), []byte("lots\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := m.Status()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(st.Rejects.Error, node.RejectsDroppedFile) {
		t.Fatalf("status rejects %+v: the garbled count is not named", st.Rejects)
	}
	line := "garbage " + strings.Repeat("y", 1000) + "\n"
	var failed error
	for i := 0; i < 3 && failed == nil; i++ { // the third MiB replaces rejects.jsonl.1
		_, failed = m.Ingest("events.jsonl", strings.NewReader(strings.Repeat(line, node.MaxRejectsBytes/len(line)+1)))
	}
	if failed == nil || !strings.Contains(failed.Error(), node.RejectsDroppedFile) {
		t.Fatalf("ingest past the bound with a garbled count: %v", failed)
	}
}

// ingestBy sends events to m by Ingest, or by POST /memory/remember.
func ingestBy(t *testing.T, m *node.Memory, post bool, events string) node.IngestReport {
	t.Helper()
	if !post {
		rep, err := m.Ingest("events.jsonl", strings.NewReader(events))
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "/memory/remember", strings.NewReader(events))
	req.Header.Set("Content-Type", "application/json")
	req.Host = "127.0.0.1:7878"
	req.Header.Set("Authorization", "Bearer "+m.APIToken())
	node.NewAPI(m, node.APIOptions{}).ServeHTTP(rec, req)
	var rep node.IngestReport
	if err := json.Unmarshal(rec.Body.Bytes(), &rep); err != nil || rec.Code != http.StatusBadRequest {
		t.Fatalf("POST /memory/remember of garbage: %d %.200s (%v)", rec.Code, rec.Body, err)
	}
	return rep
}
