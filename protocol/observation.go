package protocol

import (
	"strconv"
	"unicode"
	"unicode/utf8"
)

// The observation check (SPEC §6). A lesson says what happened; it never
// tells the reader what to do, so a text is refused when it
//
//   - opens a clause with a command verb addressed to the reader ("Use X",
//     "Always run", "Don't", "Make sure", "Please ..."), also after a
//     sentence break or a fronted "If X, ..." clause;
//   - speaks to the reader with an obligation anywhere ("you should");
//   - carries a prompt-injection phrase anywhere ("ignore previous
//     instructions", "system prompt").
//
// A verb that opens a description in another role passes. The opener is
// read as a noun (a subject) when it is hyphenated or a code mention
// ("Check-ins", "Close()"), is followed by "of", is followed straight by a
// finite verb ("Install takes"), or heads a subject that meets a finite verb
// before the clause ends ("Make in this repository is ..."). Gerunds
// ("Running ...") are not command verbs at all.
//
// It runs for every received lesson, so it works on byte offsets with one
// table look-up per word and no regexp; it allocates only for texts of more
// than 96 words and for the error it returns.

// InstructionError says why a text reads as an instruction to the reader.
type InstructionError struct {
	Rule   string // "command verb", "obligation" or "injection"
	Phrase string // the words that triggered it, as written
}

func (e *InstructionError) Error() string {
	return "reads as an instruction (" + e.Rule + " " + strconv.Quote(e.Phrase) +
		`); write what happened instead, e.g. "X fails when Y"`
}

// CheckObservation returns nil when text reads as an observation, else an
// *InstructionError.
func CheckObservation(text string) error {
	var arr [96]obsToken
	toks := obsTokenize(text, arr[:0])
	if e := obsScanPhrases(text, toks); e != nil {
		return e
	}
	n := len(toks)
	for i := 0; i < n; i++ {
		if !obsClauseStart(toks, i) {
			// A comma splice ("X times out, use the v2 endpoint"): a verb
			// right after a comma that takes an object is a command.
			if toks[i].pre&obsGapComma != 0 && i+1 < n && toks[i].has(obsWVerb) &&
				toks[i+1].pre&(obsGapBound|obsGapEnd) == 0 && toks[i+1].has(obsWDet) &&
				obsPost(toks, i)&obsGapCode == 0 {
				return obsErr(text, toks, i, i)
			}
			continue
		}
		if e := obsCheckClause(text, toks, i); e != nil {
			return e
		}
		// "If the cache is stale, restart the worker": look past the
		// fronted clause at each comma up to the sentence end.
		if toks[i].has(obsWSubLead) {
			for k := i + 1; k < n && toks[k].pre&obsGapEnd == 0; k++ {
				if toks[k].pre&obsGapComma != 0 {
					if e := obsCheckClause(text, toks, k); e != nil {
						return e
					}
				}
			}
		}
	}
	return nil
}

func obsErr(text string, toks []obsToken, from, to int) *InstructionError {
	return &InstructionError{Rule: "command verb", Phrase: text[toks[from].s:toks[to].e]}
}

// obsClauseStart: the text start, or after a sentence break that is not an
// abbreviation ("e.g.", "etc."), or a conjunctive adverb after a comma
// ("..., so use X").
func obsClauseStart(toks []obsToken, i int) bool {
	if i == 0 {
		return true
	}
	t := toks[i]
	if t.pre&obsGapEnd != 0 {
		p := toks[i-1]
		if t.pre&obsGapDot != 0 && ((p.e-p.s == 1 && p.sfx&obsSfxOdd == 0) || p.has(obsWAbbrev)) {
			return false
		}
		return true
	}
	return t.pre&obsGapComma != 0 && t.has(obsWConjAdv)
}

