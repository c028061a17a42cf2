package consolidate

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

func lexSim(t testing.TB, l *Lexical, a, b string) float64 {
	t.Helper()
	s, err := l.Similarity(context.Background(), a, b)
	if err != nil {
		t.Fatalf("Similarity(%q, %q): %v", a, b, err)
	}
	return s
}

func TestLexical(t *testing.T) {
	l := NewLexical()
	cases := []struct {
		name     string
		a, b     string
		min, max float64
	}{
		{"identity", "go test ./... failed: undefined: foo.Bar after rebase", "go test ./... failed: undefined: foo.Bar after rebase", 1, 1},
		{"identity ignores case and spacing", "npm install fails with EACCES", "  NPM   install FAILS with eacces ", 1, 1},
		{"identity of one word", "segfault", "segfault", 1, 1},
		{"plural and -ed forms match", "the migrations failed", "the migration fails", 1, 1},
		// no shared word: only a stray character trigram ("sta") is shared
		{"no shared word", "npm install fails with EACCES", "terraform state lock held by another run", 0, 0.1},
		{"stop words only", "the of and it", "the of and it", 0, 0},
		{"empty", "", "", 0, 0},
		{"empty against text", "", "npm install fails", 0, 0},
		{"punctuation only", "!!! ... ???", "!!! ... ???", 0, 0},
		{"paraphrase of one failure", "npm install -g fails with EACCES: permission denied, mkdir '/usr/lib/node_modules'",
			"global npm install hits EACCES permission denied when writing to /usr/lib/node_modules", DefaultThreshold, 1},
		{"near-miss: same command, other error code", "npm install fails with EACCES in /usr/lib",
			"npm install fails with ETIMEDOUT behind the proxy", 0, DefaultThreshold - 0.05},
		{"near-miss: other quoted module", "pytest fails with ModuleNotFoundError: No module named 'app'",
			"python 3.12: ModuleNotFoundError: No module named 'distutils'", 0, DefaultThreshold - 0.05},
		{"unicode", "Die Datenbank ist gesperrt: SQLITE_BUSY", "SQLITE_BUSY: die Datenbank ist gesperrt", DefaultThreshold, 1},
		{"not found, not installed and missing are one thing", "make fails: protoc: command not found",
			"protoc is not installed, so make stops", DefaultThreshold, 1},
		{"timed out and hang, e2e and end to end, db and database", "the e2e suite times out waiting for the db",
			"end to end tests hang while waiting for the database", DefaultThreshold, 1},
		{"a CamelCase name meets its words", "rails migrate fails with PG::DuplicateColumn",
			"the migration crashes: duplicate column in users", DefaultThreshold, 1},
		{"number words and a compound", "CI fails: ERR_PNPM_OUTDATED_LOCKFILE, three times in a row",
			"pnpm refuses to install 3 times because the lock file is out of date", DefaultThreshold, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := lexSim(t, l, c.a, c.b)
			r := lexSim(t, l, c.b, c.a)
			if s != r {
				t.Errorf("not symmetric: %v vs %v", s, r)
			}
			if s < 0 || s > 1 || math.IsNaN(s) {
				t.Errorf("out of [0,1]: %v", s)
			}
			if s < c.min || s > c.max {
				t.Errorf("similarity %.3f, want in [%.3f, %.3f]", s, c.min, c.max)
			}
		})
	}
}

func TestLexicalZeroValueAndCache(t *testing.T) {
	var l Lexical // the zero value works
	a, b := "docker build fails: no space left on device", "ENOSPC: no space left on device while writing the docker layer"
	first := lexSim(t, &l, a, b)
	if got := lexSim(t, &l, a, b); got != first {
		t.Fatalf("cached result %v differs from first %v", got, first)
	}
	if got := lexSim(t, NewLexical(), a, b); got != first {
		t.Fatalf("zero value %v differs from NewLexical %v", first, got)
	}
	// the cache is bounded
	p := defaultLexParams()
	p.cacheMax = 4
	small := &Lexical{tab: newLexTables(p)}
	for i := range 50 {
		lexSim(t, small, fmt.Sprintf("text number %d", i), "text")
	}
	if n := len(small.cache); n > 4 {
		t.Fatalf("cache holds %d entries, want at most 4", n)
	}
}

