package consolidate

import (
	"context"
	"math"
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
const DefaultThreshold = 0.48

// Lexical is the default Similarity.
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
	uniWeight    float64 // share of the word score
	biWeight     float64 // share of the word-pair score; the rest is the trigram score
	weakWeight   float64 // weight of a generic failure word
	commonWeight float64 // weight of a common software word
	markWeight   float64 // weight of a word that names something specific
	partWeight   float64 // factor for the parts of a split name
	wholeWeight  float64 // weight of a whole split or joined name beside its parts
	subjWeight   float64 // factor for the words of a leading subject
	subjMax      int     // a leading part longer than this many kept words is no subject
	conflict     float64 // factor when each text names a specific the other lacks
	negWeight    float64 // weight of the negated form of a word ("not X"); 0 keeps none
	triMin       int     // shortest word (bytes) whose character trigrams count
	triNorm      int     // trigram weight: 0 the word's, 1 shared among its trigrams, 2 by the square root of their number
	triConcept   bool    // words mapped through the synonym tables give trigrams too
	synonyms     bool    // map variant words and phrases to one form
	cacheMax     int     // prepared texts kept before the cache is cleared
}

// defaultLexParams were chosen on testdata/pairs.jsonl; see TestLexicalQuality
// and the package documentation for how.
func defaultLexParams() lexParams {
	return lexParams{
		uniWeight:    0.6,
		biWeight:     0,
		weakWeight:   0.1,
		commonWeight: 0.5,
		markWeight:   1.5,
		partWeight:   1,
		wholeWeight:  0,
		subjWeight:   0.2,
		subjMax:      6,
		conflict:     0.7,
		negWeight:    0,
		triMin:       4,
		triNorm:      0,
		triConcept:   true,
		synonyms:     true,
		cacheMax:     1 << 14,
	}
}

// lexTables are the parameters and word sets of a Lexical, built once.
type lexTables struct {
	p                                 lexParams
	stop, weak, common, failed, negat map[string]bool
	syn                               map[string]string   // stem → canonical form
	negCanon                          map[string]string   // negated stem → canonical form
	phrases                           map[string][]phrase // by the stem of the first word
	numbers                           map[string]string   // number word → digits
}