// obsCheckClause reads the clause opening at token i.
func obsCheckClause(text string, toks []obsToken, i int) *InstructionError {
	n := len(toks)
	j := i
	strong := false // "always", "never": the next word is a command
	for j < n && toks[j].has(obsWAdvLead) {
		if j > i && toks[j].pre&obsGapEnd != 0 {
			break
		}
		if toks[j].has(obsWForce) { // "please", "kindly"
			return obsErr(text, toks, i, j)
		}
		if toks[j].has(obsWStrongAdv) {
			strong = true
		}
		j++
	}
	if j == n || (j > i && toks[j].pre&obsGapEnd != 0) {
		if strong { // "Never." on its own
			return obsErr(text, toks, i, j-1)
		}
		return nil
	}
	w := toks[j]
	if end, ok := obsForced(toks, j); ok {
		return obsErr(text, toks, i, end)
	}
	if w.has(obsWVerb) {
		if strong || obsVerbIsCommand(toks, j) {
			return obsErr(text, toks, i, j)
		}
		return nil
	}
	if strong && w.flags&(obsWDet|obsWFinite|obsWPrep|obsWBound|obsWAdvAdj) == 0 && w.sfx&(obsSfxIng|obsSfxEd|obsSfxS|obsSfxHyphen) == 0 {
		return obsErr(text, toks, i, j) // "Never hardcode ports"
	}
	return nil
}

// obsForced matches openers that are commands whatever follows.
func obsForced(toks []obsToken, j int) (int, bool) {
	w := toks[j]
	if w.has(obsWForce) {
		return j, true
	}
	if j+1 >= len(toks) || toks[j+1].pre&(obsGapEnd|obsGapBound) != 0 {
		return 0, false
	}
	nx := toks[j+1].id
	switch w.id {
	case obsIDMake:
		if nx == obsIDSure || nx == obsIDCertain {
			return j + 1, true
		}
	case obsIDDo:
		if nx == obsIDNot {
			return j + 1, true
		}
	case obsIDKeep, obsIDBear:
		if nx == obsIDIn && j+2 < len(toks) && toks[j+2].id == obsIDMind {
			return j + 2, true
		}
	case obsIDLet:
		if nx == obsIDUs {
			return j + 1, true
		}
	case obsIDGo:
		if nx == obsIDAhead {
			return j + 1, true
		}
	case obsIDBetter:
		if nx == obsIDTo {
			return j + 1, true
		}
	}
	return 0, false
}

// obsVerbIsCommand decides whether the verb at j is used as a command or
// names a thing ("Use of", "Install takes", "Make in this repo is").
func obsVerbIsCommand(toks []obsToken, j int) bool {
	n := len(toks)
	w := toks[j]
	post := obsPost(toks, j)
	if post&(obsGapCode|obsGapColon) != 0 || w.pre&obsGapTick != 0 {
		return false // Close(), `make`, "Update: ..." (a label)
	}
	if j+1 >= n || post&(obsGapEnd|obsGapBound) != 0 {
		return true // "Restart.", "Run, then check"
	}
	nx := toks[j+1]
	switch {
	case nx.id == obsIDOf:
		return false
	case nx.id == obsIDNot:
		return true
	case nx.has(obsWFinite):
		return false
	case nx.sfx&obsSfxEd != 0 && obsPastFinite(toks, j+1, true):
		return false // "Build failed on ARM"
	case nx.has(obsWDet):
		return true
	case nx.has(obsWPrep) || nx.id == obsIDAnd || nx.id == obsIDOr:
		return !obsFiniteAhead(toks, j+2)
	case w.has(obsWComplement):
		return true // "Ensure GOFLAGS is set"
	}
	if obsFiniteAhead(toks, j+1) {
		return false // "Set operations are O(1)"
	}
	if !w.has(obsWSmallClause) && obsPluralAhead(toks, j+2) {
		return false // "Log lines over 64 KiB get truncated"
	}
	if !w.has(obsWSmallClause) && obsAgreement(toks, j) {
		return false // "Use cases vary", "Cache hit rates drop"
	}
	return true
}

// obsPost is the gap after token j.
func obsPost(toks []obsToken, j int) uint16 {
	if j+1 < len(toks) {
		return toks[j+1].pre
	}
	return toks[j].post
}

// obsFiniteAhead looks for a finite verb from token k on, within the clause.
func obsFiniteAhead(toks []obsToken, k int) bool {
	n := len(toks)
	for m := k; m < n && m < k+8; m++ {
		t := toks[m]
		if t.pre&(obsGapEnd|obsGapBound) != 0 {
			return false
		}
		if t.has(obsWBound) {
			return false
		}
		if t.has(obsWFinite) {
			return true
		}
		if t.id == obsIDTimes && m+1 < n && toks[m+1].id == obsIDOut {
			return true
		}
		if t.sfx&obsSfxEd != 0 && obsPastFinite(toks, m, false) {
			return true
		}
	}
	return false
}

