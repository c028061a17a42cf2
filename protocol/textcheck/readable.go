package textcheck

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/abadojack/whatlanggo"
)

// The refusals of SPEC §6 "Text the checks can read": a wall that cannot
// read a text must not let it through.
const (
	RuleControl  = "control character"
	RuleLanguage = "unsupported language"
)

// ReadError says the checks cannot read a text: it holds a control
// character, or it is written mostly in a language other than English.
type ReadError struct {
	Rule   string // RuleControl or RuleLanguage
	Detail string // the character ("U+001B") or the language found ("Spanish")
}

func (e *ReadError) Error() string {
	if e.Rule == RuleControl {
		return "the text holds a control character (" + e.Detail + "); a lesson is one line of plain text: write it without line breaks, tabs or escape sequences"
	}
	return "the text reads as " + e.Detail + ", not English (unsupported language); the checks read English, so write the lesson in English"
}

// controlChar returns the first C0, DEL or C1 character of text, or -1.
// Line breaks and tabs are control characters too: a lesson is one
// sentence, and a line break hides where a new clause starts. ascii
// reports whether text is all ASCII, which with no control character
// makes it plain (isPlainASCII) for the checks after it.
func controlChar(text string) (r rune, ascii bool) {
	ascii = true
	i := 0
	for ; i+8 <= len(text) && printable8(text[i:i+8]); i += 8 {
		// Eight printable ASCII bytes (most of every text) at a time.
	}
	for ; i < len(text); i++ {
		if c := text[i]; mayControl[c] {
			switch {
			case c < utf8.RuneSelf:
				return rune(c), false
			case c != 0xc2:
				ascii = false
			case i+1 < len(text) && text[i+1] >= 0x80 && text[i+1] <= 0x9f:
				return rune(text[i+1]), false // U+0080–U+009F, UTF-8 C2 80–C2 9F
			default:
				ascii = false
			}
		}
	}
	return -1, ascii
}

// printable8: the eight bytes of s are all printable ASCII (0x20–0x7E),
// told by word arithmetic: a byte below 0x20 borrows into its high bit
// when 0x20 is taken from it, and one above 0x7E carries into it when 1 is
// added (or has it set already).
func printable8(s string) bool {
	x := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	return ((x-0x20*ones)&^x|(x+ones)|x)&highs == 0
}

// mayControl: the bytes that may start a control character (one below a
// space, DEL, or 0xC2, which leads U+0080–U+00BF) and the other bytes
// past ASCII, so controlChar looks closer at those alone; every check
// reads every byte of its text here.
var mayControl = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c < ' ' || c == 0x7f || c >= utf8.RuneSelf
	}
	return t
}()

// The language test. Most lesson texts are English words the lexicon
// knows, and those never reach the language identifier; a text in another
// script, or one whose lower-case words are mostly unknown to the lexicon,
// is identified by whatlanggo's trigram profiles (the Go port of
// whatlang), which has no model to load and costs nothing until asked.
const (
	// minWordsForLanguage: shorter texts ("Le café stays open" is still
	// read) are left to the other checks; they are too short to identify.
	minWordsForLanguage = 4
	// englishShareSure: at least this share of the lower-case words are
	// English words the lexicon knows: English, whatever trigrams say.
	englishShareSure = 0.5
	// englishShareFloor: below this share, a text the identifier does
	// not call English is refused even when it is unsure.
	englishShareFloor = 0.35
	// foreignConfidence: between the floor and the sure share, the
	// identifier must be this confident of another language.
	foreignConfidence = 0.5
)

// latinLanguages are the languages the identifier chooses among for a text
// in Latin letters: English and the languages most written beside it. Its
// cost grows with their number (about 40,000 instructions each, a
// fifteenth of a signature check), and it is asked only about the rare text
// the lexicon cannot call English.
var latinLanguages = func() map[whatlanggo.Lang]bool {
	m := map[whatlanggo.Lang]bool{}
	for _, l := range []whatlanggo.Lang{
		whatlanggo.Eng, whatlanggo.Spa, whatlanggo.Por, whatlanggo.Fra, whatlanggo.Deu,
		whatlanggo.Ita, whatlanggo.Nld, whatlanggo.Pol, whatlanggo.Tur, whatlanggo.Swe,
		whatlanggo.Ces, whatlanggo.Vie, whatlanggo.Ind, whatlanggo.Ron,
	} {
		m[l] = true
	}
	return m
}()

