package calibrate

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/remem/remem/node"
)

func readTestdata(t *testing.T) []Row {
	t.Helper()
	f, err := os.Open("testdata/clusters.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	rows, bad, err := ReadRows(f)
	if err != nil || len(bad) > 0 {
		t.Fatalf("reading testdata: %v %v", err, bad)
	}
	return rows
}

// rowLine is a row's numbers as the table of `remem calibrate --clusters`
// prints them.
type rowLine struct {
	id                string
	written, expected int
	exact             bool
	kept, facts       int
	raw, drafts       int
}

// TestClustersTestdata scores testdata/clusters.jsonl with the default
// writer and the lexical similarity: the numbers are exact, so a change of
// the writer or the clustering that moves them shows here.
func TestClustersTestdata(t *testing.T) {
	rep, err := Clusters(context.Background(), node.Config{}, readTestdata(t))
	if err != nil {
		t.Fatal(err)
	}
	want := []rowLine{
		{"go-disk", 2, 2, true, 4, 4, 0, 0},
		{"npm-eacces", 1, 1, true, 2, 2, 0, 0},
		{"same-surprise", 1, 1, true, 2, 2, 0, 0},
		{"private-host", 1, 1, true, 2, 2, 0, 1}, // the host's placeholder makes a draft (textcheck.CutOut)
		{"git-correction", 1, 1, true, 2, 2, 0, 0},
		{"pip-two", 2, 2, true, 4, 4, 0, 0},
		{"kubectl-context", 2, 1, false, 1, 2, 0, 1}, // "fails with error." says nothing: a draft
		{"helm-internal", 2, 2, true, 4, 4, 0, 2},    // the upper-case message glued after "with" makes a draft too
	}
	if len(rep.Rows) != len(want) || len(rep.Bad) != 0 {
		t.Fatalf("%d rows scored, %d bad, want %d and 0: %+v", len(rep.Rows), len(rep.Bad), len(want), rep.Bad)
	}
	for i, r := range rep.Rows {
		got := rowLine{r.ID, r.LessonsWritten, r.LessonsExpected, r.ExactGrouping, r.FactsKept, r.Facts, r.RawData, r.Drafts}
		if got != want[i] {
			t.Errorf("row %d: %+v, want %+v\nlessons: %+v", i, got, want[i], r.Lessons)
		}
	}
	wantTotals := Totals{Rows: 8, ExactGrouping: 7, ExactByFamily: 7, LessonsWritten: 12, LessonsExpected: 11, FactsKept: 21, Facts: 22,
		FactsRatio: 21.0 / 22, RawData: 0, RawFlagged: 0, Drafts: 4, Published: 8}
	if rep.Totals != wantTotals {
		t.Errorf("totals %+v, want %+v", rep.Totals, wantTotals)
	}

	// The two reports of the same surprise made one lesson; the private
	// project name survived the redaction, and the raw-data check does not
	// see it, but the sentence is a draft (textcheck.CutOut: "UPGRADE
	// FAILED:" glued on), so it counts as no raw data that would be
	// signed; the pushed token made a draft.
	same := rep.Rows[2]
	if len(same.Lessons) != 1 || len(same.Lessons[0].Events) != 2 {
		t.Errorf("same surprise: %+v", same.Lessons)
	}
	helm := rep.Rows[7]
	raw, draft := helm.Lessons[0], helm.Lessons[1]
	if raw.RawData || len(raw.Private) != 1 || raw.Private[0] != "zephyr-ledger" || len(raw.Flagged) != 0 || raw.Draft == "" {
		t.Errorf("the lesson with the project name: %+v", raw)
	}
	if draft.Draft == "" || draft.RawData || strings.Contains(draft.Text, "ghp_") {
		t.Errorf("the draft: %+v", draft)
	}
	kube := rep.Rows[6]
	if len(kube.Groups) != 1 || len(kube.Groups[0].Lessons) != 2 || len(kube.Groups[0].Missing) != 1 || kube.Groups[0].Missing[0][0] != "Unauthorized" {
		t.Errorf("kubectl: %+v", kube.Groups)
	}
	// The private host of private-host was redacted: no raw data.
	if p := rep.Rows[3].Lessons[0]; p.RawData || len(p.Private) != 0 {
		t.Errorf("private-host: %+v", p)
	}
}

// TestClustersDuplicatesAndRejects: an event the store takes as a
// duplicate of an earlier one (same agent, session, kind and title) goes
// where that one went; a row whose event ingest refuses (an "at" far
// ahead of the clock) is reported bad and the next row is still scored; a
// Row built by hand is decoded before it is scored.
func TestClustersDuplicatesAndRejects(t *testing.T) {
	lines := []string{
		`{"id":"dup","events":[{"kind":"error","title":"make","happened":"missing separator"},{"kind":"error","title":"make","happened":"missing separator, again"}],"groups":[{"events":[0,1],"facts":[["separator"]]}]}`,
		`{"id":"dup-apart","events":[{"kind":"error","title":"make","happened":"missing separator"},{"kind":"error","title":"make","happened":"missing separator, again"}],"groups":[{"events":[0]},{"events":[1]}]}`,
		`{"id":"future","events":[{"kind":"error","title":"make","happened":"x","at":"2999-01-01T00:00:00Z"}],"groups":[{"events":[0]}]}`,
	}
	rows, bad, err := ReadRows(strings.NewReader(strings.Join(lines, "\n")))
	if err != nil || len(bad) != 0 {
		t.Fatal(err, bad)
	}
	rows = append(rows, Row{ID: "by-hand", Events: rows[0].Events[:1], Groups: []Group{{Events: []int{0}}}})
	rep, err := Clusters(context.Background(), node.Config{}, rows)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 3 || len(rep.Bad) != 1 || rep.Bad[0].ID != "future" || rep.Bad[0].Line != 3 || !strings.Contains(rep.Bad[0].Reason, `event 0 was not taken: "at"`) {
		t.Fatalf("rows %+v, bad %+v", rep.Rows, rep.Bad)
	}
	if r := rep.Rows[0]; !r.ExactGrouping || r.LessonsWritten != 1 || r.FactsKept != 1 || r.Duplicates != 1 {
		t.Errorf("dup: %+v", r)
	}
	if r := rep.Rows[1]; r.ExactGrouping || r.LessonsWritten != 1 || r.LessonsExpected != 2 {
		t.Errorf("dup-apart: %+v", r)
	}
	if r := rep.Rows[2]; r.ID != "by-hand" || !r.ExactGrouping || r.LessonsWritten != 1 {
		t.Errorf("by-hand: %+v", r)
	}
	if rep.Totals.BadRows != 1 || rep.Totals.Rows != 3 || rep.Totals.FactsRatio != 1 {
		t.Errorf("totals %+v", rep.Totals)
	}
}

func TestClustersCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Clusters(ctx, node.Config{}, readTestdata(t)); err == nil {
		t.Fatal("a cancelled run scored every row")
	}
}

// TestClustersCountsRawData: a private name the raw-data check cannot see
// (a project named like any word pair) that reaches a sentence the node
// would sign counts as raw data, not flagged; in a draft it would not.
func TestClustersCountsRawData(t *testing.T) {
	const row = `{"id":"unseen","events":[{"kind":"error","title":"helm upgrade quillmoor-ledger ./chart",` +
		`"happened":"Error: timed out waiting for the condition","agent":"codex","session":"s1","cwd":"/srv/ops"}],` +
		`"groups":[{"events":[0],"facts":[["timed out"]]}],"private":["quillmoor-ledger"]}`
	rows, bad, err := ReadRows(strings.NewReader(row + "\n"))
	if err != nil || len(bad) > 0 {
		t.Fatal(err, bad)
	}
	rep, err := Clusters(context.Background(), node.Config{}, rows)
	if err != nil {
		t.Fatal(err)
	}
	l := rep.Rows[0].Lessons
	if len(l) != 1 || l[0].Draft != "" || !l[0].RawData || len(l[0].Flagged) != 0 || rep.Totals.RawData != 1 {
		t.Fatalf("lessons %+v, totals %+v: want one signed lesson holding the name, counted as raw data", l, rep.Totals)
	}
}
