package textcheck

import "strings"

// The features the learned model reads (model.go). They are hashed into a
// fixed table, so computing them allocates nothing: words and word pairs in
// lower case (so capitals change nothing), the word classes of the tagger
// and their pairs, the words and classes that open each clause, and the
// grammar's verdict. The trainer (internal/trainmodel) calls AppendFeatures;
// the check calls the same code, so training and use never drift apart.

// modelBits is the size of the weight table: 2^17 weights.
const modelBits = 17

// hasher is FNV-1a, 32 bits, reduced to the table.
type hasher uint32

const fnvOffset, fnvPrime = 2166136261, 16777619

func newHash(ns byte) hasher { return hasher(fnvOffset).byte(ns) }

func (h hasher) byte(c byte) hasher { return (h ^ hasher(c)) * fnvPrime }

func (h hasher) str(s string) hasher {
	for i := 0; i < len(s); i++ {
		h = (h ^ hasher(s[i])) * fnvPrime
	}
	return h
}

// Feature name spaces.
const (
	fBias     = 'b'
	fWord     = 'w'
	fPair     = 'p'
	fTag      = 't'
	fTagPair  = 'q'
	fOpenWord = 'o'
	fOpenTag  = 'r'
	fOpenPair = 's'
	fRule     = 'g'
	fRuleWord = 'h'
	fShape    = 'z'
	fSuffix   = 'x'
	fRulePos  = 'j'
	fOpenTri  = 'u'
)

// tagOf is a coarse word class for the model: one letter per token.
func tagOf(t *token) byte {
	switch {
	case t.punct != 0:
		return t.punct
	case t.has(cSymbol):
		return '*'
	case t.code:
		return 'C'
	case t.has(cModal):
		return 'M'
	case t.has(cBe):
		return 'B'
	case t.has(cHave):
		return 'H'
	case t.has(cDo):
		return 'O'
	case t.has(cNeg):
		return 'N'
	case t.has(cSubject):
		return 'S'
	case t.has(cObject):
		return 'J'
	case t.has(cDet):
		return 'D'
	case t.has(cSub):
		return 'U'
	case t.has(cRel):
		return 'L'
	case t.has(cPrep):
		return 'P'
	case t.has(cConj):
		return '&'
	case t.has(cActor):
		return 'X'
	case t.has(cLead):
		return 'l'
	case t.has(cReport):
		return 'Y'
	case t.has(cBase) && !t.has(cDomNoun|cZ|cPast):
		return 'V'
	case t.has(cZ):
		return 'Z'
	case t.has(cPast | cPart):
		return 'E'
	case t.has(cGer):
		return 'G'
	case t.has(cBase):
		return 'v'
	case t.has(cAdv):
		return 'R'
	case t.has(cAdj):
		return 'A'
	case t.has(cUnknown) || !t.has(cKnown):
		return '?'
	}
	return 'n'
}

// opensClause: toks[i] is the first token after a sentence or clause mark.
func opensClause(toks []token, i int) bool {
	if i == 0 {
		return true
	}
	switch toks[i-1].punct {
	case '.', '!', '?', ';', ':', ',', '(', ')', '"', '-':
		return true
	}
	return false
}

// endsSentence: the mark after which the model reads a new sentence.
func endsSentence(t *token) bool {
	switch t.punct {
	case '.', '!', '?', ';':
		return true
	}
	return false
}

