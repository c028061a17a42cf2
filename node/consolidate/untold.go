package consolidate

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/remem/remem/protocol/textcheck"
)

// MaxUntold is how many lines of output Untold gives at most: what a
// person rewriting a draft reads at a glance.
const MaxUntold = 10

// Untold returns what the cluster's tool output, notes and corrections
// state that sentence does not (what happened in the agent's own words is
// what the sentence tells, or says again, unless the sentence cut it
// short): the lines with facts of their own (words or codes the sentence
// lacks), cleaned as Essential cleans a line and redacted as Write
// redacts a field, each without the clauses that read as instructions, in
// the order the events hold them, at most MaxUntold.
//
// The default writer tells one line of what failed and, when it finds
// one, its cause; the rest of the output often holds what a reader needs
// (a "Caused by", a hint's diagnosis, the version a tool names). A
// sentence that leaves such lines out is not what happened in full, so the
// node keeps it as a draft that carries them (SPEC §3: kept, used for
// matching, never signed until a writer says it all as a sentence).
func (w DefaultWriter) Untold(c Cluster, sentence string) []string {
	return w.untold(c, sentence, false)
}

// Facts is what a draft carries when the default writer could not write
// a sentence of the cluster at all (every candidate read as an order to
// the checks, or gave nothing): its call ("go test fails"), then Untold of
// an empty sentence with the agent's own accounts too, so that no fact of
// the events is lost from the lessons (SPEC §3: kept, never signed).
func (w DefaultWriter) Facts(c Cluster) (lead string, lines []string) {
	for _, e := range c.Episodes {
		if t := subject(dropPlaceholders(callName(e.Title))); t != "" && strings.EqualFold(strings.TrimSpace(e.Kind), "error") {
			if w.Redact != nil {
				t = w.Redact(t)
			}
			lead = t + " " + agree(t, "fails") + "."
			break
		}
	}
	return lead, w.untold(c, "", true)
}

// untold is Untold; accounts says the agent's own accounts of what
// happened are read whole, not only where the sentence cut them.
func (w DefaultWriter) untold(c Cluster, sentence string, accounts bool) []string {
	told := wordSet(sentence)
	var out []string
	seen := map[string]bool{}
	// addOne takes one statement; agents says it is in an agent's or a
	// person's words, where a few words left out are what the sentence
	// lost (a cut note), not a line of output saying its message again.
	var addOne func(l string, agents, whole bool)
	addOne = func(l string, agents, whole bool) {
		if advice(l) {
			return // what to do ("If you wish to ...", "make sure ..."), not what happened
		}
		l = homeTilde(l)
		if w.Redact != nil {
			l = w.Redact(l)
		}
		line := unquotePlaceholders(dropOwnNames(l))
		l = strings.TrimRight(facts(line), ".:;, ")
		if l == "" && !agents {
			// A tool's hint that is all order ("See PEP 668 for the
			// detailed specification") is reported as what it printed.
			l = reportedLine(line)
		}
		key := strings.ToLower(l)
		if l == "" || seen[key] || len(out) >= MaxUntold {
			return
		}
		if textcheck.CheckObservation(l+".") != nil {
			// The checks read the statement whole as an order, though each
			// clause passed the grammar (facts): the model of orders reads
			// a whole text. Its clauses that pass alone are kept, so that
			// a refused statement does not take its facts with it.
			if cls := clauses(l); whole && len(cls) > 1 {
				for _, cl := range cls {
					addOne(cl.text, agents, false)
				}
			}
			return
		}
		seen[key] = true
		// A statement the sentence tells cut short: what it lost is
		// untold, however few its words.
		cut := agents && cutIn(sentence, l)
		if n, code, all := newFacts(l, told); !cut && (n < 2 && !code || !agents && n*5 < all*2) {
			return // it says again what the sentence or a line before said
		}
		for k := range wordSet(l) {
			told[k] = true
		}
		out = append(out, l)
	}
	add := func(field string, agents bool) {
		for _, l := range statements(field) {
			addOne(l, agents, true)
		}
	}
	for _, e := range c.Episodes {
		switch strings.ToLower(strings.TrimSpace(e.Kind)) {
		case "correction":
			add(e.Said, true) // what the person stated; their orders go
			continue
		case "note":
			add(e.Text, true)
			continue
		}
		if !looksLikeOutput(e.Happened) {
			// The agent's words, which the sentence tells or says again:
			// only what it cut off them is untold.
			for _, l := range statements(e.Happened) {
				if accounts || cutIn(sentence, l) || !toldIn(sentence, l) {
					addOne(l, true, true)
				}
			}
			continue
		}
		for _, l := range outputFacts(e.Happened) {
			add(l, false)
		}
	}
	return out
}

