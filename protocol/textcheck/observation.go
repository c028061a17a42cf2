package textcheck

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unsafe"
)

// InstructionError says why a text reads as an instruction to the reader.
type InstructionError struct {
	// Rule is "command verb", "obligation", "impersonal directive",
	// "directive header", "request", "injection" or "hidden characters".
	Rule   string
	Phrase string // the words that triggered it, from the normalised text
}

func (e *InstructionError) Error() string {
	return "reads as an instruction (" + e.Rule + " " + strconv.Quote(e.Phrase) +
		`); write what happened instead, e.g. "X fails when Y"`
}

// CheckObservation returns nil when text reads as an observation, else an
// *InstructionError naming the rule and the words, or a *ReadError when the
// text is written mostly in another language. It reads line breaks as
// sentence ends and does not refuse them: writers use it on the clauses of
// event texts, and CheckText refuses control characters in lesson texts.
func CheckObservation(text string) error {
	return check(text, readObservation, isPlainASCII(text)).wordingErr()
}

// Verdict is what the checks of SPEC §6 say of one text an agent may read;
// at most one of its fields is set.
type Verdict struct {
	Unreadable  *ReadError        // a control character, or another language
	Instruction *InstructionError // it tells the reader what to do
	// Raw is the private data it holds; offsets are in the normalised text
	// (Normalize), so a zero-width space or a fullwidth "＠" hides nothing.
	Raw []RawFinding
}

// OK reports whether the text passes every check.
func (v Verdict) OK() bool { return v.Unreadable == nil && v.Instruction == nil && len(v.Raw) == 0 }

// CheckText runs every check of a text an agent may read (SPEC §6) with one
// reading of it: readable (no control character, English), an observation,
// and free of raw data.
func CheckText(text string) Verdict {
	r, ascii := controlChar(text)
	if r >= 0 {
		return Verdict{Unreadable: &ReadError{Rule: RuleControl, Detail: fmt.Sprintf("U+%04X", r)}}
	}
	return check(text, readAll, ascii) // ASCII with no control character is plain
}

// How much of the checks a call runs.
type readMode int

const (
	readGrammar     readMode = iota // language and grammar
	readObservation                 // and the model
	readAll                         // and raw data
)

// CheckGrammar is CheckObservation without the learned model: the language
// and the grammar's reading alone. Writers build a sentence clause by clause
// with it (the model reads whole sentences, not the pieces of one); the
// sentence they finish passes CheckText like any other.
func CheckGrammar(text string) error {
	return check(text, readGrammar, isPlainASCII(text)).wordingErr()
}

// wordingErr is the refusal of what the text says or how it is written,
// raw data aside.
func (v Verdict) wordingErr() error {
	switch {
	case v.Unreadable != nil:
		return v.Unreadable
	case v.Instruction != nil:
		return v.Instruction
	}
	return nil
}

func check(text string, mode readMode, plain bool) Verdict {
	norm := text
	if !plain {
		if r := hiddenText(text); r >= 0 {
			return Verdict{Instruction: &InstructionError{Rule: "hidden characters", Phrase: fmt.Sprintf("U+%04X", r)}}
		}
		norm = normalize(text, true)
	}
	buf := scratchPool.Get().(*scratch)
	defer buf.release()
	buf.toks = tokenize(norm, buf.lower(norm), buf.toks[:0])
	if v := judgeReading(buf, text, norm, mode, plain); !v.OK() {
		return v
	}
	// Case and layout never hide an order: a text in capitals or Title
	// Case, or one that wraps prose in a code span or fence, is read again
	// as plain sentences, and each line of a text of several lines is read
	// alone too.
	for _, alt := range plainReadings(norm, buf.toks) {
		if v := readAlone(alt, mode); !v.OK() {
			return v
		}
	}
	if strings.IndexByte(norm, '\n') >= 0 || strings.IndexByte(norm, '\r') >= 0 {
		for _, line := range strings.FieldsFunc(norm, func(r rune) bool { return r == '\n' || r == '\r' }) {
			if line != norm {
				if v := readAlone(line, mode); !v.OK() {
					return v
				}
			}
		}
	}
	if mode != readAll {
		return Verdict{}
	}
	return Verdict{Raw: findRaw(buf, norm, buf.toks)}
}

// readAlone reads one more reading of a text: its own words and their
// language.
func readAlone(text string, mode readMode) Verdict {
	buf := scratchPool.Get().(*scratch)
	defer buf.release()
	buf.toks = tokenize(text, buf.lower(text), buf.toks[:0])
	return judgeReading(buf, text, text, mode, isPlainASCII(text))
}

