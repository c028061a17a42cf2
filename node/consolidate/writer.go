package consolidate

import (
	"context"
	"errors"
	"fmt"
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

// MaxSentence is the longest sentence DefaultWriter writes, in characters:
// one a reader takes in at a glance.
const MaxSentence = 200

// DefaultWriter writes a lesson without a model, deterministically: from the
// most representative episode of the cluster (the one with the highest mean
// Lexical similarity to the others; the first on ties) it builds one
// sentence that describes what happened:
//
//	error        "<call> fails with <failure> because|until|when <cause>"
//	             ("go test fails with undefined: X because the generated
//	             client is missing until go generate runs"); "<call> times
//	             out ..." when what happened goes on from the call;
//	             "<call> returns 404 instead of 200" for a bare result
//	correction   "The person objected to the agent <doing X> because <reason>"
//	             "The person wanted the agent to <do X>" (a "do")
//	             "When the agent <did>, the person pointed out that <fact>"
//	             "The person objected" (a bare "no")
//	             and when agent_did holds an offer to act (see Offer):
//	             "The agent offered to <X>, and the person declined"
//	             "The agent offered to <X>, and the person objected to <doing Y>"
//	             "The agent offered to <X>, and the person wanted the agent to <do Y>"
//	             "The agent offered to <X>, and the person corrected it: <fact>"
//	environment, surprise
//	             "<title> <what happened> <cause>" when what happened goes
//	             on from the title, else "<what happened>" with "there"
//	             told as the title; what was expected is not told
//	note         "<the facts in the note>"
//
// Tool output in a field (several lines, or a line with a log's marks) is
// read by Essential first: the line that says what failed, in a clean
// form, and the agent's words that explain it; the call is named without
// its flags and their values ("kubectl get pods -n shop" is "kubectl get
// pods"). Of the candidate sentences, the first that reads as an
// observation and not like pasted output (textcheck.Pasted) is taken;
// when none reads as written, the first observation is, and the node
// keeps it as a draft. A clause is never left ending on a word that
// leaves it open ("... connecting to"); that word goes.
//
// It never quotes an event's words and never carries an instruction: every
// field is cut into clauses and read by the observation check
// (textcheck.CheckObservation); a clause that reads as an instruction is
// left out ("mocks not generated, run go generate" keeps "mocks not
// generated"), except in a correction, where it is told as what the person
// wanted; a clause the check reads as a command only for its first word
// ("exec format error") is kept when that word is no verb that orders
// and the sentence passes the check. A call is named without its package
// pattern, URL or path arguments ("go test ./..." is "go test"); one that
// still reads like a command is written "Running <call>". A cause that
// another event of the cluster states is added when the chosen one states
// none. Each candidate sentence is checked whole, and the first that reads
// as an observation is taken. A path under a home directory is written
// from "~/" (the user's name goes), then Redact is applied to every field (nil
// leaves them as they are; the node passes its raw-data redactor). White
// space is collapsed, the sentence is cut at a word boundary to at most
// MaxSentence characters and ends with a period. A cluster whose episode
// holds nothing but instructions gives an error, not a lesson. What the
// events state beyond the sentence is Untold's: the node keeps such a
// sentence as a draft that carries it (SPEC §3).
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
	// An error told again in a note or an environment report (one
	// family): the lesson is the error's, "<call> fails with <error>
	// because <what the note says>".
	if k := strings.ToLower(strings.TrimSpace(e.Kind)); k != "error" && k != "correction" {
		for _, o := range c.Episodes {
			if strings.EqualFold(strings.TrimSpace(o.Kind), "error") && strings.TrimSpace(o.Title) != "" {
				e = o
				break
			}
		}
	}
	if looksLikeOutput(e.Happened) {
		// Its output says nothing of the failure (a table, progress) or
		// only that it failed: an episode whose output says more is told
		// instead.
		best := outputScore(e.Happened)
		for _, o := range c.Episodes {
			if sc := outputScore(o.Happened); best <= 2 && sc > best+1 && strings.EqualFold(o.Kind, e.Kind) && Essential(o.Happened) != "" {
				e, best = o, sc
			}
		}
	}
	f := func(s string) string {
		s = homeTilde(Essential(s))
		if w.Redact != nil {
			s = w.Redact(s)
		}
		s = unquotePlaceholders(dropOwnNames(s))
		return oneSentence(strings.Join(strings.Fields(linesAsSentences(s)), " "))
	}
	kind := strings.ToLower(strings.TrimSpace(e.Kind))
	if kind == "" {
		kind = strings.ToLower(strings.TrimSpace(c.Kind))
	}
	title, rawHappened, expected := dropPlaceholders(f(callName(e.Title))), f(e.Happened), facts(f(e.Expected))
	if strings.EqualFold(strings.TrimSpace(e.Kind), "error") {
		rawHappened = toolsYour(rawHappened)
	}
	happened := facts(rawHappened)
	agentDid := f(e.AgentDid)
	said, text := f(e.Said), facts(speakersWords(f(e.Text), "the agent", false))

	var s string
	switch kind {
	case "error":
		// The first that reads as an observation: the call, its failure
		// and its cause; the same with "Running <call>"; the strict facts
		// only; the call and its failure stitched.
		other := otherCause(c.Episodes, e, f)
		s = firstWritten(
			failure(title, rawHappened, expected, other, false),
			failure(title, rawHappened, expected, other, true),
			failure(title, rawHappened, expected, "", false),
			failure(title, happened, expected, "", true),
		)
		if t := subject(title); s == "" && t != "" {
			if happened != "" {
				s = t + " fails: " + happened
			} else {
				s = t + " fails"
			}
		}
	case "correction":
		s = correction(said, agentDid)
	case "environment", "surprise":
		other := otherCause(c.Episodes, e, f)
		s = firstWritten(observed(title, rawHappened, other), observed("", rawHappened, other), happened)
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
	if kind == "note" || kind == "environment" || kind == "surprise" {
		s = fitStatements(s)
	}
	out := finish(s)
	// Each piece passed the grammar; the whole sentence passes every check
	// of a lesson's wording, or no lesson is written.
	if err := textcheck.CheckObservation(out); err != nil {
		return "", fmt.Errorf("consolidate: default writer: the sentence %q does not read as an observation: %w", out, err)
	}
	return out, nil
}

// firstWritten is the first candidate that reads as an observation and
// not like pasted output (textcheck.Pasted), else the first that reads as
// an observation: the node keeps that one as a draft.
func firstWritten(cands ...string) string {
	first := ""
	for _, c := range cands {
		if c == "" || textcheck.CheckObservation(finish(c)) != nil {
			continue
		}
		if textcheck.Pasted(finish(c)) == "" {
			return c
		}
		if first == "" {
			first = c
		}
	}
	return first
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
	said = speakersWords(said, "the person", true)
	var wanted, objected, stated []string
	for _, cl := range clauses(said) {
		cl.text = withoutInterjection(cl.text) // "yeah don't run it as root", "ugh"
		if cl.text == "" || refusal(cl.text) {
			continue // "No, the lock file is generated by CI"
		}
		if x, ok := noThing(cl.text); ok {
			objected = append(objected, "using "+x) // "no --force please"
			continue
		}
		if first, _, _ := strings.Cut(asciiLower(cl.text), " "); textcheck.CheckGrammar(cl.text) == nil && !imperatives[first] {
			stated = append(stated, cl.text)
			continue
		}
		if act, neg, ok := asAction(cl.text); ok {
			// "don't helm uninstall": a command named as the verb, the
			// agent's own quoted command ("`helm uninstall x`") shows it,
			// or it is a program's name ("not npm test", commandNames).
			if v, _, _ := strings.Cut(act.base, " "); (strings.Contains(agentDid, "`"+v+" ") || commandNames[v]) && !shellVerbs[v] {
				act.base, act.gerund = "run "+act.base, "running "+act.base
			}
			if neg {
				objected = append(objected, act.gerund)
			} else {
				wanted = append(wanted, act.base)
			}
		}
	}
	reasons := reasonsOf(stated)
	if offer, ok := Offer(agentDid); ok {
		rest, why := "corrected it", false // why: the person's reasons go after what they asked
		switch {
		case refusal(said) && len(objected)+len(wanted) == 0:
			rest = "declined"
		case len(objected)+len(wanted) > 0:
			rest, why = asked(objected, wanted, "", "the agent to "), true
		case len(stated) > 0:
			rest = "corrected it: " + secondPerson(joinStated(stated))
		}
		if s, ok := offered(lowerFirst(agentWords(offer)), ", and the person "+rest); ok {
			if why {
				return withReasons(s, reasons)
			}
			return s
		}
		agentDid = "" // the offer is not told, not even as what the agent did
	}
	var s string
	switch {
	case len(objected)+len(wanted) > 0:
		s = "The person " + asked(objected, wanted, "the agent ", "the agent to ")
	case len(stated) > 0:
		// "When the agent dropped the staging tables, the person pointed
		// out that the staging database is shared with QA."
		fact := secondPerson(joinStated(stated))
		for _, when := range whenAgent(agentDid) {
			t := "W" + strings.TrimPrefix(when, " w") + ", the person pointed out that " + fact
			if strings.HasPrefix(when, " when the agent asked") {
				t = "The person pointed out that " + fact + when
			}
			if utf8.RuneCountInString(t) < MaxSentence && textcheck.CheckObservation(finish(t)) == nil {
				return t
			}
		}
		return "The person pointed out that " + fact
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
		if s == "" && refusal(said) {
			return "The person objected"
		}
		return s
	}
	s = withReasons(s, reasons)
	for _, when := range whenAgent(agentDid) {
		if t := s + when; utf8.RuneCountInString(t) < MaxSentence && textcheck.CheckObservation(finish(t)) == nil {
			return t
		}
	}
	return s
}

// withoutInterjection is a clause of a person's words without the
// interjections it opens with ("yeah don't run it as root" is "don't run it
// as root"; "ugh" is nothing): they say how the person felt, and a lesson
// tells what they asked.
func withoutInterjection(cl string) string {
	for {
		first, rest, _ := strings.Cut(cl, " ")
		if !interjections[strings.ToLower(strings.Trim(first, ",.!?;:"))] {
			return cl
		}
		cl = strings.TrimSpace(rest)
	}
}

var interjections = set("yeah", "yes", "yep", "ugh", "ok", "okay", "hmm", "well", "nope", "nah", "oh", "ah", "argh", "meh",
	"sigh", "whoa", "wow", "hey", "ooh", "oops", "gah", "jeez", "geez", "sheesh", "hm", "um", "uh", "erm")

// toolsYour is a tool's message without the "your" it says to whoever runs
// it ("Your Ruby version is 3.0.2, but your Gemfile specified 3.2.2" is
// "The Ruby version is 3.0.2, but the Gemfile specified 3.2.2"): that is
// neither the agent nor the person a lesson tells of.
func toolsYour(s string) string {
	return toolsYourW.ReplaceAllStringFunc(s, func(m string) string {
		if m == "Your" {
			return "The"
		}
		return "the"
	})
}

var toolsYourW = regexp.MustCompile(`\b[Yy]our\b`)

// asked tells what the person objected to and what they wanted, in one
// phrase after "The person": "objected to the agent force-pushing main and
// wanted the agent to revert it instead". who and whom name the agent
// where the phrase needs it ("" after an offer: "objected to running x").
func asked(objected, wanted []string, who, whom string) string {
	var parts []string
	if len(objected) > 0 {
		parts = append(parts, "objected to "+who+strings.Join(objected, " or "))
	}
	if len(wanted) > 0 {
		parts = append(parts, "wanted "+whom+strings.Join(wanted, " and "))
	}
	return strings.Join(parts, " and ")
}

// reasonsOf keeps the facts a person stated that give a reason: "do the
// same locally", "pass --subscription first" (what to do, which the
// grammar may read as a statement) are none, nor is a piece with no verb
// ("For your test").
func reasonsOf(stated []string) []string {
	var reasons []string
	for _, st := range stated {
		if first, _, _ := strings.Cut(asciiLower(st), " "); first != "not" && first != "but" && len(strings.Fields(st)) >= 3 &&
			!orders[first] && !orders[strings.TrimPrefix(first, "and ")] && slices.ContainsFunc(strings.Fields(st), textcheck.VerbForm) {
			reasons = append(reasons, st)
		}
	}
	return reasons
}

// withReasons adds the reasons the person gave to what they objected to or
// wanted: "... using tabs in YAML because the parser here rejects them". As
// many of them, in order, as fit in one sentence; one that does not fit is
// left out, not cut.
func withReasons(s string, reasons []string) string {
	var fit []string
	for _, r := range reasons {
		try := append(append([]string(nil), fit...), r)
		if t := s + " because " + reasonClause(joinStated(try)); utf8.RuneCountInString(t) < MaxSentence && textcheck.CheckObservation(finish(t)) == nil {
			fit = try
		}
	}
	if len(fit) > 0 {
		s += " because " + reasonClause(joinStated(fit))
	}
	return s
}

// imperatives open a clause that asks for an act even where the grammar
// reads a statement ("pass --subscription first", "do the same locally").
// shellVerbs are commands named by English verbs: "don't run x" needs no
// "running run x".
var shellVerbs = set("run", "set", "export", "make", "source", "echo", "cat", "find", "sort", "kill", "touch", "test",
	"install", "push", "pull", "add", "remove", "delete", "use", "do", "stop", "start", "open", "call")

var determiners = set("the", "a", "an", "this", "that", "it", "these", "those", "so")

var imperatives = set("do", "pass", "add", "use", "run", "set", "wait", "ask", "pin", "put", "try", "remove", "keep")

var statementVerbs = set("will", "would", "won't", "wouldn't", "is", "are", "was", "were", "isn't", "aren't", "helps", "works")

// noThing reads "no --force please", "no sudo", "no force push": a
// refusal of one thing (a flag, a word or two), told as an objection to
// using it.
func noThing(cl string) (string, bool) {
	w := strings.Fields(strings.TrimRight(cl, ".!? "))
	if len(w) < 2 || strings.ToLower(w[0]) != "no" {
		return "", false
	}
	w = w[1:]
	if n := len(w); strings.EqualFold(w[n-1], "please") {
		w = w[:n-1]
	}
	if len(w) == 0 || len(w) > 2 {
		return "", false
	}
	for _, x := range w {
		if strings.HasSuffix(x, ",") || refusal(x) {
			return "", false
		}
	}
	return strings.Join(w, " "), true
}

// joinStated joins the facts a person stated: "the tests use SQLite, and
// Postgres is only for production", "we use pnpm here, not npm".
func joinStated(stated []string) string {
	var b strings.Builder
	for i, st := range stated {
		if i > 0 {
			first, _, _ := strings.Cut(asciiLower(st), " ")
			if first == "not" || first == "but" || first == "and" || first == "so" || first == "which" {
				b.WriteString(", ")
			} else {
				b.WriteString(", and ")
			}
		}
		b.WriteString(st)
	}
	return b.String()
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
		err := textcheck.CheckGrammar(finish(s))
		if err == nil {
			return s, true
		}
		var ie *textcheck.InstructionError
		if !errors.As(err, &ie) || ie.Rule != textcheck.RuleCommandVerb {
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

// speakersWords tells someone's words about themselves (and, with team,
// their team's) in the third person, as a lesson about them reads: a
// person's "I've got a rebase open" is "the person has got a rebase open",
// "we squash pull requests here" "the team squashes pull requests here";
// an agent's note "after my last fetch" is "after the agent's last
// fetch". A quoted message keeps its words.
func speakersWords(s, who string, team bool) string {
	if !firstPersonW.MatchString(s) {
		return s
	}
	var b strings.Builder
	quoted := false
	last := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] != '`' && s[i] != '"' {
			continue
		}
		part := s[last:i]
		if !quoted {
			part = thirdPersonOf(part, who, team)
		}
		b.WriteString(part)
		if i < len(s) {
			b.WriteByte(s[i])
			quoted = !quoted
		}
		last = i + 1
	}
	return b.String()
}

var firstPersonW = regexp.MustCompile(`\b(I'm|I've|I'll|I'd|I|me|my|mine|myself|[Ww]e're|[Ww]e've|[Ww]e'll|[Ww]e|us|[Oo]ur|ours)\b`)

// thirdPersonOf is speakersWords for text outside quotes.
func thirdPersonOf(s, who string, team bool) string {
	w := strings.Split(s, " ")
	for i := 0; i < len(w); i++ {
		core := strings.TrimRight(w[i], ",.;:!?)")
		tail := w[i][len(core):]
		lead := strings.TrimLeft(core, "(")
		pre := core[:len(core)-len(lead)]
		subject := ""
		if !team && teamWords[lead] {
			continue // an agent's "we" may be the agent and the person
		}
		switch lead {
		case "I":
			subject = who
		case "I'm":
			lead = who + " is"
		case "I've":
			lead = who + " has"
		case "I'll":
			lead = who + " will"
		case "I'd":
			lead = who + " would"
		case "me", "myself":
			lead = who
		case "my", "mine":
			lead = who + "'s"
		case "we", "We":
			subject = "the team"
		case "we're", "We're":
			lead = "the team is"
		case "we've", "We've":
			lead = "the team has"
		case "we'll", "We'll":
			lead = "the team will"
		case "us":
			lead = "the team"
		case "our", "Our", "ours":
			lead = "the team's"
		default:
			continue
		}
		if subject != "" {
			lead = subject
			k := i + 1
			if k+1 < len(w) && agentAdverbs[w[k]] {
				k++ // "we never force-push"
			}
			if tail == "" && k < len(w) {
				w[k] = singularVerb(w[k])
			}
		}
		if (i == 0 || strings.HasSuffix(strings.TrimSpace(w[i-1]), ".")) && core[len(pre)] >= 'A' && core[len(pre)] <= 'Z' {
			lead = capitalise(lead)
		}
		w[i] = pre + lead + tail
	}
	return strings.Join(w, " ")
}

var teamWords = set("we", "We", "we're", "We're", "we've", "We've", "we'll", "We'll", "us", "our", "Our", "ours")

// singularVerb is v said of one ("squash" of the team is "squashes"); a
// word that is no present verb stays ("the team already", "I never").
func singularVerb(v string) string {
	core := strings.TrimRight(v, ",.;:!?")
	tail := v[len(core):]
	switch core {
	case "am", "are":
		return "is" + tail
	case "were":
		return "was" + tail
	case "have":
		return "has" + tail
	case "do":
		return "does" + tail
	case "don't":
		return "doesn't" + tail
	case "haven't":
		return "hasn't" + tail
	case "aren't":
		return "isn't" + tail
	case "weren't":
		return "wasn't" + tail
	}
	head := core[strings.LastIndexByte(core, '-')+1:] // "force-push"
	if !isLetters(strings.ReplaceAll(core, "-", "")) || core != strings.ToLower(core) || !textcheck.BaseVerb(head) {
		return v
	}
	switch {
	case strings.HasSuffix(core, "s") || strings.HasSuffix(core, "sh") || strings.HasSuffix(core, "ch") ||
		strings.HasSuffix(core, "x") || strings.HasSuffix(core, "z") || strings.HasSuffix(core, "o"):
		return core + "es" + tail
	case len(core) > 1 && strings.HasSuffix(core, "y") && !strings.ContainsAny(core[len(core)-2:len(core)-1], "aeiou"):
		return core[:len(core)-1] + "ies" + tail
	}
	return core + "s" + tail
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

// yamlKey: the text before a colon ends on a key of a config file
// ("pull-requests: write", "default_features: false"), a lower-case word
// joined by "-" or "_", which the colon does not end a clause after.
func yamlKey(before string) bool {
	k := strings.LastIndexByte(before, ' ')
	w := before[k+1:]
	return strings.ContainsAny(w, "-_") && lowerWord(w)
}

// A clause of a field, with the mark that ended it.
type clause struct{ text, sep string }

// clauses cuts s at sentence ends, semicolons, colons, dashes and commas.
func clauses(s string) []clause {
	var out []clause
	start := 0
	inTick, inQuote := false, false
	ticks, quotes := strings.Count(s, "`")%2 == 0, strings.Count(s, `"`)%2 == 0 // only quotes that close
	for i := 0; i < len(s); i++ {
		sep := ""
		switch s[i] {
		case '`':
			inTick = !inTick && ticks
		case '"':
			inQuote = !inQuote && quotes
		}
		if inTick || inQuote {
			continue // a quoted command or message is one piece
		}
		switch c := s[i]; {
		case (c == '.' || c == '!' || c == '?') && (i+1 == len(s) || s[i+1] == ' '):
			sep = "; "
		case c == ';':
			sep = "; "
		case c == ':' && i+1 < len(s) && s[i+1] == ' ' && !yamlKey(s[:i]):
			sep = ": "
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

// trimJoined cuts what clauses joined and then dropped leave at the end: a
// separator, or a joining word with nothing after it.
func trimJoined(s string) string {
	out := strings.TrimRight(s, ",;: ")
	for _, dangling := range []string{" so", " and", " then", " but", " or"} {
		out = strings.TrimSuffix(out, dangling)
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
	if textcheck.CheckGrammar(pronouns(s)) == nil {
		return strings.TrimRight(pronouns(s), ".!? ")
	}
	var b strings.Builder
	sep := ""
	for _, cl := range clauses(s) {
		t := pronouns(cl.text)
		if textcheck.CheckGrammar(t) != nil {
			// An aside may be what reads as an order ("(listed under
			// Settings > Deploy tokens)"): the clause without it.
			if t = withoutAsides(t); t == "" || textcheck.CheckGrammar(t) != nil {
				continue
			}
		}
		if b.Len() > 0 {
			b.WriteString(sep)
		}
		b.WriteString(t)
		sep = cl.sep
	}
	return trimJoined(b.String())
}

// withoutAsides is s without its parenthesised asides outside code spans
// ("expired on May 31 (GitLab lists it under Settings)" is "expired on May
// 31"), or "" when it has none.
func withoutAsides(s string) string {
	var b strings.Builder
	depth, tick, cut := 0, false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '`' && depth == 0:
			tick = !tick
		case c == '(' && !tick && (i == 0 || s[i-1] == ' '):
			depth++
			cut = true
			continue
		case c == ')' && depth > 0:
			depth--
			continue
		}
		if depth == 0 {
			b.WriteByte(c)
		}
	}
	if !cut || depth != 0 {
		return ""
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// An action is what an instruction asks for, as a base verb phrase ("push
// to main") and a gerund phrase ("pushing to main").
type action struct{ base, gerund string }

// asAction reads an instruction ("Never push to main", "the agent must not
// push to main", "Please run go vet first") as the action it asks for, and
// whether it forbids it.
func asAction(s string) (action, bool, bool) {
	words := strings.Fields(strings.TrimRight(s, ".!?"))
	// "write won't help", "that doesn't work": a statement with its own
	// verb after the first word, not an order.
	for _, w := range words[min(1, len(words)):] {
		if lw := strings.ToLower(w); statementVerbs[lw] || strings.HasSuffix(lw, "n't") && !strings.HasPrefix(lw, "don") {
			return action{}, false, false
		}
	}
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
	// "do the same locally": "do" is the verb, not a word that dresses one.
	if i > 0 && lower(i-1) == "do" && determiners[lower(i)] {
		i--
		neg = false
		for k := range i {
			if w := lower(k); negating[w] && w != "do" {
				neg = true
			}
		}
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
	if neg && determiners[v] && v != "so" {
		// "Stop the migration", "avoid this": the thing named is what the
		// person wanted no more of, never a verb ("thing migration").
		return action{base: secondPerson(join("go on with " + v)), gerund: secondPerson(join("going on with " + v))}, neg, true
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
	if title == "" || textcheck.CheckGrammar(title+" fails") == nil {
		return title
	}
	return "Running " + title
}

// secondPerson rewrites "you" in a person's words to the agent as "the
// agent", since the lesson is read by others.
//
// A verb after "you" as a subject agrees with "the agent" ("you don't
// have" is "the agent doesn't have", "you just do" "the agent just
// does"); after "let you", "make you" and the like "you" is an object and
// its verb stays.
func secondPerson(s string) string {
	secondPersonW := regexp.MustCompile(`(?i)\b(you're|you are|you've|you have|yourself|yours|your|you)\b`)
	out := secondPersonW.ReplaceAllStringFunc(s, func(m string) string {
		switch strings.ToLower(m) {
		case "you're", "you are":
			return "the agent is"
		case "you've", "you have":
			return "the agent has"
		case "yourself":
			return "itself"
		case "your", "yours":
			return "the agent's"
		}
		return "the agent"
	})
	return agentAgrees(out)
}

// agentAgrees writes a verb after "the agent" (and an adverb) in the
// third person.
func agentAgrees(s string) string {
	w := strings.Split(s, " ")
	for i := 1; i+1 < len(w); i++ {
		if w[i] != "agent" || !strings.EqualFold(w[i-1], "the") || i >= 2 && objectTakers[strings.ToLower(w[i-2])] {
			continue
		}
		k := i + 1
		if k+1 < len(w) && agentAdverbs[w[k]] {
			k++
		}
		if v, ok := thirdPerson[w[k]]; ok {
			w[k] = v
		} else if textcheck.BaseVerb(w[k]) {
			w[k] = singularVerb(w[k]) // "when the agent change PHP code"
		}
	}
	return strings.Join(w, " ")
}

var (
	objectTakers = set("let", "lets", "make", "makes", "help", "helps", "have", "has", "see", "watch", "hear")
	agentAdverbs = set("just", "still", "already", "also", "only", "never", "probably", "really", "then")
	thirdPerson  = map[string]string{"don't": "doesn't", "do": "does", "have": "has", "haven't": "hasn't",
		"were": "was", "weren't": "wasn't", "wish": "wishes", "need": "needs", "want": "wants", "believe": "believes",
		"get": "gets", "see": "sees", "use": "uses", "run": "runs", "try": "tries", "know": "knows", "think": "thinks"}
)

// reasonClause is a person's stated reason as it goes after "because":
// with "you" told as "the agent", and a first word that opened their
// sentence ("That's a company laptop") in lower case.
func reasonClause(s string) string {
	s = secondPerson(s)
	first, _, _ := strings.Cut(s, " ")
	if w := strings.Trim(first, ",.;:"); reasonOpeners[strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "'re")] {
		s = strings.ToLower(s[:1]) + s[1:]
	}
	return s
}

var reasonOpeners = set("That", "This", "These", "Those", "It", "They", "There", "Other", "Others", "We", "Our",
	"The", "A", "An", "He", "She", "Nobody", "Everyone", "Someone", "Some", "Most", "No", "Its", "Their", "One", "Two",
	"Three", "Four", "Both", "All", "Every", "Each", "Nothing", "Everything", "Many", "Few", "Last", "Yesterday", "Today",
	"Earlier")

// oneSentence joins the sentences of a field with semicolons.
func oneSentence(s string) string {
	s = sentenceBreak.ReplaceAllString(s, "$1; $2")
	// The sentence that now goes on after "; " opens in lower case when
	// its first word is a function word or an -ing form ("; the app's
	// limit", "; connecting to ..."); a name keeps its capital.
	for from := 0; ; {
		k := strings.Index(s[from:], "; ")
		if k < 0 {
			return s
		}
		at := from + k + 2
		w := firstField(s[at:])
		if proseOpeners[w] || len(w) > 4 && strings.HasSuffix(w, "ing") && lowerWord(w[1:]) && unicode.IsUpper(rune(w[0])) {
			s = s[:at] + strings.ToLower(w[:1]) + s[at+1:]
		}
		from = at
	}
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
		// The cut took the object of a particle too ("is not installed in").
		if k := strings.LastIndexByte(s, ' '); k > 0 && (s[k+1:] == "in" || s[k+1:] == "on") {
			s = s[:k]
		}
	}
	s = strings.TrimRight(s, ",;:!? -")
	// A clause cut off after a word that leaves it open ("... connecting
	// to") loses that word (textcheck.Pasted's rule of a cut-off end).
	for range 4 {
		why := textcheck.Pasted(s + ".")
		if !strings.HasPrefix(why, "cut off after '") {
			break
		}
		k := strings.LastIndexByte(s, ' ')
		if k < 0 {
			break
		}
		s = strings.TrimRight(s[:k], ",;:!? -")
	}
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
	if r, _ := utf8.DecodeRuneInString(s); unicode.IsUpper(r) {
		return false // a tool's message, "Failed to pull image"
	}
	first, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(s)), " ")
	first = strings.TrimRight(first, ":,.")
	switch first {
	case "fails", "failed", "failing", "fail", "crashes", "crashed", "hangs", "hung", "errors", "errored", "panics", "panicked", "times", "timed", "exits", "exited", "returns", "returned", "breaks", "broke":
		return true
	}
	return false
}

// failure writes an error as a person would: the call first, then the
// failure and its cause, "go test fails with undefined: X because the
// generated client is missing until go generate runs". happened is the
// redacted field as the event gave it; its clauses that read as
// instructions are left out (keepClauses). expected is told only where
// what happened is a bare result ("GET /orders returns 404 instead of
// 200"). It gives "" when there is no call or nothing happened.
func failure(title, happened, expected, other string, running bool) string {
	t := subject(title)
	if running && t == title && t != "" {
		t = "Running " + title
	}
	h := strings.TrimRight(strings.TrimSpace(happened), ".!? ")
	if t == "" || h == "" {
		return ""
	}
	// "build fails: undefined: X", "error: linker not found": the call is
	// said already, the failure follows.
	h = failurePrefix.ReplaceAllString(h, "")
	h = beforeOrder(h, "It fails with ")
	if strings.HasPrefix(strings.ToLower(h), strings.ToLower(title)+" ") {
		return fitFailure("", keepClauses(h, "It says that "), "")
	}
	what, cause := splitCause(h)
	what = ownWords(what)
	what = keepClauses(what, "It fails with ")
	cause = keepClauses(cause, "It fails ")
	if what == "" {
		return ""
	}
	if cause == "" && other != "" && newWords(other, t+" "+what) >= 2 {
		cause = other
	}

	first, _, _ := strings.Cut(strings.ToLower(what), " ")
	first = strings.Trim(first, ":,")
	lowerStart := !unicode.IsUpper([]rune(what)[0])
	switch {
	case failureVerb(what) || predicates[first] && lowerStart:
		// "times out after 30 s", "ignores setup.cfg": the call is the subject.
		return fitFailure(t+" ", what, cause)
	case passives[first]:
		return fitFailure(t+" "+agree(t, "is")+" ", what, cause)
	case (first == "must" || first == "should" || first == "need") && lowerStart && !strings.Contains(what, "'"):
		// Postgres's "must be owner of table x": a message with no subject
		// of its own is quoted.
		return fitFailure(t+" "+agree(t, "fails")+" with '", what+"'", cause)
	case (len(strings.Fields(what)) <= 2 || what[0] >= '0' && what[0] <= '9') && expected != "" && cause == "":
		return fitFailure(t+" returns ", what+" instead of "+expected, "")
	case ownSubject(what):
		if f := firstField(what); f == "The" || f == "A" || f == "An" || f == "This" {
			what = strings.ToLower(f) + what[len(f):] // "fails because the Deployment ..."
		}
		if cause == "" {
			return fitFailure(t+" "+agree(t, "fails")+" because ", what, "")
		}
		return fitFailure(t+" "+agree(t, "fails")+": ", what, cause)
	}
	return fitFailure(t+" "+agree(t, "fails")+" with ", what, cause)
}

// ownWords tells a tool's message that opens with what the call did as
// the call's own verb: "Failed to open a browser" is "fails to open a
// browser", "Cannot find module X" is "cannot find module X".
func ownWords(what string) string {
	for _, p := range [][2]string{{"Failed to ", "fails to "}, {"Cannot ", "cannot "}, {"Could not ", "could not "},
		{"Unable to ", "is unable to "}, {"Couldn't ", "couldn't "}} {
		if rest, ok := strings.CutPrefix(what, p[0]); ok && rest != "" {
			return p[1] + rest
		}
	}
	return what
}

// failurePrefix: words that open a failure message and repeat what the
// sentence says already ("build fails: ", "error: ", "Error: ").
var failurePrefix = regexp.MustCompile(`^(?i:(?:the )?(?:build|compile|compilation|test|tests|run|step|command|it) (?:fails|failed)(?: with)?:? |error: |fatal: )`)

// predicates and passives open a description whose subject is the call:
// "ignores the rules", "rejected: ...".
var (
	predicates = set("reports", "produces", "ignores", "lacks", "prints", "writes", "skips", "stops", "stays",
		"runs", "uses", "hits", "loses", "drops", "deletes", "overwrites", "leaves", "needs", "requires",
		"restarts", "resolves", "reads", "takes", "warns", "shows", "gives", "cannot", "can't", "does",
		"doesn't", "never", "only", "still", "always", "sometimes", "intermittently", "no", "not", "could", "couldn't", "is")
	passives = set("rejected", "refused", "denied", "blocked", "killed", "cancelled", "canceled", "skipped")
)

// ownSubject: a description that is a sentence with its own subject
// ("golangci-lint reports...", "pods stay in ImagePullBackOff", "the
// current SDK does not..."), not an error message.
func ownSubject(s string) bool {
	w := strings.Fields(s)
	if len(w) < 3 {
		return false
	}
	if strings.HasSuffix(w[0], ":") {
		return false // a label before a message, "MongoServerError: Authentication failed"
	}
	first := strings.ToLower(w[0])
	if notVerbs[first] && first != "no" && first != "not" {
		return true
	}
	for _, v := range w[1:min(len(w), 4)] {
		if finiteVerbs[strings.ToLower(v)] {
			return true
		}
	}
	return false
}

var finiteVerbs = set("is", "are", "was", "were", "has", "have", "had", "reports", "stays", "stay", "produces",
	"ignores", "returns", "lacks", "points", "does", "doesn't", "couldn't", "cannot", "can't", "won't",
	"isn't", "aren't", "wasn't", "fails", "failed", "crashes", "crashed", "hangs", "breaks", "broke", "refuses")

// causeWords open the clause that says why or when a failure happens.
var causeWords = []string{"because", "until", "when", "whenever", "after", "since", "while", "unless", "as soon as", "if"}

// splitCause cuts a description at the first word that opens its cause:
// "fails with EUSAGE", "because the lock file is out of sync". A first
// clause followed by a clause with its own subject ("undefined: X, the
// generated client is missing until ...") has that clause as its cause
// ("because the generated client is missing until ...").
func splitCause(h string) (what, cause string) {
	low := asciiLower(h)
	at := -1
	for _, w := range causeWords {
		for _, sep := range []string{" ", ", ", "; "} {
			if k := strings.Index(low, sep+w+" "); k > 0 && (at < 0 || k < at) {
				at = k
			}
		}
	}
	what, cause = h, ""
	if at > 0 {
		what, cause = strings.TrimRight(h[:at], ",; "), strings.TrimLeft(h[at:], ",; ")
	}
	if k := strings.LastIndex(what, ", "); k > 0 && !strings.HasPrefix(asciiLower(cause), "because") {
		rest := what[k+2:]
		first, _, _ := strings.Cut(asciiLower(rest), " ")
		if subjectWords[first] && len(strings.Fields(rest)) >= 3 {
			what = what[:k]
			if f := firstField(rest); proseOpeners[f] {
				rest = strings.ToLower(f) + rest[len(f):] // "because it is ..."
			}
			cause = strings.TrimSpace("because " + rest + " " + cause)
		}
	}
	if k := strings.Index(what, "; "); k > 0 {
		rest := what[k+2:]
		first, _, _ := strings.Cut(asciiLower(rest), " ")
		if first == "it" || first == "they" {
			what, cause = what[:k], strings.TrimSpace("because "+rest+" "+cause)
		}
	}
	return what, cause
}

var subjectWords = set("the", "its", "it", "this", "that", "they", "their", "a", "an")

// fitFailure joins the parts of a failure sentence and keeps it within
// MaxSentence: the cause is kept and the failure message is shortened
// first (a parenthesis goes, then the words after its first clause).
func fitFailure(lead, what, cause string) string {
	join := func(w string) string {
		return strings.TrimSpace(strings.Join(strings.Fields(lead+w+" "+cause), " "))
	}
	if cause == "" {
		join = func(w string) string { return strings.Join(strings.Fields(lead+w), " ") }
	}
	const room = MaxSentence - 2
	if utf8.RuneCountInString(join(what)) <= room {
		return join(what)
	}
	what = parenthesis.ReplaceAllString(what, "")
	if utf8.RuneCountInString(join(what)) <= room {
		return join(what)
	}
	if k := strings.Index(what, ", "); k > 20 {
		what = what[:k]
	}
	if utf8.RuneCountInString(join(what)) <= room {
		return join(what)
	}
	// The cause is too long to keep whole; finish cuts the end.
	return join(what)
}

var parenthesis = regexp.MustCompile(`\s*\([^()]*\)`)

// observed writes an environment note or a surprise: "The queue worker
// restarts every hour when a cron job rotates its logs". The title leads
// when what happened goes on from it ("restarts every hour"); it is left
// out when what happened names it already, with "there" told as the
// place ("tests that bind ::1 fail there", title "CI runners": "fail on
// the CI runners"). What was expected is not told: what happened says it.
func observed(title, happened, other string) string {
	h := strings.TrimRight(strings.TrimSpace(happened), ".!? ")
	if h == "" {
		return ""
	}
	h = beforeOrder(h, "It is so that ")
	what, cause := splitCause(h)
	lead := "It is so that "
	if title != "" {
		lead = "The " + strings.TrimPrefix(title, "the ") + " "
	}
	h = keepClauses(what, lead)
	c := keepClauses(cause, "It is so ")
	if c == "" && other != "" && newWords(other, title+" "+h) >= 2 {
		c = other
	}
	if c != "" {
		if h == "" {
			return ""
		}
		h += " " + c
	}
	if h == "" {
		return ""
	}
	if title == "" {
		return capitalise(h)
	}
	lowT, lowH := asciiLower(title), asciiLower(h)
	first, _, _ := strings.Cut(lowH, " ")
	switch {
	case strings.HasPrefix(lowH, lowT):
		return capitalise(h)
	case strings.Contains(lowH, " there"):
		place := title
		if !subjectWords[strings.Fields(lowT)[0]] {
			place = "the " + title
		}
		if k := strings.Index(lowH, " there"); k >= 0 && (k+6 == len(h) || !isWordByte(h[k+6])) {
			return capitalise(h[:k] + " on " + place + h[k+6:])
		}
		return capitalise(h)
	case strings.Contains(lowH, strings.TrimPrefix(lowT, "the ")):
		return capitalise(h)
	case strings.HasSuffix(first, "ed") && !notVerbs[first]:
		// "wiped every night": the title is what it happens to.
		return title + " " + agree(title, "is") + " " + h
	case !notVerbs[first] && !ownSubject(h) && (textcheck.VerbForm(first) || predicates[first]):
		t := title
		if textcheck.CheckGrammar(t+" "+h+".") != nil && !subjectWords[strings.Fields(lowT)[0]] {
			t = "The " + title
		}
		return t + " " + h
	}
	return title + ": " + h
}

// keepClauses keeps the clauses of s that read as observations, as facts
// does, and also a clause that the check reads as a command only for its
// first word ("exec format error", "snapshot mismatch on dates") when
// that word is not a verb that orders, the clause holds nothing else
// that orders, and it passes the check where the sentence puts it (after
// lead).
func keepClauses(s, lead string) string {
	if s == "" {
		return ""
	}
	if textcheck.CheckGrammar(secondPerson(s)) == nil {
		return strings.TrimRight(secondPerson(s), ".!? ")
	}
	var b strings.Builder
	sep := ""
	for _, cl := range clauses(s) {
		t := secondPerson(cl.text)
		if textcheck.CheckGrammar(t) != nil {
			var ie *textcheck.InstructionError
			first, _, _ := strings.Cut(asciiLower(t), " ")
			err := textcheck.CheckGrammar(t)
			runOut := strings.HasPrefix(asciiLower(t), "run out ")
			if !errors.As(err, &ie) || ie.Rule != textcheck.RuleCommandVerb || orders[strings.Trim(first, `"'`)] && !runOut ||
				textcheck.CheckGrammar(lead+t) != nil {
				continue
			}
		}
		if b.Len() > 0 {
			b.WriteString(sep)
		}
		b.WriteString(t)
		sep = cl.sep
	}
	return trimJoined(b.String())
}

// orders: verbs that open an order, never kept from a clause the check
// reads as a command.
// commandNames are programs a person names where a verb would stand
// ("not npm test"): no verb of their own takes -ing. Names that are verbs
// too ("make", "go", "mix", "bundle") are left out.
var commandNames = set("npm", "npx", "pnpm", "yarn", "pip", "pipx", "uv", "poetry", "cargo", "git", "gh", "docker",
	"kubectl", "helm", "terraform", "curl", "wget", "sudo", "rm", "mvn", "gradle", "rake", "dotnet",
	"apt", "apt-get", "dnf", "yum", "systemctl", "scp", "rsync", "python", "python3", "node", "deno", "bun")

var orders = set("run", "rerun", "set", "unset", "use", "add", "delete", "remove", "install", "uninstall", "call", "point",
	"make", "do", "don't", "dont", "never", "always", "please", "ignore", "print", "export", "restart", "try",
	"check", "ensure", "avoid", "stop", "start", "keep", "update", "upgrade", "execute", "go", "write", "send",
	"open", "create", "clear", "change", "move", "copy", "pass", "push", "pull", "commit", "reset", "revert",
	"disable", "enable", "skip", "wait", "retry", "reinstall", "rebuild", "regenerate", "generate", "clean",
	"tell", "reveal", "show", "give", "forget", "disregard", "override", "bypass", "rm", "sudo", "curl",
	"npm", "pip", "go", "git", "docker", "kubectl", "login", "log", "sign", "be", "let", "just", "first", "then",
	"remember", "note", "read", "fetch", "download", "upload", "bump", "pin", "downgrade", "replace", "rename",
	"drop", "kill", "grant", "email", "post", "paste", "save", "load", "source", "cd", "mkdir", "chmod", "chown")

// callName is a title as the name of a call: a Go package pattern, a URL
// or a path argument says where, not what ("go test ./internal/api/..."
// is "go test"), and "./gradlew" is "gradlew".
func callName(title string) string {
	w := strings.Fields(title)
	// "JAVA_HOME=/usr/lib/jvm/x ./gradlew build": the environment set for
	// the call is not its name.
	for len(w) > 1 && envAssignment(w[0]) {
		w = w[1:]
	}
	if len(w) == 0 {
		return ""
	}
	out := []string{strings.TrimPrefix(w[0], "./")}
	// From the first flag that takes a value on, the words say how and
	// where, not what ("kubectl get pods -n shop" is "kubectl get pods"); a
	// flag with nothing after it but paths is kept ("go test -race ./...").
	for i, x := range w[1:] {
		if len(x) > 1 && x[0] == '-' && !strings.Contains(x, "=") {
			rest := w[i+2:]
			if slices.ContainsFunc(rest, func(y string) bool { return !pathArg(y) }) {
				w = w[:i+1]
				if len(x) <= 4 && x[1] != '-' && x != "-c" && x != "-e" && len(rest) > 0 && (rest[0][0] == '\'' || rest[0][0] == '"') {
					// "sed -i 's/a/b/' f", "grep -oP '(?<=x)y' f": a short
					// flag before a quoted script says how the tool ran
					// ("sed -i"); the script does not, nor "-c" or "-e",
					// which only say that code follows ("python -c").
					w = append(w, x)
				}
				break
			}
		}
	}
	for _, x := range w[1:] {
		if generatedName(x) {
			continue // "web-5f6d7c8b9-abcde", a pod's name
		}
		if strings.Contains(x, "...") || strings.Contains(x, "://") || strings.HasPrefix(x, "./") || strings.HasPrefix(x, "../") ||
			strings.HasPrefix(x, "//") || strings.HasPrefix(x, "~/") || strings.HasPrefix(x, "/") && strings.Count(x, "/") > 1 && !httpVerbs[w[0]] ||
			x == "." || len(x) > 1 && strings.HasSuffix(x, "/") && !httpVerbs[w[0]] {
			continue
		}
		out = append(out, x)
	}
	name := strings.Join(out, " ")
	// "docker build (RUN pip install" once its flags went: a remark left
	// open goes.
	if strings.Count(name, "(") > strings.Count(name, ")") {
		if k := strings.LastIndex(name, " ("); k > 0 {
			name = name[:k]
		}
	}
	return name
}

var greetedName = regexp.MustCompile(`\b(Hi|Hello|Hey|Welcome),? [^\s!,.]+!`)

// dropOwnNames leaves out of a field the names an organisation gives its
// own resources, which output quotes and a lesson must not carry (SPEC
// §6): a bucket URL (s3://, gs://, az://, with the "to" or "from" before
// it), an image or module path on a registry or forge
// ("ghcr.io/acme/api:1.4", "github.com/acme/*": a host with a dot and two
// or more path segments), the value of an environment variable set to a
// URL or path ("HTTPS_PROXY=http://proxy.corp:3128" is "HTTPS_PROXY"),
// and a quoted name after a resource's noun ("resource group 'rg-x-1'",
// "namespace "team-a"") that is an identifier, not a word. The owner of a
// dropped path (its first segment) goes wherever else it stands as a
// word. What failed is told by the error code and message around them.
// A greeting's name ("Hi dana-personal!", a forge greeting the account it
// authenticated) goes too.
func dropOwnNames(s string) string {
	s = greetedName.ReplaceAllString(s, "$1!")
	if !strings.Contains(s, "/") && !strings.ContainsAny(s, `'"`) {
		return s
	}
	w := strings.Fields(s)
	owners := map[string]bool{}
	out := make([]string, 0, len(w))
	for i, x := range w {
		core := strings.Trim(x, `'"`+"`"+`,;:()`)
		end := x[len(strings.TrimRight(x, `,;:.`)):]
		switch {
		case bucketURL(core):
			if n := len(out); n > 0 && (out[n-1] == "to" || out[n-1] == "from" || out[n-1] == "in" || out[n-1] == "at") {
				out = out[:n-1]
			}
			if end != "" && len(out) > 0 {
				out[len(out)-1] += end
			}
			continue
		case registryPath(core):
			if seg := strings.Split(core, "/"); len(seg) > 2 {
				owners[seg[1]] = true
			}
			if end != "" && len(out) > 0 {
				out[len(out)-1] += end
			}
			continue
		case envAssignedPath(core):
			k := strings.IndexByte(core, '=')
			if _, v, _ := strings.Cut(core, "="); registryPath(v) {
				owners[strings.Split(v, "/")[1]] = true
			}
			out = append(out, core[:k]+end)
			continue
		case i > 0 && quotedIdentifier(x) && resourceNouns[strings.ToLower(strings.Trim(w[i-1], `:,`))]:
			if end != "" && len(out) > 0 {
				out[len(out)-1] += end
			}
			continue
		}
		out = append(out, x)
	}
	if len(owners) > 0 {
		kept := out[:0]
		for _, x := range out {
			if owners[strings.Trim(x, `'"`+"`"+`,;:.()`)] {
				continue
			}
			kept = append(kept, x)
		}
		out = kept
	}
	return strings.Join(out, " ")
}

func bucketURL(x string) bool {
	for _, p := range []string{"s3://", "gs://", "az://", "abfss://", "wasbs://"} {
		if strings.HasPrefix(x, p) && len(x) > len(p) {
			return true
		}
	}
	return false
}

// registryPath: host.tld/owner/name…, no scheme ("ghcr.io/acme/api:1.2",
// "github.com/acme/*"); "networking.k8s.io/v1" has one segment only.
func registryPath(x string) bool {
	if strings.Contains(x, "://") {
		return false
	}
	seg := strings.Split(x, "/")
	host, _, _ := strings.Cut(seg[0], ":")
	dot := strings.LastIndexByte(host, '.')
	if len(seg) < 3 || dot <= 0 || len(host)-dot-1 < 2 || !isLetters(host[dot+1:]) || seg[1] == "" || seg[1] == "library" {
		return false
	}
	for _, c := range seg[0] {
		if !(unicode.IsLower(c) || unicode.IsDigit(c) || c == '.' || c == '-' || c == ':') {
			return false
		}
	}
	return true
}

// envAssignment: NAME=value, NAME in capitals.
func envAssignment(x string) bool {
	k, _, ok := strings.Cut(x, "=")
	return ok && k != "" && strings.IndexFunc(k, func(r rune) bool { return !unicode.IsUpper(r) && r != '_' && !unicode.IsDigit(r) }) < 0
}

// envAssignedPath: NAME=<a URL or a registry path>.
func envAssignedPath(x string) bool {
	k, v, ok := strings.Cut(x, "=")
	if !ok || k == "" || v == "" || strings.IndexFunc(k, func(r rune) bool { return !unicode.IsUpper(r) && r != '_' && !unicode.IsDigit(r) }) >= 0 {
		return false
	}
	return strings.Contains(v, "://") || registryPath(v)
}

// quotedIdentifier: a quoted single name with a hyphen, an underscore or a
// digit in it ('rg-platform-prod', "team_a"), not a word.
func quotedIdentifier(x string) bool {
	x = strings.TrimRight(x, ",;:.")
	if len(x) < 3 || !strings.ContainsAny(x[:1], `'"`) || x[len(x)-1] != x[0] {
		return false
	}
	in := x[1 : len(x)-1]
	return in != "" && strings.ContainsAny(in, "-_0123456789") && !strings.ContainsAny(in, " /:.@")
}

var resourceNouns = set("group", "namespace", "pod", "release", "bucket", "project", "subscription", "cluster", "vault",
	"deployment", "secret", "account", "workspace", "repository", "registry", "database", "instance", "queue", "topic", "table")

// homeTilde writes a path under a user's home directory from "~/"
// ("/home/dana/.ssh/config" is "~/.ssh/config"): the user's name goes,
// the part that says what the file is stays.
func homeTilde(s string) string {
	for _, root := range []string{"/home/", "/Users/"} {
		for from := 0; ; {
			k := strings.Index(s[from:], root)
			if k < 0 {
				break
			}
			at := from + k
			if at > 0 && !strings.ContainsRune(" '\"`(=:", rune(s[at-1])) {
				from = at + len(root)
				continue
			}
			rest := s[at+len(root):]
			slash := strings.IndexByte(rest, '/')
			if slash <= 0 || strings.ContainsAny(rest[:slash], " '\"`") {
				from = at + len(root)
				continue
			}
			s = s[:at] + "~/" + rest[slash+1:]
			from = at + 2
		}
	}
	return s
}

// fitStatements shortens facts too long for one sentence by whole
// statements (the parts between "; " outside quotes), not by cutting the
// last one: a statement that is mostly a quoted command goes first, then
// the statements are kept in order as long as they fit.
func fitStatements(s string) string {
	if utf8.RuneCountInString(s) <= MaxSentence-2 {
		return s
	}
	var parts []string
	start, tick := 0, false
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '`':
			tick = !tick
		case !tick && (s[i] == ';' || s[i] == '.') && i+1 < len(s) && s[i+1] == ' ':
			parts = append(parts, strings.TrimSpace(s[start:i]))
			start = i + 2
		}
	}
	parts = append(parts, strings.TrimSpace(s[start:]))
	if len(parts) < 2 || tick {
		return s
	}
	code := func(p string) int {
		n, in, from := 0, false, 0
		for i := 0; i < len(p); i++ {
			if p[i] == '`' {
				if in {
					n += i - from
				}
				in, from = !in, i
			}
		}
		return n
	}
	var kept []string
	for _, p := range parts {
		if code(p) > 30 {
			continue
		}
		try := strings.Join(append(append([]string(nil), kept...), p), "; ")
		if utf8.RuneCountInString(try) <= MaxSentence-2 {
			kept = append(kept, p)
			continue
		}
		// Too long whole: its longest head that ends at a clause's
		// boundary (" (", ", ", " and ", " which ") and fits.
		room := MaxSentence - 2 - utf8.RuneCountInString(strings.Join(kept, "; ")) - 2
		best := ""
		for _, sep := range []string{" (", ", ", " and ", " which "} {
			for k := strings.Index(p, sep); k > 0; {
				if head := p[:k]; utf8.RuneCountInString(head) <= room && len(head) > len(best) && len(strings.Fields(head)) >= 4 &&
					strings.Count(head, "`")%2 == 0 {
					best = head
				}
				n := strings.Index(p[k+len(sep):], sep)
				if n < 0 {
					break
				}
				k += len(sep) + n
			}
		}
		if best != "" {
			kept = append(kept, best)
			break
		}
	}
	if len(kept) == 0 {
		return s
	}
	out := strings.Join(kept, "; ")
	return strings.ToUpper(out[:1]) + out[1:]
}

// unquotePlaceholders takes the quotes off a redaction's placeholder
// that stands alone in them ("named '/bin/bash\r'" redacted is "named
// 'a system file'", which reads as a quoted message that never was).
func unquotePlaceholders(s string) string {
	if !strings.ContainsAny(s, "'\"`") {
		return s
	}
	for _, p := range textcheck.Placeholders() {
		path := strings.Contains(p, "file") || strings.Contains(p, "path")
		for _, q := range []string{"'", `"`, "`"} {
			quoted := q + p + q
			for from := 0; ; {
				k := strings.Index(s[from:], quoted)
				if k < 0 {
					break
				}
				at := from + k
				// A path, or a place after its preposition ("at 'an
				// internal host'"); a quoted name ("Repository 'a
				// person'") stays, and the sentence is a draft.
				if prev := strings.ToLower(lastWord(s[:at])); path || placePrepositions[prev] {
					s = s[:at] + p + s[at+len(quoted):]
					from = at + len(p)
					continue
				}
				from = at + len(quoted)
			}
		}
	}
	return s
}

var placePrepositions = set("at", "to", "from", "on", "in", "for", "via", "with", "host")

// lastWord is the word that ends s.
func lastWord(s string) string {
	s = strings.TrimRight(s, " ")
	return s[strings.LastIndexByte(s, ' ')+1:]
}

// dropPlaceholders leaves out of a call's name the arguments the
// redaction replaced ("ssh an e-mail address" is "ssh"): where raw data
// was, the call said where, not what.
func dropPlaceholders(call string) string {
	for _, p := range textcheck.Placeholders() {
		for {
			k := strings.Index(call, p)
			if k <= 0 {
				break
			}
			call = strings.TrimSpace(call[:k]) + " " + strings.TrimSpace(call[k+len(p):])
		}
	}
	return strings.Join(strings.Fields(call), " ")
}

// generatedName: a name a system made up, with two hyphens or more and a
// digit ("api-7d9f8b6c4-xk2lp").
func generatedName(x string) bool {
	return strings.Count(x, "-") >= 2 && strings.IndexFunc(x, unicode.IsDigit) >= 0 && !strings.HasPrefix(x, "-")
}

// pathArg: an argument that says where ("./...", "dist/", ".", a URL).
func pathArg(x string) bool {
	return x == "." || x == ".." || strings.Contains(x, "...") || strings.Contains(x, "://") || strings.HasPrefix(x, "./") ||
		strings.HasPrefix(x, "../") || strings.HasPrefix(x, "/") || strings.HasSuffix(x, "/") || strings.HasPrefix(x, "~/")
}

var httpVerbs = set("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")

// otherCause is the cause another episode of the cluster states ("when
// GOBIN is not on PATH"), for a sentence whose own episode states none.
func otherCause(es []Episode, chosen Episode, f func(string) string) string {
	for _, o := range es {
		if o == chosen {
			continue
		}
		if _, cause := splitCause(strings.TrimRight(f(o.Happened), ".!? ")); cause != "" {
			if c := keepClauses(cause, "It fails "); c != "" {
				return c
			}
		}
	}
	// A note or a report of the environment in the cluster says why: its
	// first clause that is a statement of four words or more.
	for _, o := range es {
		if o == chosen || strings.EqualFold(o.Kind, "error") || strings.EqualFold(o.Kind, "correction") {
			continue
		}
		src := o.Text
		if strings.TrimSpace(src) == "" {
			src = o.Happened
		}
		for _, cl := range clauses(facts(strings.TrimRight(f(src), ".!? "))) {
			if len(strings.Fields(cl.text)) < 4 || textcheck.CheckObservation(finish(cl.text)) != nil || textcheck.Pasted(finish(cl.text)) != "" {
				continue
			}
			t := cl.text
			if f := firstField(t); proseOpeners[f] && f != "It" {
				t = strings.ToLower(f) + t[len(f):]
			}
			if strings.HasPrefix(asciiLower(t), "because ") {
				return t
			}
			return "because " + t
		}
	}
	return ""
}

// newWords counts the words of s of four letters or more that are not in
// in: what a clause would add to a sentence.
func newWords(s, in string) int {
	have := map[string]bool{}
	for _, w := range strings.FieldsFunc(asciiLower(in), notWordRune) {
		have[w] = true
	}
	n := 0
	for _, w := range strings.FieldsFunc(asciiLower(s), notWordRune) {
		if len(w) >= 4 && !have[w] && !causeWordSet[w] {
			n++
		}
	}
	return n
}

var causeWordSet = set(causeWords...)

func notWordRune(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }

// agree puts verb in the plural after a plural subject ("the
// integration tests fail").
func agree(subject, verb string) string {
	w := strings.Fields(asciiLower(subject))
	if len(w) < 2 || w[0] != "the" {
		return verb
	}
	last := w[len(w)-1]
	if !strings.HasSuffix(last, "s") || strings.HasSuffix(last, "ss") || strings.HasSuffix(last, "us") {
		return verb
	}
	switch verb {
	case "is":
		return "are"
	case "fails":
		return "fail"
	}
	return verb
}

// capitalise writes a sentence's first letter as a capital when its first
// word is an ordinary lower-case word, not a command ("npm", "git").
func capitalise(s string) string {
	first, _, _ := strings.Cut(s, " ")
	if first == "" || orders[first] {
		return s
	}
	for _, r := range first {
		if !unicode.IsLower(r) {
			return s
		}
	}
	r, size := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[size:]
}

// beforeOrder is s up to its first clause that reads as an order (see
// keepClauses), so that a cause is not looked for in the advice that
// follows a fact ("flaky on ARM; the agent should rerun it until it
// passes" is "flaky on ARM").
func beforeOrder(s, lead string) string {
	var b strings.Builder
	for _, cl := range clauses(s) {
		if keepClauses(cl.text, lead) == "" {
			if strings.HasPrefix(cl.text, "`") && b.Len() > 0 {
				continue // "`od -c run.sh` shows ...": a command quoted is named, not ordered; what follows stays
			}
			return strings.TrimRight(b.String(), ",;: ")
		}
		b.WriteString(cl.text)
		b.WriteString(cl.sep)
	}
	return s
}
