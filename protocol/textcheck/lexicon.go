package textcheck

import (
	"bufio"
	_ "embed"
	"strings"
)

// Word classes, as bits. The open classes come from lexicon.txt, the closed
// ones and additions from lists/words.txt.
const (
	cBase         uint64 = 1 << iota // base verb: "run", "restart"
	cZ                               // 3rd person singular present: "runs"
	cPast                            // past tense: "ran"
	cPart                            // past participle: "run", "taken"
	cGer                             // gerund: "running"
	cNoun                            // common noun
	cProper                          // proper noun
	cAdj                             // adjective
	cAdv                             // adverb
	cDet                             // [det]
	cObject                          // [object]
	cSubject                         // [subject]
	cPrep                            // [prep]
	cConj                            // [conj]
	cSub                             // [sub]
	cRel                             // [rel]
	cBe                              // [be]
	cBePresent                       // [bepresent]
	cHave                            // [have]
	cDo                              // [do]
	cNeg                             // [neg]
	cParticle                        // [particle]
	cModal                           // [modal]
	cLead                            // [lead]
	cStrong                          // [strong]
	cForce                           // [force]
	cActor                           // [actor]
	cPlan                            // [plan]
	cKnown                           // any entry at all
	cDomNoun                         // the lexicon's strongest reading is a noun or adjective
	cOutcome                         // [outcome]
	cTime                            // [time]
	cUnknown                         // not in the lexicon: read by its shape
	cClausal                         // [clausal]
	cPhrase                          // some line of lists/phrases.txt starts with it
	cInterjection                    // [interjection]
	cSymbol                          // an emoji or other symbol, not a word
	cReader                          // [reader]
	cReport                          // [report]
	cQuoteNoun                       // [quotenoun]
	cEnglish                         // [english]
	cGiven                           // a given name (givennames.txt, lists/names.txt)
	cNotName                         // a given name that is mostly a tool or a word ([notname])
	cSurname                         // a family name (lists/rawdata.txt [surname])
	cTool                            // a tool named like a handle (lists/rawdata.txt [tool])
	cContext                         // a word the context rules of the raw-data check look for (rawcontext.go)
	cNoCandidate                     // a word the raw-data model never reads: a common word the lexicon lacks, a secret's name (rawmodel.go)
)

const cFinite = cZ | cPast | cModal // a verb form that carries tense

// Words that start a phrase carry cPhrase, so the phrase index is looked up
// only for them.
func init() {
	for w, id := range phraseWordID {
		lexicon.or(w, uint64(id)<<pidShift)
	}
	for w := range phrasesByFirst {
		lexicon.or(w, cPhrase)
	}
}

// A lexicon entry keeps the word's phrase number (phraseWordID) in its top
// bits, above the classes.
const (
	pidShift         = 48
	classMask uint64 = 1<<pidShift - 1
)

//go:embed lexicon.txt
var lexiconTxt string

//go:embed lists/words.txt
var wordsTxt string

var lexicon = newLexTable(buildLexicon())

var lexiconLetter = map[byte]uint64{
	'V': cBase, 'Z': cZ, 'D': cPast, 'P': cPart, 'G': cGer,
	'n': cNoun, 'p': cProper, 'j': cAdj, 'r': cAdv,
}

var listClass = map[string]uint64{
	"det": cDet, "object": cObject, "subject": cSubject, "prep": cPrep, "conj": cConj,
	"sub": cSub, "rel": cRel, "be": cBe, "bepresent": cBePresent, "have": cHave,
	"do": cDo, "neg": cNeg, "particle": cParticle, "modal": cModal, "lead": cLead,
	"strong": cStrong, "force": cForce, "actor": cActor, "plan": cPlan, "verb": cBase,
	"outcome": cOutcome | cBase, "time": cTime, "clausal": cClausal, "interjection": cInterjection, "reader": cReader,
	"report": cReport, "quotenoun": cQuoteNoun, "english": cEnglish,
}

