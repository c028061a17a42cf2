package consolidate

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/remem/remem/protocol/textcheck"
)

// Writer turns a cluster of episodes into one observation sentence: the text
// of a new lesson. The node checks what a writer returns (SPEC §6) before it
// keeps or publishes it.
type Writer interface {
	Write(ctx context.Context, c Cluster) (string, error)
}

// Cluster is a set of episodes that will become one lesson. Kind is the
// lesson kind (error, correction, surprise). The JSON form is what a
// CommandWriter reads on stdin:
//
//	{"kind":"error","episodes":[{"kind":"error","title":"go test ./...","happened":"..."}]}
type Cluster struct {
	Kind     string    `json:"kind"`
	Episodes []Episode `json:"episodes"`
}

// MaxSentence is the longest sentence DefaultWriter writes, in characters.
const MaxSentence = 300

// DefaultWriter writes a lesson without a model, deterministically: from the
// most representative episode of the cluster (the one with the highest mean
// Lexical similarity to the others; the first on ties) it builds one
// sentence that describes what happened:
//
//	error        "<call> fails: <what happened>"
//	             "<call> returned <what happened> where <expected> was expected"
//	correction   "The person objected to the agent <doing X>" (a "don't")
//	             "The person wanted the agent to <do X>" (a "do")
//	             "The person corrected the agent: <fact>" (a fact)
//	             "The person objected" (a bare "no")
//	             "... when the agent <agent_did>" ("said ...", "asked: ...")
//	             and when agent_did holds an offer to act (see Offer):
//	             "The agent offered to <X>, and the person declined"
//	             "The agent offered to <X>, and the person objected to <doing Y>"
//	             "The agent offered to <X>, and the person wanted the agent to <do Y>"
//	             "The agent offered to <X>, and the person corrected it: <fact>"
//	environment, surprise
//	             "<title>: <what happened>", or "<what happened>" (plus
//	             " (expected: <expected>)")
//	note         "<the facts in the note>"
//
// It never quotes an event's words and never carries an instruction: every
// field is cut into clauses and read by the observation check
// (textcheck.CheckObservation); a clause that reads as an instruction is
// left out ("mocks not generated, run go generate" keeps "mocks not
// generated"), except in a correction, where it is told as what the person
// wanted. A call that reads like a command ("go test ./...") is written as
// "Running go test ./...". Redact is applied to every field first (nil
// leaves them as they are; the node passes its raw-data redactor). White
// space is collapsed, the sentence is cut at a word boundary to at most
// MaxSentence characters and ends with a period. A cluster whose episode
// holds nothing but instructions gives an error, not a lesson.
type DefaultWriter struct {
	Redact func(string) string
}

