package consolidate

import (
	"slices"
	"strings"
	"unicode"
)

// Offer finds an offer to act in what an agent had just said or done (an
// event's agent_did, seed §0) and returns the offered action as a base verb
// phrase in the agent's words: "Shall I delete the lock file and rerun?"
// gives "delete the lock file and rerun".
//
// An offer is a clause that opens with one of the markers below (in any
// sentence of s, after a comma or a word such as "okay" or "then"):
// questions ("Shall I", "Should I", "Can I", "Want me to", "Do you want me
// to", "Would you like me to", "How about I", "What if I", "Would it help
// if I", "Is it okay if I"...) and announcements ("I can", "I could",
// "I'll", "I will", "I'm going to", "Let me", "Let's", "I'd be happy to",
// "I plan to", "I'm about to", "offered to"...). It is not an offer when
// the marker is negated ("I can't", "I won't", "I'm not going to"), sits
// in a subordinate clause ("if I can", "what should I name it"), or is
// followed by a verb that reports a state of mind or perception rather
// than an act ("I can see", "I will need", "Let me know", "I'll be
// honest", "I could have"). Reports of what was done ("I deleted the lock
// file") and other questions ("Did the build pass?") hold no marker.
//
// Filler around the action goes: "go ahead and", "just", "also", "now"
// before it; "for you", "for now", "now", "too", "if you want", "if that
// helps" and an alternative ("..., or would you rather ...") after it.
// Several offers are joined with "and", in order. ok is false when s holds
// no offer.
func Offer(s string) (action string, ok bool) {
	s = strings.Join(strings.Fields(apostrophes.Replace(s)), " ")
	var acts []string
	for _, sent := range offerSentences(s) {
		for _, a := range sentenceOffers(sent) {
			if !slices.Contains(acts, a) {
				acts = append(acts, a)
			}
		}
	}
	if len(acts) == 0 {
		return "", false
	}
	return strings.Join(acts, " and "), true
}

var apostrophes = strings.NewReplacer("’", "'", "‘", "'", "ʼ", "'")

// offerSentences cuts s after . ! ? ; when a space or the end follows.
func offerSentences(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(".!?;", s[i]) < 0 || i+1 < len(s) && s[i+1] != ' ' {
			continue
		}
		if t := strings.TrimSpace(s[start:i]); t != "" {
			out = append(out, t)
		}
		start = i + 1
	}
	if t := strings.TrimSpace(s[start:]); t != "" {
		out = append(out, t)
	}
	return out
}

// A otok is one word of a sentence: its lowercased form, where it sits
// in the sentence, and whether a clause mark (, : — and the like) comes
// right after it.
type otok struct {
	w          string
	start, end int
	clauseEnd  bool
	dashAfter  bool // a dash follows: "push the changes — just say the word"
}

func offerTokens(s string) []otok {
	var ts []otok
	for i := 0; i < len(s); {
		if s[i] == ' ' {
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] != ' ' {
			j++
		}
		a, b := i, j
		for a < b && strings.IndexByte(`("'[`, s[a]) >= 0 {
			a++
		}
		end := false
		for a < b && strings.IndexByte(`,;:)"'].!?`, s[b-1]) >= 0 {
			end = end || strings.IndexByte(",;:", s[b-1]) >= 0
			b--
		}
		if a < b {
			ts = append(ts, otok{w: asciiLower(s[a:b]), start: a, end: b, clauseEnd: end})
		} else if end && len(ts) > 0 { // a lone dash or comma
			ts[len(ts)-1].clauseEnd = true
		}
		if s[i:j] == "-" || s[i:j] == "—" || s[i:j] == "–" || s[i:j] == "--" {
			if len(ts) > 0 {
				ts[len(ts)-1].clauseEnd = true
				ts[len(ts)-1].dashAfter = true
			}
		}
		i = j
	}
	return ts
}

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// An offerMarker opens an offer. form: the form of the verb after it
// when that is not the base form: 'd' for a past tense ("would it help if
// I regenerated"), 'g' for a gerund ("proposed deleting"). opening: only at
// the start of a clause ("Happy to", "Going to"), where elsewhere it is not
// the agent's ("CI is going to be slow").
type offerMarker struct {
	words   []string
	form    byte
	opening bool
}