// judgeReading reads one tokenized reading (norm, the normalised form of
// text) for its language, then judges it.
func judgeReading(buf *scratch, text, norm string, mode readMode, plain bool) Verdict {
	if lang := unsupportedLanguage(text, buf.toks, plain); lang != "" {
		return Verdict{Unreadable: &ReadError{Rule: RuleLanguage, Detail: lang}}
	}
	if e := judge(buf, norm, mode != readGrammar); e != nil {
		return Verdict{Instruction: e}
	}
	return Verdict{}
}

// judge reads the tokenized text in buf with the grammar, then lets the
// model weigh the grammar's verdict with the rest of the text. The hard
// rules stand whatever the model says.
func judge(buf *scratch, text string, useModel bool) *InstructionError {
	r := reader{text: text, toks: buf.toks}
	e := r.read()
	if !useModel {
		return e
	}
	rule, phrase := "", ""
	if e != nil {
		if hardRule(e.Rule) {
			return e
		}
		rule, phrase = e.Rule, e.Phrase
	}
	buf.feats, buf.ends = appendFeatures(buf.feats[:0], buf.ends[:0], text, buf.toks, rule, phrase)
	if theModel.margin(buf.feats, buf.ends) <= theModel.threshold {
		return nil
	}
	if e != nil {
		return e
	}
	if words(buf.toks) < minModelWords {
		// Two words are no sentence to weigh ("not here", a revocation's
		// reason); an order that short is the grammar's to find.
		return nil
	}
	return &InstructionError{Rule: RuleLearned, Phrase: theModel.strongest(text, buf.toks)}
}

// RuleLearned names an instruction the model found where no grammar rule
// fired: a polite hint, a duty in the passive, an order without a verb.
const RuleLearned = "reads as an order"

// RuleCommandVerb names an order that opens with a verb in the base form
// ("Run the migration twice"). The default writer tells it from the other
// rules: a clause refused for it alone may be worded again around the verb.
const RuleCommandVerb = "command verb"

// minModelWords: the fewest words the model refuses a text on by itself.
const minModelWords = 3

// hardRule: a rule the model never overrides.
func hardRule(rule string) bool { return rule == "injection" || rule == "hidden characters" }

// HasWords reports whether text holds a letter or a digit once hidden
// characters are removed: a lesson of white space, punctuation or
// zero-width spaces says nothing.
func HasWords(text string) bool {
	for _, r := range Normalize(text) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return true
		}
	}
	return false
}

// scratch is what one check needs besides its result. Checks run for every
// received line, so the buffers are kept between them.
type scratch struct {
	toks  []token
	low   []byte
	feats []uint32
	ends  []int
}

// lower returns s with ASCII letters lowered, in the scratch buffer:
// nothing read from it (the tokens' words) may outlive the check, and
// errors quote the normalised text instead.
func (b *scratch) lower(s string) string {
	b.low = appendLowerASCII(b.low[:0], s)
	return unsafe.String(unsafe.SliceData(b.low), len(b.low))
}

// release returns the buffers, unless a hostile long text grew them.
func (b *scratch) release() {
	if cap(b.toks) <= 256 && cap(b.low) <= 4096 && cap(b.feats) <= 2048 && cap(b.ends) <= 64 {
		b.toks = b.toks[:0]
		scratchPool.Put(b)
	}
}

var scratchPool = sync.Pool{New: func() any {
	return &scratch{toks: make([]token, 0, 64), low: make([]byte, 0, 256), feats: make([]uint32, 0, 512), ends: make([]int, 0, 8)}
}}

// appendLowerASCII appends s with ASCII letters lowered, so byte offsets
// stay the same.
func appendLowerASCII(dst []byte, s string) []byte {
	dst = append(dst, s...)
	i := len(dst) - len(s)
	for ; i+8 <= len(dst); i += 8 {
		// Eight ASCII bytes at a time: a byte from 'A' to 'Z' gains the
		// high bit when 0x3F is added and not when 0x25 is (no byte below
		// 0x80 carries into the next), and that bit, moved down to 0x20,
		// lowers it.
		x := binary.LittleEndian.Uint64(dst[i:])
		const ones, highs = 0x0101010101010101, 0x8080808080808080
		if x&highs != 0 {
			lowerBytes(dst[i : i+8])
			continue
		}
		upper := ((x + 0x3f*ones) ^ (x + 0x25*ones)) & highs
		binary.LittleEndian.PutUint64(dst[i:], x|upper>>2)
	}
	lowerBytes(dst[i:])
	return dst
}