// obsPluralAhead looks for a plural present verb ("get", "fail") from token
// k on, within the clause, not after "to" or a modal. Causative openers skip
// it: "Make builds fail on warnings" is a command.
func obsPluralAhead(toks []obsToken, k int) bool {
	for m := k; m < len(toks) && m < k+8; m++ {
		t := toks[m]
		if t.pre&(obsGapEnd|obsGapBound) != 0 || t.has(obsWBound) {
			return false
		}
		if t.has(obsWPluralVerb) && !toks[m-1].has(obsWFinite) && toks[m-1].id != obsIDTo {
			return true
		}
	}
	return false
}

// obsPastFinite: an -ed word is a past tense, not an adjective ("failed
// tests"), when no plain word follows it. loose also accepts a preposition.
func obsPastFinite(toks []obsToken, k int, loose bool) bool {
	if k+1 >= len(toks) || obsPost(toks, k)&(obsGapEnd|obsGapBound) != 0 {
		return true
	}
	nx := toks[k+1]
	if nx.flags&(obsWBound|obsWAdvAdj) != 0 || nx.sfx&obsSfxLy != 0 {
		return true
	}
	return loose && nx.has(obsWPrep)
}

// obsAgreement spots a noun-compound subject by agreement: a plural word
// after the opener (or one word later) followed by a bare plain word, which
// can then only be the verb ("Cache misses spike after deploys").
func obsAgreement(toks []obsToken, j int) bool {
	n := len(toks)
	k := j + 1
	if toks[k].sfx&obsSfxS == 0 || toks[k].flags != 0 {
		k++
		if k >= n || toks[k].pre&(obsGapEnd|obsGapBound) != 0 || toks[k].sfx&obsSfxS == 0 || toks[k].flags != 0 {
			return false
		}
	}
	if k+1 >= n || toks[k+1].pre&(obsGapEnd|obsGapBound|obsGapCode) != 0 || toks[k].pre&obsGapCode != 0 {
		return false
	}
	v := toks[k+1]
	if v.flags&(obsWPrep|obsWDet|obsWBound|obsWAdvAdj|obsWAdvLead) != 0 || v.sfx&(obsSfxS|obsSfxLy|obsSfxIng|obsSfxHyphen|obsSfxOdd) != 0 {
		return false
	}
	if v.sfx&obsSfxEd != 0 {
		return obsPastFinite(toks, k+1, false)
	}
	return v.sfx&obsSfxLower != 0 || toks[j].sfx&obsSfxUpper != 0
}

// Tokens.

type obsToken struct {
	s, e  int32  // byte offsets of the word
	id    uint16 // index into obsWords, 0 when not listed
	flags uint32 // word flags of id
	sfx   uint8  // shape of the word
	pre   uint16 // the gap before the word
	post  uint16 // the gap after the last word only
}

func (t obsToken) has(f uint32) bool { return t.flags&f != 0 }

// Gap flags: what lies between two words.
const (
	obsGapComma uint16 = 1 << iota
	obsGapEnd          // . ! ? ; : followed by space or end, or a line break
	obsGapDot          // the break is a full stop (abbreviations)
	obsGapColon        // a colon (a label such as "Update:")
	obsGapBound        // , ; ( ) dashes: a clause boundary inside a sentence
	obsGapCode         // the gap starts with code punctuation: Close(), go.mod, "Use"
	obsGapTick         // the gap ends with a backtick: the next word is code
)

// Word shapes.
const (
	obsSfxS      uint8 = 1 << iota // plural-looking: ends in s, not ss
	obsSfxIng                      // ends in ing
	obsSfxEd                       // ends in ed
	obsSfxLy                       // ends in ly
	obsSfxHyphen                   // holds a hyphen
	obsSfxLower                    // starts with a lower-case ASCII letter
	obsSfxUpper                    // all upper-case ASCII letters
	obsSfxOdd                      // holds digits or non-ASCII letters
)

