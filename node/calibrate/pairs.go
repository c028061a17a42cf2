package calibrate

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/remem/remem/node/consolidate"
)

// A Pair is a line of a pairs file: two lesson-like texts and whether they
// say the same (other members, e.g. "split", are ignored).
type Pair struct {
	A    string `json:"a"`
	B    string `json:"b"`
	Same bool   `json:"same"`
}

// ReadPairs reads a pairs file, one JSON object a line ("#" lines and
// blank lines are skipped); name names it in errors. A line without a, b
// or same is an error naming the line.
func ReadPairs(r io.Reader, name string) ([]Pair, error) {
	var out []Pair
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var p struct {
			A, B string
			Same *bool
		}
		if err := json.Unmarshal([]byte(line), &p); err != nil {
			return nil, fmt.Errorf(`%s:%d: %v; each line is {"a": "...", "b": "...", "same": true}`, name, n, err)
		}
		if strings.TrimSpace(p.A) == "" || strings.TrimSpace(p.B) == "" || p.Same == nil {
			return nil, fmt.Errorf(`%s:%d: want the texts a and b and the label same; each line is {"a": "...", "b": "...", "same": true}`, name, n)
		}
		out = append(out, Pair{A: p.A, B: p.B, Same: *p.Same})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	return out, nil
}

// Outcome is how a threshold does on scored pairs: a pair is "same" at
// threshold t when its score is at least t.
type Outcome struct {
	Threshold float64 `json:"threshold"`
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
}

// PairsReport is what Pairs found: the chosen threshold's outcome and a
// table of round thresholds beside it.
type PairsReport struct {
	Pairs int `json:"pairs"`
	Same  int `json:"same"`
	Outcome
	Table []Outcome `json:"table"`
}

// Pairs scores every pair with sim (preparing them first when sim is a
// Preparer) and picks a threshold (Threshold).
func Pairs(ctx context.Context, sim consolidate.Similarity, pairs []Pair) (PairsReport, error) {
	if p, ok := sim.(consolidate.Preparer); ok {
		texts := make([]string, 0, 2*len(pairs))
		for _, p := range pairs {
			texts = append(texts, p.A, p.B)
		}
		if err := p.Prepare(ctx, texts); err != nil {
			return PairsReport{}, err
		}
	}
	scores, same := make([]float64, len(pairs)), make([]bool, len(pairs))
	for i, p := range pairs {
		var err error
		if scores[i], err = sim.Similarity(ctx, p.A, p.B); err != nil {
			return PairsReport{}, fmt.Errorf("scoring pair %d: %w", i+1, err)
		}
		same[i] = p.Same
	}
	return Threshold(scores, same)
}

// Threshold picks the threshold in (0, 1] with the highest F1 over the
// scored pairs; among equal F1s, the highest threshold (fewer wrong
// merges). The threshold is put halfway between the lowest score it keeps
// and the next score below, rounded to two or three decimals when that
// keeps the same pairs, so that a small change in a score does not flip a
// pair.
func Threshold(scores []float64, same []bool) (PairsReport, error) {
	res := PairsReport{Pairs: len(scores)}
	for _, s := range same {
		if s {
			res.Same++
		}
	}
	if res.Same == 0 || res.Same == len(same) {
		return res, errors.New("calibrating needs pairs of both labels, some \"same\": true and some \"same\": false")
	}
	distinct := slices.Clone(scores)
	slices.Sort(distinct)
	distinct = slices.Compact(distinct)
	best := Outcome{F1: -1}
	for i, s := range distinct {
		if s <= 0 {
			continue
		}
		lower := 0.0
		if i > 0 {
			lower = distinct[i-1]
		}
		t := between(lower, s)
		if r := outcomeAt(scores, same, t); r.F1 >= best.F1 {
			best = r
		}
	}
	if best.F1 < 0 {
		return res, errors.New("every pair scores 0: the similarity sees nothing in common in any pair")
	}
	res.Outcome = best
	for k := 1; k <= 9; k++ {
		res.Table = append(res.Table, outcomeAt(scores, same, float64(k)/10))
	}
	res.Table = append(res.Table, best)
	slices.SortFunc(res.Table, func(a, b Outcome) int { return cmpFloat(a.Threshold, b.Threshold) })
	res.Table = slices.CompactFunc(res.Table, func(a, b Outcome) bool { return a.Threshold == b.Threshold })
	return res, nil
}

// between is a round threshold in (lo, hi]: their midpoint rounded to two
// decimals, else to three, else hi itself.
func between(lo, hi float64) float64 {
	mid := (lo + hi) / 2
	for _, scale := range []float64{100, 1000} {
		if t := math.Round(mid*scale) / scale; t > lo && t <= hi && t > 0 {
			return t
		}
	}
	return hi
}

// outcomeAt is precision, recall and F1 at threshold t.
func outcomeAt(scores []float64, same []bool, t float64) Outcome {
	var tp, fp, fn int
	for i, s := range scores {
		switch {
		case s >= t && same[i]:
			tp++
		case s >= t:
			fp++
		case same[i]:
			fn++
		}
	}
	r := Outcome{Threshold: t}
	if tp+fp > 0 {
		r.Precision = float64(tp) / float64(tp+fp)
	}
	if tp+fn > 0 {
		r.Recall = float64(tp) / float64(tp+fn)
	}
	if r.Precision+r.Recall > 0 {
		r.F1 = 2 * r.Precision * r.Recall / (r.Precision + r.Recall)
	}
	return r
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
