package textcheck

import (
	_ "embed"
	"math/bits"
	"slices"
	"strings"
)

//go:embed lists/phrases.txt
var phrasesTxt string

// A phrase is one line of lists/phrases.txt, compiled.
type phrase struct {
	rule     string     // "injection", "impersonal directive", "directive header"
	anchored bool       // "^": only at the start of a clause
	steps    []phraseAt // in order
	needs    [][]chunk  // per word step, the non-zero words of its bit set
	// quick is the words of the narrowest step whose words share one
	// word of the bit set (bits 0 when none): most phrases tried at a
	// token lack them, and one AND says so.
	quick chunk
}

// chunk is one non-zero word of a bit set of phrase word numbers.
type chunk struct {
	k    int
	bits uint64
}

// possible: every word step of p after its first allows a word the text
// holds (present is the set of the text's phrase word numbers), so
// matching may succeed.
func (p *phrase) possible(present []uint64) bool {
	for _, need := range p.needs {
		hit := false
		for _, c := range need {
			if c.bits&present[c.k] != 0 {
				hit = true
				break
			}
		}
		if !hit {
			return false
		}
	}
	return true
}

// wordsIn counts the words a step's chunks allow.
func wordsIn(need []chunk) int {
	n := 0
	for _, c := range need {
		n += bits.OnesCount64(c.bits)
	}
	return n
}

// phraseAt is one position of a phrase: a set of words, a number, or a gap
// of up to three words.
type phraseAt struct {
	words  []uint64 // a bit set of phrase word ids (phraseWordID)
	number bool
	gap    bool
	ger    bool // "<ger>": an -ing form
	base   bool // "<base>": a base verb
}

// pid returns the phrase number of the mark c when this step allows it.
func (st *phraseAt) pid(c byte) uint16 {
	if id := punctID[c]; st.allows(id) {
		return id
	}
	return 0
}

func (st *phraseAt) allows(id uint16) bool {
	k := int(id) / 64
	return id != 0 && k < len(st.words) && st.words[k]&(1<<(id%64)) != 0
}

// phraseWordID numbers every word the phrases name (from 1), so tokens
// carry their number and matching compares numbers, not strings.
var phraseWordID = map[string]uint16{}

// maxPhraseWords bounds the phrase word numbers: a text's words are kept
// in a bit set of this size while phrases are matched.
const maxPhraseWords = 16 * 64

// punctID is phraseWordID for ASCII punctuation marks.
var punctID [128]uint16

var ruleNames = map[string]string{
	"injection":  "injection",
	"impersonal": "impersonal directive",
	"header":     "directive header",
	"request":    "request",
}

// phrasesByFirst indexes the phrases by each word their first step allows
// (phrasesByFirstID is the index the reader uses).
var phrasesByFirst = compilePhrases(phrasesTxt)

// phrasesByFirstID is phrasesByFirst by the first word's number, which a
// token carries (token.pid): the reader looks a token's phrases up in it
// without hashing the word again.
var phrasesByFirstID = func() (byID [maxPhraseWords][]*phrase) {
	for w, ps := range phrasesByFirst {
		byID[phraseWordID[w]] = ps
	}
	return byID
}()

