package textcheck

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// A token is a word or one punctuation mark of the normalised text.
type token struct {
	s, e  int    // byte offsets in the normalised text
	w     string // the word in lower case; the mark itself for punctuation
	cls   uint64 // word classes (lexicon.go)
	pid   uint16 // the word's number in lists/phrases.txt, 0 if none
	punct byte   // 0 for a word; ',' ';' ':' '.' '!' '?' '(' ')' '"' '-' for a mark
	cap   bool   // written with a capital first letter
	code  bool   // a `code` span, a number, or a word with digits or symbols
	tag   byte   // the model's word class (tagOf), set once by tokenize
	h     uint32 // the hash of w (wordHash), set once by classify or tokenize: the lexicon and the models read each word many times
}

func (t *token) has(c uint64) bool { return t.cls&c != 0 }

// contractions split off a word, so "don't" reads as "do" "n't" and "it's"
// as "it" "'s".
var contractions = []string{"n't", "'s", "'re", "'ll", "'ve", "'d", "'m"}

// tokenize cuts s into tokens. low is s in lower case (same length: the
// normalised text's letters are ASCII or keep their length when lowered;
// other words get a lexicon miss and read as unknown nouns).
func tokenize(s, low string, buf []token) []token {
	toks := buf
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
			// Most tokens start so, and no case below but a word's would
			// take them: the word's case, first.
			toks, i = appendWordAt(toks, s, low, i)
		case c == '\n' || c == '\r' || c == '\v' || c == '\f':
			// A line break ends a sentence, whatever punctuation is missing.
			if len(toks) > 0 && toks[len(toks)-1].punct == 0 {
				toks = append(toks, token{s: i, e: i + 1, w: ".", punct: '.'})
			}
			i++
		case c == ' ' || c == '\t':
			i++
		case c == '#' && i > 0 && s[i-1] == ' ' && i+1 < len(s) && s[i+1] == ' ':
			// A shell comment, "cmd  # do this first": a sentence of its own.
			toks = append(toks, token{s: i, e: i + 1, w: ".", punct: '.'})
			i++
		case c == '|' || c == '&' || c == '/' && (i+1 == len(s) || s[i+1] == ' ') && i > 0 && s[i-1] == ' ':
			// A shell pipe, "&&" or a spaced slash joins two statements.
			toks = append(toks, token{s: i, e: i + 1, w: ";", punct: ';'})
			for i++; i < len(s) && (s[i] == '|' || s[i] == '&'); i++ {
			}
		case c == '_' || c == '*':
			i++ // markdown emphasis around a word: "_Delete_", "**Delete**"
		case c == '`':
			j := strings.IndexByte(s[i+1:], '`')
			if j < 0 {
				i++
				continue
			}
			toks = append(toks, token{s: i, e: i + j + 2, w: "`", code: true, cls: cNoun | cKnown})
			i += j + 2
		case (c == '.' || c == '~' || c == '/') && (i == 0 || s[i-1] == ' ' || s[i-1] == '(') &&
			i+1 < len(s) && (s[i+1] == '/' || s[i+1] == '.' && i+2 < len(s) && s[i+2] == '/' ||
			c == '/' && isWordStart(s, i+1) && strings.IndexByte(s[i+1:wordEnd(s, i+1)], '/') >= 0):
			// "./...", "../x", "~/x", "/v1/users": a path or package pattern, up to
			// the next space, less the sentence's own punctuation.
			j := i + 1
			for j < len(s) && s[j] != ' ' && s[j] != '\t' && s[j] != '\n' {
				j++
			}
			for j > i+2 && strings.IndexByte(",;:!?)", s[j-1]) >= 0 {
				j--
			}
			toks = append(toks, token{s: i, e: j, w: low[i:j], code: true, cls: cNoun | cKnown})
			i = j
		case (c == '.' || c == '-' || c == '~' || c == '$') && (i == 0 || s[i-1] == ' ' || s[i-1] == '(') &&
			i+1 < len(s) && (isWordStart(s, i+1) || c == '-' && s[i+1] == '-' && i+2 < len(s) && isWordStart(s, i+2)):
			// ".gitignore", "--no-cache", "-race", "$HOME": code, not a
			// sentence end or a dash.
			k := i + 1
			for k < len(s) && s[k] == '-' {
				k++
			}
			j := wordEnd(s, k)
			toks = append(toks, token{s: i, e: j, w: low[i:j], code: true, cls: cNoun | cKnown})
			i = j
		case isWordStart(s, i):
			toks, i = appendWordAt(toks, s, low, i)
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == '\'' && len(toks) > 0 && toks[len(toks)-1].e == i && strings.HasSuffix(toks[len(toks)-1].w, "s") &&
				(i+1 == len(s) || s[i+1] == ' ') {
				entry := lexicon.get("'s")
				toks = append(toks, token{s: i, e: i + 1, w: "'s", cls: entry & classMask, pid: uint16(entry >> pidShift)}) // "runners' logs"
				i++
				continue
			}
			p := punctOf(r)
			if p == 0 && r >= utf8.RuneSelf && unicode.IsSymbol(r) {
				// "✔", "→", "🚀": a thing named, not a word to read.
				toks = append(toks, token{s: i, e: i + n, w: s[i : i+n], code: true, cls: cSymbol | cKnown})
				i += n
				continue
			}
			if p != 0 {
				toks = append(toks, token{s: i, e: i + n, w: s[i : i+n], punct: p, pid: punctID[p]})
			}
			i += n
		}
	}
	for k := len(buf); k < len(toks); k++ {
		t := &toks[k]
		if t.h == 0 { // not hashed by classify (or hashing to 0 again)
			t.h = wordHash(t.w)
		}
		t.tag = tagOf(t)
	}
	return toks
}