// reportedLine is a line of tool output in reported speech, "the output
// says '<line>'" (SPEC §6: quoted words are reported), or "" when the line
// holds a quote of its own or does not pass the checks so.
func reportedLine(line string) string {
	line = strings.TrimRight(strings.TrimSpace(line), ".:;, ")
	if line == "" || strings.ContainsAny(line, "'`#") || len(strings.Fields(line)) < 3 || commandNames[firstField(line)] {
		return "" // "git config pull.rebase false  # merge": a command to run, not a message
	}
	q := "the output says '" + line + "'"
	if textcheck.CheckObservation(q+".") != nil {
		return ""
	}
	return q
}

// cutIn: sentence holds the opening of statement st (its first 40
// characters) but not st whole, so the writer cut it.
func cutIn(sentence, st string) bool {
	low, st := strings.ToLower(sentence), strings.ToLower(strings.Join(strings.Fields(st), " "))
	if utf8.RuneCountInString(st) <= 40 {
		return false
	}
	return strings.Contains(low, string([]rune(st)[:40])) && !strings.Contains(low, st)
}

// outputFacts are the lines of tool output that may state a fact: the
// lines Essential weighs, and the hints, notes and details it leaves out
// as advice (their diagnosis is a fact; their orders go later, clause by
// clause), each cleaned. Tables, stack frames, progress and status lines,
// rules and prompts go.
func outputFacts(s string) []string {
	var out []string
	table, status := false, -1
	for _, raw := range joinWrapped(allLines(stripEscapes(s))) {
		if strings.HasPrefix(strings.TrimSpace(raw), "-- ") {
			continue
		}
		l := cleanLine(raw)
		if rest, ok := warningRest(raw); ok {
			l = cleanLine(rest) // a warning states a fact, though it is not the failure
		}
		if tableHeader(l) {
			table, status = true, slices.Index(strings.Fields(l), "STATUS")
			continue
		}
		if table && !isProse(l) && (strings.Contains(strings.TrimSpace(raw), "  ") || strings.Contains(raw, "\t")) {
			// A row's status is a fact ("ImagePullBackOff" in kubectl's
			// pods), when it is one word that names a state gone wrong.
			if f := strings.Fields(l); status >= 0 && status < len(f) && badStatus(f[status]) {
				out = append(out, "the status is "+f[status])
			}
			continue
		}
		if rest, ok := strings.CutPrefix(strings.TrimLeft(l, "= "), "help: consider "); ok && opensWithGerund(rest) {
			l = "the output suggests " + rest // rustc's "= help: consider downloading the target with `rustup target add …`"
		}
		table = false
		if rest, ok := adviceRest(l); ok {
			l = rest
		} else if l == "" || shapeNoise(l) && !factField(l) || progressLine(l) {
			continue
		}
		if l = strings.TrimRight(l, ": "); len(strings.Fields(l)) >= 3 {
			out = append(out, l)
		}
	}
	return out
}

// statements cuts a line into its sentences (at ". " before a capital
// or a quote, outside quotes), so that a line that states a fact and then
// orders ("'x' is deprecated. Please use 'y' instead.") keeps its fact.
func statements(l string) []string {
	var out []string
	start, quote := 0, rune(0)
	for i, r := range l {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '"' || r == '`':
			quote = r
		case r == '.' && i+2 < len(l) && l[i+1] == ' ':
			if c := rune(l[i+2]); unicode.IsUpper(c) || c == '\'' || c == '"' || c == '`' {
				out = append(out, strings.TrimSpace(l[start:i]))
				start = i + 2
			}
		}
	}
	if t := strings.TrimSpace(l[start:]); t != "" {
		out = append(out, t)
	}
	return out
}

// factField: a field of a tool's report that holds what failed or why
// ("Reason: OOMKilled", "Exit Code: 137", "ErrorCode: ...", "Message:
// The node was low on resource"), or a warning's text, which shapeNoise
// reads as a status line or a log's.
func factField(l string) bool {
	k := strings.Index(l, ":")
	if k <= 0 || k > 24 {
		return false
	}
	switch strings.ToLower(strings.TrimLeft(l[:k], "# ")) {
	case "message", "reason", "exit code", "errorcode", "error code", "error", "warning", "warn", "caused by":
		return true
	}
	return false
}

