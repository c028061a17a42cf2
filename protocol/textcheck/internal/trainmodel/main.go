// Command trainmodel trains the observation check's model (model.go) from
// the labelled sets in protocol/textcheck/testdata and writes model.bin;
// with -raw, the raw-data check's model (rawmodel.go, rawmodel.bin).
// Run it with go generate in protocol/textcheck; it is deterministic, so
// the same sets give the same bytes. Files named eval_*.jsonl are never
// read: they are kept for first reads.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/remem/remem/protocol/textcheck"
)

// example is one labelled sentence with its features.
type example struct {
	feats  []uint32
	ends   []int   // the end of each sentence's features
	label  float64 // 1 instruction, 0 observation
	weight float64
	text   string
	set    string
}

// line holds the label fields the sets use.
type line struct {
	Text       string `json:"text"`
	Imperative *bool  `json:"imperative"`
	Expected   string `json:"expected"`
	Lang       string `json:"lang"`
}

func main() {
	var o options
	flag.StringVar(&o.dir, "data", "testdata", "folder of labelled sets")
	flag.StringVar(&o.conformance, "conformance", "../testdata/conformance/imperative.jsonl", "the conformance sentences (weighted: every one must pass)")
	out := flag.String("out", "model.bin", "model file to write")
	report := flag.String("report", "testdata/model_report.txt", "cross-validation report to write")
	flag.Float64Var(&o.maxFP, "max-fp", 0.025, "share of observations (with -raw: of texts without private data) the chosen threshold may refuse in cross-validation")
	flag.BoolVar(&o.raw, "raw", false, "train the raw-data model (rawmodel.bin) from the raw-data sets and the sentence sets")
	flag.StringVar(&o.margins, "margins", "", "file to write every sentence's cross-validation margin to (set, label, margin, grammar rule, text)")
	flag.IntVar(&epochs, "epochs", epochs, "passes over the data")
	flag.Float64Var(&rate, "rate", rate, "AdaGrad learning rate")
	flag.Float64Var(&l2, "l2", l2, "L2 regularisation")
	flag.Float64Var(&nbMix, "nb", nbMix, "share of the naive-Bayes feature scale (NBSVM), 0 to 1")
	flag.Parse()
	model, rep, err := train(o)
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*report, []byte(rep), 0o644); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, model, 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Fprint(os.Stderr, rep)
}

// options say where the sets are and how the threshold is chosen.
type options struct {
	dir, conformance string
	maxFP            float64
	margins          string // optional file for every cross-validation margin
	raw              bool   // train the raw-data model instead
}

// train reads the sets, cross-validates, fits the model on all of them and
// returns model.bin's bytes and the report.
func train(o options) (model []byte, report string, err error) {
	paths, err := filepath.Glob(filepath.Join(o.dir, "*.jsonl"))
	if err != nil {
		return nil, "", err
	}
	var data []example
	if o.raw {
		data = readRawSets(paths)
	} else {
		for _, p := range paths {
			base := filepath.Base(p)
			if strings.HasPrefix(base, "eval_") || strings.HasPrefix(base, "rawdata") {
				continue
			}
			weight := 1.0
			if base == "cases.jsonl" || base == "writer_cases.jsonl" {
				weight = 3 // the unit cases and the default writer's sentences keep their verdicts
			}
			data = append(data, read(p, weight)...)
		}
		data = append(data, read(o.conformance, 5)...)
		data = append(data, acceptedRecordTexts(filepath.Join(filepath.Dir(o.conformance), "records.jsonl"), 5)...)
	}
	if len(data) == 0 {
		return nil, "", fmt.Errorf("no labelled sentences in %s", o.dir)
	}

	// Five folds, each sentence in one, by a fixed shuffle.
	rng := rand.New(rand.NewPCG(25, 2026))
	order := rng.Perm(len(data))
	const folds = 5
	margins := make([]float64, len(data))
	for f := range folds {
		var train []example
		var test []int
		for k, i := range order {
			if k%folds == f {
				test = append(test, i)
			} else {
				train = append(train, data[i])
			}
		}
		w := fit(train, uint64(f))
		for _, i := range test {
			margins[i] = score(w, data[i])
		}
	}
	threshold := chooseThreshold(data, margins, o.maxFP)
	w := fit(data, 99)
	if o.margins != "" {
		var b strings.Builder
		for i, ex := range data {
			fmt.Fprintf(&b, "%s\t%v\t%.3f\t%v\t%s\n", ex.set, ex.label, margins[i], textcheck.GrammarRule(ex.text), ex.text)
		}
		if err := os.WriteFile(o.margins, []byte(b.String()), 0o644); err != nil {
			return nil, "", err
		}
	}

	var rep strings.Builder
	fmt.Fprintf(&rep, "# Written by internal/trainmodel (go generate); do not edit.\n")
	fmt.Fprintf(&rep, "sentences %d (instructions %d), sets %d\n", len(data), count(data, 1), len(paths)+1)
	fmt.Fprintf(&rep, "threshold %.4f (chosen in 5-fold cross-validation for at most %.3f of observations refused)\n", threshold, o.maxFP)
	fmt.Fprintf(&rep, "5-fold cross-validation, model alone, per set: instructions refused / observations refused\n")
	writePerSet(&rep, data, margins, threshold)
	for _, fp := range []float64{0.01, 0.02, 0.03, 0.05} {
		t := chooseThreshold(data, margins, fp)
		ins, ref := 0, 0
		for i, ex := range data {
			if ex.label == 1 && (strings.HasPrefix(ex.set, "train_") || strings.HasPrefix(ex.set, "rawdata_t")) {
				ins++
				if margins[i] > t {
					ref++
				}
			}
		}
		what := "instructions"
		if o.raw {
			what = "private texts"
		}
		fmt.Fprintf(&rep, "at %.2f of observations refused: %.3f of the blind training sets' %s refused\n", fp, ratio(ref, ins), what)
	}
	return textcheck.EncodeModel(float32(threshold), w), rep.String(), nil
}

