package consolidate

import (
	"context"
	"math/bits"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Similarity scores how alike two texts are in meaning, in [0, 1]. It is the
// one seam between clustering and the measure: Lexical is the default and
// Embedding replaces it when an embedding endpoint is configured.
// Implementations must be safe for concurrent use and symmetric.
type Similarity interface {
	Similarity(ctx context.Context, a, b string) (float64, error)
}

// DefaultThreshold is the Lexical similarity at or above which two event
// texts are taken for the same surprise. It is what the threshold rule of
// TestLexicalQuality (the highest recall at a precision of at least 0.93)
// picks on testdata/pairs.jsonl, rounded; the test logs precision and
// recall per part of that set and cross-validated. It is calibrated for
// Lexical only: an embedding model needs its own threshold.
const DefaultThreshold = 0.48

// DefaultConfirmThreshold is the Lexical score at which an event confirms
// a received lesson without a judge or a named match: above every pair of
// different facts in testdata/pairs.jsonl (at most 0.63) and in the blind
// testdata/holdout.jsonl (at most 0.74). It keeps 22 of the 103 same-fact
// pairs of the first set and none of the second's 40 (their paraphrases
// share few words): a lookalike confirmed would count toward common, a
// paraphrase missed only waits for a judge, a named match or a closer
// report.
const DefaultConfirmThreshold = 0.8

// Lexical is the default Similarity: weighted overlap of words and of their
// character trigrams, after mapping the many ways failure reports say one
// thing to one word.
//
// A text is split on anything that is not a letter or a digit (an apostrophe
// inside a word is dropped: "can't" is "cant"). A run that changes case or
// switches between letters and digits is split into its parts
// (DuplicateColumn → Duplicate Column, HTTPServer → HTTP Server, arm64 → arm
// 64); names joined by . _ / and the like already fall apart at those. Words
// are lowercased, number words become digits ("three" → "3") and numbers
// lose their leading zeros ("02:00" → "2", "0").
//
// Then, in order of the words:
//
//   - a phrase or word from the synonym table becomes its canonical form:
//     "timed out", "hangs", "stuck" → hang; "no such", "not found", "lacks"
//     → missing; "permission denied", "EACCES", "forbidden" → denied; "db" →
//     database; "pull request" → pr (see synonymTable);
//   - a negator (not, no, never, cannot, doesn't, unable, without...) is
//     dropped, and the first word after it (within three words) that says
//     something is there or allowed becomes the canonical opposite: "cannot
//     find", "does not exist", "is not installed" → missing; "not defined" →
//     undefined; "could not connect" → unreachable (see negatedTable);
//   - English stop words and one-letter words other than digits are dropped;
//   - the rest pass through a light stemmer (-s, -es, -ies, -ing, -ed, a
//     final -e, a doubled final consonant).
//
// Each kept word gets a weight:
//
//   - words found in almost every failure report ("fail", "error", "tried",
//     "the person said") weigh little, and common software words ("test",
//     "build", "file", "server") weigh half;
//   - words that name something specific weigh more: error codes in capitals
//     (EACCES), CamelCase names (DuplicateColumn), anything with a digit
//     (404, arm64), parts of dotted, slashed, underscored or key=value names
//     (foo.Bar, ./store, TZ=UTC) and quoted words ('app');
//   - the words of a leading subject weigh less: in "npm install fails with
//     EACCES" the words before "fails" (or before a "subject: message"
//     colon) say what was run, and near-misses share exactly those.
//
// The score is (1−triWeight)·D(words) + triWeight·D(trigrams), where D is the
// share of both texts' weight that the other text matches,
// Σshared(wa+wb)/(ΣA+ΣB). The trigrams of a text are the three-byte pieces of
// its kept words of four bytes or more, each weighing as its word: they
// match near spellings and compounds ("lockfile" and "lock file", "healthz"
// and "health") and, as a long word has more of them, they lean on long
// words, which tend to be the rare ones. When each text names a specific
// word the other lacks ("EACCES" against "ETIMEDOUT", "429" against "401"),
// the score is multiplied by a conflict factor. A text with no kept word
// scores 0 against everything, itself included; otherwise identical texts
// score 1.
//
// Only the first 16 KiB of a text are read. Lexical is deterministic,
// symmetric and safe for concurrent use. It keeps a bounded cache of
// prepared texts, so repeated texts are tokenised once. The
// zero value is ready to use; do not copy a Lexical after first use.
type Lexical struct {
	mu    sync.Mutex
	cache map[string]*profile
	tab   *lexTables // built on first use
}

// NewLexical returns a Lexical with its default weights.
func NewLexical() *Lexical {
	return &Lexical{tab: newLexTables(defaultLexParams())}
}

// lexParams are the tunables of Lexical. They are fixed (no option exposes
// them) so that every memory scores alike; they live in one struct so that
// tests can show what each one does.
type lexParams struct {
	triWeight    float64 // share of the trigram score; the rest is the word score
	weakWeight   float64 // weight of a generic failure word
	commonWeight float64 // weight of a common software word
	markWeight   float64 // weight of a word that names something specific
	subjWeight   float64 // factor for the words of a leading subject
	subjMax      int     // a leading part longer than this many kept words is no subject
	conflict     float64 // factor when each text names a specific the other lacks
	triMin       int     // shortest kept word (in bytes) whose trigrams count
	synonyms     bool    // apply synonymTable and negatedTable
	cacheMax     int     // prepared texts kept before the cache is cleared
}

// defaultLexParams were chosen on testdata/pairs.jsonl by cross-validation;
// see TestLexicalQuality and the package documentation. Scores change
// little around them (each moved alone by a step changes the
// cross-validated recall by at most about 0.03).
func defaultLexParams() lexParams {
	return lexParams{
		triWeight:    0.4,
		weakWeight:   0.1,
		commonWeight: 0.5,
		markWeight:   1.5,
		subjWeight:   0.2,
		subjMax:      6,
		conflict:     0.7,
		triMin:       4,
		synonyms:     true,
		cacheMax:     1 << 14,
	}
}

// lexTables are the parameters and word sets of a Lexical, built once.
type lexTables struct {
	p                                 lexParams
	stop, weak, common, failed, negat map[string]bool
	syn                               map[string]string   // stem → canonical form
	negCanon                          map[string]string   // canonical form negated → canonical form
	phrases                           map[string][]phrase // by the stem of their first word
	numbers                           map[string]string   // number word → digits
	// facts holds what the maps above say of each of their keys, so that
	// build looks a word up once, not once per map.
	facts map[string]*wordFacts
}

// wordFacts is what the word sets and maps of lexTables say of one string.
type wordFacts struct {
	stop, negat, weak, common, failed bool
	isNumber, isSyn, isNegated        bool
	number, syn, negated              string // numbers, syn and negCanon
	phrases                           []phrase
}

var noFacts wordFacts // of a string in no set or map

// fact returns the facts of k.
func (t *lexTables) fact(k string) *wordFacts {
	if f := t.facts[k]; f != nil {
		return f
	}
	return &noFacts
}

// canonOf is canon(st) for st of facts f.
func canonOf(st string, f *wordFacts) string {
	if f.isSyn {
		return f.syn
	}
	return st
}

func (t *lexTables) indexFacts() {
	t.facts = make(map[string]*wordFacts)
	get := func(k string) *wordFacts {
		f := t.facts[k]
		if f == nil {
			f = &wordFacts{}
			t.facts[k] = f
		}
		return f
	}
	for k := range t.stop {
		get(k).stop = true
	}
	for k := range t.negat {
		get(k).negat = true
	}
	for k := range t.weak {
		get(k).weak = true
	}
	for k := range t.common {
		get(k).common = true
	}
	for k := range t.failed {
		get(k).failed = true
	}
	for k, v := range t.numbers {
		f := get(k)
		f.isNumber, f.number = true, v
	}
	for k, v := range t.syn {
		f := get(k)
		f.isSyn, f.syn = true, v
	}
	for k, v := range t.negCanon {
		f := get(k)
		f.isNegated, f.negated = true, v
	}
	for k, v := range t.phrases {
		get(k).phrases = v
	}
}

// phrase is a run of stemmed words that stands for one canonical form.
type phrase struct {
	words []string
	canon string
}

func newLexTables(p lexParams) *lexTables {
	t := &lexTables{
		p: p, stop: make(map[string]bool), weak: make(map[string]bool), common: make(map[string]bool),
		failed: make(map[string]bool), negat: make(map[string]bool),
		syn: make(map[string]string), negCanon: make(map[string]string),
		phrases: make(map[string][]phrase), numbers: make(map[string]string),
	}
	for _, w := range strings.Fields(stopWordList) {
		t.stop[w] = true
	}
	for _, w := range strings.Fields(negatorList) {
		t.negat[w] = true
	}
	for _, line := range strings.Split(numberWordList, "\n") {
		digits, words, _ := strings.Cut(line, ":")
		for _, w := range strings.Fields(words) {
			t.numbers[w] = strings.TrimSpace(digits)
		}
	}
	if p.synonyms {
		for _, line := range strings.Split(synonymTable, "\n") {
			canon, variants, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			canon = strings.TrimSpace(canon)
			t.syn[stem(canon)] = canon
			for _, v := range strings.Split(variants, ",") {
				switch ws := strings.Fields(v); len(ws) {
				case 0:
				case 1:
					t.syn[stem(ws[0])] = canon
				default:
					ph := phrase{canon: canon}
					for _, w := range ws {
						ph.words = append(ph.words, stem(w))
					}
					t.phrases[ph.words[0]] = append(t.phrases[ph.words[0]], ph)
				}
			}
		}
		for _, line := range strings.Split(negatedTable, "\n") {
			canon, words, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			for _, w := range strings.Fields(words) {
				t.negCanon[t.canon(stem(w))] = strings.TrimSpace(canon)
			}
		}
		// the longest phrase first: "heap out of memory" before "out of memory"
		for k := range t.phrases {
			slices.SortStableFunc(t.phrases[k], func(a, b phrase) int { return len(b.words) - len(a.words) })
		}
	}
	// Weak, common and failure words are compared with canonical stems.
	for _, w := range strings.Fields(weakWordList) {
		t.weak[t.canon(stem(w))] = true
	}
	for _, w := range strings.Fields(commonWordList) {
		t.common[t.canon(stem(w))] = true
	}
	for _, w := range strings.Fields(failWordList) {
		t.failed[t.canon(stem(w))] = true
	}
	t.indexFacts()
	return t
}

// canon maps a stem to its canonical form.
func (t *lexTables) canon(st string) string {
	if c, ok := t.syn[st]; ok {
		return c
	}
	return st
}

// term is one word or character trigram of a text: a 64-bit FNV-1a hash of
// its form, and its weight.
type term struct {
	h uint64
	w float64
}

// profile is a text prepared for scoring: its words and trigrams sorted by
// hash with their weight sums, and the sorted hashes of its specific words.
type profile struct {
	uni, tri       []term
	uniSum, triSum float64
	marks          []uint64
}

// Similarity implements Similarity. It never fails; ctx is not consulted.
func (l *Lexical) Similarity(_ context.Context, a, b string) (float64, error) {
	t := l.tables()
	return t.score(l.profile(t, a), l.profile(t, b)), nil
}

// tables returns the word sets, building the defaults for a zero Lexical.
func (l *Lexical) tables() *lexTables {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.tab == nil {
		l.tab = newLexTables(defaultLexParams())
	}
	return l.tab
}

// maxLexText is how much of a text Lexical reads: the start of a pasted log
// says what it is about, and the bound keeps the cost of one text small.
const maxLexText = 16 << 10

// clip returns the first maxLexText bytes of s, cut at a rune boundary.
func clip(s string) string {
	if len(s) <= maxLexText {
		return s
	}
	i := maxLexText
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return strings.Clone(s[:i]) // do not keep the long string alive in the cache
}

// profile returns the prepared form of s, from the cache when it is there.
func (l *Lexical) profile(t *lexTables, s string) *profile {
	s = clip(s)
	l.mu.Lock()
	p, ok := l.cache[s]
	l.mu.Unlock()
	if ok {
		return p
	}
	p = t.build(s)
	l.mu.Lock()
	if l.cache == nil || len(l.cache) >= t.p.cacheMax {
		l.cache = make(map[string]*profile)
	}
	l.cache[s] = p
	l.mu.Unlock()
	return p
}

// score blends the word and trigram overlap of two prepared texts; the
// result is in [0, 1].
func (t *lexTables) score(a, b *profile) float64 {
	return t.combine(a, b, sharedWeight(a.uni, b.uni), sharedWeight(a.tri, b.tri), sharedCount(a.marks, b.marks))
}

// combine is the score of a and b given what they share: the summed weights
// (wa + wb) of their shared words and trigrams, and the number of specific
// words both name. It is the one place the formula lives: the pairwise path
// and Assign's index path both end here.
func (t *lexTables) combine(a, b *profile, uni, tri float64, marks int) float64 {
	if len(a.uni) == 0 || len(b.uni) == 0 {
		return 0
	}
	p := t.p
	s := ratio(uni, a.uniSum+b.uniSum)
	if len(a.tri) > 0 && len(b.tri) > 0 { // texts of short words only have none
		s += p.triWeight * (ratio(tri, a.triSum+b.triSum) - s) // (1−triWeight)·words + triWeight·trigrams, exactly 1 for equal texts
	}
	// Each names a specific word the other does not: "EACCES" against
	// "ETIMEDOUT", "429" against "401", "'app'" against "'distutils'". A text
	// naming none, or only ones the other names too, only adds detail.
	if len(a.marks) > 0 && len(b.marks) > 0 && marks < len(a.marks) && marks < len(b.marks) {
		s *= p.conflict
	}
	return min(max(s, 0), 1)
}

// ratio is the share of both texts' weight that the other matches; 1 for
// equal sets, 0 for disjoint ones.
func ratio(shared, total float64) float64 {
	if total <= 0 {
		return 0
	}
	return shared / total
}

// sharedWeight sums wa + wb over the terms a and b share, in increasing hash
// order. Both slices are sorted by hash.
func sharedWeight(a, b []term) float64 {
	var shared float64
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i].h < b[j].h:
			i++
		case a[i].h > b[j].h:
			j++
		default:
			shared += a[i].w + b[j].w
			i++
			j++
		}
	}
	return shared
}