// warningRest is a warning's text without its label ("WARNING:",
// "warning:", "npm WARN", "# Warning:").
func warningRest(raw string) (string, bool) {
	t := strings.TrimLeft(strings.TrimSpace(raw), "# ")
	for _, p := range []string{"WARNING:", "warning:", "Warning:", "npm WARN ", "WARN "} {
		if rest, ok := strings.CutPrefix(t, p); ok && strings.TrimSpace(rest) != "" {
			return strings.TrimSpace(rest), true
		}
	}
	return "", false
}

// adviceRest is a hint's, note's or detail's text without its label:
// "hint: You have divergent branches" states that they diverge.
func adviceRest(l string) (string, bool) {
	for _, p := range []string{"hint:", "note:", "Note:", "help:", "DETAIL:", "Detail:", "HINT:", "NOTE:"} {
		if rest, ok := strings.CutPrefix(l, p); ok {
			return strings.TrimSpace(rest), true
		}
	}
	return "", false
}

// newFacts counts the words of l that told lacks and that carry a fact: a
// word of four letters or more that is no function word, or any word with
// a digit or a mark of code in it ("edition2024", "pull.rebase", "E0425").
// It also says whether one of them is such a code, and how many words
// of l could carry a fact at all.
func newFacts(l string, told map[string]bool) (n int, code bool, all int) {
	for w := range wordSet(l) {
		if untoldFiller[w] {
			continue
		}
		isCode := strings.IndexFunc(w, func(r rune) bool { return unicode.IsDigit(r) || strings.ContainsRune("._-@/", r) }) >= 0
		if !isCode && utf8.RuneCountInString(w) < 4 {
			continue
		}
		all++
		if !told[w] {
			n++
			code = code || isCode
		}
	}
	return n, code, all
}

// progressLine: a line of a build's progress or a tool's status ("[+]
// Building 3.4s (9/11)", "=> => transferring context: 112B 0.0s",
// "service/api unchanged").
func progressLine(l string) bool {
	w := strings.Fields(l)
	if len(w) == 0 {
		return true
	}
	switch last := w[len(w)-1]; {
	case strings.HasPrefix(l, "=>") || strings.HasPrefix(l, "[+]") || strings.HasPrefix(l, "> "):
		return true
	case len(w) == 2 && strings.Contains(w[0], "/") && progressStates[last]:
		return true
	case strings.HasSuffix(last, "s") && allDigitsStr(strings.ReplaceAll(strings.TrimSuffix(last, "s"), ".", "")) && len(last) > 1:
		return true // a duration at the end: "0.0s"
	}
	return false
}

var progressStates = set("unchanged", "configured", "created", "deleted", "patched", "serverside-applied")

// wordSet is the lower-cased words of s, cut at spaces and trimmed of the
// punctuation around them.
func wordSet(s string) map[string]bool {
	out := map[string]bool{}
	for _, f := range strings.Fields(strings.ToLower(s)) {
		if f = strings.Trim(f, ".,;:!?()[]{}'\"`<>*"); f != "" {
			out[f] = true
		}
	}
	return out
}

// untoldFiller are words that say no fact of their own in tool output.
var untoldFiller = set("error", "errors", "failed", "fails", "failure", "with", "from", "that", "this", "there", "their",
	"have", "been", "were", "when", "which", "while", "will", "would", "could", "should", "into", "your", "also", "more",
	"information", "please", "then", "than", "because", "about", "after", "before", "only", "some", "such", "these",
	"those", "what", "where", "warning", "fatal", "does", "not", "cannot", "unable", "found", "exit", "code", "status",
	"caused", "agent", "agent's", "it's")

// toldIn: sentence tells statement st, or the opening of it (cutIn): its
// first words stand in the sentence. A statement of the agent's account
// that the sentence left out whole is untold as much as one it cut.
func toldIn(sentence, st string) bool {
	w := strings.Fields(strings.ToLower(st))
	if len(w) > 4 {
		w = w[:4]
	}
	return strings.Contains(strings.ToLower(sentence), strings.Join(w, " "))
}

// badStatus: a table's status word that says something went wrong
// ("ImagePullBackOff", "CrashLoopBackOff", "Error", "Pending"), not a
// healthy one ("Running", "Completed", "Ready").
func badStatus(w string) bool {
	switch strings.ToLower(w) {
	case "running", "completed", "ready", "active", "up", "ok", "healthy", "succeeded", "bound", "available", "true":
		return false
	}
	return len(w) > 3 && isLetters(strings.ReplaceAll(w, ":", "")) && unicode.IsUpper(rune(w[0]))
}

// opensWithGerund: s opens with an -ing form ("downloading the target ...").
func opensWithGerund(s string) bool {
	w, _, _ := strings.Cut(s, " ")
	return len(w) > 4 && strings.HasSuffix(w, "ing")
}