// phrase is a run of stemmed words that stands for one canonical term.
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
	for i, w := range strings.Fields(numberWordList) {
		t.numbers[w] = itoa(i)
	}
	t.numbers["twenty"], t.numbers["thirty"], t.numbers["forty"], t.numbers["fifty"], t.numbers["sixty"] = "20", "30", "40", "50", "60"
	t.numbers["hundred"], t.numbers["thousand"] = "100", "1000"
	if p.synonyms {
		for _, line := range strings.Split(synonymTable, "\n") {
			canon, rest, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			canon = strings.TrimSpace(canon)
			t.syn[stem(canon)] = canon
			for _, v := range strings.Split(rest, ",") {
				ws := strings.Fields(v)
				switch {
				case len(ws) == 0:
				case len(ws) == 1:
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
			canon, rest, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			for _, w := range strings.Fields(rest) {
				t.negCanon[t.canon(stem(w))] = strings.TrimSpace(canon)
			}
		}
		// longer phrases first, so "heap out of memory" wins over "out of memory"
		for k := range t.phrases {
			slices.SortStableFunc(t.phrases[k], func(a, b phrase) int { return len(b.words) - len(a.words) })
		}
	}
	// Weak, common and failure words are compared with stemmed, canonical words.
	for _, w := range strings.Fields(weakWordList) {
		t.weak[t.canon(stem(w))] = true
	}
	for _, w := range strings.Fields(commonWordList) {
		t.common[t.canon(stem(w))] = true
	}
	for _, w := range strings.Fields(failWordList) {
		t.failed[t.canon(stem(w))] = true
	}
	return t
}

// canon maps a stem to its canonical form.
func (t *lexTables) canon(st string) string {
	if c, ok := t.syn[st]; ok {
		return c
	}
	return st
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// term is one unigram, bigram or character trigram of a text: a 64-bit
// FNV-1a hash of its form, and its weight.
type term struct {
	h uint64
	w float64
}

// profile is a text prepared for scoring: its unigrams, bigrams and
// character trigrams sorted by hash with their weight sums, and the sorted
// hashes of its specific words.
type profile struct {
	uni, bi, tri          []term
	uniSum, biSum, triSum float64
	marks                 []uint64
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

// score blends the unigram, bigram and trigram overlap of two prepared
// texts; the result is in [0, 1].
func (t *lexTables) score(a, b *profile) float64 {
	return t.combine(a, b, sharedWeight(a.uni, b.uni), sharedWeight(a.bi, b.bi), sharedWeight(a.tri, b.tri), sharedCount(a.marks, b.marks))
}

// combine is the score of a and b given what they share: the summed weights
// (wa + wb) of their shared unigrams, bigrams and trigrams, and the number
// of specific words both name. It is the one place the formula lives: the
// pairwise path and Assign's index path both end here.
func (t *lexTables) combine(a, b *profile, uni, bi, tri float64, marks int) float64 {
	if len(a.uni) == 0 || len(b.uni) == 0 {
		return 0
	}
	p := t.p
	s, total := p.uniWeight*ratio(uni, a.uniSum+b.uniSum), p.uniWeight
	if len(a.bi) > 0 && len(b.bi) > 0 && p.biWeight > 0 {
		s += p.biWeight * ratio(bi, a.biSum+b.biSum)
		total += p.biWeight
	}
	if triWeight := 1 - p.uniWeight - p.biWeight; len(a.tri) > 0 && len(b.tri) > 0 && triWeight > 1e-9 {
		s += triWeight * ratio(tri, a.triSum+b.triSum)
		total += triWeight
	}
	s /= total
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
	low   string // lowercased
	part  bool   // one part of a name split at case or digit changes
	spec  bool   // the whole token names something specific
	colon bool   // followed by "subject:" colon
}

// kept is a word that survived filtering, with its stem and weight.
type kept struct {
	st      string
	w       float64
	neg     bool // negated ("not X", "never X")
	concept bool // mapped through the synonym tables
}

// build tokenises, filters, stems and weighs the first maxLexText bytes of s.
func (t *lexTables) build(s string) *profile {
	s = clip(s)
	p := t.p
	toks := tokenize(s)
	pr := &profile{}

	// Words: each token, or the parts of a token split at case and digit
	// changes. Whole split and joined names are kept aside as extra terms.
	words := make([]word, 0, len(toks)+4)
	type extra struct {
		low string
		at  int // index of its first word, to place it in or out of the subject
	}
	var extras []extra
	compStart, compWord := -1, 0
	for i, tk := range toks {
		first := len(words)
		low := t.normWord(strings.ToLower(tk.raw))
		spec := tk.specific()
		if spec && len(low) > 1 && !t.stop[low] {
			if st := stem(low); !t.weak[t.canon(st)] {
				pr.marks = append(pr.marks, hashTerm(st, ""))
			}
		}
		if parts := splitName(tk.raw); len(parts) > 1 {
			if p.wholeWeight > 0 {
				extras = append(extras, extra{low, first})
			}
			for k, part := range parts {
				words = append(words, word{low: t.normWord(strings.ToLower(part)), part: true, colon: tk.colon && k == len(parts)-1})
			}
		} else {
			words = append(words, word{low: low, spec: spec, colon: tk.colon})
		}
		// a joined name: foo.Bar, /usr/lib/node_modules, localhost:5432
		if tk.link && compStart < 0 {
			compStart, compWord = i, first
		}
		if !tk.link && compStart >= 0 {
			if p.wholeWeight > 0 {
				extras = append(extras, extra{strings.ToLower(s[toks[compStart].start:tk.end]), compWord})
			}
			compStart = -1
		}
	}

	// Phrases, negation, stop words, stems, canonical forms and weights.
	ks := make([]kept, 0, len(words))
	subj := -1 // kept words in the leading subject; -1 while none is found
	closeSubject := func(n int) {
		if subj < 0 && n > 0 && n <= p.subjMax {
			subj = n
		}
	}
	negLeft := 0 // words left in the scope of a negator
	keptBefore := make([]int, len(words)+1)
	for i := 0; i < len(words); i++ {
		keptBefore[i] = len(ks)
		wd := words[i]
		low := wd.low
		st := stem(low)
		colon := wd.colon
		canonical := ""
		concept := false
		if p.synonyms {
			if phs, ok := t.phrases[st]; ok {
				for _, ph := range phs {
					if n := len(ph.words); i+n <= len(words) && t.matches(ph.words, words[i:i+n]) {
						canonical, concept = ph.canon, true
						colon = words[i+n-1].colon
						for j := i + 1; j < i+n; j++ {
							keptBefore[j] = len(ks)
						}
						i += n - 1
						break
					}
				}
			}
		}
		if canonical == "" {
			if t.negat[low] {
				negLeft = 3
				if colon {
					closeSubject(len(ks))
				}
				continue
			}
			short := len(low) < 2 && (len(low) == 0 || low[0] < '0' || low[0] > '9')
			if short || t.stop[low] || t.stop[st] {
				if negLeft > 0 {
					negLeft--
				}
				if colon {
					closeSubject(len(ks))
				}
				continue
			}
			canonical = t.canon(st)
			_, concept = t.syn[st]
			if negLeft > 0 && p.synonyms {
				if c, ok := t.negCanon[canonical]; ok {
					canonical, negLeft, concept = c, 0, true
				}
			}
		}
		neg := negLeft > 0
		negLeft = 0
		if t.failed[canonical] || t.failed[st] {
			closeSubject(len(ks)) // the failure word itself is no subject
		}
		w := 1.0
		switch {
		case t.weak[canonical]:
			w = p.weakWeight
		case wd.spec:
			w = p.markWeight
		case t.common[canonical]:
			w = p.commonWeight
		}
		if wd.part {
			w *= p.partWeight
		}
		ks = append(ks, kept{canonical, w, neg, concept})
		if colon {
			closeSubject(len(ks))
		}
	}
	inSubject := func(i int) bool { return subj > 0 && subj < len(ks) && i < subj } // a subject needs a message after it
	for i := range ks {
		if inSubject(i) {
			ks[i].w *= p.subjWeight
		}
	}
	for i, k := range ks {
		pr.uni = append(pr.uni, term{hashTerm(k.st, ""), k.w})
		if k.neg && p.negWeight > 0 {
			pr.uni = append(pr.uni, term{hashTerm("!", k.st), p.negWeight * k.w})
		}
		if i > 0 && ks[i-1].st != k.st {
			pr.bi = append(pr.bi, term{hashTerm(ks[i-1].st, k.st), (ks[i-1].w + k.w) / 2})
		}
		if n := len(k.st); n >= p.triMin && p.uniWeight+p.biWeight < 1 && (p.triConcept || !k.concept) {
			tw := k.w
			switch p.triNorm {
			case 1:
				tw /= float64(n - 2)
			case 2:
				tw /= math.Sqrt(float64(n - 2))
			}
			for j := 0; j+3 <= n; j++ {
				pr.tri = append(pr.tri, term{hashTerm(k.st[j:j+3], ""), tw})
			}
		}
	}
	for _, e := range extras {
		w := p.wholeWeight
		if inSubject(keptBefore[e.at]) {
			w *= p.subjWeight
		}
		pr.uni = append(pr.uni, term{hashTerm("=", e.low), w})
	}
	pr.uni, pr.uniSum = dedupe(pr.uni)
	pr.bi, pr.biSum = dedupe(pr.bi)
	pr.tri, pr.triSum = dedupe(pr.tri)
	slices.Sort(pr.marks)
	pr.marks = slices.Clip(slices.Compact(pr.marks))
	return pr
}

// matches reports whether the words ws spell the stemmed phrase ph.
func (t *lexTables) matches(ph []string, ws []word) bool {
	for k, w := range ph {
		if k > 0 && stem(ws[k].low) != w {
			return false
		}
	}
	return true
}

// normWord turns a number word into digits and drops the leading zeros of
// a number ("02" → "2").
func (t *lexTables) normWord(low string) string {
	if d, ok := t.numbers[low]; ok {
		return d
	}
	if len(low) > 1 && low[0] == '0' {
		i := 0
		for i < len(low)-1 && low[i] == '0' {
			i++
		}
		digits := true
		for j := i; j < len(low); j++ {
			if low[j] < '0' || low[j] > '9' {
				digits = false
				break
			}
		}
		if digits {
			return low[i:]
		}
	}
	return low
}

// splitName splits a token at changes of case (DuplicateColumn →
// Duplicate, Column; HTTPServer → HTTP, Server) and between letters and
// digits (arm64 → arm, 64). It returns nil when there is nothing to split.
func splitName(s string) []string {
	rs := []rune(s)
	var out []string
	start := 0
	for i := 1; i < len(rs); i++ {
		a, b := rs[i-1], rs[i]
		cut := unicode.IsLower(a) && unicode.IsUpper(b) ||
			unicode.IsDigit(a) != unicode.IsDigit(b) ||
			// HTTPServer: the cut goes before the S; IDs and URLs stay whole
			unicode.IsUpper(a) && unicode.IsUpper(b) && i+1 < len(rs) && unicode.IsLower(rs[i+1]) && !(i+2 == len(rs) && rs[i+1] == 's')
		if cut {
			out = append(out, string(rs[start:i]))
			start = i
		}
	}
	if start == 0 {
		return nil
	}
	return append(out, string(rs[start:]))
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
	// link: the token is joined to the next one by one or two of
	// . _ / : @ = - and no space, so the two are parts of one name.
	link bool
	// start and end are the byte offsets of the token in the text.
	start, end int
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
	off := make([]int, len(rs)+1) // byte offset of each rune
	{
		i := 0
		for k := range s {
			off[i] = k
			i++
		}
		off[len(rs)] = len(s)
	}
	isWord := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
	isJoin := func(r rune) bool { return r == '.' || r == '_' || r == '/' || r == ':' || r == '@' || r == '=' }
	isLink := func(r rune) bool { return isJoin(r) || r == '-' }
	quoted := quotedSpans(rs, isWord)
	var out []token
	var b strings.Builder
	start := -1
	flush := func(end int) { // the token is rs[start:end]
		if start < 0 {
			return
		}
		t := token{raw: b.String(), quoted: quoted[start], start: off[start], end: off[end]}
		switch {
		case start >= 2 && isJoin(rs[start-1]) && isWord(rs[start-2]):
			t.joined = true
		case start >= 1 && rs[start-1] == '/': // a path component: ./store, /usr
			t.joined = true
		case end+1 < len(rs) && isJoin(rs[end]) && isWord(rs[end+1]):
			t.joined = true
		}
		t.colon = end < len(rs) && rs[end] == ':' && (end+1 == len(rs) || unicode.IsSpace(rs[end+1]))
		switch {
		case end+1 < len(rs) && isLink(rs[end]) && isWord(rs[end+1]):
			t.link = true
		case end+2 < len(rs) && isLink(rs[end]) && isLink(rs[end+1]) && isWord(rs[end+2]):
			t.link = true // PG::DuplicateColumn
		}
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

// negatorList holds the words that negate the word after them.
const negatorList = `not no never cannot cant dont doesnt didnt isnt arent wasnt werent wont couldnt
shouldnt wouldnt hasnt havent hadnt unable without nor`

// numberWordList holds the number words from zero, in order.
const numberWordList = `zero one two three four five six seven eight nine ten eleven twelve`

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
unreachable: unreachable`

// negatedTable maps a negated word to a canonical form: "cannot find",
// "does not exist" and "not installed" all say something is missing.
const negatedTable = `missing: find found exist exists locate available install installed present
undefined: defined declared
denied: allowed permitted
unreachable: reach reachable connect`