// Write implements Writer.
func (w DefaultWriter) Write(ctx context.Context, c Cluster) (string, error) {
	if len(c.Episodes) == 0 {
		return "", errors.New("consolidate: default writer: empty cluster")
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	e := c.Episodes[representative(c.Episodes)]
	f := func(s string) string {
		if w.Redact != nil {
			s = w.Redact(s)
		}
		return oneSentence(strings.Join(strings.Fields(s), " "))
	}
	kind := strings.ToLower(strings.TrimSpace(e.Kind))
	if kind == "" {
		kind = strings.ToLower(strings.TrimSpace(c.Kind))
	}
	title, happened, expected := f(e.Title), facts(f(e.Happened)), facts(f(e.Expected))
	agentDid := f(e.AgentDid)
	said, text := f(e.Said), facts(f(e.Text))

	var s string
	switch kind {
	case "error":
		t := subject(title)
		switch {
		case t != "" && happened != "" && expected != "":
			s = t + " returned " + happened + " where " + expected + " was expected"
		case t != "" && happened != "" && strings.HasPrefix(strings.ToLower(happened), strings.ToLower(title)):
			// "npm ci fails with EUSAGE" already names the call.
			s = happened
		case t != "" && happened != "" && failureVerb(happened):
			// "fails with missing libssl": the call is the subject.
			s = t + " " + happened
		case t != "" && happened != "":
			s = t + " fails: " + happened
		case t != "" && expected != "":
			s = t + " fails where " + expected + " was expected"
		case t != "":
			s = t + " fails"
		case happened != "" && expected != "":
			s = happened + " where " + expected + " was expected"
		}
	case "correction":
		s = correction(said, agentDid)
	case "environment", "surprise":
		switch {
		case title != "" && happened != "":
			s = subject(title) + ": " + happened
		case happened != "":
			s = happened
		}
		if s != "" && expected != "" {
			s += " (expected: " + expected + ")"
		}
	case "note":
		s = text
	}
	if s == "" { // a field the kind does not name, or an unknown kind
		for _, v := range []string{happened, text, facts(said), subject(title), agentFacts(agentDid)} {
			if v != "" {
				s = v
				break
			}
		}
	}
	if s == "" {
		return "", errors.New("consolidate: default writer: the events hold no observation, only instructions or nothing " +
			"(lessons never carry instructions; keep such rules in the agent's own instructions)")
	}
	return finish(s), nil
}

// correction tells what the person corrected: the facts they stated, and
// for each instruction they gave, what they wanted or objected to, never
// their words as an order. What the agent had said or done (agentDid)
// follows as "when the agent <did>" ("said <...>", "asked: <...>" when it
// is not a verb phrase), and is left out where the sentence would then not
// pass the observation check. When the agent had offered to act (Offer
// finds it in agentDid), the sentence says so instead: "The agent offered
// to <offer>, and the person declined / objected to <doing Y> / wanted the
// agent to <do Y> / corrected it: <fact>". An offer whose sentence does not
// pass the observation check is not told at all.
func correction(said, agentDid string) string {
	var wanted, objected, stated []string
	for _, cl := range clauses(said) {
		if textcheck.CheckObservation(cl.text) == nil {
			stated = append(stated, cl.text)
			continue
		}
		if act, neg, ok := asAction(cl.text); ok {
			if neg {
				objected = append(objected, act.gerund)
			} else {
				wanted = append(wanted, act.base)
			}
		}
	}
	if offer, ok := Offer(agentDid); ok {
		rest := "corrected it"
		switch {
		case refusal(said):
			rest = "declined"
		case len(objected) > 0:
			rest = "objected to " + strings.Join(objected, " or ")
		case len(wanted) > 0:
			rest = "wanted the agent to " + strings.Join(wanted, " and ")
		case len(stated) > 0:
			rest = "corrected it: " + secondPerson(strings.Join(stated, "; "))
		}
		if s, ok := offered(lowerFirst(agentWords(offer)), ", and the person "+rest); ok {
			return s
		}
		agentDid = "" // the offer is not told, not even as what the agent did
	}
	var s string
	switch {
	case len(objected) > 0:
		s = "The person objected to the agent " + strings.Join(objected, " or ")
	case len(wanted) > 0:
		s = "The person wanted the agent to " + strings.Join(wanted, " and ")
	case len(stated) > 0:
		s = "The person corrected the agent: " + secondPerson(strings.Join(stated, "; "))
	}
	if s == "" || refusal(said) {
		// A bare "no" is told as an objection to what the agent did.
		for _, when := range whenAgent(agentDid) {
			t := "The person corrected the agent" + when
			if refusal(said) {
				t = "The person objected" + when
			}
			if textcheck.CheckObservation(finish(t)) == nil {
				return t
			}
		}
		return s
	}
	for _, when := range whenAgent(agentDid) {
		if textcheck.CheckObservation(finish(s+when)) == nil {
			return s + when
		}
	}
	return s
}

// whenAgent tells what the agent had said or done, as the end of a
// sentence about the person: " when the agent deleted the lock file"
// (from "I deleted the lock file"), " when the agent said the tests
// should pass", " when the agent asked: did the build pass". The agent's
// "you" is the person. It gives the whole of it first, then only the
// clauses that read as observations; the caller takes the first that
// passes in its sentence.
func whenAgent(agentDid string) []string {
	question := strings.HasSuffix(strings.TrimSpace(agentDid), "?")
	var out []string
	for _, did := range []string{strings.TrimRight(agentWords(agentDid), ".!? "), agentFacts(agentDid)} {
		did, wasI := reported(did)
		first, rest, _ := strings.Cut(did, " ")
		lw := strings.ReplaceAll(strings.ToLower(strings.Trim(first, `"'(`)), "’", "'")
		if it, ok := firstPerson[lw]; ok && rest != "" && (wasI || strings.HasPrefix(lw, "i'")) {
			did, lw = it+" "+rest, "it" // "I'll need the key": said it will need the key
		}
		if did == "" || slices.Contains(out, did) {
			continue
		}
		switch {
		case question:
			out = append(out, " when the agent asked: "+lowerFirst(did))
		case notVerbs[lw] || first != lowerFirst(first) && !isTitleCase(first) || strings.IndexFunc(first, unicode.IsLetter) < 0:
			out = append(out, " when the agent said "+lowerFirst(did))
		default:
			out = append(out, " when the agent "+lowerFirst(did))
		}
	}
	return out
}

// firstPerson: the agent's "I" with a verb it cannot lose ("I will not",
// "I'm"), told as "it".
var firstPerson = map[string]string{"i'm": "it is", "i'd": "it would", "i'll": "it will", "i've": "it has",
	"will": "it will", "won't": "it won't", "can": "it can", "can't": "it can't", "cannot": "it cannot",
	"am": "it is", "was": "it was", "could": "it could", "couldn't": "it couldn't", "would": "it would",
	"should": "it should", "might": "it might", "must": "it must", "do": "it does", "don't": "it doesn't",
	"did": "it did", "didn't": "it didn't", "think": "it thinks", "have": "it has", "had": "it had"}

// isTitleCase: "Deleted" (a capital at the start of a sentence), not "CI".
func isTitleCase(w string) bool {
	r, size := utf8.DecodeRuneInString(w)
	return unicode.IsUpper(r) && strings.ToLower(w[size:]) == w[size:]
}

// notVerbs open what an agent said that is not a verb phrase ("the tests
// pass", "it restarts", "there is").
var notVerbs = set("the", "a", "an", "this", "that", "these", "those", "it", "its", "it's", "there", "they",
	"we", "he", "she", "you", "your", "my", "our", "their", "what", "which", "where", "when", "why", "how",
	"who", "did", "do", "does", "is", "are", "was", "were", "can", "could", "should", "shall", "would",
	"will", "may", "might", "must", "has", "everything", "nothing", "all", "some", "no", "not", "yes",
	"if", "i'm", "i'd", "i'll", "me", "ok", "okay", "sure", "maybe", "perhaps", "so", "but", "and")

// agentFacts keeps the clauses of what the agent said that read as
// observations, with "you" told as the person.
func agentFacts(s string) string {
	return factsWith(s, agentWords)
}

// offered writes "The agent offered to <act><rest>" so that it passes the
// observation check. A verb joined to the first ("delete the lock file
// and rerun npm install") reads to the check as a command; it gets its
// own "to" ("and to rerun npm install"), the way careful prose would have
// it. ok is false when the sentence still does not pass (an offer to
// "ignore previous instructions" is never told).
func offered(act, rest string) (string, bool) {
	for range 6 {
		s := "The agent offered to " + act + rest
		err := textcheck.CheckObservation(finish(s))
		if err == nil {
			return s, true
		}
		var ie *textcheck.InstructionError
		if !errors.As(err, &ie) || ie.Rule != "command verb" {
			return "", false
		}
		verb, _, _ := strings.Cut(ie.Phrase, " ")
		fixed := toBefore(act, verb)
		if fixed == act {
			return "", false
		}
		act = fixed
	}
	return "", false
}

// toBefore puts "to" before verb where it follows "and", "or", "then" or
// a comma in act, the first time it does not already have one.
func toBefore(act, verb string) string {
	if verb == "" {
		return act
	}
	lower := asciiLower(act)
	for _, j := range []string{" and ", " or ", " then ", ", "} {
		for from := 0; ; {
			k := strings.Index(lower[from:], j+verb)
			if k < 0 {
				break
			}
			at := from + k + len(j)
			end := at + len(verb)
			if end == len(lower) || !isWordByte(lower[end]) {
				return act[:at] + "to " + act[at:]
			}
			from = at
		}
	}
	return act
}

func isWordByte(c byte) bool {
	return c == '-' || c == '\'' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c >= 0x80
}

// refusal reports whether the person's words are only a no: "No.", "no
// thanks", "Don't.", "Stop".
func refusal(said string) bool {
	w := strings.Join(strings.Fields(strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || r == '\'' || r == '’' {
			return unicode.ToLower(r)
		}
		return ' '
	}, said)), " ")
	return refusals[strings.ReplaceAll(w, "’", "'")]
}

