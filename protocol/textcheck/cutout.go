package textcheck

import (
	"regexp"
	"slices"
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
//     (letters only, no inner capital: "Error", "ERRORS", "The"), a
//     generic lower-case one ("error"), a name the lexicon does not know
//     with nothing said of it ("rbenv"), or "invalid" and a noun
//     ("invalid option"); an identifier (CondaError, E404, ENOSPC) or a
//     lower-case word ("timeout") stands as a message; a message in
//     square brackets ("[command timed out after 600s]") is "output
//     markers";
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
//     (": and openssl-sys needs both"), "to" before one ("wanted the
//     agent to or just call …"), a sentence that opens on one or on
//     "So", "Because" or "Which" ("But df shows …"), or a participle with no verb after a semicolon (";
//     enabled at boot"), where a cut took a clause;
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
//   - a verb that reports ("printed", "says", "shows") or a negated
//     auxiliary ("doesn't") as the last word is "a cut-off end" too;
//   - "a failure with no message": a short sentence (eight words or
//     fewer, no comma) ends on "fails" or "failed" ("kubectl get pods
//     fails."), which says nothing of what went wrong;
//   - "no statement": fewer than three words, or no word the lexicon
//     knows as a verb ("x86_64."), or a noun and a clause of the agent
//     about it ("A `next dev` the agent launched and never stopped.");
//   - "a cut-off end" also for a quantifier and a participle at the end
//     ("which tagged every extracted."), and where a short value is cut
//     at its colon after
//     a determiner ("only has the h1: this runner is linux_amd64");
//   - "a new sentence glued on": after a semicolon or "because", any
//     capitalised word the lexicon knows in lower case and not as a name
//     ("; Perhaps", "because Branch protection"); after a semicolon, a
//     comma, "because",
//     "with", "and" or "but", a capitalised word that is a common word of the lexicon
//     ("; Since 15 …", ", Added …", "because Test suite failed"), or an
//     upper-case word and a colon or a second upper-case word ("because
//     UPGRADE FAILED: …", "with FAILED;", "with ERROR 1698: …"), or a
//     capitalised label and a
//     colon ("with Reason: OOMKilled");
//   - "two sentences" also when a full stop and a space go on with a
//     capital or a code span ("… is invisible. `git mv` records it");
//   - "a chain of messages": two colons or more outside code spans and
//     double quotes ("unable to connect: getting credentials: exec: …");
//   - "someone's own words": a first person outside quotes and code
//     spans ("because I've got a rebase open", "after my last fetch"):
//     the words of whoever reported it, not a sentence about them;
//   - "no subject": the sentence, or a clause after a semicolon, opens
//     with a capitalised past form ("Killed that PID; …", "Ran …"), an
//     agent's log of what it did;
//   - "an aside that orders": "(or " and a verb ("(or drop that check)");
//   - "a remedy, not what happened": the sentence says what fixes it
//     ("pinning markupsafe<2.1 fixes it"), advice a lesson does not give;
//   - "output markers" also for a terminal's key mark ("^C"), "a viewer's
//     output read as its failure" for "tail fails with …" (tail, cat,
//     head, less, journalctl), and "a clause left out" for a clause after
//     "instead of" ("instead of login completes");
//   - "a dangling reference": a subject, a verb and "it" or "them" open
//     the sentence ("composer raises it to 1.5G"), what they stand for
//     left in a clause the writer did not take;
//   - "a person's words spliced": a sentence about the person or the
//     agent's offer that goes on after a dash ("wanted the agent to
//     revert that — the SDK only ships 1.70"), holds "the agent've", or
//     whose "objected to the agent" is not followed by a gerund or
//     "wanted the agent to" by a verb ("wanted the agent to yeah don't":
//     an interjection, a pronoun or a function word is none), or by a
//     verb and a participle ("to quote the pattern and seen the list");
//   - "no statement" also for an aside alone, in parentheses, and
//     "output markers" for a line of JSON ('"name": "x"') or a table's
//     header (four capitalised words or more, none a function word).
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
	if strings.Contains(text, ". .") || lowerAfterStop(body) || upperAfterStop(body) {
		return "two sentences"
	}

	if f := strings.TrimRight(words[0], ","); f == "But" || f == "And" || f == "Or" || f == "Nor" || f == "So" || f == "Because" || f == "Which" {
		return "a clause left out" // "But df shows 40% free, so …": what it answers is not there
	}
	for _, c := range []string{": and ", ": but ", ": or ", ": so ", "; and ", ", and;", " to or ", " to and ", " to but "} {
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
	if len(words) > 2 {
		// "which tagged every extracted.": a quantifier and a participle,
		// the noun they went with cut off.
		if q := strings.ToLower(words[len(words)-2]); quantifiers[q] && participle(strings.ToLower(last)) {
			return "a cut-off end"
		}
	}
	if l := strings.ToLower(last); last != l && lexicon.get(l)&(cDet|cPrep|cConj|cSubject|cObject) != 0 || objectVerbs[l] || danglingAux[l] {
		return "a cut-off end"
	}
	if why := unfinished(body, words); why != "" {
		return why
	}
	msg, cause := messageOf(words)
	if len(msg) == 0 || len(msg) == len(words) {
		return ""
	}
	first := strings.ToLower(strings.Trim(msg[0], `"'`+"`("))
	if !cause && lexicon.get(first)&(cPrep|cConj) != 0 && lexicon.get(first)&(cNoun|cBase) == 0 {
		return "a message that opens on a function word"
	}
	if len(msg) == 1 && plainWord(strings.Trim(msg[0], `"'`+"`()[]{},;:")) || emptyMessage(msg) {
		return "an empty message"
	}
	if m := strings.Join(msg, " "); strings.HasPrefix(m, "[") && strings.HasSuffix(m, "]") {
		return "output markers" // "fails with [command timed out after 600s]"
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

// BaseVerb reports whether the lexicon knows w, in lower case, as the base
// form of a verb ("squash", "use"): a writer that tells a person's "we
// squash" as "the team squashes" asks it.
func BaseVerb(w string) bool { return lexicon.get(w)&cBase != 0 }

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

// viewers are commands that show what another program wrote: their output
// is not their failure.
var viewers = set("tail", "cat", "head", "less", "more", "journalctl", "bat")

// quantifiers want a noun after them.
var quantifiers = set("every", "each", "all", "any", "some", "no", "the", "a", "an", "its", "their", "several", "many")

// danglingAux end a sentence whose verb a cut took ("GNU sed syntax
// doesn't.").
var danglingAux = set("doesn't", "don't", "didn't", "isn't", "aren't", "wasn't", "weren't", "hasn't", "haven't")

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

// withoutCodeSpans is s with what stands between backticks left out, a
// space where each backtick was.
func withoutCodeSpans(s string) string { return withoutBetween(s, '`', " ") }

// withoutBetween is s with what stands between marks left out, each mark
// replaced by gap.
func withoutBetween(s string, mark rune, gap string) string {
	var b strings.Builder
	in := false
	for _, r := range s {
		if r == mark {
			in = !in
			b.WriteString(gap)
			continue
		}
		if !in {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// emptyMessage: a message of a generic word ("error", "failure"), of a
// name with nothing said of it ("rbenv"), or of "invalid" and a noun
// ("invalid option"), which says something is wrong and not what.
func emptyMessage(msg []string) bool {
	ws := make([]string, len(msg))
	for i, m := range msg {
		ws[i] = strings.Trim(m, `"'`+"`()[]{},;:.")
		if !isLetters(ws[i]) || ws[i] != strings.ToLower(ws[i]) {
			return false
		}
	}
	switch len(ws) {
	case 1:
		return genericFailure[ws[0]] || lexicon.get(ws[0])&cKnown == 0 && !failureNouns[ws[0]]
	case 2:
		return vagueAdjective[ws[0]] && lexicon.get(ws[1])&cNoun != 0
	}
	return false
}

var (
	genericFailure = set("error", "errors", "failure", "failed", "exception", "fatal", "abort", "aborted", "problem", "issue")
	failureNouns   = set("timeout", "timeouts", "segfault", "deadlock", "eof", "oom", "overflow", "underflow", "sigsegv", "sigkill",
		"sigterm", "sigbus", "oomkilled", "throttling", "backpressure")
	vagueAdjective = set("invalid", "unknown", "bad", "illegal", "unrecognized", "unrecognised", "unsupported", "unexpected")
)

// upperAfterStop: a full stop and a space go on with a capital or a code
// span, a second sentence; an abbreviation's stop ("e.g. The") is none.
func upperAfterStop(s string) bool {
	for i := 1; i+2 < len(s); i++ {
		if s[i] != '.' || s[i+1] != ' ' || !('A' <= s[i+2] && s[i+2] <= 'Z' || s[i+2] == '`') {
			continue
		}
		if c := s[i-1]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == ')' || c == '`' || c == '\'' || c == '"') {
			continue
		}
		k := strings.LastIndexAny(s[:i], " (") + 1
		switch strings.ToLower(strings.TrimLeft(s[k:i], "(")) {
		case "e.g", "i.e", "etc", "vs", "cf", "approx", "incl", "al", "resp", "ca", "no", "mr", "ms", "dr", "st":
			continue
		}
		return true
	}
	return false
}

// unfinished holds the rules of CutOut for sentences a writer stitched
// rather than cut: body is the sentence without its final stop, words
// its words.
func unfinished(body string, words []string) string {
	last := strings.ToLower(words[len(words)-1])
	if (last == "fails" || last == "failed") && !strings.ContainsAny(body, ":;,") && len(words) <= 8 &&
		!slices.ContainsFunc(words, func(w string) bool { w = strings.ToLower(w); return w == "with" || w == "because" || w == "when" }) {
		return "a failure with no message"
	}
	if (words[0] == "A" || words[0] == "An") && strings.Contains(body, " the agent ") {
		// "A `next dev` the agent launched and never stopped": a noun and
		// a clause about it, no statement.
		k := strings.Index(body, " the agent ")
		present := slices.ContainsFunc(strings.Fields(body[k+len(" the agent "):]), func(w string) bool {
			c := lexicon.get(strings.ToLower(strings.Trim(w, `"'(),;:`)))
			return c&(cZ|cModal) != 0 || c&(cBe|cHave|cDo) != 0 && c&cPast == 0
		})
		if !hasVerb(strings.Fields(body[:k])) && !present && !strings.ContainsAny(body, ";,") {
			return "no statement"
		}
	}
	for i := 1; i+1 < len(words); i++ {
		if w := words[i]; strings.HasSuffix(w, ":") && len(w) <= 4 && lexicon.get(strings.ToLower(words[i-1]))&cDet != 0 {
			return "a cut-off end" // "only has the h1: this runner …": a value cut at its colon
		}
	}
	if len(words) < 3 || !hasVerb(words) && !slices.ContainsFunc(words, anyVerb) {
		return "no statement" // "x86_64.": a piece of output, no sentence
	}
	plain := withoutCodeSpans(body)
	if strings.Count(withoutDoubleQuotes(plain), ": ") >= 2 {
		return "a chain of messages"
	}
	if strings.Contains(body, " the agent've") || strings.Contains(body, " the agent'm") || strings.Contains(body, " the agent're") ||
		(strings.HasPrefix(body, "The person ") || strings.HasPrefix(body, "The agent offered ")) && strings.Contains(body, " — ") {
		return "a person's words spliced"
	}
	if spliced(body) {
		return "a person's words spliced"
	}
	for _, fix := range []string{" fixes it", " fixed it", " solves it", " solved it", " is the fix", " was the fix", " would fix", " fixes this", " fixed this"} {
		if containsWord(body, strings.TrimSpace(fix)) {
			return "a remedy, not what happened" // "…; pinning markupsafe<2.1 or moving to Jinja2 3.x fixes it"
		}
	}
	if strings.HasPrefix(body, "(") && strings.HasSuffix(body, ")") {
		return "no statement" // "(exported by an .envrc in the parent directory)": an aside alone
	}
	if jsonField.MatchString(body) {
		return "output markers" // `"name": "Contoso Finance Prod"`: a line of JSON
	}
	if tableHeader(words) {
		return "output markers" // "State Recv-Q Send-Q Local Address:Port ...": a table's header
	}
	for _, w := range words {
		if len(w) >= 2 && w[0] == '^' && 'A' <= w[1] && w[1] <= 'Z' && (len(w) == 2 || !unicode.IsLetter(rune(w[2]))) {
			return "output markers" // "^C": a terminal's mark of a key pressed
		}
	}
	if viewers[words[0]] && slices.Contains(words[1:min(len(words), 8)], "fails") {
		return "a viewer's output read as its failure" // "tail fails with node: command not found"
	}
	if k := strings.Index(body, " instead of "); k >= 0 {
		// "returns ^C instead of login completes": a clause where the
		// phrase wanted a noun or a gerund.
		if after := strings.Fields(body[k+len(" instead of "):]); len(after) >= 2 && lexicon.get(strings.ToLower(after[1]))&cZ != 0 &&
			lexicon.get(strings.ToLower(after[0]))&(cDet|cPrep) == 0 && !strings.HasSuffix(after[0], "ing") {
			return "a clause left out"
		}
	}
	if len(words) > 3 && (words[2] == "it" || words[2] == "them") && lexicon.get(strings.ToLower(words[1]))&(cZ|cPast) != 0 {
		return "a dangling reference" // "composer raises it to 1.5G": what "it" is went with a clause before
	}
	ws := strings.Fields(plain)
	for i, w := range ws {
		bare := strings.Trim(w, `"'()[]{},;:.!?`)
		if k := strings.IndexAny(bare, "'\u2019"); k > 0 {
			bare = bare[:k]
		}
		if firstPerson[bare] && !insideQuote(plain, w, i, ws) {
			return "someone's own words"
		}
		if i == 0 || strings.HasSuffix(ws[i-1], ";") {
			if i+1 < len(ws) && pastOpener(bare, ws[i+1]) {
				return "no subject"
			}
		}
		if i == 0 {
			continue
		}
		prev := ws[i-1]
		lp := strings.ToLower(prev)
		if w == "(or" && i+1 < len(ws) && lexicon.get(strings.ToLower(ws[i+1]))&cBase != 0 {
			return "an aside that orders"
		}
		if !(strings.HasSuffix(prev, ";") || strings.HasSuffix(prev, ",") || lp == "because" || lp == "with" || lp == "and" || lp == "but") {
			if strings.HasSuffix(w, ":") && !strings.ContainsAny(w[:1], `"'`) && labelWord(bare) && prev == lp && i+1 < len(ws) {
				return "a label for output" // "the tags show Platform: linux/amd64"
			}
			continue
		}
		if gluedSentence(bare, w, ws[i+1:]) || (strings.HasSuffix(prev, ";") || lp == "because") && commonCapital(bare) {
			return "a new sentence glued on"
		}
	}
	if w := strings.Fields(strings.ToLower(plain)); len(w) > 0 && w[0] == "(or" {
		return "an aside that orders"
	}
	return ""
}

// spliced: the writer's frame of a correction goes on with words that do
// not fit it: "objected to the agent" takes a gerund ("the agent thing
// migration" does not), "wanted the agent to" a verb ("to yeah don't").
func spliced(body string) bool {
	for _, frame := range []string{"objected to the agent ", "wanted the agent to "} {
		for rest := body; ; {
			k := strings.Index(rest, frame)
			if k < 0 {
				break
			}
			rest = rest[k+len(frame):]
			next := strings.ToLower(strings.Trim(firstWord(rest), `"'(),;:.`))
			c := lexicon.get(next)
			notVerb := c&(cInterjection|cDet|cSubject|cObject|cPrep|cConj|cModal) != 0 && c&cBase == 0
			if frame[0] == 'o' && !gerundOfVerb(next) || frame[0] == 'w' && notVerb {
				return true
			}
			// "wanted the agent to quote the pattern and seen the list": the
			// second verb is no bare verb.
			if frame[0] == 'w' {
				clause := rest
				if k := strings.IndexAny(clause, ",;"); k >= 0 {
					clause = clause[:k]
				}
				if k := strings.Index(clause, " and "); k >= 0 {
					v := strings.ToLower(firstWord(clause[k+len(" and "):]))
					if c := lexicon.get(v); c&(cPart|cPast) != 0 && c&cBase == 0 {
						return true
					}
				}
			}
		}
	}
	return false
}

// anyVerb: w may be a verb in some form: one the lexicon lists, a
// participle of one, or an -s form of one it lists ("caches").
func anyVerb(w string) bool {
	w = strings.ToLower(strings.Trim(w, `"'(),;:.`))
	if lexicon.get(w)&(cBase|cZ) != 0 || participle(w) {
		return true
	}
	return strings.HasSuffix(w, "s") && slices.ContainsFunc(baseForms(w), func(b string) bool { return lexicon.get(b)&cBase != 0 })
}

// jsonField: a text that opens as a JSON object's member does.
var jsonField = regexp.MustCompile(`^\{?\s*"[^"]{1,80}"\s*:`)

// tableHeader: four words or more, every one capitalised or upper case
// and none a function word, the column names of a table.
func tableHeader(words []string) bool {
	if len(words) < 4 {
		return false
	}
	for _, w := range words {
		w = strings.Trim(w, `"'(),;.`)
		if w == "" || !('A' <= w[0] && w[0] <= 'Z') || lexicon.get(strings.ToLower(w))&(cDet|cPrep|cConj|cSub|cBe|cHave|cModal) != 0 {
			return false
		}
	}
	return true
}

// gerundOfVerb: w is the -ing form of a verb the lexicon lists
// ("pushing", "force-pushing"; not "thing").
func gerundOfVerb(w string) bool {
	w = w[strings.LastIndexByte(w, '-')+1:]
	if !strings.HasSuffix(w, "ing") {
		return false
	}
	if lexicon.get(w)&cGer != 0 {
		return true
	}
	return slices.ContainsFunc(baseForms(w), func(b string) bool { return lexicon.get(b)&cBase != 0 })
}

// firstPerson are the words of someone speaking of themselves.
var firstPerson = set("I", "me", "my", "mine", "we", "We", "us", "our", "Our", "ours", "My")

// insideQuote: the word ws[i], w, stands between single quotes, a
// message quoted whole ('I/O error').
func insideQuote(plain, w string, i int, ws []string) bool {
	open := 0
	for _, x := range ws[:i] {
		if strings.HasPrefix(x, "'") {
			open++
		}
		if strings.HasSuffix(strings.TrimRight(x, ",;:."), "'") && len(x) > 1 {
			open--
		}
	}
	return open > 0 || strings.HasPrefix(w, "'")
}

// pastOpener: w, capitalised, is a past form the lexicon lists that is
// no noun, name or present form ("Killed that PID", "Ran `make`"), and,
// where it may be an adjective, next is an object ("Deleted the cache",
// not "Rebuilt images are larger").
func pastOpener(w, next string) bool {
	if w == "" || !('A' <= w[0] && w[0] <= 'Z') || strings.ToUpper(w) == w {
		return false
	}
	c := lexicon.get(strings.ToLower(w))
	if !participle(strings.ToLower(w)) || c&(cNoun|cDet|cProper|cBase|cPrep) != 0 {
		return false
	}
	n := lexicon.get(strings.ToLower(strings.Trim(next, `"'(),;:`)))
	return c&cAdj == 0 || strings.HasPrefix(next, "`") || n&(cDet|cObject) != 0 && n&cRel == 0
}

// gluedSentence: w (bare without its punctuation), after a joint, opens a
// sentence of its own: a capitalised common word, an upper-case word of
// a pasted message, or a label.
func gluedSentence(bare, w string, rest []string) bool {
	if len(bare) < 2 || !('A' <= bare[0] && bare[0] <= 'Z') {
		return false
	}
	low := strings.ToLower(bare)
	c := lexicon.get(low)
	if strings.ToUpper(bare) == bare {
		if len(bare) < 4 || c&cKnown == 0 {
			return false // ENOSPC, HTTP, JSON
		}
		return strings.HasSuffix(w, ":") || strings.HasSuffix(w, ";") ||
			len(rest) > 0 && strings.ToUpper(rest[0]) == rest[0] && (strings.ContainsAny(rest[0], "ABCDEFGHIJKLMNOPQRSTUVWXYZ") ||
				strings.HasSuffix(rest[0], ":")) // "UPGRADE FAILED", "ERROR 1698:"
	}
	if strings.HasSuffix(w, ":") && c&cKnown != 0 {
		return true // "with Reason: OOMKilled"
	}
	if bare[1:] != strings.ToLower(bare[1:]) || c&cProper != 0 {
		return false // "GitHub", "Linux"
	}
	return c&(cDet|cPrep|cConj|cSub|cRel|cSubject|cPast|cInterjection) != 0 || c&cBase != 0 && c&cNoun != 0 || isNumberWord(low)
}

// labelWord: w is a capitalised word of letters that names no one
// ("Platform", "Status"), as a field's label is.
func labelWord(w string) bool {
	return len(w) > 2 && 'A' <= w[0] && w[0] <= 'Z' && isLetters(w) && w[1:] == strings.ToLower(w[1:]) && lexicon.get(strings.ToLower(w))&cProper == 0
}

// commonCapital: w is a capitalised word the lexicon knows in lower case
// and not as a name ("Perhaps", "Branch", "Renaming"): after a semicolon or
// "because" it opens a sentence of its own.
func commonCapital(w string) bool {
	if len(w) < 2 || !('A' <= w[0] && w[0] <= 'Z') || w[1:] != strings.ToLower(w[1:]) {
		return false
	}
	c := lexicon.get(strings.ToLower(w))
	return c&cKnown != 0 && c&cProper == 0 || gerundOfVerb(strings.ToLower(w))
}

var numberWords = set("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "twelve", "twenty")

func isNumberWord(w string) bool { return numberWords[w] }

// withoutDoubleQuotes is s with what stands between double quotes left out.
func withoutDoubleQuotes(s string) string { return withoutBetween(s, '"', "") }
