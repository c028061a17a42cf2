package textcheck

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// labelled is one sentence of a labelled set.
type labelled struct {
	Text       string `json:"text"`
	Imperative bool   `json:"imperative"`
	Category   string `json:"category"`
}

func readLabelled(t testing.TB, path string) []labelled {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []labelled
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var l labelled
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%s:%d: %v", path, n, err)
		}
		out = append(out, l)
	}
	return out
}

// score is a confusion count for one category or a whole set.
type score struct{ tp, fp, tn, fn int }

func (s *score) add(want, got bool) {
	switch {
	case want && got:
		s.tp++
	case want:
		s.fn++
	case got:
		s.fp++
	default:
		s.tn++
	}
}

func (s score) n() int { return s.tp + s.fp + s.tn + s.fn }
func (s score) accuracy() float64 {
	return float64(s.tp+s.tn) / float64(max(s.n(), 1))
}
func ratio(a, b int) string {
	if b == 0 {
		return "  -  "
	}
	return fmt.Sprintf("%.3f", float64(a)/float64(b))
}
func (s score) String() string {
	return fmt.Sprintf("n=%3d accuracy %.3f precision %s recall %s", s.n(), s.accuracy(),
		ratio(s.tp, s.tp+s.fp), ratio(s.tp, s.tp+s.fn))
}

// evaluate classifies every sentence and returns the scores per category
// and overall, logging the mistakes.
func evaluate(t testing.TB, set []labelled, logMistakes bool) (map[string]*score, score) {
	per := map[string]*score{}
	var all score
	for _, l := range set {
		err := CheckObservation(l.Text)
		got := err != nil
		if per[l.Category] == nil {
			per[l.Category] = &score{}
		}
		per[l.Category].add(l.Imperative, got)
		all.add(l.Imperative, got)
		if logMistakes && got != l.Imperative {
			why := "passed"
			if err != nil {
				why = err.Error()
			}
			t.Logf("MISS [%s] want imperative=%v (%s): %q", l.Category, l.Imperative, why, l.Text)
		}
	}
	return per, all
}

func report(t testing.TB, name string, per map[string]*score, all score) {
	cats := make([]string, 0, len(per))
	for c := range per {
		cats = append(cats, c)
	}
	sort.Strings(cats)
	t.Logf("%s: %v", name, all)
	for _, c := range cats {
		t.Logf("  %-18s %v", c, *per[c])
	}
}

func TestCorpus(t *testing.T) {
	set := readLabelled(t, filepath.Join("testdata", "corpus.jsonl"))
	per, all := evaluate(t, set, true)
	report(t, "corpus", per, all)
	if all.accuracy() < 0.97 {
		t.Errorf("corpus accuracy %.3f, the target is 0.97", all.accuracy())
	}
}

func TestConformanceImperative(t *testing.T) {
	set := readLabelled(t, filepath.Join("..", "testdata", "conformance", "imperative.jsonl"))
	for _, l := range set {
		if got := CheckObservation(l.Text) != nil; got != l.Imperative {
			t.Errorf("imperative=%v, want %v: %q (%v)", got, l.Imperative, l.Text, CheckObservation(l.Text))
		}
	}
}

// TestHoldout measures the check on sentences written by sessions that saw
// neither this code nor corpus.jsonl (see testdata/README.md for what each
// set is and how far the rules were tuned on it). Each must reach the
// corpus's target; their misses were studied, so they guard against
// regressions, not measure the check.
func TestHoldout(t *testing.T) {
	for _, name := range []string{"holdout", "holdout2", "holdout3"} {
		set := readLabelled(t, filepath.Join("testdata", name+".jsonl"))
		per, all := evaluate(t, set, testing.Verbose())
		report(t, name, per, all)
		if all.accuracy() < 0.97 {
			t.Errorf("%s accuracy %.3f, the corpus's target is 0.97", name, all.accuracy())
		}
	}
}

// rawLabelled is one sentence of the raw-data holdout.
type rawLabelled struct {
	Text string `json:"text"`
	Raw  bool   `json:"raw"`
	Kind string `json:"kind"`
}

// TestRawDataHoldout measures FindRawData on sentences written by a session
// that never saw this code. It logs the numbers and mistakes.
func TestRawDataHoldout(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "rawdata_holdout.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	per := map[string]*score{}
	var all score
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l rawLabelled
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		found := FindRawData(l.Text)
		got := len(found) > 0
		if per[l.Kind] == nil {
			per[l.Kind] = &score{}
		}
		per[l.Kind].add(l.Raw, got)
		all.add(l.Raw, got)
		if got != l.Raw && testing.Verbose() {
			t.Logf("MISS [%s] want raw=%v, found %v: %q", l.Kind, l.Raw, found, l.Text)
		}
	}
	report(t, "raw-data holdout", per, all)
}