var obsASCIIWord = func() (t [utf8.RuneSelf]bool) {
	for c := range t {
		t[c] = c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9')
	}
	return t
}()

func obsIsWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return obsASCIIWord[r]
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
}

func obsIsJoiner(r rune) bool { return r == '\'' || r == '-' || r == '\u2019' || r == '\u2010' }

func obsDecode(text string, i int) (rune, int) {
	if c := text[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(text[i:])
}

// obsTokenize splits text into words (letters, digits, underscores, with
// apostrophes and hyphens kept inside a word) and classifies the gaps.
func obsTokenize(text string, toks []obsToken) []obsToken {
	prev := 0
	i := 0
	for i < len(text) {
		if c := text[i]; c < utf8.RuneSelf && !obsASCIIWord[c] {
			i++
			continue
		}
		r, sz := obsDecode(text, i)
		if !obsIsWordRune(r) {
			i += sz
			continue
		}
		start := i
		i += sz
		for i < len(text) {
			if c := text[i]; c < utf8.RuneSelf && obsASCIIWord[c] {
				i++
				continue
			}
			r, sz = obsDecode(text, i)
			if obsIsWordRune(r) {
				i += sz
				continue
			}
			if obsIsJoiner(r) && i+sz < len(text) {
				if r2, sz2 := obsDecode(text, i+sz); obsIsWordRune(r2) {
					i += sz + sz2
					continue
				}
			}
			break
		}
		t := obsToken{s: int32(start), e: int32(i), pre: obsGap(text, prev, start)}
		obsClassify(text, &t)
		toks = append(toks, t)
		prev = i
	}
	if len(toks) > 0 {
		toks[len(toks)-1].post = obsGap(text, prev, len(text))
	}
	return toks
}

func obsGap(text string, from, to int) uint16 {
	var g uint16
	if from >= to {
		return 0
	}
	if from > 0 {
		switch c := text[from]; c {
		case '(', '[', '{', '<', '=', '/', '\\', '@', '#', '$', '%', '&', '+', '|', '~', '^', '"', '\'', '`':
			g |= obsGapCode
		case '.', ':':
			if from+1 < len(text) && !obsIsSpace(text[from+1]) && text[from+1] != '.' {
				g |= obsGapCode // go.mod, pkg::fn
			}
		default:
			if c >= utf8.RuneSelf {
				if r, _ := utf8.DecodeRuneInString(text[from:]); r == '\u201d' || r == '\u2019' {
					g |= obsGapCode // a closing curly quote: the word was quoted
				}
			}
		}
	}
	if text[to-1] == '`' && to < len(text) {
		g |= obsGapTick
	}
	for k := from; k < to; k++ {
		c := text[k]
		switch c {
		case ',':
			g |= obsGapComma | obsGapBound
		case ';', '(', ')':
			g |= obsGapBound
			if c == ';' {
				g |= obsGapEnd
			}
		case '\n', '\r':
			g |= obsGapEnd
		case '.', '!', '?', ':':
			if obsBreakAt(text, k) {
				g |= obsGapEnd
				if c == '.' {
					g |= obsGapDot
				}
				if c == ':' {
					g |= obsGapColon
				}
			}
		case '-':
			if k > from && k+1 < to && text[k-1] == ' ' && text[k+1] == ' ' {
				g |= obsGapBound
			}
		case 0xE2: // – — (U+2013, U+2014)
			if k+2 < len(text) && text[k+1] == 0x80 && (text[k+2] == 0x93 || text[k+2] == 0x94) {
				g |= obsGapBound
			}
		}
	}
	return g
}

// obsBreakAt: the stop at k ends a sentence (space, end, or a closing quote
// or bracket before them), unlike the dots of "go.mod" or "1.26".
func obsBreakAt(text string, k int) bool {
	k++
	if k < len(text) && (text[k] == '"' || text[k] == '\'' || text[k] == ')' || text[k] == ']' || text[k] == '`') {
		k++
	}
	return k >= len(text) || obsIsSpace(text[k])
}

func obsIsSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// obsClassify looks the word up (lower-cased, curly apostrophes made
// straight) and records its shape.
func obsClassify(text string, t *obsToken) {
	w := text[t.s:t.e]
	var buf [20]byte
	n := 0
	listed := len(w) <= len(buf)
	upper, lower, odd := true, false, false
	h := uint32(obsHashSeed)
	for k := 0; k < len(w); k++ {
		c := w[k]
		switch {
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		case 'a' <= c && c <= 'z':
			upper = false
			if k == 0 {
				lower = true
			}
		case c == '\'' || c == '_':
		case c == '-':
			t.sfx |= obsSfxHyphen
		case c >= utf8.RuneSelf:
			if k+2 < len(w) && c == 0xE2 && w[k+1] == 0x80 && w[k+2] == 0x99 {
				c = '\'' // ’
				k += 2
			} else {
				odd, upper, listed = true, false, false
			}
		default:
			odd = true
		}
		if listed && n < len(buf) {
			buf[n] = c
			n++
			h = (h ^ uint32(c)) * obsHashMul
		}
	}
	if lower {
		t.sfx |= obsSfxLower
	}
	if upper && len(w) > 1 {
		t.sfx |= obsSfxUpper
	}
	if odd {
		t.sfx |= obsSfxOdd
	}
	if listed && !odd && n <= obsMaxWord {
		if id := obsLookup(h, buf[:n]); id != 0 {
			t.id = id
			t.flags = obsWords[id]
		}
	}
	last := func(k int) byte { // k-th byte from the end, lower-cased ASCII
		c := w[len(w)-1-k]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		return c
	}
	switch l := len(w); {
	case l >= 3 && last(0) == 's' && last(1) != 's' && last(1) != '\'':
		t.sfx |= obsSfxS
	case l >= 5 && last(0) == 'g' && last(1) == 'n' && last(2) == 'i':
		t.sfx |= obsSfxIng
	case l >= 4 && last(0) == 'd' && last(1) == 'e' && last(2) != 'e': // not need, succeed
		t.sfx |= obsSfxEd
	case l >= 4 && last(0) == 'y' && last(1) == 'l':
		t.sfx |= obsSfxLy
	}
}

// The word table: open addressing on an FNV-1a hash computed while the word
// is lower-cased, about twice as fast as a map look-up here.
const (
	obsHashSeed = 2166136261
	obsHashMul  = 16777619
)

type obsSlot struct {
	word string
	id   uint16
}

func obsHash(w string) uint32 {
	h := uint32(obsHashSeed)
	for k := 0; k < len(w); k++ {
		h = (h ^ uint32(w[k])) * obsHashMul
	}
	return h
}

func obsLookup(h uint32, w []byte) uint16 {
	mask := uint32(len(obsTable) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		sl := &obsTable[i]
		if sl.id == 0 {
			return 0
		}
		if sl.word == string(w) {
			return sl.id
		}
	}
}

// Phrases matched anywhere in the text.

type obsPhrase struct {
	rule  string
	words []uint16
}

// obsScanPhrases finds injection phrases (first) and obligations addressed
// to the reader.
func obsScanPhrases(text string, toks []obsToken) *InstructionError {
	var oblig *InstructionError
	for i := range toks {
		t := toks[i]
		if t.id == 0 {
			continue
		}
		if t.has(obsWIgnoreVerb) { // "ignore [all|the|your] previous instructions"
			k := i + 1
			for ; k < len(toks) && k <= i+4 && toks[k].has(obsWInjFill) && !toks[k].has(obsWInjTarget); k++ {
			}
			if k < len(toks) && k <= i+4 && toks[k].has(obsWInjTarget) {
				return &InstructionError{Rule: "injection", Phrase: text[t.s:toks[k].e]}
			}
		}
		if !t.has(obsWPhraseStart) {
			continue
		}
		for _, p := range obsPhrasesByFirst[t.id] {
			if i+len(p.words) > len(toks) {
				continue
			}
			ok := true
			for k, id := range p.words[1:] {
				if toks[i+1+k].id != id {
					ok = false
					break
				}
			}
			if !ok {
				continue
			}
			e := &InstructionError{Rule: p.rule, Phrase: text[t.s:toks[i+len(p.words)-1].e]}
			if p.rule == "injection" {
				return e
			}
			if oblig == nil {
				oblig = e
			}
		}
	}
	return oblig
}

// Word lists.

const (
	obsWVerb        uint32 = 1 << iota // a command verb in base form
	obsWComplement                     // takes a clause: "Ensure X is set"
	obsWSmallClause                    // takes object + complement: "Keep logs short"
	obsWForce                          // a command whatever follows: "Please", "Don't", "Be"
	obsWAdvLead                        // an adverb that may lead a command: "Just", "Then"
	obsWStrongAdv                      // "Always", "Never": the next word is a command
	obsWConjAdv                        // starts a clause after a comma: ", so use X"
	obsWFinite                         // a finite verb form: "is", "takes", "broke"
	obsWPrep                           // a preposition
	obsWDet                            // a determiner or object pronoun
	obsWBound                          // a word that starts a new clause: "when", "that"
	obsWAdvAdj                         // an adverb or adjective that ends an object: "twice"
	obsWSubLead                        // opens a fronted clause: "If X, ..."
	obsWAbbrev                         // an abbreviation ending in a full stop
	obsWIgnoreVerb                     // "ignore", "disregard", "forget"
	obsWInjFill                        // "all", "the", "your", "any"
	obsWInjTarget                      // "instructions", "above"
	obsWPhraseStart                    // first word of an obligation or injection phrase
	obsWPluralVerb                     // a plural present verb: "get", "fail"
)

var (
	obsTable          []obsSlot
	obsWords          []uint32
	obsPhrasesByFirst [][]obsPhrase // by the id of the first word
	obsMaxWord        int           // the longest listed word: longer ones skip the look-up

	obsIDMake, obsIDSure, obsIDCertain, obsIDDo, obsIDNot, obsIDKeep, obsIDBear, obsIDIn, obsIDMind,
	obsIDLet, obsIDUs, obsIDOf, obsIDAnd, obsIDOr, obsIDTimes, obsIDOut, obsIDGo, obsIDAhead, obsIDBetter, obsIDTo uint16
)

const (
	// Command verbs. Nouns that are often subjects ("build", "cache") are
	// listed too; the noun tests in obsVerbIsCommand tell the roles apart.
	obsVerbList = `accept add adjust allow apply ask assert assign assume attach audit avoid back be bear ` +
		`benchmark bind block bootstrap bounce break build bump bundle cache call cancel cap capture ` +
		`catch change check choose clean cleanup clear clone close commit compare compile compress ` +
		`configure confirm consider construct convert copy create curl debug decrease default define ` +
		`delete deploy describe destroy detach disable discard dismiss do double-check download drain ` +
		`drop dump edit embed emit empty enable encode encrypt enforce ensure escape evict exclude ` +
		`execute expect expire export expose extend extract feel fetch fill filter find fix flag flip ` +
		`flush follow force fork format free freeze generate get give grab grant grep guard handle ` +
		`have hide hold hook ignore implement import include increase inject insert inspect install ` +
		`invalidate invoke isolate keep kill label launch leave let limit link lint list load lock log ` +
		`look lower make mark measure merge migrate mind minimize mock modify monitor mount move mute ` +
		`name note notice open opt override pass paste patch pause pay pick pin ping place poll ` +
		`prefer prefix prepend preserve prevent print prioritize probe profile prune publish pull ` +
		`purge push put query queue quote raise re-run read rebase rebuild recheck record recreate ` +
		`redirect reduce refactor refer refresh regenerate register reinstall reject release reload ` +
		`remember remove rename reorder replace report request require rerun reserve reset resize ` +
		`resolve restart restore restrict retry return reuse revert review revoke rewrite rollback ` +
		`rotate route run save scale scan schedule scope search see select send separate serve set ` +
		`setup share shut sign skip sleep sort source specify split squash start stash stay stick ` +
		`stop store strip stub submit supply suppress swap switch sync tag take tell terminate test ` +
		`throttle tighten time-box touch trace track trigger trim truncate trust try tune turn tweak ` +
		`type uncomment undo uninstall unlock unpin unset unzip update upgrade upload use validate ` +
		`vendor verify wait warn watch wipe wrap write yank zip`
	obsComplementList  = `assert assume check confirm double-check ensure expect note notice recheck remember see verify`
	obsSmallClauseList = `call consider get have keep leave let make mark set turn`
	obsForceList       = `be please kindly don't dont let's`
	obsAdvLeadList     = `always never just simply please kindly also then first firstly now again instead ` +
		`otherwise alternatively additionally so only definitely really next finally lastly ideally ` +
		`preferably generally usually`
	obsStrongAdvList = `always never`
	obsConjAdvList   = `so then otherwise instead therefore thus hence`
	obsFiniteList    = `is isn't isnt are aren't arent was wasn't wasnt were weren't has hasn't hasnt had ` +
		`hadn't does doesn't doesnt did didn't didnt will won't would wouldn't can can't cannot could ` +
		`couldn't may might must mustn't shall should shouldn't ` +
		`takes fails breaks needs hangs crashes panics causes happens seems becomes gets goes requires ` +
		`expects triggers hides works stops starts makes keeps uses produces prints writes reads ` +
		`deadlocks stalls grows doubles differs depends exits succeeds passes loses slows skips ` +
		`ignores overwrites deletes removes resets restarts retries clears returns lives belongs ` +
		`contains includes lacks means matters occurs remains stays supports accepts rejects refuses ` +
		`emits sends receives waits holds rebuilds recompiles compiles ships truncates corrupts wins ` +
		`fires throttles prefers wants likes looks sees shows finds knows says tells leads adds ` +
		`creates generates drives forces allows prevents blocks breaks behaves comes lets gives ` +
		`took broke ran went became got kept lost wrote grew began fell threw hung made`
	obsPluralVerbList = `get become fail break need take cause happen hang crash panic seem remain ` +
		`stay differ depend grow leak lose resolve wrap reject require show appear`
	obsPrepList = `in on at for from with without to into onto within inside outside under over during ` +
		`through across against by via per behind between among around near beside beyond upon ` +
		`throughout toward towards`
	obsDetList = `the a an this that these those your my our their its his her it them him us me all ` +
		`any each every some no both either neither another such whatever one everything ` +
		`anything nothing something yourself`
	obsBoundList = `when whenever if before after until unless because since while so and or but that ` +
		`which who whose where once as then than though although whereas whether otherwise instead ` +
		`what how why whichever wherever whatever ` +
		`nor`
	obsAdvAdjList = `too very only first last again once twice here there now then instead together ` +
		`everywhere anyway always never often sometimes overnight small short long fast slow green ` +
		`clean simple local up down off out away back aside apart alone intact open alive more less ` +
		`fewer longer shorter faster slower later earlier sooner asap please also still yet ahead ` +
		`separate consistent stable`
	obsSubLeadList = `if when whenever once after before unless until while since because although ` +
		`though to for in on at with without during from by inside within under over across through ` +
		`as upon given per whether`
	obsAbbrevList = `etc vs cf eg ie approx incl resp fig al`
	obsIgnoreList = `ignore disregard forget override bypass`
	obsInjFill    = `all any the your my these those previous prior earlier preceding above of`
	obsInjTarget  = `instructions instruction prompt prompts directives above`

	// Obligations addressed to the reader and injection phrases, anywhere.
	obsObligations = `you should|you shouldn't|you should not|you must|you mustn't|you must not|` +
		`you need to|you needn't|you have to|you've got to|you got to|you gotta|you ought to|` +
		`you'd better|you had better|you'd best|you'll need to|you will need to|you'll have to|` +
		`you will have to|you'll want to|you will want to|you may want to|you might want to|` +
		`you want to make sure|you're supposed to|you are supposed to|you're required to|` +
		`you are required to|you don't need to|you do not need to|you don't have to|` +
		`you do not have to|you can't|you cannot|you can not|you are expected to|` +
		`you're expected to|it is recommended|it's recommended|it is advised|it's advised|` +
		`it is advisable|it's advisable|it is best to|it's best to|it is better to|it's better to|` +
		`it is important to|it's important to|it is necessary to|it's necessary to|` +
		`we recommend|i recommend|we suggest|i suggest|we should|we must|we need to|` +
		`one should|one must|make sure you|be sure to|remember to`
	obsInjections = `system prompt|system message|you are now|you're now|new instructions|` +
		`developer mode|jailbreak|do anything now|pretend you are|pretend to be|act as if you|` +
		`from now on you|reveal your|print your instructions|repeat your instructions|` +
		`im_start|im_end|end of instructions|ignore all previous|ignore all prior|` +
		`disregard all previous|disregard all prior|disregard previous|disregard prior|` +
		`disregard everything|forget all previous|forget everything|forget all prior`
)

func init() {
	obsWordIDs := map[string]uint16{} // read through obsTable after init
	obsWords = []uint32{0}
	add := func(list string, f uint32) {
		for _, w := range obsFields(list, ' ') {
			obsMaxWord = max(obsMaxWord, len(w))
			id, ok := obsWordIDs[w]
			if !ok {
				id = uint16(len(obsWords))
				obsWordIDs[w] = id
				obsWords = append(obsWords, 0)
			}
			obsWords[id] |= f
		}
	}
	add(obsVerbList, obsWVerb)
	add(obsComplementList, obsWVerb|obsWComplement)
	add(obsSmallClauseList, obsWVerb|obsWSmallClause)
	add(obsForceList, obsWForce)
	add(obsAdvLeadList, obsWAdvLead)
	add(obsStrongAdvList, obsWStrongAdv)
	add(obsConjAdvList, obsWConjAdv)
	add(obsFiniteList, obsWFinite)
	add(obsPluralVerbList, obsWPluralVerb)
	add(obsPrepList, obsWPrep)
	add(obsDetList, obsWDet)
	add(obsBoundList, obsWBound)
	add(obsAdvAdjList, obsWAdvAdj)
	add(obsSubLeadList, obsWSubLead)
	add(obsAbbrevList, obsWAbbrev)
	add(obsIgnoreList, obsWIgnoreVerb)
	add(obsInjFill, obsWInjFill)
	add(obsInjTarget, obsWInjTarget)
	// Words the rules name.
	add(`make sure certain do not keep bear in mind let us of and or times out go ahead better to`, 0)
	id := func(w string) uint16 { return obsWordIDs[w] }
	obsIDMake, obsIDSure, obsIDCertain, obsIDDo, obsIDNot = id("make"), id("sure"), id("certain"), id("do"), id("not")
	obsIDKeep, obsIDBear, obsIDIn, obsIDMind, obsIDLet, obsIDUs = id("keep"), id("bear"), id("in"), id("mind"), id("let"), id("us")
	obsIDOf, obsIDAnd, obsIDOr, obsIDTimes, obsIDOut = id("of"), id("and"), id("or"), id("times"), id("out")
	obsIDGo, obsIDAhead, obsIDBetter, obsIDTo = id("go"), id("ahead"), id("better"), id("to")

	byFirst := map[uint16][]obsPhrase{}
	addPhrases := func(list, rule string) {
		for _, p := range obsFields(list, '|') {
			words := obsFields(p, ' ')
			add(p, 0)
			add(words[0], obsWPhraseStart)
			ids := make([]uint16, len(words))
			for k, w := range words {
				ids[k] = obsWordIDs[w]
			}
			byFirst[ids[0]] = append(byFirst[ids[0]], obsPhrase{rule: rule, words: ids})
		}
	}
	addPhrases(obsInjections, "injection")
	addPhrases(obsObligations, "obligation")
	obsPhrasesByFirst = make([][]obsPhrase, len(obsWords))
	for id, ps := range byFirst {
		obsPhrasesByFirst[id] = ps
	}

	size := 1
	for size < 4*len(obsWordIDs) {
		size *= 2
	}
	obsTable = make([]obsSlot, size)
	for w, id := range obsWordIDs {
		i := obsHash(w) & uint32(size-1)
		for obsTable[i].id != 0 {
			i = (i + 1) & uint32(size-1)
		}
		obsTable[i] = obsSlot{word: w, id: id}
	}
}

func obsFields(s string, sep byte) []string {
	var out []string
	start := 0
	for k := 0; k <= len(s); k++ {
		if k == len(s) || s[k] == sep {
			if k > start {
				out = append(out, s[start:k])
			}
			start = k + 1
		}
	}
	return out
}
