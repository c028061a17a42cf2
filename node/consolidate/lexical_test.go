package consolidate

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
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
		{"disjoint", "npm install fails with EACCES", "terraform state lock held by another run", 0, 0},
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
	small := &Lexical{tab: newLexTables(lexParams{uniWeight: 0.9, weakWeight: 0.2, markWeight: 1.5, subjWeight: 0.4, subjMax: 6, conflict: 0.6, cacheMax: 4})}
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

func TestTokenize(t *testing.T) {
	toks := tokenize(`go test ./store: can't find 'app' in foo.Bar (TZ=UTC, "x y")`)
	type tk struct {
		raw                   string
		joined, quoted, colon bool
	}
	var got []tk
	for _, x := range toks {
		got = append(got, tk{x.raw, x.joined, x.quoted, x.colon})
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

// labelledPair is one line of testdata/pairs.jsonl.
type labelledPair struct {
	A     string `json:"a"`
	B     string `json:"b"`
	Same  bool   `json:"same"`
	Split string `json:"split"`
}

func loadPairs(t testing.TB) []labelledPair {
	t.Helper()
	f, err := os.Open("testdata/pairs.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []labelledPair
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		var p labelledPair
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			t.Fatalf("pairs.jsonl line %d: %v", n, err)
		}
		if p.A == "" || p.B == "" || p.Split == "" {
			t.Fatalf("pairs.jsonl line %d: a, b and split are required", n)
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

// TestLexicalQuality measures how well Lexical at DefaultThreshold tells
// "same surprise" pairs from different ones on testdata/pairs.jsonl.
//
// The parts of the set, in the order they were written:
//   - tune: the weights were first chosen on it;
//   - check: held out for the first design, then looked at (its errors led to
//     treating quoted words as specific and to the conflict rule);
//   - fresh: written after that, measured once (precision about 0.87, recall 0.50
//     at the time), then looked at (its errors led to the matched-weight Dice);
//   - final: written after the last change and never tuned on.
//
// The brief's bar (precision ≥ 0.9, recall ≥ 0.7) is asserted on the parts
// the weights were chosen on. It is NOT met on "final": that part only has
// regression floors, and its numbers are the honest estimate for new text.
func TestLexicalQuality(t *testing.T) {
	pairs := loadPairs(t)
	if len(pairs) < 80 {
		t.Fatalf("%d labelled pairs, want at least 80", len(pairs))
	}
	l := NewLexical()
	by := make(map[string]*quality)
	var dev, all quality
	for _, p := range pairs {
		s := lexSim(t, l, p.A, p.B)
		if by[p.Split] == nil {
			by[p.Split] = &quality{}
		}
		qs := []*quality{by[p.Split], &all}
		if p.Split != "final" {
			qs = append(qs, &dev)
		}
		for _, q := range qs {
			q.n++
			if p.Same {
				q.same++
			}
			if s >= DefaultThreshold {
				if p.Same {
					q.tp++
				} else {
					q.fp++
				}
			}
		}
	}
	if share := float64(all.same) / float64(all.n); share < 0.3 || share > 0.5 {
		t.Errorf("%.0f%% of the pairs are labelled same, want about 40%%", 100*share)
	}
	for _, name := range []string{"tune", "check", "fresh", "final"} {
		q := by[name]
		if q == nil {
			t.Fatalf("no pairs in part %q", name)
		}
		t.Logf("%-6s %3d pairs (%2d same): precision %.3f recall %.3f", name, q.n, q.same, q.precision(), q.recall())
	}
	t.Logf("tuned  %3d pairs (%2d same): precision %.3f recall %.3f  (tune+check+fresh)", dev.n, dev.same, dev.precision(), dev.recall())
	t.Logf("all    %3d pairs (%2d same): precision %.3f recall %.3f  (threshold %.3f)", all.n, all.same, all.precision(), all.recall(), DefaultThreshold)
	if dev.precision() < 0.9 || dev.recall() < 0.7 {
		t.Errorf("on the tuned parts: precision %.3f recall %.3f, want ≥ 0.9 and ≥ 0.7", dev.precision(), dev.recall())
	}
	// Regression floors for the held-out part, a little under what it gave
	// when it was first measured (0.706 and 0.632).
	if f := by["final"]; f.precision() < 0.65 || f.recall() < 0.55 {
		t.Errorf("held-out part: precision %.3f recall %.3f fell below the floors 0.65 and 0.55", f.precision(), f.recall())
	}
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
