package consolidate

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"regexp"
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

func readQualityCases(t testing.TB, path string) []qualityCase {
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
	return scoreWriter(t, cases, DefaultWriter{Redact: protocol.RedactRawData})
}

// scoreWriter runs w on every case and scores what it wrote.
func scoreWriter(t *testing.T, cases []qualityCase, w Writer) qualityScore {
	t.Helper()
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

// checked is a writer held to the checks the node holds every configured
// writer to (node.Memory.writeLesson): its sentence, redacted, must pass
// protocol.CheckLessonText, or the default writer's is used.
type checked struct {
	w               Writer
	taken, fellBack int
	fallback        DefaultWriter
}

func (c *checked) Write(ctx context.Context, cl Cluster) (string, error) {
	if text, err := c.w.Write(ctx, cl); err == nil {
		text = protocol.RedactRawData(text)
		if protocol.CheckLessonText(text) == nil {
			c.taken++
			return text, nil
		}
	}
	c.fellBack++
	return c.fallback.Write(ctx, cl)
}

// TestLessonQualitySampling runs the sampling path on the labelled set with
// a scripted model (no model is reachable here): of every four clusters it
// answers one with a sentence that reads well (the default writer's, as a
// stand-in), and three as a careless or hostile model would: an
// instruction, a good sentence with a host name and an e-mail address
// leaked into it (redacted, as any writer's), a preamble and a second
// sentence. The checks must let no instruction, raw data or preamble
// through, and the lessons must keep the targets.
func TestLessonQualitySampling(t *testing.T) {
	cases := readQualityCases(t, "testdata/lessons_quality.jsonl")
	def := DefaultWriter{Redact: protocol.RedactRawData}
	n := 0
	model := func(ctx context.Context, _, prompt string, _ int) (string, error) {
		n++
		// A model that writes well: the sentence the prompt's cluster
		// gives the default writer.
		var good string
		for _, c := range cases {
			if p, err := SamplingPrompt(Cluster{Kind: c.Kind, Episodes: c.Episodes}, protocol.RedactRawData); err == nil && samePrompt(p, prompt) {
				if good, err = def.Write(ctx, Cluster{Kind: c.Kind, Episodes: c.Episodes}); err != nil {
					return "", err
				}
			}
		}
		switch n % 4 {
		case 1:
			return "Always run go generate before the tests.", nil
		case 2: // a host name and an e-mail leaked into a good sentence
			return strings.TrimSuffix(good, ".") + " on build07.corp.internal for alice@example.com.", nil
		case 3:
			return "Sure! Here is the lesson: " + good + " It happens often.", nil
		}
		return good, nil
	}
	w := &checked{w: &SamplingWriter{Ask: model, Max: len(cases), Redact: protocol.RedactRawData}, fallback: def}
	s := scoreWriter(t, cases, w)
	t.Logf("sampling path: %d answers taken, %d refused or failed (the default writer wrote those)", w.taken, w.fellBack)
	if s.raw > 0 || s.instruction > 0 || s.factsPct() < 90 || s.shortPct() < 95 {
		t.Errorf("sampling path: facts %.1f%%, raw %d, instruction %d, short %.1f%%", s.factsPct(), s.raw, s.instruction, s.shortPct())
	}
	if w.taken == 0 || w.fellBack < len(cases)/2 {
		t.Errorf("taken %d, fell back %d: the script did not exercise both paths", w.taken, w.fellBack)
	}
}

// samePrompt compares two prompts without their per-request markers.
func samePrompt(a, b string) bool {
	return stripMarkers(a) == stripMarkers(b)
}

var markerToken = regexp.MustCompile(`EVENTS [0-9a-f]{12}`)

func stripMarkers(p string) string { return markerToken.ReplaceAllString(p, "EVENTS") }
