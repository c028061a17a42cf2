package textcheck

import (
	"strings"
	"unicode"
)

// CutOut says why a sentence the default writer built by cutting tool
// output does not read as a finished statement, "" when it does. It is
// stricter than Pasted, which holds every writer's sentence: a model or an
// agent writes a sentence, but the default writer joins a call, a piece of
// output and a cause, and a piece that lost its context reads as words
// without a statement. The node makes such a sentence a draft (SPEC §3:
// when the writer cannot say it in its own words), never publishes it.
//
// The rule; the message is the words after the last "fails with", "fails
// because", "fails:", "failed:", "returns", "could not" or "cannot" (a
// sentence without one has none):
//   - "an empty message": the message is one capitalised plain word
//     (letters only, no inner capital: "Error", "ERRORS", "The"); an
//     identifier (CondaError, E404, ENOSPC) or a lower-case word
//     ("timeout") stands as a message;
//   - "a message that opens on a function word": a message that is no
//     cause (not after "because") begins with a preposition or a
//     conjunction ("fails with during connect");
//   - "output markers": a word of symbols only outside a `code span`
//     ("(:)", "[]", "**", "+", "<", "[!]"; a dash, "&", "/", "=", ">",
//     "->" and "=>" are prose) or a CI workflow marker ("##[");
//   - "a placeholder read as a label": a redaction phrase followed by ":";
//   - "a cut-off end": the last word is a capitalised function word
//     ("The.", "A."), or a path with a backslash ("C:\Program." cut at its
//     space);
//   - "two sentences": a period, a space and a period-led name
//     ("amd64. .dockerignore"), or a period and a space before a word in
//     lower case or a path ("….sock. sites-enabled/shop still has …");
//   - "a placeholder where a name was": the phrase of a redacted name,
//     handle or id ("a private name", "a person", "an internal id");
//   - "a placeholder where the events named something": any other phrase
//     the redaction puts where raw data was ("an internal host", "a file
//     in the repository"): the writer carried raw data of the events,
//     which its own words would not name, and a reader of blind set b29e
//     found such sentences unreadable as often as not;
//   - "a clause left out": a colon or a semicolon before a conjunction
//     (": and openssl-sys needs both"), or a participle with no verb
//     after a semicolon ("; enabled at boot"), where a cut took a clause;
//   - "a message said twice": two equal parts between colons, a chain of
//     messages pasted whole;
//   - "an unclosed bracket": a parenthesis, bracket or brace that opens
//     and never closes outside code spans (a JSON log line);
//   - "an unclosed quote": a value quoted after "=" that no quote ends
//     ("err='accumulating resources from a file");
//   - "a label for output": the sentence opens with a lower-case past
//     verb and a colon ("printed: warning: ..."), or two words or more
//     with no verb before its first colon ("kubectl get pods: version
//     difference ...", a call glued to what it printed);
//   - a verb that reports ("printed", "says", "shows") as the last word
//     is "a cut-off end" too.
func CutOut(text string) string {
	text = strings.TrimSpace(text)
	body := strings.TrimRight(text, ".!? ")
	words := strings.Fields(body)
	if len(words) == 0 {
		return ""
	}
	if strings.Contains(text, "##[") {
		return "output markers"
	}
	for _, w := range strings.Fields(withoutCodeSpans(body)) {
		if symbolsOnly(w) {
			return "output markers"
		}
	}
	for _, p := range placeholderWords {
		if strings.Contains(text, p+":") {
			return "a placeholder read as a label"
		}
	}
	if strings.Contains(text, ". .") || lowerAfterStop(body) {
		return "two sentences"
	}
	for _, c := range []string{": and ", ": but ", ": or ", ": so ", "; and ", ", and;"} {
		if strings.Contains(body, c) {
			return "a clause left out" // "a fresh VM: and openssl-sys needs both"
		}
	}
	for _, cl := range strings.Split(body, "; ")[1:] {
		// "; enabled at boot": a participle with no subject or verb of
		// its own is what is left of a clause whose start went.
		if w := strings.Fields(cl); len(w) > 0 && w[0] == strings.ToLower(w[0]) && participle(w[0]) &&
			lexicon.get(w[0])&(cNoun|cDet|cSubject) == 0 && !hasVerb(w[1:]) {
			return "a clause left out"
		}
	}
	if seg := strings.Split(body, ": "); len(seg) >= 3 {
		for i := 1; i < len(seg); i++ {
			if strings.EqualFold(seg[i], seg[i-1]) && len(strings.Fields(seg[i])) >= 2 {
				return "a message said twice" // "failed to download bazel: failed to download bazel: ..."
			}
		}
	}
	for _, p := range nameholders {
		if containsWord(text, p) {
			return "a placeholder where a name was"
		}
	}
	for _, p := range placeholderWords {
		if containsWord(strings.ToLower(text), p) {
			return "a placeholder where the events named something"
		}
	}
	if unclosed(body) {
		return "an unclosed bracket"
	}
	if k := strings.Index(body, "='"); k >= 0 && !strings.Contains(body[k+2:], "'") {
		return "an unclosed quote"
	}
	if f := words[0]; strings.HasSuffix(f, ":") && lexicon.get(strings.TrimSuffix(f, ":"))&cPast != 0 && f == strings.ToLower(f) {
		return "a label for output" // "printed: warning: ..."
	}
	if k := strings.Index(body, ": "); k > 0 && !hasVerb(strings.Fields(body[:k])) && len(strings.Fields(body[:k])) >= 2 {
		return "a label for output" // "kubectl get pods: version difference ...", a call glued to what it printed
	}
	last := strings.Trim(words[len(words)-1], `"'`+"`()[]{},;:")
	if strings.Contains(last, `\`) {
		return "a cut-off end"
	}
	if l := strings.ToLower(last); last != l && lexicon.get(l)&(cDet|cPrep|cConj|cSubject|cObject) != 0 || objectVerbs[l] {
		return "a cut-off end"
	}
	msg, cause := messageOf(words)
	if len(msg) == 0 || len(msg) == len(words) {
		return ""
	}
	first := strings.ToLower(strings.Trim(msg[0], `"'`+"`("))
	if !cause && lexicon.get(first)&(cPrep|cConj) != 0 && lexicon.get(first)&(cNoun|cBase) == 0 {
		return "a message that opens on a function word"
	}
	if len(msg) == 1 && plainWord(strings.Trim(msg[0], `"'`+"`()[]{},;:")) {
		return "an empty message"
	}
	return ""
}

// lowerAfterStop: a full stop and a space go on in lower case, a second
// sentence that opens with a command or a path ("… the .sock. curl to the
// same URL works"), where one sentence was to be written; an abbreviation's
// stop ("e.g. npm", "etc. and") is none.
func lowerAfterStop(s string) bool {
	for i := 1; i+2 < len(s); i++ {
		if s[i] != '.' || s[i+1] != ' ' || !(unicode.IsLower(rune(s[i+2])) || s[i+2] == '/') {
			continue
		}
		k := strings.LastIndexAny(s[:i], " (") + 1
		switch strings.ToLower(strings.TrimLeft(s[k:i], "(")) {
		case "e.g", "i.e", "etc", "vs", "cf", "approx", "incl", "al", "resp", "ca", "no":
			continue
		}
		return true
	}
	return false
}

// VerbForm reports whether the lexicon knows w (any case, punctuation
// around it trimmed) as a verb that carries tense, a participle or an
// auxiliary ("fails", "showed", "taken", "is", "can't"): a writer that
// glues a call to what follows asks it whether what follows goes on as a
// predicate.
func VerbForm(w string) bool {
	return lexicon.get(strings.ToLower(strings.Trim(w, `"'`+"`(),;:.")))&(cFinite|cPart|cBe|cHave|cDo|cNeg) != 0
}

// participle: w is a past form or participle the lexicon lists, or a
// regular one of a verb it lists ("enabled" of "enable").
func participle(w string) bool {
	if lexicon.get(w)&(cPast|cPart) != 0 {
		return true
	}
	stem, ok := strings.CutSuffix(w, "ed")
	return ok && (lexicon.get(stem)&cBase != 0 || lexicon.get(stem+"e")&cBase != 0)
}

// hasVerb: one of words is a verb that carries tense or an auxiliary
// ("fails", "showed", "is", "can"), so they say something of their own.
func hasVerb(words []string) bool {
	for _, w := range words {
		if VerbForm(w) {
			return true
		}
	}
	return false
}

// unclosed: a bracket, brace or parenthesis opens and never closes,
// outside code spans ('{"level":"error","ts":...').
func unclosed(s string) bool {
	depth := map[rune]int{}
	for _, r := range withoutCodeSpans(s) {
		switch r {
		case '(', '[', '{':
			depth[r]++
		case ')':
			depth['(']--
		case ']':
			depth['[']--
		case '}':
			depth['{']--
		}
	}
	return depth['('] > 0 || depth['['] > 0 || depth['{'] > 0
}

// nameholders are the redaction phrases that stand for a name (rawdata.go's
// placeholders for names, handles and ids), which a sentence cut from
// output reads as words of its own ("its a private name for the deploy
// user"); a place's phrase ("a file in the repository") reads as one.
var nameholders = []string{"a private name", "a person", "an internal id", "a private conversation"}

// objectVerbs end no sentence: what they report is missing ("succeeded
// but printed.").
var objectVerbs = map[string]bool{"printed": true, "prints": true, "says": true, "said": true, "shows": true,
	"showed": true, "reports": true, "reported": true, "lists": true, "listed": true, "contains": true, "mentions": true,
	"exactly": true, "just": true, "even": true} // "for exactly.": an adverb that wanted what a cut took

// containsWord: p stands in s between non-letters.
func containsWord(s, p string) bool {
	for from := 0; ; {
		k := strings.Index(s[from:], p)
		if k < 0 {
			return false
		}
		at := from + k
		end := at + len(p)
		if (at == 0 || !unicode.IsLetter(rune(s[at-1]))) && (end == len(s) || !unicode.IsLetter(rune(s[end]))) {
			return true
		}
		from = at + 1
	}
}

// messageOf is the words after the last verb of failure, or all of them
// when there is none; cause says they follow "because".
func messageOf(words []string) (msg []string, cause bool) {
	at := -1
	for i, w := range words {
		lw := strings.ToLower(strings.TrimRight(w, ":"))
		switch {
		case (lw == "with" || lw == "because") && i > 0 && strings.ToLower(words[i-1]) == "fails":
			at, cause = i+1, lw == "because"
		case lw == "fails" && strings.HasSuffix(w, ":"), lw == "failed" && strings.HasSuffix(w, ":"), lw == "returns",
			(lw == "not" && i > 0 && strings.ToLower(words[i-1]) == "could") || lw == "cannot":
			at, cause = i+1, false
		}
	}
	if at < 0 {
		return words, false
	}
	return words[min(at, len(words)):], cause
}

// symbolsOnly: a word with no letter and no digit that prose does not use.
func symbolsOnly(w string) bool {
	switch w {
	case "-", "–", "—", "&", "/", "->", "=>", "…", "=", ">", ">=", "<=":
		return false
	}
	for _, r := range w {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// plainWord: a capitalised word of letters only, all of one case after the
// first ("Error", "ERRORS"), so no identifier (CondaError, E404, go_test).
func plainWord(w string) bool {
	rs := []rune(w)
	if len(rs) == 0 || !unicode.IsUpper(rs[0]) {
		return false
	}
	for _, r := range rs {
		if !unicode.IsLetter(r) {
			return false
		}
	}
	rest := string(rs[1:])
	if rest == strings.ToUpper(rest) && len(rs) > 1 {
		// ERRORS or a code: a code (ENOSPC, EACCES) is no English word.
		return lexicon.get(strings.ToLower(w))&cKnown != 0
	}
	return rest == strings.ToLower(rest)
}

// withoutCodeSpans is s with what stands between backticks left out.
func withoutCodeSpans(s string) string {
	var b strings.Builder
	in := false
	for _, r := range s {
		if r == '`' {
			in = !in
			b.WriteByte(' ')
			continue
		}
		if !in {
			b.WriteRune(r)
		}
	}
	return b.String()
}