// sharedCount counts the hashes x and y share; both are sorted.
func sharedCount(x, y []uint64) int {
	n := 0
	for i, j := 0, 0; i < len(x) && j < len(y); {
		switch {
		case x[i] < y[j]:
			i++
		case x[i] > y[j]:
			j++
		default:
			n++
			i++
			j++
		}
	}
	return n
}

// word is one word of a text on its way to becoming terms.
type word struct {
	low    string     // lowercased, number words as digits
	st     string     // stem(low)
	fl, fs *wordFacts // of low and st
	spec   bool       // a whole token that names something specific
	colon  bool       // followed by a "subject:" colon
}

// kept is a word that survived filtering: its canonical stem and weight.
type kept struct {
	st string
	w  float64
}

// build tokenises, filters, stems and weighs the first maxLexText bytes of s.
func (t *lexTables) build(s string) *profile {
	s = clip(s)
	p := t.p
	toks := tokenize(s)
	pr := &profile{}

	// The words: each token, or the parts of a token split at changes of
	// case or between letters and digits.
	words := make([]word, 0, len(toks)+len(toks)/4)
	for _, tk := range toks {
		wd := t.word(tk.raw)
		wd.spec, wd.colon = tk.specific(), tk.colon
		if wd.spec && len(wd.low) > 1 && !wd.fl.stop && !wd.fs.stop && !t.fact(canonOf(wd.st, wd.fs)).weak {
			// A lone digit weighs as specific but is no ground for a
			// conflict: versions are written "8.0", "net8.0", "v8".
			pr.marks = append(pr.marks, hashTerm(wd.st, ""))
		}
		parts := splitName(tk.raw)
		if parts == nil {
			words = append(words, wd)
			continue
		}
		for k, part := range parts {
			wd := t.word(part)
			wd.colon = tk.colon && k == len(parts)-1
			words = append(words, wd)
		}
	}

	// Phrases, negation, stop words, canonical forms, subject and weights.
	ks := make([]kept, 0, len(words))
	subj := -1 // kept words in the leading subject; -1 while none is found
	closeSubject := func(n int) {
		if subj < 0 && n > 0 && n <= p.subjMax {
			subj = n
		}
	}
	negated := 0 // words left in the scope of a negator
	for i := 0; i < len(words); i++ {
		wd := words[i]
		colon := wd.colon
		canon := ""
		for _, ph := range wd.fs.phrases {
			if n := len(ph.words); i+n <= len(words) && matches(ph.words, words[i:i+n]) {
				canon, colon = ph.canon, words[i+n-1].colon
				i += n - 1
				break
			}
		}
		if canon == "" {
			drop := wd.fl.negat
			if drop {
				negated = 3
			} else if len(wd.low) < 2 && (wd.low == "" || wd.low[0] < '0' || wd.low[0] > '9') || wd.fl.stop || wd.fs.stop {
				drop = true
				negated = max(negated-1, 0)
			}
			if drop {
				if colon {
					closeSubject(len(ks))
				}
				continue
			}
			canon = canonOf(wd.st, wd.fs)
			if f := t.fact(canon); f.isNegated && negated > 0 {
				canon = f.negated
			}
			negated = 0
		}
		fc := t.fact(canon)
		if fc.failed || wd.fs.failed {
			closeSubject(len(ks)) // the failure word itself is no subject
		}
		w := 1.0
		switch {
		case fc.weak:
			w = p.weakWeight
		case wd.spec:
			w = p.markWeight
		case fc.common:
			w = p.commonWeight
		}
		ks = append(ks, kept{canon, w})
		if colon {
			closeSubject(len(ks))
		}
	}
	if subj > 0 && subj < len(ks) { // a subject needs a message after it
		for i := range subj {
			ks[i].w *= p.subjWeight
		}
	}

	pr.uni = make([]term, 0, len(ks))
	if n := 0; p.triWeight > 0 {
		for _, k := range ks {
			if len(k.st) >= p.triMin {
				n += len(k.st) - 2
			}
		}
		pr.tri = make([]term, 0, n)
	}
	for _, k := range ks {
		pr.uni = append(pr.uni, term{hashTerm(k.st, ""), k.w})
		if n := len(k.st); n >= p.triMin && p.triWeight > 0 {
			for j := 0; j+3 <= n; j++ {
				pr.tri = append(pr.tri, term{hashTerm(k.st[j:j+3], ""), k.w})
			}
		}
	}
	pr.uni, pr.uniSum = dedupe(pr.uni)
	pr.tri, pr.triSum = dedupe(pr.tri)
	slices.Sort(pr.marks)
	pr.marks = slices.Clip(slices.Compact(pr.marks))
	return pr
}