var offerMarkers = func() []offerMarker {
	var ms []offerMarker
	add := func(form byte, opening bool, phrases ...string) {
		for _, p := range phrases {
			ms = append(ms, offerMarker{strings.Fields(p), form, opening})
		}
	}
	add(0, false,
		// asked
		"shall i", "should i", "can i", "could i", "may i",
		"want me to", "you want me to", "do you want me to", "would you want me to",
		"would you like me to", "do you need me to", "would you prefer that i", "would you prefer i",
		"would you prefer me to", "how about i", "what if i", "do you mind if i", "would you mind if i",
		"mind if i", "is it ok if i", "is it okay if i", "is it alright if i", "is it fine if i",
		"asked whether to", "asked whether i should", "asked if i should", "asked whether it should",
		"asked if it should",
		// announced
		"i can", "i could", "i'll", "i will", "i shall", "i'm going to", "i am going to",
		"i'm gonna", "i am gonna", "let me", "let's", "let us",
		"i'd be happy to", "i'd be glad to", "i would be happy to", "i would be glad to",
		"i'm happy to", "i am happy to", "i'm glad to", "i am glad to",
		"i'd like to", "i would like to", "i want to", "i plan to", "i'm planning to",
		"i am planning to", "i intend to", "i'm about to", "i am about to", "i'm ready to",
		"i am ready to", "i propose to", "i offer to", "offered to", "i'm offering to", "offering to",
		"offers to", "proposed to", "proposes to",
		"i can go ahead and", "i'll go ahead and")
	add('d', false, "would it help if i", "would it be ok if i", "would it be okay if i")
	add('g', false, "proposed", "proposes", "i propose", "how about", "what about",
		"would you be ok with me", "would you be okay with me", "are you ok with me", "are you okay with me")
	add(0, true, "happy to", "glad to", "going to", "ready to", "gonna")
	// The longest marker first, so "would you like me to" wins over "i".
	slices.SortStableFunc(ms, func(a, b offerMarker) int { return len(b.words) - len(a.words) })
	return ms
}()

// clauseOpeners may stand between a clause mark and an offer ("Okay, then
// I'll ..."); subordinators before a marker make it no offer ("if I can",
// "what should I").
var (
	clauseOpeners = set("and", "so", "then", "but", "next", "now", "okay", "ok", "sure", "alright",
		"also", "well", "yes", "yeah", "great", "fine", "right", "first", "otherwise", "instead",
		"maybe", "perhaps", "or", "meanwhile")
	joiners       = set("and", "then", "so", "but", "or", "also", "next", "now", "plus")
	subordinators = set("if", "when", "whenever", "because", "since", "than", "as", "what", "which",
		"where", "how", "who", "whom", "why", "whether", "that", "unless", "until", "once", "after",
		"before", "though", "although", "while", "everything", "anything", "something", "all", "said",
		"thought", "hoped", "wish")
	// notActs follow a marker where it tells a state of mind, a
	// perception or a need, not an act.
	notActs = set("be", "need", "know", "admit", "bet", "guess", "think", "imagine", "assume", "say",
		"tell", "see", "understand", "hear", "not", "never", "only", "confirm", "reproduce", "find",
		"notice", "spot", "ask", "wonder", "recall", "remember", "agree", "expect", "believe", "hope",
		"feel", "get", "been")
	fillers   = set("also", "just", "quickly", "now", "first", "then", "actually", "simply", "maybe", "probably", "perhaps", "still", "certainly", "definitely", "gladly")
	trailers  = [][]string{{"for", "you", "now"}, {"for", "you"}, {"for", "now"}, {"right", "now"}, {"right", "away"}, {"as", "well"}, {"real", "quick"}, {"now"}, {"too"}, {"then"}}
	actCutter = set("but", "because", "since", "though", "unless", "although")
)

func set(ws ...string) map[string]bool {
	m := make(map[string]bool, len(ws))
	for _, w := range ws {
		m[w] = true
	}
	return m
}

