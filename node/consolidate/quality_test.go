package consolidate

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/remem/remem/protocol"
)

// A labelled cluster for TestLessonQuality: the events, the facts the
// lesson must keep (each a list of alternatives, matched without regard to
// case) and the substrings it must not hold (raw data from the events,
// "expected:" tails, the events' orders), matched as written.
type qualityCase struct {
	Name     string     `json:"name"`
	Kind     string     `json:"kind"`
	Episodes []Episode  `json:"episodes"`
	Facts    [][]string `json:"facts"`
	MustNot  []string   `json:"must_not"`
}

// qualityScore is what TestLessonQuality measures on a set.
type qualityScore struct {
	clusters, facts, kept    int
	raw, instruction, failed int
	short                    int // one sentence of at most qualityMaxChars
	stitched                 int // a stitching mark or a bare placeholder (badMarks)
}

// badMarks are what stitched fields and redactions that lost the meaning
// leave in a lesson: counted (as "stitched"), not gated.
var badMarks = []string{"expected:", "was expected", "returned fails", "returned times", "returned reports",
	"returned produces", "returned ignores", "returned Error", "fails: Error", ": because",
	"<ip>", "<path>", "<host>", "<email>", "<secret>", "<url>", "<person>"}

// qualityMaxChars is the length a lesson that reads well keeps to.
const qualityMaxChars = 200

func (s qualityScore) factsPct() float64 { return pct(s.kept, s.facts) }
func (s qualityScore) shortPct() float64 { return pct(s.short, s.clusters) }

func pct(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}

func readQualityCases(t *testing.T, path string) []qualityCase {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	var out []qualityCase
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var c qualityCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// scoreQuality runs the default writer, as the node runs it, on every case.
func scoreQuality(t *testing.T, cases []qualityCase) qualityScore {
	t.Helper()
	w := DefaultWriter{Redact: protocol.RedactRawData}
	var s qualityScore
	for _, c := range cases {
		s.clusters++
		s.facts += len(c.Facts)
		got, err := w.Write(context.Background(), Cluster{Kind: c.Kind, Episodes: c.Episodes})
		if err != nil {
			s.failed++
			t.Logf("%-28s NO LESSON: %v", c.Name, err)
			continue
		}
		low := strings.ToLower(got)
		var missing []string
		for _, alts := range c.Facts {
			ok := false
			for _, a := range alts {
				if strings.Contains(low, strings.ToLower(a)) {
					ok = true
					break
				}
			}
			if ok {
				s.kept++
			} else {
				missing = append(missing, alts[0])
			}
		}
		var notes []string
		if f := protocol.FindRawData(got); f != nil {
			s.raw++
			notes = append(notes, "RAW "+f[0].Match)
		}
		for _, m := range c.MustNot {
			if strings.Contains(got, m) {
				s.raw++
				notes = append(notes, "HOLDS "+m)
				break
			}
		}
		for _, m := range badMarks {
			if strings.Contains(got, m) {
				s.stitched++
				notes = append(notes, "STITCHED "+m)
				break
			}
		}
		if err := protocol.CheckLessonText(got); err != nil {
			s.instruction++
			notes = append(notes, "CHECK "+err.Error())
		}
		if utf8.RuneCountInString(got) <= qualityMaxChars && countSentences(got) == 1 {
			s.short++
		} else {
			notes = append(notes, "LONG")
		}
		if len(missing) > 0 {
			notes = append(notes, "MISSING "+strings.Join(missing, " | "))
		}
		t.Logf("%-28s %s %s", c.Name, got, strings.Join(notes, "; "))
	}
	t.Logf("%d clusters: facts kept %.1f%% (%d/%d), raw data or must_not %d, instruction %d, no lesson %d, one sentence <= %d chars %.1f%%, stitched %d",
		s.clusters, s.factsPct(), s.kept, s.facts, s.raw, s.instruction, s.failed, qualityMaxChars, s.shortPct(), s.stitched)
	return s
}

// TestLessonQuality scores the default writer on a labelled set of
// clusters (testdata/lessons_quality.jsonl) and gates on it, and reports,
// without gating, its score on a blind set that was never tuned on
// (testdata/lessons_quality_blind.jsonl).
//
//	go test ./node/consolidate -run TestLessonQuality -v
func TestLessonQuality(t *testing.T) {
	var tuned qualityScore
	t.Run("tuned", func(t *testing.T) {
		cases := readQualityCases(t, "testdata/lessons_quality.jsonl")
		if len(cases) < 60 {
			t.Fatalf("%d clusters, want at least 60", len(cases))
		}
		tuned = scoreQuality(t, cases)
	})
	t.Run("blind", func(t *testing.T) {
		scoreQuality(t, readQualityCases(t, "testdata/lessons_quality_blind.jsonl"))
	})
	if qualityGate {
		if tuned.factsPct() < 90 {
			t.Errorf("facts kept %.1f%%, want at least 90%%", tuned.factsPct())
		}
		if tuned.raw > 0 || tuned.instruction > 0 || tuned.failed > 0 {
			t.Errorf("%d lessons with raw data, %d with an instruction, %d clusters without a lesson, want none", tuned.raw, tuned.instruction, tuned.failed)
		}
		if tuned.shortPct() < 95 {
			t.Errorf("one sentence of at most %d characters for %.1f%%, want at least 95%%", qualityMaxChars, tuned.shortPct())
		}
	}
}

// qualityGate turns the targets on.
const qualityGate = true