// matches reports whether the words ws spell the stemmed phrase ph (whose
// first word is known to match).
func matches(ph []string, ws []word) bool {
	for k := 1; k < len(ph); k++ {
		if ws[k].st != ph[k] {
			return false
		}
	}
	return true
}

// word is the word of one token or part of a token, with its facts.
func (t *lexTables) word(raw string) word {
	low := t.normWord(strings.ToLower(raw))
	wd := word{low: low, st: stem(low), fl: t.fact(low)}
	wd.fs = wd.fl
	if wd.st != low {
		wd.fs = t.fact(wd.st)
	}
	return wd
}

// normWord turns a number word into digits and drops the leading zeros of
// a number ("02" → "2").
func (t *lexTables) normWord(low string) string {
	if f := t.fact(low); f.isNumber {
		return f.number
	}
	if len(low) < 2 || low[0] != '0' {
		return low
	}
	for i := 0; i < len(low); i++ {
		if low[i] < '0' || low[i] > '9' {
			return low
		}
	}
	return strings.TrimLeft(low[:len(low)-1], "0") + low[len(low)-1:]
}

// splitName splits a token at changes of case (DuplicateColumn → Duplicate,
// Column; HTTPServer → HTTP, Server) and between letters and digits (arm64
// → arm, 64). A plural acronym stays whole (IDs, URLs). It returns nil when
// there is nothing to split.
func splitName(s string) []string {
	var out []string
	start, prev, prevSize := 0, rune(-1), 0
	for i, r := range s {
		if prev >= 0 {
			cut := -1
			switch {
			case unicode.IsLower(prev) && unicode.IsUpper(r), unicode.IsDigit(prev) != unicode.IsDigit(r):
				cut = i
			case unicode.IsUpper(prev) && unicode.IsLower(r) && i-prevSize > start && s[i:] != "s":
				// HTTPServer: the cut goes before the S
				if q, _ := utf8.DecodeLastRuneInString(s[:i-prevSize]); unicode.IsUpper(q) {
					cut = i - prevSize
				}
			}
			if cut > start {
				out = append(out, s[start:cut])
				start = cut
			}
		}
		prev, prevSize = r, utf8.RuneLen(r)
	}
	if out == nil {
		return nil
	}
	return append(out, s[start:])
}