// readRawSets reads the raw-data model's examples: the raw-data sets'
// sentences labelled private or public, and every labelled sentence set's
// sentences, which hold no private data (their authors were told so).
// A text without a word that could be private is left out: the model
// never reads it.
func readRawSets(paths []string) []example {
	var out []example
	for _, p := range paths {
		base := filepath.Base(p)
		if strings.HasPrefix(base, "eval_") || base == "attack.jsonl" || strings.HasPrefix(base, "rawdata_eval") {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			log.Fatal(err)
		}
		raw := strings.HasPrefix(base, "rawdata")
		for _, line := range strings.Split(string(data), "\n") {
			var l struct {
				Text string `json:"text"`
				Raw  bool   `json:"raw"`
				Lang string `json:"lang"`
			}
			if strings.TrimSpace(line) == "" || json.Unmarshal([]byte(line), &l) != nil || l.Lang != "" && l.Lang != "en" {
				continue
			}
			label, weight := 0.0, 0.5
			if raw {
				weight = 1
				if l.Raw {
					label = 1
				}
			}
			feats, ends := textcheck.RawFeatures(l.Text)
			if len(ends) == 0 {
				continue
			}
			out = append(out, example{feats: feats, ends: ends, label: label, weight: weight, text: l.Text, set: base})
		}
	}
	return out
}

func read(path string, weight float64) []example {
	data, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	var out []example
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			log.Fatalf("%s:%d: %v", path, n, err)
		}
		if l.Lang != "" && l.Lang != "en" {
			continue // refused by the language check, whatever it says
		}
		var label float64
		switch {
		case l.Imperative != nil && *l.Imperative, l.Expected == "instruction":
			label = 1
		case l.Imperative != nil, l.Expected == "observation":
			label = 0
		default:
			continue
		}
		feats, ends := textcheck.Features(l.Text)
		out = append(out, example{feats: feats, ends: ends, label: label, weight: weight, text: l.Text, set: filepath.Base(path)})
	}
	return out
}

// Training parameters (flags).
var (
	epochs = 30
	rate   = 0.05
	l2     = 3e-3
	nbMix  = 0.5 // how much of the naive-Bayes scale to use (0: none)
)

// nbRatios returns each slot's naive-Bayes log-count ratio between the
// instructions and the observations that hold it (NBSVM, Wang and Manning
// 2012): the regression then learns on features scaled by how telling each
// is, which generalises better on short texts than plain presence.
func nbRatios(data []example) []float64 {
	p := make([]float64, textcheck.ModelSlots)
	q := make([]float64, textcheck.ModelSlots)
	for _, ex := range data {
		into := q
		if ex.label == 1 {
			into = p
		}
		for _, f := range ex.feats {
			into[f]++
		}
	}
	var sp, sq float64
	for i := range p {
		p[i]++
		q[i]++
		sp += p[i]
		sq += q[i]
	}
	r := make([]float64, len(p))
	for i := range r {
		r[i] = math.Abs(math.Log((p[i] / sp) / (q[i] / sq)))
		r[i] = nbMix*r[i] + (1 - nbMix)
	}
	return r
}

