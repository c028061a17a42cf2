package textcheck

import (
	_ "embed"
	"strings"
	"sync"
	"unicode/utf8"
)

// The learned half of the raw-data check. The rules of rawdata.go find
// what has a shape (paths, addresses, keys, ids); what has none, a handle
// such as "abakshi" or a name in a form no list holds, is found from its
// context ("runs as …", "approved by …") and the look of the word. A
// logistic regression scores every word that could be private (one the
// lexicon does not know as a common word, a capitalised or code-like one)
// and a text holds raw data when its highest-scoring word is above the
// threshold. It was trained by internal/trainmodel -raw from the
// raw-data sets (private against public sentences) and from every
// labelled sentence set, which holds no private data, and it never
// learns at run time.

//go:embed rawmodel.bin
var rawModelBin []byte

var (
	rawModelOnce sync.Once
	theRawModel  *model
)

func rawModel() *model {
	rawModelOnce.Do(func() {
		m, err := decodeModel(rawModelBin)
		if err != nil {
			panic("textcheck: rawmodel.bin: " + err.Error() + "; run go generate ./protocol/textcheck")
		}
		theRawModel = m
	})
	return theRawModel
}

// cNameLists are the classes the name and tool lists give words; they
// tell the raw-data model what a word is without a lookup of its own, and
// leave the grammar's reading of an unknown word by its shape as it was.
const cNameLists = cGiven | cNotName | cSurname | cTool | cContext | cNoCandidate

func init() {
	for set, bit := range map[*map[string]bool]uint64{&givenNames: cGiven, &notNames: cNotName, &rawLists.surname: cSurname, &rawLists.tool: cTool,
		&rawCustomerWords: cContext, &rawSpeechVerbs: cContext, &rawLists.commonWord: cNoCandidate, &rawSecretWords: cNoCandidate} {
		for w := range *set {
			lexicon.or(w, bit)
		}
	}
	for _, w := range [...]string{"dm", "dms", "privately", "confidentially", "1:1", "private", "confidence", "direct"} {
		lexicon.or(w, cContext) // rawPrivacyCue's words
	}
}

// Feature name spaces of the raw-data model.
const (
	rBias   = 'B'
	rWord   = 'W'
	rShape  = 'S'
	rPrefix = 'P'
	rSuffix = 'F'
	rPrev   = 'L'
	rPrev2  = 'K'
	rNext   = 'N'
	rFlags  = 'G'
	rPair   = 'Q'
)

// rawCandidate: a word that could be private data. Common words the
// lexicon knows, in lower case, cannot; neither can punctuation. ascii:
// text holds no byte past ASCII (then no word does).
func rawCandidate(text string, t *token, ascii bool) bool {
	if t.punct != 0 || t.e-t.s < 3 || t.has(cSymbol) {
		return false
	}
	if !t.code && !t.cap && t.has(cKnown) && !t.has(cUnknown) && (ascii || !hasNonASCII(text[t.s:t.e])) {
		return false // a common word in lower case
	}
	if t.has(cDet|cPrep|cConj|cSubject|cObject|cModal|cBe|cHave|cDo|cSub|cRel) && !t.has(cUnknown) && !t.code {
		return false // "The", "For", "It": a function word, capitalised or not, names no one
	}
	if t.has(cTool | cNoCandidate) {
		// A tool the lists name ("slack", "nginx"), an English word the
		// lexicon lacks: no one's. "the staging password": the word names
		// a secret; the rules read its value.
		return false
	}
	if t.code && text[t.s] >= '0' && text[t.s] <= '9' {
		return false // a number, a version, an address: the rules read these
	}
	if rawHasPathByte(text[t.s:t.e]) || strings.HasPrefix(text[t.e:], "://") || strings.HasPrefix(text[t.e:], ":/") {
		return false // a path, an address or a URL's scheme: the rules read these
	}
	if w := text[t.s:t.e]; len(w) >= 2 && isUpperWord(w) {
		return false // an acronym or a variable ("DOCKER_HOST"): the rules read keys and hosts
	}
	if mayHoldOtherScript(text[t.s:t.e]) {
		return false // a word in another script: a name only with a cue, which the rules read
	}
	if t.code && isNumber(strings.TrimLeft(t.w, "#")) {
		return false // a count, a build number: the rules read ids by their cues ("customer 48213")
	}
	return true
}

// rawHasPathByte: s holds a '/', '\\' or ':' (a loop, not
// strings.ContainsAny, which costs more on a short word than the rest of
// rawCandidate).
func rawHasPathByte(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '/' || c == '\\' || c == ':' {
			return true
		}
	}
	return false
}