// A found marker: the otok where it starts and the one where its action
// starts.
type found struct {
	at, act int
	m       offerMarker
}

// sentenceOffers returns the offers of one sentence, in order.
func sentenceOffers(s string) []string {
	ts := offerTokens(s)
	var fs []found
	for i := 0; i < len(ts); i++ {
		m, ok := markerAt(ts, i)
		if !ok || !markerStands(ts, i, m) {
			continue
		}
		act := i + len(m.words)
		fs = append(fs, found{i, act, m})
		i = act - 1
	}
	var out []string
	for k, f := range fs {
		end := len(ts)
		if k+1 < len(fs) {
			end = fs[k+1].at
			// "..., and I can also": the joining words belong to neither.
			for end > f.act && joiners[ts[end-1].w] {
				end--
			}
		}
		if a := offerAction(s, ts[f.act:end], f.m.form); a != "" {
			out = append(out, a)
		}
	}
	return out
}

func markerAt(ts []otok, i int) (offerMarker, bool) {
	for _, m := range offerMarkers {
		if i+len(m.words) > len(ts) {
			continue
		}
		match := true
		for k, w := range m.words {
			if ts[i+k].w != w || k < len(m.words)-1 && ts[i+k].clauseEnd {
				match = false
				break
			}
		}
		if match {
			return m, true
		}
	}
	return offerMarker{}, false
}

// markerStands reports whether the marker at ts[i] opens an offer: not in a
// subordinate clause, not where only a clause start counts, and with an
// act after it.
func markerStands(ts []otok, i int, m offerMarker) bool {
	if i > 0 && !ts[i-1].clauseEnd {
		prev := ts[i-1].w
		if subordinators[prev] || m.opening && !clauseOpeners[prev] {
			return false
		}
	}
	j := i + len(m.words)
	if ts[j-1].clauseEnd || j >= len(ts) {
		return false
	}
	j = skipFillers(ts, j)
	if j >= len(ts) {
		return false
	}
	w := ts[j].w
	if m.form == 'g' && (!strings.HasSuffix(w, "ing") || len(w) < 5) {
		return false
	}
	switch {
	case notActs[w] || strings.HasSuffix(w, "n't"):
		return false
	case w == "have":
		// "I'll have to reinstall", "I'll have a look"; not "I could
		// have broken".
		return j+1 < len(ts) && (ts[j+1].w == "to" || ts[j+1].w == "a" || ts[j+1].w == "another")
	}
	return true
}

func skipFillers(ts []otok, j int) int {
	for j < len(ts) {
		switch {
		case fillers[ts[j].w]:
			j++
		case ts[j].w == "go" && j+2 < len(ts) && ts[j+1].w == "ahead" && ts[j+2].w == "and":
			j += 3
		case ts[j].w == "have" && j+1 < len(ts) && ts[j+1].w == "to":
			j += 2
		default:
			return j
		}
	}
	return j
}

// offerAction cuts the action out of the tokens after a marker.
func offerAction(s string, ts []otok, form byte) string {
	ts = ts[skipFillers(ts, 0):]
	// Cut at an alternative or a reason: "..., or would you rather",
	// "... but it will take a while".
	for k := 1; k < len(ts); k++ {
		w := ts[k].w
		alt := w == "or" && k+1 < len(ts) && (asks[ts[k+1].w] || ts[k-1].clauseEnd)
		if alt || actCutter[w] || w == "if" && k+1 < len(ts) && conditions[ts[k+1].w] {
			ts = ts[:k]
			break
		}
		if ts[k-1].dashAfter {
			ts = ts[:k]
			break
		}
	}
	for {
		n := len(ts)
		for _, tr := range trailers {
			if len(ts) > len(tr) && endsWith(ts, tr) {
				ts = ts[:len(ts)-len(tr)]
				break
			}
		}
		if len(ts) == n {
			break
		}
	}
	if len(ts) == 0 || !isLetters(ts[0].w) {
		return ""
	}
	first := s[ts[0].start:ts[0].end]
	switch form {
	case 'd':
		first = pastToBase(ts[0].w)
	case 'g':
		first = gerundToBase(ts[0].w)
	}
	out := first + s[ts[0].end:ts[len(ts)-1].end]
	// Trailing marks that are not part of the words: ",", " -", an emoji.
	return strings.TrimRightFunc(out, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune(`)]"'`+"`", r)
	})
}

