package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/remem/remem/node"
)

// TestRejectsAccountedThroughBinary: `remem ingest` says how many older
// rejected lines the bound of the rejects files dropped and where the rest
// are, and `remem status` (text and --json) accounts for all 2,400
// rejected lines: kept in the files it names plus counted as dropped.
func TestRejectsAccountedThroughBinary(t *testing.T) {
	home := newHome(t)
	junk := strings.Repeat("x", 1000)
	const batches, perBatch = 3, 800
	var dropped int64
	for b := 0; b < batches; b++ {
		var in strings.Builder
		for i := 0; i < perBatch; i++ {
			fmt.Fprintf(&in, "garbage %d/%d %s\n", b, i, junk)
		}
		var rep node.IngestReport
		if err := json.Unmarshal([]byte(must(t, home, []byte(in.String()), "ingest", "--json", "-")), &rep); err != nil {
			t.Fatal(err)
		}
		if len(rep.Rejected) != perBatch || rep.Rejects == nil || rep.Rejects.Files[0] != filepath.Join(home, node.RejectsFile) {
			t.Fatalf("batch %d: %d rejected, rejects %+v", b, len(rep.Rejected), rep.Rejects)
		}
		dropped += rep.RejectsDropped
	}
	out := must(t, home, []byte("garbage once more\n"), "ingest", "-")
	if !strings.Contains(out, filepath.Join(home, node.RejectsFile)) || !strings.Contains(out, fmt.Sprintf("%d older ones dropped", dropped)) {
		t.Errorf("ingest output says neither where the rejects are nor how many were dropped:\n%s", out)
	}
	var st node.Status
	if err := json.Unmarshal([]byte(must(t, home, nil, "status", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	if dropped == 0 || st.Rejects.Dropped != dropped || st.Rejects.Kept+st.Rejects.Dropped != batches*perBatch+1 {
		t.Fatalf("status: %d kept + %d dropped (ingests said %d dropped), want %d in all", st.Rejects.Kept, st.Rejects.Dropped, dropped, batches*perBatch+1)
	}
	text := must(t, home, nil, "status")
	want := fmt.Sprintf("rejects    %d event lines kept, %d dropped past the bound", st.Rejects.Kept, st.Rejects.Dropped)
	if !strings.Contains(text, want) || !strings.Contains(text, filepath.Join(home, node.RejectsFile+".1")) {
		t.Errorf("status text lacks %q and the rotated file:\n%s", want, text)
	}
}