var refusals = map[string]bool{"no": true, "nope": true, "nah": true, "no thanks": true, "no thank you": true,
	"don't": true, "do not": true, "please don't": true, "no please don't": true, "no don't": true,
	"don't do that": true, "please do not": true, "not now": true, "no way": true, "stop": true,
	"no need": true, "not necessary": true, "no no": true, "no stop": true, "definitely not": true,
	"absolutely not": true, "no don't do that": true, "no not now": true}

// agentWords tells the agent's own words from the outside: "you" is the
// person, "my" is the agent's.
func agentWords(s string) string {
	return agentPronouns.ReplaceAllStringFunc(s, func(m string) string {
		switch strings.ToLower(m) {
		case "your", "yours":
			return "the person's"
		case "myself":
			return "itself"
		case "my":
			return "its"
		}
		return "the person"
	})
}

var agentPronouns = regexp.MustCompile(`(?i)\b(yourself|yours|your|you|myself|my)\b`)

// reported drops the "I" that opens the agent's report of what it did:
// "I deleted the lock file", "I've pushed", told as "the agent deleted...".
// wasI says an "I" was dropped.
func reported(did string) (_ string, wasI bool) {
	for _, p := range []string{"I ", "I've ", "I have ", "I had ", "i ", "i've "} {
		if rest, ok := strings.CutPrefix(did, p); ok && rest != "" {
			if p == "I've " || p == "I have " || p == "i've " {
				return "had " + rest, false
			}
			return rest, true
		}
	}
	return did, false
}