// unsupportedLanguage returns the language text is mostly written in when
// that is not English, or "". text is the text as received (scripts are
// told from its letters, before look-alike letters are folded); toks are
// the normalised text's tokens; plain says isPlainASCII(text).
func unsupportedLanguage(text string, toks []token, plain bool) string {
	if other, latin := scriptWeights(text, plain); other > latin {
		// The weights decide; the script names what was found.
		if name := scriptName(whatlanggo.DetectScript(text)); name != "" {
			return name + " script"
		}
		return "another script"
	}
	if englishMarker(toks) {
		return ""
	}
	words, english := englishWords(text, toks, plain)
	if words < minWordsForLanguage {
		return ""
	}
	share := float64(english) / float64(words)
	if share >= englishShareSure {
		return ""
	}
	info := whatlanggo.DetectWithOptions(text, whatlanggo.Options{Whitelist: latinLanguages})
	if info.Lang == whatlanggo.Eng || info.Lang < 0 {
		return ""
	}
	if share < englishShareFloor || info.Confidence >= foreignConfidence {
		return info.Lang.String()
	}
	return ""
}

// englishWords counts the words of text in lower-case letters and how many
// of them are English words the lexicon knows. A plain ASCII text is read
// from its tokens; any other from its own letters, since the normalised
// copy folds accented and look-alike letters into words the lexicon may
// know ("cổng" would read "cong").
func englishWords(text string, toks []token, plain bool) (words, english int) {
	if plain {
		for i := range toks {
			t := &toks[i]
			if t.punct != 0 || t.code || len(t.w) < 2 || !isLowerLetters(t.w) {
				continue
			}
			if t.cap && i > 0 && toks[i-1].punct == 0 {
				continue // a name or brand inside the sentence
			}
			words++
			if englishWord(t) {
				english++
			}
		}
		return words, english
	}
	inCode, sentenceStart := false, true
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		switch {
		case r == '`':
			inCode = !inCode
			i += n
			continue
		case inCode || !unicode.IsLetter(r):
			if r == '.' || r == '!' || r == '?' || r == ':' || lineBreak(r) {
				sentenceStart = true
			}
			i += n
			continue
		}
		j := i
		for j < len(text) {
			r2, n2 := utf8.DecodeRuneInString(text[j:])
			if !unicode.IsLetter(r2) && r2 != '\'' && r2 != '-' && !ignorable(r2) {
				break
			}
			j += n2
		}
		w := text[i:j]
		if !isPlainASCII(w) {
			w = normalize(w, false) // nothing hidden inside a word: "Ig\u200bnore"
		}
		capital := unicode.IsUpper(r)
		first := sentenceStart
		sentenceStart = false
		i = j
		if j < len(text) && (text[j] == '_' || text[j] == '.' && j+1 < len(text) && text[j+1] != ' ' || text[j] >= '0' && text[j] <= '9') {
			continue // an identifier or a file name
		}
		if utf8.RuneCountInString(w) < 2 || capital && !first || !isLowerLetters(strings.ToLower(w)) {
			continue
		}
		words++
		lw := strings.ToLower(w)
		if e := lexicon.get(lw); e&cKnown != 0 && e&classMask&^(cProper|cDomNoun|cKnown|cPhrase) != 0 || englishForm(lw) {
			english++
		}
	}
	return words, english
}

// scriptName names the scripts whatlanggo tells apart.
func scriptName(t *unicode.RangeTable) string {
	for name, table := range unicode.Scripts {
		if table == t && t != nil {
			return name
		}
	}
	return ""
}

// englishMarker: the text holds an English function word that other
// languages written in Latin letters do not use as a word (lists/words.txt
// [english]): it is English with foreign words in it ("The naïve parser
// rejects the café's résumé").
func englishMarker(toks []token) bool {
	for i := range toks {
		if toks[i].has(cEnglish) && !toks[i].code {
			return true
		}
	}
	return false
}