// appendFeatures appends to dst the feature slots of each sentence of a
// tokenized text, and to ends the end of each sentence's slots in dst. The
// model scores every sentence on its own and a text by its highest
// sentence, so an observation in front of an order never dilutes it. The
// grammar's verdict on the whole text (rule "" when it passed) goes to the
// sentence its phrase is in.
func appendFeatures(dst []uint32, ends []int, text string, toks []token, rule, phrase string) ([]uint32, []int) {
	var startsBuf [64]int
	starts := startsBuf[:0] // where in dst each word of the sentence read last has its slots
	ruleAt := -1
	if rule != "" {
		if at := strings.Index(text, phrase); at >= 0 {
			for i := range toks {
				if toks[i].s >= at {
					ruleAt = i
					break
				}
			}
		}
	}
	for a := 0; a < len(toks) || a == 0; {
		b := a
		for b < len(toks) && !endsSentence(&toks[b]) {
			b++
		}
		if b < len(toks) {
			b++ // the mark belongs to its sentence
		}
		r, p := "", ""
		if ruleAt >= a && ruleAt < b || ruleAt < 0 && rule != "" && a == 0 {
			r, p = rule, phrase
		}
		base := len(dst)
		dst = append(dst, slotOf(fBias, 0, 0))
		var pw, pt uint32
		dst, starts, pw, pt = appendWords(dst, toks[a:b], 0, startWord, '^', starts[:0])
		dst = appendSentenceEnd(dst, text, toks[a:b], a == 0, r, p, pw, pt)
		ends = append(ends, len(dst))
		// The sentence up to each clause boundary is read on its own too,
		// so a clause appended to an order ("…, which the kubelet logs as
		// expected", "… when the deploy had taken five minutes") cannot
		// water it down. Its words' slots are the sentence's but for its
		// last two words, which look ahead: the rest are copied.
		for c := clauseEnd(toks, a, b); c < b; c = clauseEnd(toks, c, b) {
			if words(toks[a:c]) >= 3 && words(toks[c:b]) >= 2 {
				r, p := "", ""
				if ruleAt >= a && ruleAt < c {
					r, p = rule, phrase
				}
				k := max(0, c-a-2) // the first word to read again
				dst = append(dst, dst[base:starts[k]]...)
				pw, pt = startWord, '^'
				if k > 0 {
					pw, pt = wordSlotHash(&toks[a+k-1]), uint32(toks[a+k-1].tag)
				}
				dst, _, pw, pt = appendWords(dst, toks[a:c], k, pw, pt, nil)
				dst = appendSentenceEnd(dst, text, toks[a:c], a == 0, r, p, pw, pt)
				ends = append(ends, len(dst))
			}
		}
		if b == a {
			break
		}
		a = b
	}
	return dst, ends
}

// clauseEnd returns where the clause that starts at toks[c] ends, before
// b: at a comma, a dash or a bracket, or before a subordinating or relative
// word ("because", "which", "when") or "so", "then", "and" that follows
// two words or more.
func clauseEnd(toks []token, c, b int) int {
	n := 0
	for i := c + 1; i < b; i++ {
		t := &toks[i]
		if t.punct != 0 {
			if i > c && (t.punct == ',' || t.punct == '-' || t.punct == '(' || t.punct == ')' || t.punct == ':') {
				return i + 1
			}
			continue
		}
		if n >= 2 && !t.code && (t.has(cSub|cRel) || t.w == "so" || t.w == "then" || t.w == "and" || t.w == "but") {
			return i
		}
		n++
	}
	return b
}

func words(toks []token) int {
	n := 0
	for i := range toks {
		if toks[i].punct == 0 {
			n++
		}
	}
	return n
}

// The features of one sentence: a bias, the slots of each word (appendWords)
// and those of its end (appendSentenceEnd). Each word is hashed once; a
// feature's slot mixes its name space with the hashes of its parts.

// startWord is the hash of the word before a sentence's first.
var startWord = uint32(newHash('^'))

// wordSlotHash is the hash the word features read for t: a code span or
// code-like word is one word, "<code>".
func wordSlotHash(t *token) uint32 {
	if t.code && t.punct == 0 && !t.has(cSymbol) {
		return codeHash
	}
	return t.h
}