func punctOf(r rune) byte {
	switch r {
	case ',', ';', ':', '.', '!', '?', '(', ')', '"':
		return byte(r)
	case '[', '{', '<':
		return '('
	case ']', '}', '>':
		return ')'
	case '\u201c', '\u201d', '\u201e', '\u00ab', '\u00bb', '\u300c', '\u300d':
		return '"'
	case '-', '\u2013', '\u2014', '\u2015', '\u2212':
		return '-'
	case '\u2026':
		return '.'
	case '\'':
		return '"'
	}
	return 0
}

func isWordRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

// joiner: a mark that joins two word characters into one word.
func joiner(r rune) bool {
	switch r {
	case '\'', '-', '.', '/', '@', '+', '#':
		return true
	}
	return false
}

// unleet returns the word w spells with digits read as letters ("d3lete" →
// "delete", "1nstruct10ns" → "instructions") when that is a word the
// lexicon knows and w has at least three letters, else "".
func unleet(w string) string {
	letters, digits := 0, 0
	for i := 0; i < len(w); i++ {
		switch c := w[i]; {
		case 'a' <= c && c <= 'z':
			letters++
		case strings.IndexByte("013457$@", c) >= 0:
			digits++
		default:
			return ""
		}
	}
	if letters < 3 || digits == 0 || len(w) < 4 {
		return ""
	}
	for _, one := range []byte{'i', 'l'} {
		b := []byte(w)
		for i, c := range b {
			switch c {
			case '0':
				b[i] = 'o'
			case '1':
				b[i] = one
			case '3':
				b[i] = 'e'
			case '4', '@':
				b[i] = 'a'
			case '5', '$':
				b[i] = 's'
			case '7':
				b[i] = 't'
			}
		}
		if e := lexicon.get(string(b)); e&classMask&^(cPhrase|cProper) != 0 || e>>pidShift != 0 {
			return string(b)
		}
	}
	return ""
}

// codeLike: a word with digits or symbols ("v1.2", "go_test", "a@b").
func codeLike(w string) bool {
	for i := 0; i < len(w); i++ {
		switch c := w[i]; {
		case '0' <= c && c <= '9', c == '_', c == '.', c == '/', c == '@', c == '+', c == '#':
			return true
		}
	}
	return false
}