// dedupe sorts terms by hash, keeps each hash once with its largest weight,
// and returns the weight sum.
func dedupe(ts []term) ([]term, float64) {
	slices.SortFunc(ts, func(a, b term) int {
		switch {
		case a.h < b.h:
			return -1
		case a.h > b.h:
			return 1
		case a.w > b.w: // largest weight first, so it is the one kept
			return -1
		case a.w < b.w:
			return 1
		}
		return 0
	})
	out := ts[:0]
	var sum float64
	for i, t := range ts {
		if i > 0 && t.h == ts[i-1].h {
			continue
		}
		out = append(out, t)
		sum += t.w
	}
	return slices.Clip(out), sum
}

// hashTerm hashes a unigram (b == "") or a bigram with 64-bit FNV-1a. The
// zero byte cannot occur in a word, so "ab"+"c" and "a"+"bc" differ.
func hashTerm(a, b string) uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	for i := 0; i < len(a); i++ {
		h = (h ^ uint64(a[i])) * prime
	}
	if b != "" {
		h *= prime // the zero byte: h ^ 0 = h
		for i := 0; i < len(b); i++ {
			h = (h ^ uint64(b[i])) * prime
		}
	}
	return h
}

// token is one run of letters and digits, with what surrounded it.
type token struct {
	raw string
	// joined: the token is part of a name written without spaces, through
	// . _ / : @ or = (foo.Bar, cache.go, ./store, TZ=UTC, PG::DuplicateColumn).
	joined bool
	// quoted: the token stands inside a pair of quotes (' " `).
	quoted bool
	// colon: the token is followed by ':' and then white space or the end
	// ("go test: ..."), not by "::" or ":5432".
	colon bool
}