// appendWords appends the slots of toks[from:], a sentence's tokens, the
// word before them hashing to prevWord with tag prevTag, and returns the
// hash and tag of the last. To starts, when not nil, it appends where in
// dst each word's slots start.
func appendWords(dst []uint32, toks []token, from int, prevWord, prevTag uint32, starts []int) ([]uint32, []int, uint32, uint32) {
	for i := from; i < len(toks); i++ {
		t := &toks[i]
		if starts != nil {
			starts = append(starts, len(dst))
		}
		hw := wordSlotHash(t)
		tag := uint32(t.tag)
		dst = append(dst,
			slotOf(fWord, hw, 0),
			slotOf(fPair, prevWord, hw),
			slotOf(fTag, tag, 0),
			slotOf(fTagPair, prevTag<<8|tag, 0),
		)
		if w := t.w; t.punct == 0 && !t.code && len(w) >= 5 {
			dst = append(dst, slotOf(fSuffix, uint32(newHash(byte(tag)).str(w[len(w)-3:])), 0))
		}
		if t.punct == 0 && opensClause(toks, i) {
			next, third := uint32('$'), uint32('$')
			if i+1 < len(toks) {
				next = uint32(toks[i+1].tag)
			}
			if i+2 < len(toks) {
				third = uint32(toks[i+2].tag)
			}
			dst = append(dst,
				slotOf(fOpenTri, tag<<16|next<<8|third, 0),
				slotOf(fOpenWord, hw, 0),
				slotOf(fOpenTag, tag<<8|next, 0),
				slotOf(fOpenPair, hw, tag<<8|next),
			)
		}
		prevWord, prevTag = hw, tag
	}
	return dst, starts, prevWord, prevTag
}

// appendSentenceEnd appends the slots of a sentence's end, after its last
// word (prevWord, prevTag): the grammar's rule, its length, whether it is
// the text's first.
func appendSentenceEnd(dst []uint32, text string, toks []token, first bool, rule, phrase string, prevWord, prevTag uint32) []uint32 {
	dst = append(dst, slotOf(fPair, prevWord, endHash), slotOf(fTagPair, prevTag<<8|'$', 0))
	hr := uint32(newHash(0).str(rule))
	dst = append(dst, slotOf(fRule, hr, 0))
	if rule != "" {
		first := phrase
		for i := 0; i < len(phrase); i++ {
			if phrase[i] == ' ' {
				first = phrase[:i]
				break
			}
		}
		dst = append(dst, slotOf(fRuleWord, hr, uint32(newHash(0).lower(first))))
		// Where the rule fired: at the sentence's start or inside it.
		pos := uint32('c')
		if len(toks) > 0 && strings.HasPrefix(text[toks[0].s:], phrase) {
			pos = '0'
		}
		dst = append(dst, slotOf(fRulePos, hr, pos))
	}
	n := 0
	for i := range toks {
		if toks[i].punct == 0 {
			n++
		}
	}
	bucket := uint32('0')
	switch {
	case n > 30:
		bucket = '4'
	case n > 18:
		bucket = '3'
	case n > 10:
		bucket = '2'
	case n > 5:
		bucket = '1'
	}
	if !first {
		bucket += 'a' - '0' // a later sentence
	}
	return append(dst, slotOf(fShape, bucket, 0))
}

// The hashes of the word that stands for every code span, and of a
// sentence's end.
var (
	codeHash = uint32(newHash(0).str("<code>"))
	endHash  = uint32(newHash(0).str("$"))
)

// slotOf mixes a name space and two hashes into a slot of the table.
func slotOf(ns byte, a, b uint32) uint32 {
	h := uint32(ns)*0x9e3779b1 ^ a
	h *= 0x85ebca77
	h ^= h>>13 ^ b
	h *= 0xc2b2ae3d
	h ^= h >> 16
	return h >> (32 - modelBits)
}

// lower hashes s with its ASCII letters lowered.
func (h hasher) lower(s string) hasher {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		h = (h ^ hasher(c)) * fnvPrime
	}
	return h
}