func compilePhrases(txt string) map[string][]*phrase {
	idx := map[string][]*phrase{}
	cur := ""
	for _, line := range strings.Split(txt, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "# ") || line == "#" { // a comment
			continue
		}
		if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
			cur = line[1 : len(line)-1]
			if ruleNames[cur] == "" {
				panic("textcheck: lists/phrases.txt has an unknown rule [" + cur + "]")
			}
			continue
		}
		if cur == "" {
			panic("textcheck: a phrase before any [rule] header: " + line)
		}
		p := &phrase{rule: ruleNames[cur]}
		fields := strings.Fields(line)
		if fields[0] == "^" {
			p.anchored = true
			fields = fields[1:]
		}
		for _, f := range fields {
			switch f {
			case "*":
				p.steps = append(p.steps, phraseAt{gap: true})
			case "#":
				p.steps = append(p.steps, phraseAt{number: true})
			case "<ger>":
				p.steps = append(p.steps, phraseAt{ger: true})
			case "<base>":
				p.steps = append(p.steps, phraseAt{base: true})
			default:
				var set []uint64
				st := phraseAt{}
				for _, w := range strings.Split(f, "|") {
					switch w {
					case "<ger>":
						st.ger = true
						continue
					case "<base>":
						st.base = true
						continue
					}
					id, ok := phraseWordID[w]
					if !ok {
						if len(phraseWordID)+1 >= maxPhraseWords {
							panic("textcheck: lists/phrases.txt names more than 1,023 words")
						}
						id = uint16(len(phraseWordID) + 1)
						phraseWordID[w] = id
						if len(w) == 1 && w[0] < 128 {
							punctID[w[0]] = id
						}
					}
					for len(set) <= int(id)/64 {
						set = append(set, 0)
					}
					set[id/64] |= 1 << (id % 64)
				}
				st.words = set
				p.steps = append(p.steps, st)
			}
		}
		if len(p.steps) == 0 || p.steps[0].words == nil || p.steps[0].ger || p.steps[0].base {
			panic("textcheck: a phrase must start with words: " + line)
		}
		// The first step needs no look: a phrase is tried at a token its
		// first step allows (phrasesByFirst).
		for _, st := range p.steps[1:] {
			if st.words == nil || st.ger || st.base {
				continue // a gap, a number or a class: nothing to look for
			}
			var need []chunk
			for k, bits := range st.words {
				if bits != 0 {
					need = append(need, chunk{k, bits})
				}
			}
			p.needs = append(p.needs, need)
		}
		// A step that allows fewer words is likelier missing: first.
		slices.SortStableFunc(p.needs, func(a, b []chunk) int { return wordsIn(a) - wordsIn(b) })
		for _, need := range p.needs {
			if len(need) == 1 {
				p.quick = need[0]
				break
			}
		}
		for _, w := range strings.Split(fields[0], "|") {
			idx[w] = append(idx[w], p)
		}
	}
	return idx
}

// match reports the end (exclusive token index) of p matched at toks[i:],
// never crossing a sentence end.
func (p *phrase) match(toks []token, i int) (int, bool) {
	return matchSteps(p.steps, toks, i)
}

func matchSteps(steps []phraseAt, toks []token, i int) (int, bool) {
	if len(steps) == 0 {
		return i, true
	}
	st := steps[0]
	if st.gap {
		for k := 0; k <= 3; k++ {
			if end, ok := matchSteps(steps[1:], toks, i+k); ok {
				return end, true
			}
			if i+k >= len(toks) || sentenceEnd(&toks[i+k]) {
				break
			}
		}
		return 0, false
	}
	// Quotes, brackets and commas between the words do not break a
	// phrase: "Ignore (previous) instructions", "Ignore, previous, ...".
	for i < len(toks) && (toks[i].punct == '(' || toks[i].punct == ')' || toks[i].punct == '"' ||
		toks[i].punct == ',' && st.pid(',') == 0) {
		i++
	}
	if i >= len(toks) {
		return 0, false
	}
	t := &toks[i]
	switch {
	case st.number:
		if !isNumber(t.w) {
			return 0, false
		}
	case st.allows(t.pid):
	case st.ger && (t.has(cGer) || isGerund(t)):
	case st.base && t.has(cBase) && !t.has(cDomNoun):
	default:
		return 0, false
	}
	return matchSteps(steps[1:], toks, i+1)
}

func sentenceEnd(t *token) bool {
	return t.punct == '.' || t.punct == '!' || t.punct == '?' || t.punct == ';'
}

func isNumber(w string) bool {
	if w == "" {
		return false
	}
	for i := 0; i < len(w); i++ {
		if w[i] < '0' || w[i] > '9' {
			return false
		}
	}
	return true
}