// specific reports whether the token names something specific: it holds a
// digit, is a word of five or more capitals (EACCES; short acronyms such as
// CI or API are ordinary words), has capitals inside the word
// (DuplicateColumn), is part of a joined name, or stands inside quotes.
func (t token) specific() bool {
	upper, letters := 0, 0
	lowerInside := false
	for i, r := range t.raw {
		switch {
		case unicode.IsDigit(r):
			return true
		case unicode.IsUpper(r):
			upper++
			letters++
		case unicode.IsLetter(r):
			letters++
			if i > 0 {
				lowerInside = true
			}
		}
	}
	switch {
	case letters >= 5 && upper == letters: // ALLCAPS, longer than an acronym
		return true
	case lowerInside && upper >= 2: // CamelCase
		return true
	}
	return t.joined || t.quoted
}

// tokenize splits s into runs of letters and digits. An apostrophe between
// two letters is dropped ("don't" → "dont"). A token is a slice of s
// unless an apostrophe was dropped from it.
func tokenize(s string) []token {
	rs := []rune(s)
	isWord := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
	isJoin := func(r rune) bool { return r == '.' || r == '_' || r == '/' || r == ':' || r == '@' || r == '=' }
	quoted := quotedSpans(rs, isWord)
	out := make([]token, 0, len(rs)/6+1)
	start, from, dropped := -1, 0, false // the token is rs[start:], s[from:]
	flush := func(end, to int) {         // the token is rs[start:end], s[from:to]
		if start < 0 {
			return
		}
		t := token{raw: s[from:to], quoted: quoted[start]}
		if dropped {
			// Letters and digits keep their bytes; a byte that is not
			// UTF-8 is never one, so the token's runes spell it exactly.
			var b strings.Builder
			for _, r := range rs[start:end] {
				if isWord(r) {
					b.WriteRune(r)
				}
			}
			t.raw = b.String()
		}
		switch {
		case start >= 2 && isJoin(rs[start-1]) && isWord(rs[start-2]):
			t.joined = true
		case start >= 1 && rs[start-1] == '/': // a path component: ./store, /usr
			t.joined = true
		case end+1 < len(rs) && isJoin(rs[end]) && isWord(rs[end+1]):
			t.joined = true
		}
		t.colon = end < len(rs) && rs[end] == ':' && (end+1 == len(rs) || unicode.IsSpace(rs[end+1]))
		out = append(out, t)
		start, dropped = -1, false
	}
	i := 0 // ranging over s yields the runes of rs, with their offsets
	for at, r := range s {
		switch {
		case isWord(r):
			if start < 0 {
				start, from = i, at
			}
		case (r == '\'' || r == '’') && start >= 0 && i+1 < len(rs) && unicode.IsLetter(rs[i+1]) && unicode.IsLetter(rs[i-1]):
			dropped = true // an apostrophe inside a word: skip it
		default:
			flush(i, at)
		}
		i++
	}
	flush(len(rs), len(s))
	return out
}

