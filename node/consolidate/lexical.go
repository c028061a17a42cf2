package consolidate

import (
	"context"
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
// texts are taken for the same surprise. It was chosen on
// testdata/pairs.jsonl (TestLexicalQuality logs precision and recall per
// part of that set). It is calibrated for Lexical only: an embedding model
// needs its own threshold.
const DefaultThreshold = 0.45

// Lexical is the default Similarity: normalised word and word-pair overlap.
//
// A text is split on anything that is not a letter or a digit (an apostrophe
// inside a word is dropped: "can't" is "cant"), lowercased, cleared of
// one-letter tokens and English stop words, and passed through a light
// stemmer (-s, -es, -ies, -ing, -ed, a final -e, a doubled final consonant).
// Each kept word gets a weight:
//
//   - words found in almost every failure report ("fails", "error", "tried",
//     "the person said") weigh little;
//   - words that name something specific weigh more: error codes in capitals
//     (EACCES), CamelCase names (DuplicateColumn), anything with a digit
//     (404, arm64), parts of dotted, slashed, underscored or key=value names
//     (foo.Bar, ./store, TZ=UTC) and quoted words ('app');
//   - the words of a leading subject weigh less: in "npm install fails with
//     EACCES" the words before "fails" (or before a "subject: message"
//     colon) say what was run, and near-misses share exactly those.
//
// The score is uniWeight·D(unigrams) + (1−uniWeight)·D(bigrams), where D is
// the share of both texts' weight that the other text matches,
// Σshared(wa+wb)/(ΣA+ΣB), and a bigram is two adjacent kept words weighing
// their mean. When each text names a specific token the other lacks
// ("EACCES" against "ETIMEDOUT", "429" against "401"), the score is
// multiplied by a conflict factor. A text with no kept word scores 0 against
// everything, itself included; otherwise identical texts score 1.
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
	uniWeight  float64 // share of the unigram score; the rest is bigrams
	weakWeight float64 // weight of a generic failure word
	markWeight float64 // weight of a word that names something specific
	subjWeight float64 // factor for the words of a leading subject
	subjMax    int     // a leading part longer than this many kept words is no subject
	conflict   float64 // factor when each text names a specific the other lacks
	cacheMax   int     // prepared texts kept before the cache is cleared
}

// defaultLexParams were chosen on testdata/pairs.jsonl; see TestLexicalQuality
// and the package documentation for how.
func defaultLexParams() lexParams {
	return lexParams{
		uniWeight:  0.9,
		weakWeight: 0.2,
		markWeight: 1.5,
		subjWeight: 0.4,
		subjMax:    6,
		conflict:   0.6,
		cacheMax:   1 << 14,
	}
}

// lexTables are the parameters and word sets of a Lexical, built once.
type lexTables struct {
	p                  lexParams
	stop, weak, failed map[string]bool
}

func newLexTables(p lexParams) *lexTables {
	t := &lexTables{p: p, stop: make(map[string]bool), weak: make(map[string]bool), failed: make(map[string]bool)}
	for _, w := range strings.Fields(stopWordList) {
		t.stop[w] = true
	}
	// Weak and failure words are compared with stemmed words.
	for _, w := range strings.Fields(weakWordList) {
		t.weak[stem(w)] = true
	}
	for _, w := range strings.Fields(failWordList) {
		t.failed[stem(w)] = true
	}
	return t
}

// term is one unigram or bigram of a text: a 64-bit FNV-1a hash of its
// stemmed form, and its weight.
type term struct {
	h uint64
	w float64
}