// sentenceJoin: the "." at s[j] ends a sentence the writer forgot the space
// after ("passed.Push", "failed.delete the lockfile"), rather than joining
// a file or host name ("go.mod", "evil.example", "v1.2"): the word before
// it is a known word of letters and the word after it a capital or a verb.
func sentenceJoin(s string, i, j int) bool {
	left := s[i:j]
	if k := strings.LastIndexAny(left, "./-@+#'"); k >= 0 {
		left = left[k+1:]
	}
	if len(left) < 3 || !isLetters(left) {
		return false
	}
	k := j + 1
	for k < len(s) && k-j <= 24 && s[k] < utf8.RuneSelf && asciiWord[s[k]] {
		k++
	}
	right := s[j+1 : k]
	if len(right) < 3 || !isLetters(right) || k < len(s) && s[k] == '.' {
		return false
	}
	// The word before ends a statement ("passed", "slow", "again"), not a
	// package name ("strings.Split", "foo.Bar"), and the word after is a
	// verb.
	lw := strings.ToLower(right)
	lb := lexicon.get(strings.ToLower(left))
	return lb&(cPast|cAdj|cAdv) != 0 && lb&cZ == 0 && lexicon.get(lw)&cBase != 0 && lexicon.get(lw)&cDomNoun == 0
}

func isLetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// asciiWord marks the ASCII bytes that are word characters (every byte
// has an entry, so a loop over any text reads it unchecked).
var asciiWord = func() (t [256]bool) {
	for c := 0; c < utf8.RuneSelf; c++ {
		t[c] = c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
	}
	return t
}()

func isWordStart(s string, i int) bool {
	if c := s[i]; c < utf8.RuneSelf {
		return asciiWord[c]
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return isWordRune(r)
}

// wordEnd: letters, digits and "_", joined by single inner ' - . / @ + #
// when a letter or digit follows ("re-run", "v1.2", "CI/CD", "don't").
func wordEnd(s string, i int) int {
	j, _ := wordSpan(s, i)
	return j
}

// wordSpan is wordEnd, and whether the word holds an apostrophe (a
// contraction to split), which its loop sees at no cost.
func wordSpan(s string, i int) (j int, apostrophe bool) {
	j = i
	for j < len(s) {
		for j < len(s) && asciiWord[s[j]] {
			j++ // most of a word: one load a byte
		}
		if j == len(s) {
			break
		}
		c := s[j]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[j:])
			if !isWordRune(r) {
				break // every joiner is ASCII
			}
			j += n
			continue
		}
		if !joiner(rune(c)) || j+1 == len(s) {
			break // a space, most often: the word's end
		}
		// "v1.2", "evil.example", but "passed.Push" is two sentences.
		if !isWordStart(s, j+1) || c == '.' && sentenceJoin(s, i, j) {
			break
		}
		apostrophe = apostrophe || c == '\''
		j++
	}
	return j, apostrophe
}

// appendWordAt appends the word that starts at s[i] and returns where it
// ends.
func appendWordAt(toks []token, s, low string, i int) ([]token, int) {
	j, apostrophe := wordSpan(s, i)
	for j > i+1 && s[j-1] == '_' {
		j-- // "Delete_" of "_Delete_"
	}
	if strings.HasPrefix(s[j:], "()") { // "Close()": code
		return append(toks, token{s: i, e: j + 2, w: low[i : j+2], code: true, cls: cNoun | cKnown}), j + 2
	}
	if apostrophe {
		// Split a contraction off the end: "don't" → "do" + "n't".
		w := low[i:j]
		for _, c := range contractions {
			if len(w) > len(c) && strings.HasSuffix(w, c) {
				k := j - len(c)
				toks = appendClassified(toks, s, low, i, k)
				return appendClassified(toks, s, low, k, j), j
			}
		}
	}
	return appendClassified(toks, s, low, i, j), j
}

// appendClassified appends the word s[i:j], tagged in place.
func appendClassified(toks []token, s, low string, i, j int) []token {
	toks = append(toks, token{s: i, e: j, w: low[i:j]})
	classify(&toks[len(toks)-1], s)
	return toks
}

// verbPrefix: first parts that make a hyphenated verb.
var verbPrefix = map[string]bool{
	"re": true, "pre": true, "un": true, "de": true, "co": true, "dis": true, "mis": true,
	"double": true, "triple": true, "cross": true, "over": true, "under": true, "auto": true,
	"dry": true, "force": true, "hard": true, "soft": true, "self": true, "back": true,
	"post": true, "sub": true, "super": true, "multi": true, "hot": true, "cold": true,
}