// quotedSpans marks the runes that stand between a pair of matching quotes:
// an opening ' " ` ‘ or “ that does not follow a letter or digit and is not
// followed by a space, closed by its match that is not followed by a letter
// or digit, on the same line, at most 80 runes later. An apostrophe inside a
// word (don't) opens nothing.
func quotedSpans(rs []rune, isWord func(rune) bool) []bool {
	in := make([]bool, len(rs)+1)
	for i := 0; i < len(rs); i++ {
		var c rune
		switch rs[i] {
		case '\'', '"', '`':
			c = rs[i]
		case '‘':
			c = '’'
		case '“':
			c = '”'
		default:
			continue
		}
		if (i > 0 && isWord(rs[i-1])) || i+1 >= len(rs) || unicode.IsSpace(rs[i+1]) {
			continue
		}
		for j := i + 1; j < len(rs) && j-i <= 80 && rs[j] != '\n'; j++ {
			if rs[j] == c && (j+1 == len(rs) || !isWord(rs[j+1])) && !unicode.IsSpace(rs[j-1]) {
				for k := i + 1; k < j; k++ {
					in[k] = true
				}
				i = j
				break
			}
		}
	}
	return in
}

// stem is a light suffix stripper: it only has to map the forms a report
// uses for one word to one string, not to find the linguistic root.
func stem(w string) string {
	n := len(w)
	switch {
	case n > 4 && strings.HasSuffix(w, "ies"):
		w = w[:n-3] + "y"
	case n > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		w = w[:n-1]
	}
	n = len(w)
	switch {
	case n > 5 && strings.HasSuffix(w, "ing"):
		w = undouble(w[:n-3])
	case n > 4 && strings.HasSuffix(w, "ed"):
		w = undouble(w[:n-2])
	}
	if len(w) > 3 && strings.HasSuffix(w, "e") {
		w = w[:len(w)-1]
	}
	return w
}

// undouble turns "runn" into "run" and "stopp" into "stop"; "ll", "ss" and
// "zz" stay ("install", "pass").
func undouble(w string) string {
	n := len(w)
	if n >= 3 && w[n-1] == w[n-2] && !strings.ContainsRune("aeiouylsz", rune(w[n-1])) {
		return w[:n-1]
	}
	return w
}

// stopWordList holds the words dropped before scoring: English function
// words and the forms the tokenizer makes of contractions.
const stopWordList = `a about above after again against all also am an and any are aren arent as at
be because been before being below between both but by can cannot cant could couldn couldnt
did didn didnt do does doesn doesnt doing don dont down during each either even every few for from further
had hadn hadnt has hasn hasnt have haven havent having he her here hers herself him himself his how
i id if ill im in into is isn isnt it its itself ive just let lets me more most my myself
no nor not now of off on once one only onto or other our ours ourselves out over own
same she should shouldnt so some such than that thats the their theirs them themselves then there
theres these they this those though through thus to too under until up upon us very via
was wasn wasnt we were weren werent what whatever when where whether which while who whom whose why
will with within without won wont would wouldn wouldnt yet you youre your yours yourself yourselves`

// negatorList holds the words that negate the word after them.
const negatorList = `not no never cannot cant dont doesnt didnt isnt arent wasnt werent wont couldnt
shouldnt wouldnt hasnt havent hadnt unable without nor`

// numberWordList maps number words to digits, so "three times" meets "3x"
// and "five minutes" meets "5 minutes".
const numberWordList = `0: zero
1: one
2: two twice
3: three thrice
4: four
5: five
6: six
7: seven
8: eight
9: nine
10: ten
11: eleven
12: twelve
20: twenty
30: thirty
40: forty
50: fifty
60: sixty
100: hundred
1000: thousand`

// weakWordList holds words so common in failure reports and corrections
// that sharing them says little about sharing a surprise.
const weakWordList = `fail error err broke break broken issue problem wrong work happen
run get got try tried seem still instead expect actual result return
say said person agent correct told mean see saw show find found make made use
ran always never anymore longer time thing way`