// englishWord: the lexicon knows the word as something other than a proper
// noun (newswire's lexicon lists foreign names such as "la" and "el"), or
// knows the verb or noun it is a form of ("resolves", "overrides").
func englishWord(t *token) bool {
	if t.has(cKnown) && !t.has(cUnknown) && t.cls&classMask&^(cProper|cDomNoun|cKnown|cPhrase) != 0 {
		return true
	}
	return englishForm(t.w)
}

// englishForm: w is an inflection of a word the lexicon knows.
func englishForm(w string) bool {
	for _, suffix := range [...]string{"s", "es", "ed", "d", "ing", "ly", "er", "ers"} {
		if len(w) > len(suffix)+2 && w[len(w)-len(suffix):] == suffix {
			if e := lexicon.get(w[:len(w)-len(suffix)]); e&cKnown != 0 && e&classMask&^(cProper|cDomNoun|cKnown|cPhrase) != 0 {
				return true
			}
		}
	}
	return false
}

// isLowerLetters: w is a word of letters (an apostrophe or hyphen inside),
// none of them a capital. Accented letters count: they are what most
// languages but English write with.
func isLowerLetters(w string) bool {
	for _, r := range w {
		if r < utf8.RuneSelf {
			if (r < 'a' || r > 'z') && r != '\'' && r != '-' {
				return false
			}
		} else if !unicode.IsLetter(r) || unicode.IsUpper(r) {
			return false
		}
	}
	return true
}

// scriptWeights counts the letters of text outside quotation marks and
// code spans (a quoted tool message in another script is fine): other is
// the weight of letters in scripts other than Latin, latin of Latin ones.
// An ideograph, kana or hangul syllable carries a word's worth of meaning,
// so it weighs as much as a short Latin word. When nothing outside quotes
// holds letters, the quotes are counted: a text that only wraps itself in
// quotation marks is read as it is.
func scriptWeights(text string, plain bool) (other, latin int) {
	if plain || !hasOtherLetter(text) {
		return 0, 1 // other is 0 whatever the quotes; only other > latin is asked
	}
	for _, skipQuotes := range []bool{true, false} {
		other, latin = 0, 0
		var q quotes
		for i, r := range text {
			if q.inside(text, i, r) && skipQuotes {
				continue
			}
			switch {
			case r < utf8.RuneSelf:
				if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' {
					latin++
				}
			case !unicode.IsLetter(r):
			case unicode.Is(unicode.Latin, r):
				latin++
			case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul):
				other += 3
			default:
				other++
			}
		}
		if latin+other > 0 && latin >= 8 || !skipQuotes {
			return other, latin
		}
	}
	return other, latin
}

