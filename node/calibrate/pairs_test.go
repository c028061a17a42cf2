package calibrate

import (
	"strings"
	"testing"
)

func TestThresholdPicksTheBestF1(t *testing.T) {
	// Same pairs score 0.9, 0.8 and 0.45; different ones 0.5, 0.3 and 0.
	scores := []float64{0.9, 0.8, 0.45, 0.5, 0.3, 0}
	same := []bool{true, true, true, false, false, false}
	rep, err := Threshold(scores, same)
	if err != nil {
		t.Fatal(err)
	}
	// At 0.65 (between 0.5 and 0.8): precision 1, recall 2/3, F1 0.8; at
	// 0.38 (between 0.3 and 0.45, rounded): precision 3/4, recall 1, F1
	// 0.857, the best.
	if rep.Pairs != 6 || rep.Same != 3 || rep.Threshold != 0.38 || rep.Recall != 1 || rep.Precision != 0.75 {
		t.Fatalf("report %+v", rep)
	}
	if len(rep.Table) < 9 || rep.Table[0].Threshold != 0.1 || rep.Table[len(rep.Table)-1].Threshold != 0.9 {
		t.Errorf("table %+v", rep.Table)
	}
	for _, bad := range []struct {
		scores []float64
		same   []bool
		want   string
	}{
		{[]float64{0.5, 0.6}, []bool{true, true}, "both labels"},
		{[]float64{0, 0}, []bool{true, false}, "every pair scores 0"},
	} {
		if _, err := Threshold(bad.scores, bad.same); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("Threshold(%v, %v) = %v, want %q", bad.scores, bad.same, err, bad.want)
		}
	}
}

func TestReadPairs(t *testing.T) {
	pairs, err := ReadPairs(strings.NewReader("# a comment\n\n"+`{"a": "x fails", "b": "x breaks", "same": true, "split": "dev"}`+"\n"), "p.jsonl")
	if err != nil || len(pairs) != 1 || !pairs[0].Same || pairs[0].B != "x breaks" {
		t.Fatalf("%+v %v", pairs, err)
	}
	for _, line := range []string{`{"a": "x", "b": "y"}`, `{"a": "", "b": "y", "same": false}`, `not json`} {
		if _, err := ReadPairs(strings.NewReader(line+"\n"), "p.jsonl"); err == nil || !strings.Contains(err.Error(), "p.jsonl:1:") {
			t.Errorf("%s: %v, want an error naming p.jsonl:1", line, err)
		}
	}
}