// commonWordList holds generic software words: sharing one says something,
// but less than sharing a word that names the thing at hand.
const commonWordList = `test build file code command script server service job task app application
project package module library tool version change update new old local remote default user data value
type name list line output input log message step stage day hour minute second start stop open close
read write call request response page check set add remove delete create need want first last next
different whole again already machine system process setup option flag setting path directory branch
report warn warning complain start install`

// failWordList holds words that end the subject of a report: in "npm install
// fails with EACCES" the words before "fails" name what was run.
const failWordList = `fail error crash broke die hang time timeout refused reject panic segfault exit`

// synonymTable maps variants to one canonical form, one group a line:
// "canonical: variant, variant, multi word variant". Variants are stemmed
// before use.
const synonymTable = `fail: failure, error, errors, err, errored, errors out, broke, break, broken
crash: crashes, died, dies, dying, segfault, segmentation fault, core dumped, abort, aborted, panic
hang: hangs, hung, stuck, freeze, freezes, frozen, timeout, time out, timed out, times out, never finishes, never returns, wait forever, waits forever
slow: slower, slowly, sluggish, takes longer, take longer, took longer
reject: refuse, refused, refuses, declined, decline, rejects
denied: permission denied, access denied, forbidden, eacces, eperm, not permitted, not allowed
missing: miss, misses, absent, lacks, lack, no such, enoent, not found, notfound
undefined: undeclared, not defined, not declared
oom: out of memory, enomem, oomkilled, memory exhausted
nospace: no space left, no space, enospc, disk full, disk is full
inuse: already in use, address in use, eaddrinuse, already allocated
database: db, databases, dbs
repository: repo, repos
directory: dir, dirs, folder, folders
config: configuration, configure, configured, cfg, conf, settings
environment: env, envs
dependency: dep, deps, dependencies, depends
parameter: param, params
argument: arg, args
package: pkg, pkgs
credential: creds, cred
certificate: cert, certs
kubernetes: k8s, kube
pr: pull request, pull requests, merge request, merge requests
e2e: end to end
temp: tmp, temporary
production: prod
documentation: docs, doc
library: lib, libs
message: msg, msgs
memory: mem
image: img
tls: ssl
timezone: tz, time zone
night: nightly
day: daily
week: weekly
hour: hourly
go: golang
ratelimit: rate limit, rate limited, rate limits, too many requests, throttled
unreachable: unreachable
stale: outdated, out of date, not up to date, obsolete
flaky: flake, flakes, flakey, intermittent, intermittently, sporadic, sporadically, nondeterministic
corrupt: corrupted, corruption, garbled, mangled
duplicate: duplicated, duplicates, doubled
invalid: incorrect, malformed
empty: blank
restart: reboot, rebooted, reboots, restarts, restarted
start: launch, launches, launched, startup, boot, boots
kill: killed, terminate, terminated, sigkill
upgrade: upgraded, upgrades, bump, bumped
macos: mac, osx, darwin
arm64: aarch64, apple silicon
amd64: x64
javascript: js
typescript: ts
login: log in, logs in, sign in, signin, logon
logout: log out, sign out, signout
exception: throws, thrown, raises, raised
leak: leaks, leaking, leaked
race: data race, race condition, racy
password: passwd
permission: permissions, perms`

// negatedTable maps a negated word to a canonical form: "cannot find",
// "does not exist" and "not installed" all say something is missing.
const negatedTable = `missing: find found exist exists locate available install installed present
undefined: defined declared
denied: allowed permitted
unreachable: reach reachable connect`

// Terms returns the hashes of the words Similarity compares text by,
// sorted. Two texts with no term in common score at most TrigramWeight
// (what their shared letter trigrams give), so a caller whose threshold is
// above that may skip such a pair without scoring it.
func (l *Lexical) Terms(text string) []uint64 { return l.Prepare(text).Terms() }

// TrigramWeight bounds the score of two texts with no term in common.
func (l *Lexical) TrigramWeight() float64 { return l.tables().p.triWeight }

// Prepared is a text made ready to be scored against many others: its
// profile is looked up once instead of once per pair.
type Prepared struct {
	l        *Lexical
	t        *lexTables
	p        *profile
	uni, tri *termTable // nil until Indexed
}

// Indexed returns p with its words and trigrams in hash tables, for a text
// scored against many groups: a pair's shared terms are then found by
// looking up the other's terms, not by merging both lists.
func (p Prepared) Indexed() Prepared {
	if p.uni == nil {
		p.uni, p.tri = newTermTable(p.p.uni), newTermTable(p.p.tri)
	}
	return p
}

// SharesTerm reports whether the text has a term (Terms) in common with a
// member of g.
func (p Prepared) SharesTerm(g *PreparedGroup) bool {
	if p.uni != nil {
		for _, h := range g.terms {
			if _, ok := p.uni.find(h); ok {
				return true
			}
		}
		return false
	}
	a, b := p.p.uni, g.terms
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i].h < b[j]:
			i++
		case a[i].h > b[j]:
			j++
		default:
			return true
		}
	}
	return false
}