var (
	asks       = set("would", "do", "does", "should", "shall", "is", "are", "will", "can", "did", "leave", "keep", "not")
	conditions = set("you", "you'd", "you're", "you'll", "u", "we", "that", "that's", "it", "it's", "needed", "necessary", "possible", "helpful", "useful", "desired", "wanted", "ok", "okay", "fine")
)

func endsWith(ts []otok, ws []string) bool {
	for k, w := range ws {
		if ts[len(ts)-len(ws)+k].w != w {
			return false
		}
	}
	return true
}

// pastToBase turns a past tense back into a base verb, for "would it help
// if I regenerated the lock file": "regenerated" → "regenerate", "added" →
// "add", "dropped" → "drop", "tried" → "try", "ran" → "run". The rules are
// a heuristic, right for common verbs of software work.
func pastToBase(w string) string {
	if b, ok := irregularPast[w]; ok {
		return b
	}
	if !strings.HasSuffix(w, "ed") || len(w) < 5 {
		return w
	}
	return baseFromStem(w[:len(w)-2])
}

// gerundToBase turns a gerund into a base verb, for "proposed deleting
// the lock file": "deleting" → "delete", "running" → "run", "fixing" →
// "fix". Like pastToBase, a heuristic.
func gerundToBase(w string) string {
	if !strings.HasSuffix(w, "ing") || len(w) < 5 {
		return w
	}
	stem := w[:len(w)-3]
	if strings.HasSuffix(stem, "y") { // "trying", "copying"
		return stem
	}
	return baseFromStem(stem)
}

// baseFromStem restores the base verb from what is left when -ed or -ing
// is cut off: a doubled final consonant is undone and a silent e put back.
func baseFromStem(stem string) string {
	n := len(stem)
	if n < 2 {
		return stem
	}
	vowel := func(c byte) bool { return strings.IndexByte("aeiou", c) >= 0 }
	last, prev := stem[n-1], stem[n-2]
	switch {
	case last == 'i' && n > 2:
		return stem[:n-1] + "y"
	case last == prev && strings.IndexByte("bgmnprt", last) >= 0:
		return stem[:n-1]
	case last == 'e': // "freed"
		return stem
	case last == 'l' && strings.IndexByte("bcdfgkptz", prev) >= 0: // "disabled", "handling"
		return stem + "e"
	case strings.IndexByte("cgvz", last) >= 0 && !(last == 'g' && prev == 'n' && n > 5):
		return stem + "e"
	case !vowel(last) && vowel(prev) && (n < 3 || !vowel(stem[n-3])):
		switch {
		case last == 't' && (prev == 'i' || prev == 'o'), // edited, pivoted
			last == 'n' && prev == 'e', // opened
			last == 'r' && prev == 'e', // filtered
			last == 'l' && (prev == 'e' || prev == 'o'),
			last == 'p' || last == 'w' || last == 'x' || last == 'y' || last == 'h':
			return stem
		}
		return stem + "e"
	case last == 's' && prev != 's' && prev != 'u':
		return stem + "e" // parsed, reversed
	}
	return stem
}

var irregularPast = map[string]string{
	"ran": "run", "reran": "rerun", "wrote": "write", "rewrote": "rewrite", "made": "make", "did": "do",
	"took": "take", "gave": "give", "got": "get", "set": "set", "put": "put", "built": "build",
	"rebuilt": "rebuild", "kept": "keep", "left": "leave", "sent": "send", "split": "split",
	"threw": "throw", "began": "begin", "chose": "choose", "broke": "break", "brought": "bring",
	"bought": "buy", "undid": "undo", "redid": "redo", "read": "read", "cut": "cut", "shut": "shut",
	"spun": "spin", "hid": "hide", "fed": "feed", "shed": "shed", "reset": "reset", "upset": "upset",
	"stuck": "stick", "stripped": "strip",
}
