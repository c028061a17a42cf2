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

func (h hasher) slot() uint32 { return uint32(h) >> (32 - modelBits) }

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

// appendFeatures appends to dst the feature slots of a tokenized text and
// of the grammar's verdict on it (rule "" when it passed).
func appendFeatures(dst []uint32, text string, toks []token, rule, phrase string) []uint32 {
	dst = append(dst, newHash(fBias).slot())
	prevWord, prevTag := "^", byte('^')
	for i := range toks {
		t := &toks[i]
		w := t.w
		if t.code && t.punct == 0 && !t.has(cSymbol) {
			w = "<code>"
		}
		tag := tagOf(t)
		dst = append(dst,
			newHash(fWord).str(w).slot(),
			newHash(fPair).str(prevWord).byte(' ').str(w).slot(),
			newHash(fTag).byte(tag).slot(),
			newHash(fTagPair).byte(prevTag).byte(tag).slot(),
		)
		if t.punct == 0 && !t.code && len(w) >= 5 {
			dst = append(dst, newHash(fSuffix).byte(tag).str(w[len(w)-3:]).slot())
		}
		if t.punct == 0 && opensClause(toks, i) {
			var next, third byte = '$', '$'
			if i+1 < len(toks) {
				next = tagOf(&toks[i+1])
			}
			if i+2 < len(toks) {
				third = tagOf(&toks[i+2])
			}
			dst = append(dst, newHash(fOpenTri).byte(tag).byte(next).byte(third).slot())
			dst = append(dst,
				newHash(fOpenWord).str(w).slot(),
				newHash(fOpenTag).byte(tag).byte(next).slot(),
				newHash(fOpenPair).byte(tag).str(w).byte(next).slot(),
			)
		}
		prevWord, prevTag = w, tag
	}
	dst = append(dst, newHash(fPair).str(prevWord).str(" $").slot(), newHash(fTagPair).byte(prevTag).byte('$').slot())
	dst = append(dst, newHash(fRule).str(rule).slot())
	if rule != "" {
		first := phrase
		for i := 0; i < len(phrase); i++ {
			if phrase[i] == ' ' {
				first = phrase[:i]
				break
			}
		}
		dst = append(dst, newHash(fRuleWord).str(rule).byte(' ').lower(first).slot())
		// Where the rule fired: at the text's start, at a sentence's start
		// or inside one.
		pos := byte('c')
		if at := strings.Index(text, phrase); at >= 0 {
			k := at - 1
			for k >= 0 && (text[k] == ' ' || text[k] == '*' || text[k] == '_' || text[k] == '"' || text[k] == '\'') {
				k--
			}
			switch {
			case k < 0:
				pos = '0'
			case strings.IndexByte(".!?;:\n", text[k]) >= 0:
				pos = 's'
			}
		}
		dst = append(dst, newHash(fRulePos).str(rule).byte(pos).slot())
	}
	n := 0
	for i := range toks {
		if toks[i].punct == 0 {
			n++
		}
	}
	bucket := byte('0')
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
	return append(dst, newHash(fShape).byte(bucket).slot())
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
