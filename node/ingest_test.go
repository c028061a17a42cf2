package node

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIngestKeepsBadLines: bad lines are named with their number and
// reason, kept in the rejects file, and the good lines are taken once.
func TestIngestKeepsBadLines(t *testing.T) {
	m, _ := openTest(t, nil)
	input := strings.Join([]string{
		`{"kind":"error","title":"go vet","happened":"printf arg mismatch","session":"1"}`,
		`not json at all`,
		`{"kind":"correction","agent_did":"x"}`,
		``,
		`{"kind":"error","title":"go vet","happened":"printf arg mismatch","session":"1"}`,
		"{\"kind\":\"note\",\"text\":\"bad \xff utf-8\"}",
		`{"kind":"note","text":"the docs build takes four minutes"}`,
	}, "\n")
	rep, err := m.Ingest("events.jsonl", strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Taken != 2 || rep.Duplicates != 1 || len(rep.Rejected) != 3 {
		t.Fatalf("report %+v", rep)
	}
	for i, want := range []int{2, 3, 6} {
		if rep.Rejected[i].Line != want || rep.Rejected[i].Reason == "" {
			t.Errorf("rejected[%d] = %+v, want line %d with a reason", i, rep.Rejected[i], want)
		}
	}
	kept, err := os.ReadFile(filepath.Join(m.Home(), RejectsFile))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(kept), "\n"); n != 3 || !strings.Contains(string(kept), "not json at all") {
		t.Fatalf("rejects file:\n%s", kept)
	}
}