// A clause of a field, with the mark that ended it.
type clause struct{ text, sep string }

// clauses cuts s at sentence ends, semicolons, colons, dashes and commas.
func clauses(s string) []clause {
	var out []clause
	start := 0
	for i := 0; i < len(s); i++ {
		sep := ""
		switch c := s[i]; {
		case (c == '.' || c == '!' || c == '?') && (i+1 == len(s) || s[i+1] == ' '):
			sep = "; "
		case c == ';' || c == ':' && i+1 < len(s) && s[i+1] == ' ':
			sep = "; "
		case c == ',' && i+1 < len(s) && s[i+1] == ' ':
			sep = ", "
		case c == ' ' && i+2 < len(s) && s[i+1] == '-' && s[i+2] == ' ':
			sep = ", "
		}
		if sep == "" {
			continue
		}
		if t := strings.TrimSpace(s[start:i]); t != "" {
			out = append(out, clause{t, sep})
		}
		start = i + 1
	}
	if t := strings.TrimSpace(s[start:]); t != "" {
		out = append(out, clause{t, ""})
	}
	return out
}

// facts keeps the clauses of s that read as observations, with "you"
// told as "the agent", and drops the ones that read as instructions ("so
// run go generate"). Joining words left dangling go too.
func facts(s string) string { return factsWith(s, secondPerson) }

// factsWith is facts with the rewriting of pronouns given.
func factsWith(s string, pronouns func(string) string) string {
	if s == "" {
		return ""
	}
	if textcheck.CheckObservation(pronouns(s)) == nil {
		return strings.TrimRight(pronouns(s), ".!? ")
	}
	var b strings.Builder
	for _, cl := range clauses(s) {
		t := pronouns(cl.text)
		if textcheck.CheckObservation(t) != nil {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(cl.sep)
		}
		b.WriteString(t)
	}
	out := strings.TrimRight(b.String(), ",;: ")
	for _, dangling := range []string{" so", " and", " then", " but", " or"} {
		out = strings.TrimSuffix(out, dangling)
	}
	return out
}