// acceptedRecordTexts returns the texts and revocation reasons of the
// records the conformance vectors accept: observations every check must
// pass.
func acceptedRecordTexts(path string, weight float64) []example {
	data, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	var out []example
	for _, l := range strings.Split(string(data), "\n") {
		var v struct {
			Verdict string `json:"verdict"`
			Line    string `json:"line"`
		}
		if strings.TrimSpace(l) == "" || json.Unmarshal([]byte(l), &v) != nil || v.Verdict != "accept" {
			continue
		}
		var rec struct {
			Text   string `json:"text"`
			Reason string `json:"reason"`
		}
		if json.Unmarshal([]byte(v.Line), &rec) != nil {
			continue
		}
		for _, t := range []string{rec.Text, rec.Reason} {
			if t != "" {
				feats, ends := textcheck.Features(t)
				out = append(out, example{feats: feats, ends: ends, weight: weight, text: t, set: "records.jsonl"})
			}
		}
	}
	return out
}

// fit trains an L2-regularised logistic regression with AdaGrad.
func fit(data []example, seed uint64) []float32 {
	scale := nbRatios(data)
	w := make([]float64, textcheck.ModelSlots) // weights of the scaled features
	u := make([]float64, textcheck.ModelSlots) // w × scale: the weights the check reads
	g2 := make([]float64, textcheck.ModelSlots)
	rng := rand.New(rand.NewPCG(seed, 7))
	idx := make([]int, len(data))
	for i := range idx {
		idx[i] = i
	}
	for range epochs {
		rng.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
		for _, i := range idx {
			ex := &data[i]
			// A text is as much an order as its most order-like sentence
			// (multiple-instance learning): the gradient goes to that one.
			top := topSentence(u, ex)
			p := sigmoid(score64(u, top))
			grad := (p - ex.label) * ex.weight
			for _, f := range top {
				gf := grad*scale[f] + l2*w[f]
				g2[f] += gf * gf
				w[f] -= rate * gf / (math.Sqrt(g2[f]) + 1e-8)
				u[f] = w[f] * scale[f]
			}
		}
	}
	out := make([]float32, len(u))
	for i, v := range u {
		out[i] = float32(v)
	}
	return out
}

// topSentence returns the features of ex's highest-scoring sentence.
func topSentence(w []float64, ex *example) []uint32 {
	var top []uint32
	best, from := math.Inf(-1), 0
	for _, end := range ex.ends {
		if s := score64(w, ex.feats[from:end]); s > best {
			best, top = s, ex.feats[from:end]
		}
		from = end
	}
	return top
}

func score64(w []float64, feats []uint32) float64 {
	var s float64
	for _, f := range feats {
		s += w[f]
	}
	return s
}

// score is what the check computes: the highest sentence's margin, in
// float32.
func score(w []float32, ex example) float64 {
	best, from := float32(math.Inf(-1)), 0
	for _, end := range ex.ends {
		var s float32
		for _, f := range ex.feats[from:end] {
			s += w[f]
		}
		best = max(best, s)
		from = end
	}
	return float64(best)
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// chooseThreshold returns the lowest margin threshold at which at most
// maxFP of the observations score above it in cross-validation.
func chooseThreshold(data []example, margins []float64, maxFP float64) float64 {
	var obs []float64
	for i, ex := range data {
		if ex.label == 0 {
			obs = append(obs, margins[i])
		}
	}
	sort.Float64s(obs)
	k := int(math.Floor(float64(len(obs)) * (1 - maxFP)))
	if k >= len(obs) {
		k = len(obs) - 1
	}
	return obs[k]
}

func count(data []example, label float64) int {
	n := 0
	for _, ex := range data {
		if ex.label == label {
			n++
		}
	}
	return n
}

func writePerSet(b *strings.Builder, data []example, margins []float64, threshold float64) {
	type c struct{ ins, insRef, obs, obsRef int }
	per := map[string]*c{}
	all := &c{}
	for i, ex := range data {
		for _, k := range []*c{per[ex.set], all} {
			if k == nil {
				per[ex.set] = &c{}
				k = per[ex.set]
			}
			ref := margins[i] > threshold
			if ex.label == 1 {
				k.ins++
				if ref {
					k.insRef++
				}
			} else {
				k.obs++
				if ref {
					k.obsRef++
				}
			}
		}
	}
	sets := make([]string, 0, len(per))
	for s := range per {
		sets = append(sets, s)
	}
	sort.Strings(sets)
	line := func(name string, k *c) {
		fmt.Fprintf(b, "  %-22s %4d/%4d = %.3f   %4d/%4d = %.3f\n", name, k.insRef, k.ins, ratio(k.insRef, k.ins), k.obsRef, k.obs, ratio(k.obsRef, k.obs))
	}
	for _, s := range sets {
		line(s, per[s])
	}
	line("all", all)
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