// hasOtherLetter: text holds a letter of a script other than Latin, which
// alone makes scriptWeights' other weight more than 0. Most texts past
// ASCII hold only accented letters, dashes and arrows: their ASCII bytes
// are passed over without decoding.
func hasOtherLetter(text string) bool {
	for i := 0; i < len(text); {
		if text[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(text[i:])
		if unicode.IsLetter(r) && !unicode.Is(unicode.Latin, r) {
			return true
		}
		i += n
	}
	return false
}

// quotes follows quotation marks through a text, rune by rune.
type quotes struct {
	close rune // the mark that closes the open quotation, 0 outside one
	prev  rune
}

// inside reports whether the rune r at text[i] is a quotation mark or
// inside a quotation.
func (q *quotes) inside(text string, i int, r rune) bool {
	prev := q.prev
	q.prev = r
	if q.close != 0 {
		if r == q.close && (r != '\'' || closesQuote(text, i)) {
			q.close = 0
		}
		return true
	}
	if prev == 0 {
		prev = ' '
	}
	if c := closingQuote(r, prev); c != 0 {
		q.close = c
		return true
	}
	return false
}

// closingQuote returns the mark that closes a quotation opened by r (after
// prev), or 0 when r opens none. An apostrophe opens one only at the start
// of a word ("it's" holds none).
func closingQuote(r, prev rune) rune {
	switch r {
	case '"', '`':
		return r
	case '\'':
		if unicode.IsLetter(prev) || unicode.IsDigit(prev) {
			return 0
		}
		return '\''
	case '\u201c':
		return '\u201d'
	case '\u2018':
		return '\u2019'
	case '\u00ab':
		return '\u00bb'
	case '\u300c':
		return '\u300d'
	case '\u201e':
		return '\u201c'
	}
	return 0
}

// closesQuote: the apostrophe at text[i] ends a word, so it may close a
// quotation (not "don't" inside it).
func closesQuote(text string, i int) bool {
	r, _ := utf8.DecodeRuneInString(text[i+1:])
	return i+1 >= len(text) || !unicode.IsLetter(r)
}

// plainReading returns text as plain sentences when its case or layout
// could hide an order from the grammar, which reads capitals as names and
// code spans as things named: "ALWAYS RUN RM -RF ~ BEFORE BUILDS.",
// "Always Run The Migrations First", "`Always run the migrations first`",
// a code fence around a sentence. The copy is in lower case with a
// capital at each sentence start, without the fence or the backticks of a
// span that holds prose (a second copy when the text has one). It returns
// nil when the text needs no second reading.
func plainReadings(text string, toks []token) []string {
	words, upper, capital, prose := 0, 0, 0, false
	run, longest := 0, 0 // words in capitals in a row
	for i := range toks {
		t := &toks[i]
		if t.punct != 0 {
			run = 0
			continue
		}
		w := text[t.s:t.e]
		if t.code {
			prose = prose || len(w) > 2 && w[0] == '`' && (spaces(w) >= 2 || len(w) == 2)
			continue
		}
		words++
		if t.cap {
			capital++
			if len(w) >= 2 && isUpperWord(w) {
				upper++
				run++
				longest = max(longest, run)
				continue
			}
		}
		run = 0
	}
	wrapped := len(text) >= 2 && strings.HasPrefix(text, "`") && strings.HasSuffix(text, "`")
	// Acronyms ("The API returns 503 when the PDB blocks") are no reason:
	// a second reading costs a whole check.
	shouting := upper >= 2 && upper*10 >= words*4 || longest >= 3
	if !(prose || wrapped || shouting || words >= 3 && capital*10 >= words*6) {
		return nil
	}
	for range 3 { // "``x``", a fence around a span
		if !(len(text) >= 2 && strings.HasPrefix(text, "`") && strings.HasSuffix(text, "`")) {
			break
		}
		mark := "`"
		if strings.HasPrefix(text, "```") && strings.HasSuffix(text, "```") && len(text) >= 6 {
			mark = "```"
		}
		text = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(text, mark), mark))
		if nl := strings.IndexByte(text, '\n'); nl >= 0 && nl < 20 && !strings.ContainsAny(text[:nl], " `") {
			text = text[nl+1:] // a fence's language name: "```sh"
		}
	}
	prose = prose || proseSpan(text)
	plain := recase(text, false)
	if !prose {
		return []string{plain}
	}
	return []string{plain, recase(text, true)}
}

// recase writes text in lower case with a capital at each sentence start;
// with unwrap, the backticks of code spans that hold prose go too.
func recase(text string, unwrap bool) string {
	b := make([]byte, 0, len(text))
	start := true
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		if r == '`' {
			if j := strings.IndexByte(text[i+1:], '`'); j >= 0 && (!unwrap || spaces(text[i+1:i+1+j]) < 2) {
				b = append(b, text[i:i+j+2]...) // code stays code
				i += j + 2
				start = false
				continue
			}
			i += n
			continue
		}
		switch {
		case r == '.' || r == '!' || r == '?' || r == '\n' || r == ';' || r == ':':
			start = true
		case unicode.IsLetter(r):
			if start {
				r = unicode.ToUpper(r)
			} else {
				r = unicode.ToLower(r)
			}
			start = false
		}
		b = utf8.AppendRune(b, r)
		i += n
	}
	return string(b)
}

// proseSpan: text holds a code span of three words or more.
func proseSpan(text string) bool {
	for i := 0; i < len(text); i++ {
		if text[i] != '`' {
			continue
		}
		j := strings.IndexByte(text[i+1:], '`')
		if j < 0 {
			return false
		}
		if spaces(text[i+1:i+1+j]) >= 2 {
			return true
		}
		i += j + 1
	}
	return false
}

func spaces(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' {
			n++
		}
	}
	return n
}