// rawCommonWord: t is a common word in lower case in an ASCII text, most
// words, which rawCandidate refuses; its callers ask this first, inlined.
func rawCommonWord(t *token, ascii bool) bool {
	return ascii && t.cls&(cKnown|cUnknown) == cKnown && !t.code && !t.cap
}

// hasNonASCII: s holds a byte outside ASCII.
func hasNonASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return true
		}
	}
	return false
}

// rawSecretWords name a secret without being one.
var rawSecretWords = map[string]bool{
	"password": true, "passwords": true, "passphrase": true, "passcode": true, "token": true, "tokens": true,
	"secret": true, "secrets": true, "credential": true, "credentials": true, "apikey": true, "api-key": true,
	"pat": true, "keystore": true, "keychain": true, "passwd": true, "pwd": true,
}

// appendRawFeatures appends the features of each candidate word of toks
// as a segment of its own, and each segment's end to ends.
func appendRawFeatures(dst []uint32, ends []int, text string, toks []token, ascii bool) ([]uint32, []int) {
	for i := range toks {
		if t := &toks[i]; rawCommonWord(t, ascii) || !rawCandidate(text, t, ascii) {
			continue
		}
		t := &toks[i]
		w := t.w
		hw := t.h
		shape := rawShapeHash(text[t.s:t.e])
		prev, prev2, next := uint32(newHash('^')), uint32(newHash('^')), uint32(newHash('$'))
		if i > 0 {
			prev = toks[i-1].h
		}
		if i > 1 {
			prev2 = toks[i-2].h
		}
		if i+1 < len(toks) {
			next = toks[i+1].h
		}
		var flags uint32
		if t.cap {
			flags |= 1
		}
		if i > 0 && toks[i-1].punct == 0 {
			flags |= 2 // not the first word of a sentence or clause
		}
		if t.has(cGiven) {
			flags |= 4
		}
		if t.has(cNotName) {
			flags |= 8
		}
		if t.has(cSurname) {
			flags |= 16
		}
		if t.has(cKnown) && !t.has(cUnknown) {
			flags |= 32
		}
		if t.has(cTool) {
			flags |= 64
		}
		n := len(w)
		dst = append(dst,
			slotOf(rBias, 0, 0),
			slotOf(rWord, hw, 0),
			slotOf(rShape, shape, 0),
			slotOf(rPrev, prev, 0),
			slotOf(rPrev2, prev2, prev),
			slotOf(rNext, next, 0),
			slotOf(rFlags, flags, 0),
			slotOf(rPair, prev, shape),
			slotOf(rFlags, flags, shape),
		)
		if n >= 4 {
			dst = append(dst,
				slotOf(rPrefix, uint32(newHash(0).str(w[:3])), 0),
				slotOf(rSuffix, uint32(newHash(0).str(w[n-3:])), 0),
			)
		}
		ends = append(ends, len(dst))
	}
	return dst, ends
}

// rawShapeHash hashes the look of a word: each run of capitals, small
// letters, digits or other letters as one mark, punctuation kept, so
// "jmorales" reads "x", "WS-ADM-0457" "X-X-d" and "a.lindqvist" "x.x".
func rawShapeHash(w string) uint32 {
	h := newHash(0)
	last := byte(0)
	for i := 0; i < len(w); i++ {
		c := w[i]
		var m byte
		switch {
		case 'A' <= c && c <= 'Z':
			m = 'X'
		case 'a' <= c && c <= 'z':
			m = 'x'
		case '0' <= c && c <= '9':
			m = 'd'
		case c >= 0x80:
			m = 'u'
		default:
			m = c
		}
		if m != last {
			h = h.byte(m)
			last = m
		}
	}
	return uint32(h)
}

// rawModelFinds returns the candidate word the model finds private, if
// any: the word of the highest-scoring segment above the threshold.
func rawModelFinds(buf *scratch, text string, toks []token, ascii bool) (start, end int, ok bool) {
	m := rawModel()
	buf.feats, buf.ends = appendRawFeatures(buf.feats[:0], buf.ends[:0], text, toks, ascii)
	score, at := m.top(buf.feats, buf.ends)
	if at < 0 || score <= m.threshold {
		return 0, 0, false
	}
	for i := range toks { // the at-th candidate is the segment's word
		if t := &toks[i]; !rawCommonWord(t, ascii) && rawCandidate(text, t, ascii) {
			if at == 0 {
				return toks[i].s, toks[i].e, true
			}
			at--
		}
	}
	return 0, 0, false
}

// RawFeatures returns the raw-data model's features of text, a segment
// per candidate word, for the trainer.
func RawFeatures(text string) (feats []uint32, ends []int) {
	norm, toks := readTokens(text)
	return appendRawFeatures(nil, nil, norm, toks, !hasNonASCII(norm))
}