func TestLexicalConcurrent(t *testing.T) {
	l := NewLexical()
	texts := []string{"go test fails: undefined: foo.Bar", "build broke with undefined: foo.Bar", "npm install fails with EACCES", "yarn install hangs"}
	want := make(map[[2]int]float64)
	for i := range texts {
		for j := range texts {
			want[[2]int{i, j}] = lexSim(t, NewLexical(), texts[i], texts[j])
		}
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 200 {
				i, j := (g+k)%len(texts), (g*k)%len(texts)
				if s, _ := l.Similarity(context.Background(), texts[i], texts[j]); s != want[[2]int{i, j}] {
					t.Errorf("concurrent score %v, want %v", s, want[[2]int{i, j}])
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestStem(t *testing.T) {
	groups := [][]string{
		{"fail", "fails", "failed", "failing"},
		{"run", "runs", "running"},
		{"dependency", "dependencies"},
		{"cache", "caches", "cached", "caching"},
		{"fix", "fixes", "fixed"},
		{"process", "processes"},
		{"rebase", "rebased", "rebasing"},
		{"stop", "stops", "stopped"},
	}
	for _, g := range groups {
		for _, w := range g[1:] {
			if stem(w) != stem(g[0]) {
				t.Errorf("stem(%q) = %q, stem(%q) = %q", w, stem(w), g[0], stem(g[0]))
			}
		}
	}
	for _, w := range []string{"status", "install", "pass", "is", "go"} {
		if s := stem(w); len(s) < len(w)-1 {
			t.Errorf("stem(%q) = %q cuts too much", w, s)
		}
	}
}

func TestSplitName(t *testing.T) {
	for in, want := range map[string][]string{
		"DuplicateColumn": {"Duplicate", "Column"},
		"HTTPServer":      {"HTTP", "Server"},
		"arm64":           {"arm", "64"},
		"NETSDK1045":      {"NETSDK", "1045"},
		"macOS":           {"mac", "OS"},
		"IDs":             nil,
		"EACCES":          nil,
		"plain":           nil,
		"Straße":          nil,
	} {
		if got := splitName(in); !slices.Equal(got, want) {
			t.Errorf("splitName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNormWord(t *testing.T) {
	tab := newLexTables(defaultLexParams())
	for in, want := range map[string]string{"three": "3", "twice": "2", "02": "2", "00": "0", "0": "0", "0x1f": "0x1f", "007a": "007a", "word": "word"} {
		if got := tab.normWord(in); got != want {
			t.Errorf("normWord(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTokenize(t *testing.T) {
	toks := tokenize(`go test ./store: can't find 'app' in foo.Bar (TZ=UTC, "x y")`)
	type tk struct {
		raw                   string
		joined, quoted, colon bool
	}
	var got []tk
	for _, x := range toks {
		got = append(got, tk(x))
	}
	want := []tk{
		{"go", false, false, false}, {"test", false, false, false}, {"store", true, false, true},
		{"cant", false, false, false}, {"find", false, false, false}, {"app", false, true, false},
		{"in", false, false, false}, {"foo", true, false, false}, {"Bar", true, false, false},
		{"TZ", true, false, false}, {"UTC", true, false, false}, {"x", false, true, false}, {"y", false, true, false},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("tokenize:\n got %+v\nwant %+v", got, want)
	}
}

// labelledPair is one line of testdata/pairs.jsonl (or of a held-out file
// in the same format, where split may be empty).
type labelledPair struct {
	A     string `json:"a"`
	B     string `json:"b"`
	Same  bool   `json:"same"`
	Split string `json:"split"`
}

func loadPairs(t testing.TB) []labelledPair {
	t.Helper()
	ps := loadPairFile(t, "testdata/pairs.jsonl")
	for i, p := range ps {
		if p.Split == "" {
			t.Fatalf("pairs.jsonl line %d: split is required", i+1)
		}
	}
	return ps
}

// loadPairFile reads labelled pairs, one JSON object a line.
func loadPairFile(t testing.TB, path string) []labelledPair {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []labelledPair
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var p labelledPair
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			t.Fatalf("%s line %d: %v", path, n, err)
		}
		if p.A == "" || p.B == "" {
			t.Fatalf("%s line %d: a and b are required", path, n)
		}
		out = append(out, p)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

type quality struct {
	n, same, tp, fp int
}

func (q quality) precision() float64 { return float64(q.tp) / float64(max(q.tp+q.fp, 1)) }
func (q quality) recall() float64    { return float64(q.tp) / float64(max(q.same, 1)) }

// add counts one scored pair against threshold th.
func (q *quality) add(score float64, same bool, th float64) {
	q.n++
	if same {
		q.same++
	}
	if score >= th {
		if same {
			q.tp++
		} else {
			q.fp++
		}
	}
}

// measure counts the pairs idx (indices into scores and same) at th.
func measure(scores []float64, same []bool, idx []int, th float64) quality {
	var q quality
	for _, i := range idx {
		q.add(scores[i], same[i], th)
	}
	return q
}

// cvTargetPrecision is the rule by which a threshold is chosen from
// labelled pairs: the threshold with the highest recall among those whose
// precision on the pairs is at least this (the precision goal, 0.9, plus a
// margin for the optimism of choosing on the same pairs). It lies halfway
// between the lowest score it accepts and the next lower score.
// DefaultThreshold is this rule applied to all of pairs.jsonl, rounded.
const cvTargetPrecision = 0.93

// pickThreshold applies the cvTargetPrecision rule to the pairs idx. When no
// threshold reaches the target it takes the one of highest precision.
func pickThreshold(scores []float64, same []bool, idx []int) float64 {
	cand := make([]float64, 0, len(idx))
	for _, i := range idx {
		cand = append(cand, scores[i])
	}
	slices.Sort(cand)
	cand = slices.Compact(cand)
	best, bestR, bestP, reached := 1.0, -1.0, -1.0, false
	for k, c := range cand {
		q := measure(scores, same, idx, c)
		th := c / 2
		if k > 0 {
			th = (c + cand[k-1]) / 2
		}
		p, r := q.precision(), q.recall()
		switch {
		case p >= cvTargetPrecision && (!reached || r > bestR):
			best, bestR, bestP, reached = th, r, p, true
		case !reached && p > bestP:
			best, bestR, bestP = th, r, p
		}
	}
	return best
}

// cvResult is the outcome of a repeated k-fold cross-validation: the
// precision and recall of every held-out fold at the weights and threshold
// chosen on the other folds, and how often each weight variant was chosen.
type cvResult struct {
	precision, recall, threshold []float64
	picks                        []int
}

// crossValidate runs `repeats` rounds of stratified k-fold cross-validation
// over labelled pairs scored by one or more weight variants (scores[v][i]
// is the score of pair i under variant v). In each round the pairs are
// shuffled (a fixed seed per round) and dealt into k folds with the same
// share of "same" pairs; each fold in turn is held out, and on the other
// folds every variant gets its threshold by pickThreshold; the variant with
// the highest recall there at a precision of at least cvTargetPrecision (the
// first one on ties) is measured, with its threshold, on the held-out fold.
func crossValidate(scores [][]float64, same []bool, k, repeats int) cvResult {
	res := cvResult{picks: make([]int, len(scores))}
	for rep := range repeats {
		r := rand.New(rand.NewPCG(uint64(rep), 0x5eed))
		var pos, neg []int
		for i, s := range same {
			if s {
				pos = append(pos, i)
			} else {
				neg = append(neg, i)
			}
		}
		r.Shuffle(len(pos), func(i, j int) { pos[i], pos[j] = pos[j], pos[i] })
		r.Shuffle(len(neg), func(i, j int) { neg[i], neg[j] = neg[j], neg[i] })
		fold := make([]int, len(same))
		for n, i := range pos {
			fold[i] = n % k
		}
		for n, i := range neg {
			fold[i] = (len(pos) + n) % k // continue the deal, so folds differ in size by at most one
		}
		for f := range k {
			var train, test []int
			for i := range same {
				if fold[i] == f {
					test = append(test, i)
				} else {
					train = append(train, i)
				}
			}
			best, bestTh, bestObj := 0, 0.0, math.Inf(-1)
			for v, sc := range scores {
				th := pickThreshold(sc, same, train)
				q := measure(sc, same, train, th)
				obj := q.recall()
				if q.precision() < cvTargetPrecision {
					obj = q.precision() - 1 // below target: closest to it
				}
				if obj > bestObj {
					best, bestTh, bestObj = v, th, obj
				}
			}
			q := measure(scores[best], same, test, bestTh)
			res.precision = append(res.precision, q.precision())
			res.recall = append(res.recall, q.recall())
			res.threshold = append(res.threshold, bestTh)
			res.picks[best]++
		}
	}
	return res
}

// lexNeighbours returns the default weights and, for each tunable, the
// defaults with that one moved a step down and a step up: the candidates
// among which TestLexicalQuality's cross-validation chooses on every fold.
func lexNeighbours() (names []string, ps []lexParams) {
	d := defaultLexParams()
	add := func(name string, f func(p *lexParams)) {
		p := d
		f(&p)
		names, ps = append(names, name), append(ps, p)
	}
	add("defaults", func(p *lexParams) {})
	add("triWeight−", func(p *lexParams) { p.triWeight -= 0.1 })
	add("triWeight+", func(p *lexParams) { p.triWeight += 0.1 })
	add("weakWeight−", func(p *lexParams) { p.weakWeight /= 2 })
	add("weakWeight+", func(p *lexParams) { p.weakWeight *= 2 })
	add("commonWeight−", func(p *lexParams) { p.commonWeight -= 0.2 })
	add("commonWeight+", func(p *lexParams) { p.commonWeight += 0.2 })
	add("markWeight−", func(p *lexParams) { p.markWeight -= 0.25 })
	add("markWeight+", func(p *lexParams) { p.markWeight += 0.5 })
	add("subjWeight−", func(p *lexParams) { p.subjWeight -= 0.1 })
	add("subjWeight+", func(p *lexParams) { p.subjWeight += 0.1 })
	add("conflict−", func(p *lexParams) { p.conflict -= 0.1 })
	add("conflict+", func(p *lexParams) { p.conflict += 0.1 })
	add("triMin−", func(p *lexParams) { p.triMin-- })
	add("triMin+", func(p *lexParams) { p.triMin++ })
	add("no synonyms", func(p *lexParams) { p.synonyms = false })
	return names, ps
}

// meanSD returns the mean, standard deviation, minimum and maximum of xs.
func meanSD(xs []float64) (mean, sd, lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, x := range xs {
		mean += x
		lo, hi = min(lo, x), max(hi, x)
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		sd += (x - mean) * (x - mean)
	}
	if len(xs) > 1 {
		sd = math.Sqrt(sd / float64(len(xs)-1))
	}
	return mean, sd, lo, hi
}

// TestLexicalQuality measures how well Lexical at DefaultThreshold tells
// "same surprise" pairs from different ones on testdata/pairs.jsonl.
//
// The parts of the set, in the order they were written, are tune, check,
// fresh and final; an earlier design was tuned on the first three and
// measured on final. The current design was developed on all of them, so
// the numbers per part (and for all pairs) are optimistic. The estimate for
// new text is the cross-validated one: weights and threshold chosen on 4/5
// of the pairs, measured on the other 1/5. Its mean is asserted. It is
// still optimistic about the word lists and the kinds of signal, which were
// chosen looking at all the pairs; testdata/holdout.jsonl, when present, is
// the real test (set REMEM_SKIP_HOLDOUT to leave it out while developing).
func TestLexicalQuality(t *testing.T) {
	pairs := loadPairs(t)
	if len(pairs) < 80 {
		t.Fatalf("%d labelled pairs, want at least 80", len(pairs))
	}
	l := NewLexical()
	scores := make([]float64, len(pairs))
	same := make([]bool, len(pairs))
	all := make([]int, len(pairs))
	by := make(map[string]*quality)
	var total quality
	for i, p := range pairs {
		scores[i], same[i], all[i] = lexSim(t, l, p.A, p.B), p.Same, i
		if by[p.Split] == nil {
			by[p.Split] = &quality{}
		}
		by[p.Split].add(scores[i], p.Same, DefaultThreshold)
		total.add(scores[i], p.Same, DefaultThreshold)
	}
	if share := float64(total.same) / float64(total.n); share < 0.3 || share > 0.5 {
		t.Errorf("%.0f%% of the pairs are labelled same, want about 40%%", 100*share)
	}
	for _, name := range []string{"tune", "check", "fresh", "final"} {
		q := by[name]
		if q == nil {
			t.Fatalf("no pairs in part %q", name)
		}
		t.Logf("%-6s %3d pairs (%2d same): precision %.3f recall %.3f", name, q.n, q.same, q.precision(), q.recall())
	}
	t.Logf("all    %3d pairs (%2d same): precision %.3f recall %.3f  (DefaultThreshold %.3f; the rule picks %.3f on all pairs)",
		total.n, total.same, total.precision(), total.recall(), DefaultThreshold, pickThreshold(scores, same, all))

	const folds, repeats = 5, 20
	cv := crossValidate([][]float64{scores}, same, folds, repeats)
	pm, psd, plo, phi := meanSD(cv.precision)
	rm, rsd, rlo, rhi := meanSD(cv.recall)
	tm, tsd, _, _ := meanSD(cv.threshold)
	t.Logf("cross-validated threshold (%d×%d-fold; weights fixed, threshold for precision ≥ %.2f on the training folds): precision %.3f ± %.3f (%.3f–%.3f), recall %.3f ± %.3f (%.3f–%.3f), threshold %.3f ± %.3f",
		repeats, folds, cvTargetPrecision, pm, psd, plo, phi, rm, rsd, rlo, rhi, tm, tsd)

	// The weights and the threshold chosen together on every fold, among
	// the defaults and their neighbours.
	names, variants := lexNeighbours()
	vscores := [][]float64{scores}
	for _, vp := range variants[1:] {
		vl := &Lexical{tab: newLexTables(vp)}
		sc := make([]float64, len(pairs))
		for i, p := range pairs {
			sc[i] = lexSim(t, vl, p.A, p.B)
		}
		vscores = append(vscores, sc)
	}
	cv = crossValidate(vscores, same, folds, repeats)
	pm, psd, plo, phi = meanSD(cv.precision)
	rm, rsd, rlo, rhi = meanSD(cv.recall)
	tm, tsd, _, _ = meanSD(cv.threshold)
	var picks []string
	for v, n := range cv.picks {
		if n > 0 {
			picks = append(picks, fmt.Sprintf("%s %d", names[v], n))
		}
	}
	t.Logf("cross-validated weights and threshold (%d×%d-fold, chosen among %d variants): precision %.3f ± %.3f (%.3f–%.3f), recall %.3f ± %.3f (%.3f–%.3f), threshold %.3f ± %.3f; chosen: %s",
		repeats, folds, len(variants), pm, psd, plo, phi, rm, rsd, rlo, rhi, tm, tsd, strings.Join(picks, ", "))
	// Floors a little under the measured means (0.92 and 0.82); ± is the
	// spread over held-out folds of 52 pairs.
	if pm < 0.88 || rm < 0.77 {
		t.Errorf("cross-validated precision %.3f recall %.3f, want ≥ 0.88 and ≥ 0.77", pm, rm)
	}

	t.Run("holdout", func(t *testing.T) {
		if os.Getenv("REMEM_SKIP_HOLDOUT") != "" {
			t.Skip("REMEM_SKIP_HOLDOUT is set")
		}
		const path = "testdata/holdout.jsonl"
		if _, err := os.Stat(path); err != nil {
			t.Skipf("no %s", path)
		}
		var q quality
		for _, p := range loadPairFile(t, path) {
			q.add(lexSim(t, l, p.A, p.B), p.Same, DefaultThreshold)
		}
		// A measurement, not a gate: testdata/holdout.jsonl was written blind,
		// with hard paraphrases (an exact error message against a description
		// of its cause) and near misses that share most words. Word overlap
		// cannot tell those apart: the first measurement gave precision 0.125
		// and recall 0.025, and the ranking is no better than chance. An
		// embedding backend (--embed-url) is the way to meaning there.
		t.Logf("holdout %3d pairs (%2d same): precision %.3f recall %.3f at DefaultThreshold %.3f", q.n, q.same, q.precision(), q.recall(), DefaultThreshold)
	})
}

func FuzzLexical(f *testing.F) {
	for _, s := range [][2]string{
		{"go test ./... failed: undefined: foo.Bar", "build broke with undefined: foo.Bar"},
		{"npm install fails with EACCES in /usr/lib", "npm install fails with ETIMEDOUT behind the proxy"},
		{"", "x"},
		{"'unterminated \"quote", "`a` 'b' \"c\""},
		{"ÄÖÜ straße ﬁle", "a:b::c ./x/y.z TZ=UTC"},
		{"\xff\xfe invalid", "don't can’t 'tis"},
	} {
		f.Add(s[0], s[1])
	}
	l := NewLexical()
	f.Fuzz(func(t *testing.T, a, b string) {
		s := lexSim(t, l, a, b)
		if math.IsNaN(s) || s < 0 || s > 1 {
			t.Fatalf("Similarity(%q, %q) = %v, want in [0,1]", a, b, s)
		}
		if r := lexSim(t, l, b, a); r != s {
			t.Fatalf("not symmetric: %v vs %v", s, r)
		}
		if id := lexSim(t, l, a, a); id != 1 && len(l.tables().build(a).uni) > 0 {
			t.Fatalf("Similarity(a, a) = %v for a text with words: %q", id, a)
		}
	})
}

func BenchmarkLexical(b *testing.B) {
	x := "go test ./... failed: undefined: foo.Bar after rebase onto main"
	y := "build broke with undefined: foo.Bar once I rebased onto main"
	ctx := context.Background()
	b.Run("cached", func(b *testing.B) {
		l := NewLexical()
		for b.Loop() {
			l.Similarity(ctx, x, y)
		}
	})
	b.Run("cold", func(b *testing.B) { // both texts tokenised every time
		l := NewLexical()
		t := l.tables()
		for b.Loop() {
			t.score(t.build(x), t.build(y))
		}
	})
}

func TestLexicalLongText(t *testing.T) {
	l := NewLexical()
	head := "panic: runtime error: invalid memory address or nil pointer dereference in store.Open "
	long := head + strings.Repeat("goroutine 1 [running]: main.main() ", 20000)
	if s := lexSim(t, l, long, long+" and more"); s != 1 {
		t.Fatalf("texts equal in their first 16 KiB scored %v, want 1", s)
	}
	for k := range l.cache {
		if len(k) > maxLexText {
			t.Fatalf("cache key of %d bytes", len(k))
		}
	}
	// a cut never splits a rune
	if c := clip(strings.Repeat("é", maxLexText)); !utf8.ValidString(c) || len(c) > maxLexText {
		t.Fatalf("clip gave %d bytes, valid %v", len(c), utf8.ValidString(c))
	}
}

// TestPreparedLinkage: a prepared text scores every group exactly as
// Linkage does, and its terms are Terms.
func TestPreparedLinkage(t *testing.T) {
	ps := loadPairs(t)
	l := NewLexical()
	for i, p := range ps {
		// A group of the other text with episodes from the next pairs,
		// blank members among them.
		g := Group{ID: "g", Text: p.B}
		for k := 1; k <= i%4; k++ {
			g.Episodes = append(g.Episodes, ps[(i+k)%len(ps)].A)
		}
		if i%5 == 0 {
			g.Episodes = append(g.Episodes, "  ")
		}
		if i%7 == 0 {
			g.Text = ""
		}
		want, err := Linkage(context.Background(), l, p.A, g)
		if err != nil {
			t.Fatal(err)
		}
		x := l.Prepare(p.A)
		if got := x.Linkage(g); got != want {
			t.Fatalf("pair %d: prepared linkage %v, Linkage %v", i+1, got, want)
		}
		if !slices.Equal(x.Terms(), l.Terms(p.A)) {
			t.Fatalf("pair %d: prepared terms differ", i+1)
		}
		pg := l.PrepareGroup(g)
		if got := x.GroupLinkage(pg); got != want {
			t.Fatalf("pair %d: prepared group linkage %v, Linkage %v", i+1, got, want)
		}
		if got := x.Indexed().GroupLinkage(pg); got != want {
			t.Fatalf("pair %d: indexed group linkage %v, Linkage %v", i+1, got, want)
		}
		var terms []uint64
		for _, e := range append(slices.Clone(g.Episodes), g.Text) {
			terms = append(terms, l.Terms(e)...)
		}
		slices.Sort(terms)
		terms = slices.Compact(terms)
		if !slices.Equal(pg.Terms(), terms) {
			t.Fatalf("pair %d: prepared group terms differ", i+1)
		}
		shares := len(terms) > 0 && slices.ContainsFunc(x.Terms(), func(h uint64) bool { _, ok := slices.BinarySearch(terms, h); return ok })
		if x.SharesTerm(pg) != shares || x.Indexed().SharesTerm(pg) != shares {
			t.Fatalf("pair %d: shares a term %v, SharesTerm %v, indexed %v", i+1, shares, x.SharesTerm(pg), x.Indexed().SharesTerm(pg))
		}
	}
	if got := l.Prepare("x").Linkage(Group{Text: " "}); got != 0 {
		t.Fatalf("empty group: %v", got)
	}
	if got := l.Prepare("x").GroupLinkage(l.PrepareGroup(Group{Text: " "})); got != 0 {
		t.Fatalf("empty prepared group: %v", got)
	}
}