// score is p.t.score(p.p, m), through the tables when p is indexed.
func (p Prepared) score(m *profile) float64 {
	if p.uni == nil {
		return p.t.score(p.p, m)
	}
	return p.t.combine(p.p, m, p.uni.shared(m.uni), p.tri.shared(m.tri), sharedCount(p.p.marks, m.marks))
}

// termTable finds the terms of a profile by hash: open addressing, at
// most a quarter full, so that most looking up of a term the profile lacks
// ends at the first slot.
type termTable struct {
	hs    []uint64  // a term's hash, 0 when empty
	ws    []float64 // its weight
	zero  bool      // the hash 0 is a term, of weight zeroW
	zeroW float64
	shift uint8
}

func newTermTable(ts []term) *termTable {
	n := 16
	for n < 4*len(ts) {
		n *= 2
	}
	t := &termTable{hs: make([]uint64, n), ws: make([]float64, n), shift: uint8(64 - bits.TrailingZeros(uint(n)))}
	mask := uint64(n - 1)
	for _, x := range ts {
		if x.h == 0 {
			t.zero, t.zeroW = true, x.w
			continue
		}
		i := t.slot(x.h)
		for t.hs[i] != 0 {
			i = (i + 1) & mask
		}
		t.hs[i], t.ws[i] = x.h, x.w
	}
	return t
}

func (t *termTable) slot(h uint64) uint64 { return (h * 0x9e3779b97f4a7c15) >> t.shift }

// find returns the weight of the term of hash h.
func (t *termTable) find(h uint64) (float64, bool) {
	if h == 0 {
		return t.zeroW, t.zero
	}
	mask := uint64(len(t.hs) - 1)
	for i := t.slot(h); ; i = (i + 1) & mask {
		switch t.hs[i] {
		case h:
			return t.ws[i], true
		case 0:
			return 0, false
		}
	}
}

// shared is sharedWeight(t.terms, b): the same weights added in the same
// order, increasing hash, found by looking up each of b.
func (t *termTable) shared(b []term) float64 {
	var shared float64
	for _, y := range b {
		if w, ok := t.find(y.h); ok {
			shared += w + y.w
		}
	}
	return shared
}

// Prepare readies text for Prepared.Linkage and Prepared.Terms.
func (l *Lexical) Prepare(text string) Prepared {
	t := l.tables()
	return Prepared{l: l, t: t, p: l.profile(t, text)}
}

// Terms is l.Terms of the prepared text.
func (p Prepared) Terms() []uint64 {
	out := make([]uint64, len(p.p.uni))
	for i, u := range p.p.uni {
		out[i] = u.h
	}
	return out // uni is sorted by hash
}

// Linkage is Linkage(ctx, l, text, g) for the prepared text: the same
// members, scored in the same order, so the same value.
func (p Prepared) Linkage(g Group) float64 {
	var sum float64
	n := 0
	for _, e := range g.Episodes {
		if strings.TrimSpace(e) != "" {
			sum += p.t.score(p.p, p.l.profile(p.t, e))
			n++
		}
	}
	if strings.TrimSpace(g.Text) != "" {
		sum += p.t.score(p.p, p.l.profile(p.t, g.Text))
		n++
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// PreparedGroup is a group made ready to be scored against many texts:
// the profiles of its members and its words, looked up once. A caller
// that holds it across calls holds those profiles; Size says how much
// text they came from.
type PreparedGroup struct {
	members []*profile // in Linkage's order: episodes, then the text; blank ones left out
	terms   []uint64   // sorted, each once: Terms of every member
	size    int
}

// PrepareGroup readies g for Prepared.GroupLinkage.
func (l *Lexical) PrepareGroup(g Group) *PreparedGroup {
	t := l.tables()
	pg := &PreparedGroup{members: make([]*profile, 0, len(g.Episodes)+1)}
	add := func(s string) {
		if strings.TrimSpace(s) == "" {
			return
		}
		p := l.profile(t, s)
		pg.members = append(pg.members, p)
		pg.size += min(len(s), maxLexText)
		for _, u := range p.uni {
			pg.terms = append(pg.terms, u.h)
		}
	}
	for _, e := range g.Episodes {
		add(e)
	}
	add(g.Text)
	if len(pg.members) > 1 {
		slices.Sort(pg.terms)
		pg.terms = slices.Compact(pg.terms)
	}
	pg.terms = slices.Clip(pg.terms)
	return pg
}

// Terms are the hashes of the words of the group's members (Lexical.Terms
// of each), sorted, each once.
func (g *PreparedGroup) Terms() []uint64 { return g.terms }

// Size is the bytes of text the group's profiles were made from.
func (g *PreparedGroup) Size() int { return g.size }

// GroupLinkage is Linkage(g) for a prepared group: the same members,
// scored in the same order, so the same value.
func (p Prepared) GroupLinkage(g *PreparedGroup) float64 {
	if len(g.members) == 0 {
		return 0
	}
	var sum float64
	for _, m := range g.members {
		sum += p.score(m)
	}
	return sum / float64(len(g.members))
}