// An action is what an instruction asks for, as a base verb phrase ("push
// to main") and a gerund phrase ("pushing to main").
type action struct{ base, gerund string }

// asAction reads an instruction ("Never push to main", "the agent must not
// push to main", "Please run go vet first") as the action it asks for, and
// whether it forbids it.
func asAction(s string) (action, bool, bool) {
	words := strings.Fields(strings.TrimRight(s, ".!?"))
	lower := func(k int) string { return strings.ToLower(strings.Trim(words[k], `"'“”‘’`)) }
	// The asked-for verb phrase starts after the last modal of obligation
	// ("the agent must never push") and after the words that dress a
	// command up ("Please", "Always", "Make sure to", "Don't").
	i := 0
	for k := range words {
		switch lower(k) {
		case "must", "should", "shall", "ought", "need", "needs", "have", "has":
			i = k + 1
		}
	}
	neg := false
	for ; i < len(words); i++ {
		w := lower(i)
		if w == "make" && (i+1 >= len(words) || lower(i+1) != "sure") {
			break // "make" the verb, not "make sure"
		}
		if dressing[w] {
			continue
		}
		if negating[w] {
			neg = true
			continue
		}
		break
	}
	if i >= len(words) {
		return action{}, false, false
	}
	v := lower(i)
	if v == "" || !isLetters(v) {
		return action{}, false, false
	}
	rest := strings.NewReplacer(`"`, "", "“", "", "”", "").Replace(strings.Join(words[i+1:], " "))
	join := func(w string) string {
		if rest == "" {
			return w
		}
		return w + " " + rest
	}
	// "avoid pushing", "stop using": an -ing form serves as both.
	return action{base: secondPerson(join(v)), gerund: secondPerson(join(gerund(v)))}, neg, true
}

// dressing and negating are the words around a command's verb that
// asAction reads past.
var (
	dressing = map[string]bool{"please": true, "kindly": true, "just": true, "simply": true, "always": true,
		"to": true, "also": true, "then": true, "so": true, "first": true, "and": true, "be": true, "sure": true,
		"make": true, "remember": true}
	negating = map[string]bool{"never": true, "not": true, "don't": true, "dont": true, "don’t": true,
		"do": true, "avoid": true, "stop": true}
)

// gerund forms the -ing form of a base verb: "push" → "pushing", "use" →
// "using", "run" → "running", "tie" → "tying".
func gerund(v string) string {
	switch {
	case strings.HasSuffix(v, "ing"):
		return v
	case strings.HasSuffix(v, "ie"):
		return v[:len(v)-2] + "ying"
	case strings.HasSuffix(v, "e") && !strings.HasSuffix(v, "ee") && !strings.HasSuffix(v, "ye") && !strings.HasSuffix(v, "oe") && len(v) > 2:
		return v[:len(v)-1] + "ing"
	case doublesFinal(v):
		return v + v[len(v)-1:] + "ing"
	}
	return v + "ing"
}

// doublesFinal: one-syllable words ending consonant-vowel-consonant
// ("run", "stop", "skip") double the consonant.
func doublesFinal(v string) bool {
	n := len(v)
	if n < 3 || strings.ContainsRune("wxy", rune(v[n-1])) {
		return false
	}
	vowel := func(c byte) bool { return strings.IndexByte("aeiou", c) >= 0 }
	if vowel(v[n-1]) || !vowel(v[n-2]) || vowel(v[n-3]) {
		return false
	}
	groups := 0
	for k := 0; k < n; k++ {
		if vowel(v[k]) && (k == 0 || !vowel(v[k-1])) {
			groups++
		}
	}
	return groups == 1
}

func isLetters(s string) bool {
	for _, r := range s {
		if !unicode.IsLetter(r) && r != '-' {
			return false
		}
	}
	return true
}