// classify tags one word, a fresh token of s whose span and word are set:
// the lexicon first, then its shape.
func classify(t *token, s string) {
	i := t.s
	if c := s[i]; c < utf8.RuneSelf {
		t.cap = 'A' <= c && c <= 'Z'
	} else {
		r, _ := utf8.DecodeRuneInString(s[i:])
		t.cap = unicode.IsUpper(r)
	}
	t.h = wordHash(t.w) // the lexicon's key, and the model's (tokenize)
	entry := lexicon.getHash(t.w, t.h)
	t.pid = uint16(entry >> pidShift)
	bits := entry & classMask
	if bits&^(cPhrase|cNameLists) != 0 {
		t.cls = bits
		return
	}
	classifyShape(t)
	t.cls |= bits
}

// classifyShape tags a word the lexicon does not hold by its shape.
func classifyShape(t *token) {
	w := t.w
	for k := 0; k < len(w); k++ {
		if w[k] >= utf8.RuneSelf {
			// An English word with marks added ("Ďisable") reads as the
			// word; any other is a word of another language, or a name.
			f := strings.ToLower(foldLatin(w))
			if h := wordHash(f); lexicon.getHash(f, h)&classMask&^cPhrase != 0 {
				entry := lexicon.getHash(f, h)
				t.w, t.h, t.cls, t.pid = f, h, entry&classMask, uint16(entry>>pidShift)
				return
			}
			t.cls = cNoun | cProper | cKnown
			return
		}
	}
	if f := unleet(w); f != "" {
		// "D3lete", "1gn0re": digits standing for letters.
		h := wordHash(f)
		entry := lexicon.getHash(f, h)
		t.w, t.h, t.cls, t.pid = f, h, entry&classMask, uint16(entry>>pidShift)
		return
	}
	if codeLike(w) {
		t.code = true
		t.cls = cNoun | cKnown
		return
	}
	if k := strings.IndexByte(w, '-'); k > 0 {
		// "re-run" and "dry-run" are verbs like their last part; other
		// compounds ("set-up", "do-not-disturb") are nouns or adjectives.
		if verbPrefix[w[:k]] && strings.Count(w, "-") == 1 {
			if lexicon.get(w[k+1:])&cBase != 0 { // the class bits sit below the phrase number
				t.cls = cBase | cKnown
				return
			}
		}
		t.cls = cNoun | cAdj | cKnown | cDomNoun
		return
	}
	n := len(w)
	switch {
	case n > 4 && strings.HasSuffix(w, "ing"):
		t.cls = cGer | cNoun | cAdj | cDomNoun
	case n > 3 && strings.HasSuffix(w, "ed"):
		t.cls = cPast | cPart | cAdj
	case n > 3 && strings.HasSuffix(w, "ly"):
		t.cls = cAdv
	case n > 2 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") &&
		!strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		t.cls = cNoun | cZ | cDomNoun
	case n > 4 && (strings.HasSuffix(w, "ous") || strings.HasSuffix(w, "ive") || strings.HasSuffix(w, "able") ||
		strings.HasSuffix(w, "ible") || strings.HasSuffix(w, "ful") || strings.HasSuffix(w, "less") ||
		strings.HasSuffix(w, "ic") || strings.HasSuffix(w, "ish") || strings.HasSuffix(w, "al") ||
		strings.HasSuffix(w, "ky") || strings.HasSuffix(w, "sy") || strings.HasSuffix(w, "zy")):
		t.cls = cAdj | cNoun | cDomNoun // "flaky", "noisy"
	case strings.HasSuffix(w, "tion") || strings.HasSuffix(w, "ment") ||
		strings.HasSuffix(w, "ness") || strings.HasSuffix(w, "ity") || strings.HasSuffix(w, "ance"):
		t.cls = cNoun | cDomNoun
	default:
		t.cls = cNoun | cBase | cUnknown // a noun, or a verb the lexicon lacks
	}
}