// profile is a text prepared for scoring: its unigrams and bigrams sorted by
// hash with their weight sums, and the sorted hashes of its specific words.
type profile struct {
	uni, bi       []term
	uniSum, biSum float64
	marks         []uint64
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

// score blends the unigram and bigram overlap of two prepared texts; the
// result is in [0, 1].
func (t *lexTables) score(a, b *profile) float64 {
	return t.combine(a, b, sharedWeight(a.uni, b.uni), sharedWeight(a.bi, b.bi), sharedCount(a.marks, b.marks))
}

// combine is the score of a and b given what they share: the summed weights
// (wa + wb) of their shared unigrams and bigrams, and the number of specific
// words both name. It is the one place the formula lives: the pairwise path
// and Assign's index path both end here.
func (t *lexTables) combine(a, b *profile, uni, bi float64, marks int) float64 {
	if len(a.uni) == 0 || len(b.uni) == 0 {
		return 0
	}
	s := ratio(uni, a.uniSum+b.uniSum)
	if len(a.bi) > 0 && len(b.bi) > 0 {
		s = t.p.uniWeight*s + (1-t.p.uniWeight)*ratio(bi, a.biSum+b.biSum)
	}
	// Each names a specific word the other does not: "EACCES" against
	// "ETIMEDOUT", "429" against "401", "'app'" against "'distutils'". A text
	// naming none, or only ones the other names too, only adds detail.
	if len(a.marks) > 0 && len(b.marks) > 0 && marks < len(a.marks) && marks < len(b.marks) {
		s *= t.p.conflict
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

// build tokenises, filters, stems and weighs the first maxLexText bytes of s.
func (t *lexTables) build(s string) *profile {
	s = clip(s)
	p := t.p
	type kept struct {
		stem string
		w    float64
	}
	toks := tokenize(s)
	ks := make([]kept, 0, len(toks))
	pr := &profile{}
	subj := -1 // kept words in the leading subject; -1 while none is found
	closeSubject := func(n int) {
		if subj < 0 && n > 0 && n <= p.subjMax {
			subj = n
		}
	}
	for _, tk := range toks {
		low := strings.ToLower(tk.raw)
		short := utf8.RuneCountInString(low) < 2
		if short && !unicode.IsDigit([]rune(low)[0]) || t.stop[low] {
			if tk.colon {
				closeSubject(len(ks))
			}
			continue
		}
		st := stem(low)
		if t.stop[st] {
			continue
		}
		if t.failed[st] {
			closeSubject(len(ks)) // the failure word itself is no subject
		}
		w := 1.0
		switch {
		case t.weak[st]:
			w = p.weakWeight
		case tk.specific():
			w = p.markWeight
			// A lone digit weighs as specific but is no ground for a
			// conflict: versions are written "8.0", "net8.0", "v8".
			if !short {
				pr.marks = append(pr.marks, hashTerm(st, ""))
			}
		}
		ks = append(ks, kept{st, w})
		if tk.colon {
			closeSubject(len(ks))
		}
	}
	if subj > 0 && subj < len(ks) { // a subject needs a message after it
		for i := range subj {
			ks[i].w *= p.subjWeight
		}
	}
	for i, k := range ks {
		pr.uni = append(pr.uni, term{hashTerm(k.stem, ""), k.w})
		if i > 0 && ks[i-1].stem != k.stem {
			pr.bi = append(pr.bi, term{hashTerm(ks[i-1].stem, k.stem), (ks[i-1].w + k.w) / 2})
		}
	}
	pr.uni, pr.uniSum = dedupe(pr.uni)
	pr.bi, pr.biSum = dedupe(pr.bi)
	slices.Sort(pr.marks)
	pr.marks = slices.Clip(slices.Compact(pr.marks))
	return pr
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
// two letters is dropped ("don't" → "dont").
func tokenize(s string) []token {
	rs := []rune(s)
	isWord := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
	isJoin := func(r rune) bool { return r == '.' || r == '_' || r == '/' || r == ':' || r == '@' || r == '=' }
	quoted := quotedSpans(rs, isWord)
	var out []token
	var b strings.Builder
	start := -1
	flush := func(end int) { // the token is rs[start:end]
		if start < 0 {
			return
		}
		t := token{raw: b.String(), quoted: quoted[start]}
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
		b.Reset()
		start = -1
	}
	for i, r := range rs {
		switch {
		case isWord(r):
			if start < 0 {
				start = i
			}
			b.WriteRune(r)
		case (r == '\'' || r == '’') && start >= 0 && i+1 < len(rs) && unicode.IsLetter(rs[i+1]) && unicode.IsLetter(rs[i-1]):
			// an apostrophe inside a word: skip it
		default:
			flush(i)
		}
	}
	flush(len(rs))
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

// weakWordList holds words so common in failure reports and corrections
// that sharing them says little about sharing a surprise.
const weakWordList = `fail error err broke break broken issue problem wrong work happen
run get got try tried seem still instead expect actual result return
say said person agent correct told mean see saw show find found make made use
ran always never anymore longer time thing way`

// failWordList holds words that end the subject of a report: in "npm install
// fails with EACCES" the words before "fails" name what was run.
const failWordList = `fail error crash broke die hang time timeout refused reject panic segfault exit`