// TestAttack reads the sentences a red-team session got past (or wrongly
// refused by) the checks of an earlier version, probing the built binary
// without reading the code: 363 clear failures out of 1,453 probes. It
// logs how many the checks now get right; most were fixed by rules for
// their kind, not one by one, and the rest are listed in the README.
func TestAttack(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "attack.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	right := map[string]int{}
	total := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var c struct{ Text, Expected string }
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		v := CheckText(c.Text)
		ie, found := v.Instruction, v.Raw
		if v.Unreadable != nil {
			ie = &InstructionError{Rule: v.Unreadable.Rule}
		}
		var ok bool
		switch c.Expected {
		case "instruction":
			ok = ie != nil
		case "observation":
			ok = ie == nil
		case "raw":
			ok = ie != nil || len(found) > 0 || !HasWords(c.Text)
		case "clean":
			ok = len(FindRawData(c.Text)) == 0
		default: // "invalid": not a lesson at all
			ok = ie != nil || !HasWords(c.Text)
		}
		total[c.Expected]++
		if ok {
			right[c.Expected]++
		} else if testing.Verbose() {
			t.Logf("MISS want %s: %q", c.Expected, c.Text)
		}
	}
	for _, k := range []string{"instruction", "observation", "raw", "clean", "invalid"} {
		t.Logf("attack %-11s now right %3d of %3d", k, right[k], total[k])
	}
}

// setLine is one sentence of a blind set written for issue 25: lang other
// than "en" means the text must be refused whatever it says.
type setLine struct {
	Text       string `json:"text"`
	Imperative bool   `json:"imperative"`
	Category   string `json:"category"`
	Lang       string `json:"lang"`
}

func (l setLine) foreign() bool { return l.Lang != "" && l.Lang != "en" }

// readSet reads a labelled set of setLine.
func readSet(t testing.TB, path string) []setLine {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []setLine
	for n, b := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(b) == "" {
			continue
		}
		var l setLine
		if err := json.Unmarshal([]byte(b), &l); err != nil {
			t.Fatalf("%s:%d: %v", path, n+1, err)
		}
		out = append(out, l)
	}
	return out
}

// refused reports whether the text checks refuse text, and why; with
// REMEM_EVAL_RAW set, raw data found counts as a refusal too (the whole
// check a lesson passes), else only what the text says and how.
func refused(text string) (bool, string) {
	v := CheckText(text)
	switch {
	case v.Unreadable != nil:
		return true, v.Unreadable.Rule + " " + v.Unreadable.Detail
	case v.Instruction != nil:
		return true, v.Instruction.Rule + ": " + v.Instruction.Phrase
	case len(v.Raw) > 0 && os.Getenv("REMEM_EVAL_RAW") != "":
		return true, "raw data " + v.Raw[0].Kind + " " + v.Raw[0].Match
	}
	return false, ""
}

// TestEvalSet reads the sets named in REMEM_EVAL (comma-separated paths to
// sentences.jsonl files) and reports, per category, how many were refused
// (REMEM_EVAL_RAW=1: by every check, raw data included).
// It is how a set's first read is taken; it skips when the variable is
// unset.
func TestEvalSet(t *testing.T) {
	paths := os.Getenv("REMEM_EVAL")
	if paths == "" {
		t.Skip("REMEM_EVAL names no set")
	}
	for _, path := range strings.Split(paths, ",") {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		type count struct{ n, refused int }
		per := map[string]*count{}
		add := func(key string, got bool) {
			if per[key] == nil {
				per[key] = &count{}
			}
			per[key].n++
			if got {
				per[key].refused++
			}
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var l setLine
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			got, why := refused(l.Text)
			class := "observation"
			switch {
			case l.Lang != "" && l.Lang != "en":
				class = "foreign"
			case l.Imperative:
				class = "instruction"
			}
			add(class, got)
			add(class+"/"+l.Category, got)
			if want := class != "observation"; want != got && os.Getenv("REMEM_EVAL_MISSES") != "" {
				t.Logf("MISS %s [%s] refused=%v %s: %q", class, l.Category, got, why, l.Text)
			}
		}
		f.Close()
		keys := make([]string, 0, len(per))
		for k := range per {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		t.Logf("%s", path)
		for _, k := range keys {
			c := per[k]
			t.Logf("  %-45s refused %4d of %4d (%.3f)", k, c.refused, c.n, float64(c.refused)/float64(c.n))
		}
	}
}