func lowerFirst(s string) string {
	r, size := utf8.DecodeRuneInString(s)
	if unicode.IsUpper(r) && !(size < len(s) && unicode.IsUpper(rune(s[size]))) {
		return string(unicode.ToLower(r)) + s[size:]
	}
	return s
}

// representative returns the index of the episode with the highest mean
// Lexical similarity to the others (the first on ties), among the episodes
// that have any text. Only the first 200 episodes are compared, which bounds
// the cost on a large cluster.
func representative(es []Episode) int {
	n := min(len(es), 200)
	t := NewLexical().tables()
	ps := make([]*profile, n)
	var have []int
	for i := range n {
		if strings.TrimSpace(es[i].Content()) != "" {
			ps[i] = t.build(es[i].Content())
			have = append(have, i)
		}
	}
	if len(have) == 0 {
		return 0
	}
	best, bestSum := have[0], -1.0
	for _, i := range have {
		var sum float64
		for _, j := range have {
			if i != j {
				sum += t.score(ps[i], ps[j])
			}
		}
		if sum > bestSum {
			best, bestSum = i, sum
		}
	}
	return best
}

// subject turns a title into the subject of a sentence: "go test ./..."
// becomes "Running go test ./...", so the sentence does not open with a
// command.
func subject(title string) string {
	if title == "" || textcheck.CheckObservation(title+" fails") == nil {
		return title
	}
	return "Running " + title
}

// secondPerson rewrites "you" in a person's words to the agent as "the
// agent", since the lesson is read by others.
func secondPerson(s string) string {
	secondPersonW := regexp.MustCompile(`(?i)\b(you're|you are|yourself|yours|your|you)\b`)
	return secondPersonW.ReplaceAllStringFunc(s, func(m string) string {
		switch strings.ToLower(m) {
		case "you're", "you are":
			return "the agent is"
		case "yourself":
			return "itself"
		case "your", "yours":
			return "the agent's"
		}
		return "the agent"
	})
}

// oneSentence joins the sentences of a field with semicolons.
func oneSentence(s string) string {
	return sentenceBreak.ReplaceAllString(s, "$1; $2")
}

// sentenceBreak: the end of a sentence inside a field: . ! or ? after a
// letter, digit, closing bracket or quote, then space and a capital.
var sentenceBreak = regexp.MustCompile(`([\p{L}\p{N})\]"'’])[.!?]+\s+(\p{Lu})`)

// finish caps s at MaxSentence characters on a word boundary, balances its
// double quotes, capitalises a leading function word and ends it with a
// period.
func finish(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	const room = 2 // for a closing quote and the period
	if utf8.RuneCountInString(s) > MaxSentence-room {
		rs := []rune(s)[:MaxSentence-room]
		cut := len(rs)
		for cut > 0 && !unicode.IsSpace(rs[cut-1]) {
			cut--
		}
		if cut == 0 { // one long word: cut inside it
			cut = len(rs)
		}
		s = strings.TrimRightFunc(string(rs[:cut]), unicode.IsSpace)
	}
	s = strings.TrimRight(s, ",;:!? -")
	if strings.Count(s, `"`)%2 == 1 {
		s = strings.TrimRight(s, `. `) + `"`
	}
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	// "the staging database ..." → "The staging database ...", but
	// "npm install fails" stays: a command keeps its case.
	if r, size := utf8.DecodeRuneInString(s); unicode.IsLower(r) {
		end := strings.IndexFunc(s, func(r rune) bool { return !unicode.IsLetter(r) })
		if end > 0 && slices.Contains(strings.Fields(stopWordList), s[:end]) {
			s = string(unicode.ToUpper(r)) + s[size:]
		}
	}
	return s
}

// failureVerb reports whether a description opens with the failure itself
// ("fails with", "failed:", "crashes", "hangs"...).
func failureVerb(s string) bool {
	first, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(s)), " ")
	first = strings.TrimRight(first, ":,.")
	switch first {
	case "fails", "failed", "failing", "fail", "crashes", "crashed", "hangs", "hung", "errors", "errored", "panics", "panicked", "times", "timed", "exits", "exited", "returns", "returned", "breaks", "broke":
		return true
	}
	return false
}