// lowerBytes lowers the ASCII letters of b in place.
func lowerBytes(b []byte) {
	for i := range b {
		if c := b[i]; 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
}

// reader walks the tokens clause by clause.
type reader struct {
	text string
	toks []token
}

func (r *reader) fail(rule string, from, to int) *InstructionError {
	if to >= len(r.toks) {
		to = len(r.toks) - 1
	}
	if to < from {
		to = from
	}
	return &InstructionError{Rule: rule, Phrase: r.text[r.toks[from].s:r.toks[to].e]}
}

// hardBreak: marks after which a new clause starts whatever follows.
func hardBreak(t *token) bool {
	switch t.punct {
	case '.', '!', '?', ';', ':', '(', ')', '"', '-':
		return true
	}
	return false
}

func (r *reader) read() *InstructionError {
	toks := r.toks
	n := len(toks)
	if e := r.phrases(); e != nil {
		return e
	}
	sentence := 0 // first token of the current sentence part
	start := 0    // first token of the current clause
	soft := false // the clause follows a comma
	outer := -1   // inside quotes: where the sentence around them began
	for i := 0; i <= n; i++ {
		if i < n && toks[i].punct == 0 {
			if i > start && r.opensCommand(i) {
				// "The build failed so delete the lockfile", "Important
				// Delete the lockfile": a command inside the clause.
				if e := r.clause(sentence, start, i, false); e != nil {
					return e
				}
				if e := r.command(sentence, i, r.clauseEnd(i), toks[i-1].w == "and" || toks[i-1].w == "but"); e != nil {
					return e
				}
			}
			continue
		}
		if start < i {
			if e := r.clause(sentence, start, i, soft); e != nil {
				return e
			}
		}
		if i < n {
			p := toks[i].punct
			if p == '"' && outer < 0 {
				if j := r.reportedQuote(sentence, i); j > i {
					// What a tool printed or a person said is reported, not
					// given (SPEC §6): the sentence goes on after the quote.
					i, start, soft = j, j+1, true
					continue
				}
			}
			// A comma or a dash (a strong comma) goes on with the sentence,
			// unless nothing came before it ("- Use the cache" is a bullet).
			soft = (p == ',' || p == '-') && i > sentence
			switch {
			case p == '"' && outer >= 0:
				// The quotation closes; what follows goes on with the
				// sentence around it ("The error “X” means the mirror
				// timed out").
				sentence, outer, soft = outer, -1, true
			case p == '"':
				outer, sentence = sentence, i+1
			case !soft:
				sentence, outer = i+1, -1
			}
		}
		start = i + 1
	}
	return nil
}

// reportedQuote returns the closing quotation mark of the quotation that
// opens at toks[i] when the sentence reports it as someone's words: right
// after a reporting verb with a subject before it ("pip prints 'Consider
// using --user'", "the person said: \"leave it\""), after "with" ("npm
// fails with 'Run npm audit fix'") or after a noun for printed text ("the
// hint 'Try --force' appears"), and when the sentence goes on after it.
// Else it returns -1.
func (r *reader) reportedQuote(sentence, i int) int {
	toks := r.toks
	j := i + 1
	for j < len(toks) && toks[j].punct != '"' {
		j++
	}
	if j >= len(toks) || j == i+1 {
		return -1
	}
	// The sentence goes on after the quote ("... when site-packages is
	// read-only"): one that ends with it only relays the words, and "An
	// agent reported 'Always run X'" still gives the order.
	if after := j + 1; after+1 < len(toks) && toks[after].punct == ',' {
		if toks[after+1].punct != 0 {
			return -1
		}
	} else if after >= len(toks) || toks[after].punct != 0 {
		return -1
	}
	k := i - 1
	if k >= 0 && (toks[k].punct == ':' || toks[k].punct == ',') {
		k--
	}
	if k < sentence || toks[k].punct != 0 {
		return -1
	}
	t := &toks[k]
	switch {
	case t.has(cReport) && k > sentence,
		(t.w == "with" || t.w == "reads") && k > sentence,
		t.has(cQuoteNoun):
		return j
	}
	return -1
}

// phrases matches lists/phrases.txt over the whole text.
func (r *reader) phrases() *InstructionError {
	toks := r.toks
	// The phrase words the text holds, so phrases that need a word it
	// lacks are never tried.
	var present [maxPhraseWords / 64]uint64
	starts := false
	for i := range toks {
		if id := toks[i].pid; id != 0 && int(id)/64 < len(present) {
			present[id/64] |= 1 << (id % 64)
		}
		starts = starts || toks[i].has(cPhrase)
	}
	if !starts {
		return nil
	}
	for i := range toks {
		if !toks[i].has(cPhrase) {
			continue
		}
		ps := phrasesByFirstID[toks[i].pid]
		for _, p := range ps {
			if q := p.quick; q.bits&present[q.k] == 0 && q.bits != 0 || p.anchored && !r.clauseOpensAt(i) || !p.possible(present[:]) {
				continue
			}
			if end, ok := p.match(toks, i); ok {
				return r.fail(p.rule, i, end-1)
			}
		}
	}
	return nil
}

// clauseOpensAt: token i is the first word of a clause, or follows only
// lead adverbs ("Always make sure", "Then note that").
func (r *reader) clauseOpensAt(i int) bool {
	for k := i - 1; k >= 0; k-- {
		t := &r.toks[k]
		if t.punct != 0 {
			return hardBreak(t) || t.punct == ','
		}
		if !t.has(cLead) {
			return false
		}
	}
	return true
}

// opensCommand: toks[i], inside a clause, starts a command of its own: a
// base verb that is nothing else (not a noun first, not a present or past
// form) with a noun phrase after it, right after "so", "then", "hence",
// "and"..., or "just" with no subject before it, or written with a
// capital after a word in lower case.
func (r *reader) opensCommand(i int) bool {
	toks := r.toks
	t, prev := &toks[i], &toks[i-1]
	if !t.has(cBase) || t.has(cDomNoun|cZ|cPast|cModal|cBe|cHave|cDo|cDet|cPrep) || t.code || i+1 >= len(toks) {
		return false
	}
	nx := &toks[i+1]
	object := nx.has(cDet|cObject) && !nx.has(cRel) || nx.has(cParticle) && !nx.has(cPrep) ||
		pureAdverb(nx) && i+2 < len(toks) && toks[i+2].has(cPrep|cDet) // "push directly to main"
	switch prev.w {
	case "so", "then", "hence", "therefore", "thus":
		// "then rerun after removing the lockfile": after these a verb
		// that is not a present or past form is a command.
		return object || !nx.has(cZ|cPast|cModal|cBe|cHave|cNoun) && nx.punct == 0
	case "and", "but":
		return object
	case "just", "simply":
		// "when the person is away just use the emulator": "just" and a
		// bare verb with an object, no subject before them ("they just
		// use the cache" is a statement).
		if i >= 2 {
			if pp := &toks[i-2]; pp.has(cSubject|cNoun|cProper|cModal|cDo|cBe|cHave|cActor) || pp.code {
				return false
			}
		}
		return object
	}
	if !object || !t.cap || !t.has(cKnown) || t.has(cUnknown) || isUpperWord(r.text[t.s:t.e]) || prev.punct != 0 {
		return false
	}
	// "lol Delete the lockfile", "Important Delete the lockfile": a
	// capitalised command after a word in lower case or a header word.
	return !prev.cap && !prev.has(cDet|cPrep|cAdj|cBe|cModal|cHave|cDo) || i-1 == 0 && !prev.has(cDet|cPrep|cBe|cModal|cHave|cDo)
}

// onlyLeads: toks[a:b] holds only lead adverbs, times, interjections, the
// one spoken to ("Hey agent,"), symbols and commas.
func (r *reader) onlyLeads(a, b int) bool {
	for k := a; k < b; k++ {
		if t := &r.toks[k]; t.punct != ',' && !t.has(cLead|cTime|cInterjection|cActor|cSymbol) && !pureAdverb(t) {
			return false
		}
	}
	return true
}

// clause reads toks[a:b]; sentence is where the current sentence (or part
// after ; : — and quotes) began, soft that a comma opened this clause.
func (r *reader) clause(sentence, a, b int, soft bool) *InstructionError {
	if e := r.obligation(sentence, a, b); e != nil {
		return e
	}
	// After a comma, a fronted clause ("If it is stale, restart it",
	// "On macOS, install coreutils") makes this the main clause.
	if soft && sentence < a {
		if f := &r.toks[sentence]; r.onlyLeads(sentence, a) {
			soft = false // "Also, check the lock file", "Next, run the migrations"
		} else if f.has(cSub|cPrep) || f.w == "to" || f.has(cGer) && f.cap {
			soft = false
		} else if f.has(cActor) && r.toks[sentence+1].punct == ',' {
			soft = false // "Assistant, add this node"
		}
	}
	return r.command(sentence, a, b, soft)
}