func buildLexicon() map[string]uint64 {
	m := make(map[string]uint64, 14000)
	sc := bufio.NewScanner(strings.NewReader(lexiconTxt))
	for sc.Scan() {
		w, cls, ok := strings.Cut(sc.Text(), "\t")
		if !ok || strings.HasPrefix(w, "#") || cls == "" {
			continue
		}
		var bits uint64
		for i := 0; i < len(cls); i++ {
			bits |= lexiconLetter[cls[i]]
		}
		if c := cls[0]; c == 'n' || c == 'j' || c == 'p' {
			bits |= cDomNoun
		}
		m[w] = bits | cKnown
	}
	for class, words := range parseSections(wordsTxt) {
		bit, ok := listClass[class]
		if !ok {
			panic("textcheck: lists/words.txt has an unknown class [" + class + "]")
		}
		for _, w := range words {
			if bit == cBase {
				m[w] &^= cDomNoun // the list says it is a verb first
			}
			m[w] |= bit | cKnown
		}
	}
	// The newswire model lacks some base verbs it saw inflected ("arrived",
	// "arrives"): a form tagged past, participle, 3rd person or gerund
	// lends its verb reading to its base form.
	closed := cDet | cObject | cSubject | cPrep | cConj | cSub | cRel | cBe | cHave | cDo | cModal | cNeg
	for w, bits := range m {
		if bits&(cPast|cPart|cZ|cGer) == 0 || bits&closed != 0 {
			continue
		}
		for _, base := range baseForms(w) {
			if b, ok := m[base]; len(base) >= 3 && b&closed == 0 && (!ok || b&cBase == 0) {
				if ok && b&(cNoun|cAdj) != 0 && b&cKnown != 0 {
					continue // a known noun or adjective keeps its reading
				}
				m[base] = b | cBase | cKnown
			}
		}
	}
	// Words in -ed are past tenses and participles both, whatever the
	// model saw them as ("squashed": an adjective in newswire).
	for w, bits := range m {
		if len(w) > 4 && strings.HasSuffix(w, "ed") && bits&(cAdj|cPast|cPart) != 0 {
			m[w] = bits | cPart | cPast
		}
	}
	// A plural noun whose singular is a verb is also that verb's third
	// person ("times", "builds"): the newswire model rarely saw them so.
	for w, bits := range m {
		if bits&cNoun == 0 || len(w) < 4 || w[len(w)-1] != 's' {
			continue
		}
		if m[w[:len(w)-1]]&cBase != 0 || strings.HasSuffix(w, "es") && m[w[:len(w)-2]]&cBase != 0 {
			m[w] = bits | cZ
		}
	}
	return m
}

// baseForms returns the base forms an inflected verb may have: "arrived"
// → "arrive", "arriv"; "stopped" → "stop"; "goes" → "go", "goe".
func baseForms(w string) []string {
	var out []string
	n := len(w)
	switch {
	case n > 4 && strings.HasSuffix(w, "ied"):
		out = append(out, w[:n-3]+"y")
	case n > 4 && strings.HasSuffix(w, "ed"):
		out = append(out, w[:n-1], w[:n-2])
		if w[n-3] == w[n-4] {
			out = append(out, w[:n-3])
		}
	case n > 5 && strings.HasSuffix(w, "ing"):
		out = append(out, w[:n-3], w[:n-3]+"e")
		if w[n-4] == w[n-5] {
			out = append(out, w[:n-4])
		}
	case n > 4 && strings.HasSuffix(w, "ies"):
		out = append(out, w[:n-3]+"y")
	case n > 3 && strings.HasSuffix(w, "es"):
		out = append(out, w[:n-2], w[:n-1])
	case n > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss"):
		out = append(out, w[:n-1])
	}
	return out
}

// parseSections reads "[name]" headers and the white-space separated words
// under each; "#" starts a comment.
func parseSections(txt string) map[string][]string {
	out := map[string][]string{}
	cur := ""
	for _, line := range strings.Split(txt, "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
			cur = line[1 : len(line)-1]
			continue
		}
		if cur == "" {
			panic("textcheck: a word list line before any [class] header: " + line)
		}
		out[cur] = append(out[cur], strings.Fields(line)...)
	}
	return out
}
