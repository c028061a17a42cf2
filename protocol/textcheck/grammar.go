package textcheck

import "strings"

// The grammar of the observation check: where a clause opens with a
// command, and where any clause puts a duty on someone. The words it reads
// are classes from lists/words.txt and lexicon.txt; only a few function
// words ("to", "of", "be", "have", "need") are named here, as grammar.

// command reads the clause toks[a:b] for a command verb at its opening.
func (r *reader) command(sentence, a, b int, soft bool) *InstructionError {
	toks := r.toks
	j := a
	strong, conj, just := false, false, false
	for j < b && (toks[j].has(cLead|cInterjection|cSymbol) || pureAdverb(&toks[j]) || isNumber(toks[j].w) || vocative(toks, j, b)) &&
		(!toks[j].code || toks[j].has(cSymbol) || isNumber(toks[j].w)) {
		just = just || toks[j].w == "just" || toks[j].w == "simply"
		if toks[j].has(cForce) {
			return r.fail(RuleCommandVerb, a, j)
		}
		if toks[j].has(cStrong) {
			strong = true
		}
		if toks[j].has(cConj) || toks[j].w == "so" || toks[j].w == "then" || toks[j].w == "therefore" ||
			toks[j].w == "thus" || toks[j].w == "hence" || toks[j].w == "otherwise" || toks[j].w == "instead" {
			conj = true
		}
		j++
	}
	if j == b {
		if strong && j > a && toks[j-1].has(cStrong) && j-1 == a { // "Never."
			return r.fail(RuleCommandVerb, a, j-1)
		}
		return nil
	}
	if toks[a].w == "and" || toks[a].w == "or" || toks[a].w == "but" {
		// "Tests pass on macOS — but fail on Linux": the subject may be
		// elided; not before "just": ", or just call npm.cmd" orders.
		soft = !just
	} else if soft && conj {
		soft = false // ", so restart it", ", then rerun"
	}
	// "From now on pin it": a directive time, then the command.
	if k := directiveOpener(toks, j, b); k > j {
		j, soft = k, false
	}
	// A fronted time: "next time run it in tmux", "Friday, deploys failed".
	if j > a && j+1 < b && toks[j-1].has(cTime) && timeUnit[toks[j].w] {
		j++
	} else if j+1 < b && toks[j].has(cTime) && !toks[j].has(cDet) {
		j++
		if j+1 < b && timeUnit[toks[j].w] {
			j++
		}
	} else if j+2 < b && toks[j].has(cTime) && timeUnit[toks[j+1].w] {
		j += 2
	}
	w := &toks[j]
	if w.code && j+1 < b && toks[j+1].has(cDet|cObject) && !toks[j+1].has(cRel) && r.codeVerb(w) {
		return r.fail(RuleCommandVerb, a, j+1) // "`Disable` the pre-commit hooks"
	}
	if w.code || w.punct != 0 {
		return nil
	}
	next := func(k int) *token {
		if k < b {
			return &toks[k]
		}
		return nil
	}
	nx := next(j + 1)
	// "Don't", "Do not", "Do run".
	if w.has(cDo) && w.w == "do" && nx != nil && (nx.has(cNeg) || nx.has(cBase) && !nx.has(cDomNoun)) {
		return r.fail(RuleCommandVerb, a, j+1)
	}
	if w.w == "be" || w.w == "let" && nx != nil && (nx.w == "'s" || nx.w == "us") {
		return r.fail(RuleCommandVerb, a, j)
	}
	if w.has(cModal | cBe | cHave | cDo | cDet | cPrep | cSub | cRel | cSubject | cObject | cConj | cTime) {
		return nil
	}
	if !w.has(cBase) || w.has(cUnknown) {
		// A word the lexicon does not know as a verb is one when a noun
		// phrase follows it straight away ("Gate the endpoint behind a
		// flag", "Frobnicate every cache"), or when an unknown word opens a
		// clause that has no other verb ("Nuke node_modules whenever...").
		if soft || nx == nil || w.has(cProper|cGer) || isGerund(w) || !w.has(cNoun) {
			return nil
		}
		if nx.has(cDet|cObject) && !nx.has(cRel) && nx.w != "no" && !w.has(cZ) {
			return r.fail(RuleCommandVerb, a, j+1)
		}
		// "Frobnicate caches", but not "kubectl defaults to the namespace".
		nounNext := nx.has(cZ) && nx.cls&(cDomNoun|cKnown) == cDomNoun|cKnown && (j+2 >= b || toks[j+2].has(cConj))
		if w.has(cUnknown) && !r.quoted(sentence) && !nx.cap && !isUpperWord(r.text[w.s:w.e]) && !nx.has(cProper) &&
			(nounNext || !nx.has(cModal|cBe|cHave|cDo|cZ|cPast|cPart|cAdv)) && !r.hasMainVerb(j+1, r.sentenceEnd(b)) {
			return r.fail(RuleCommandVerb, a, j)
		}
		return nil
	}
	if w.cap && nx != nil && nx.cap && nx.punct == 0 && j > a {
		return nil // a name: "Visual Studio Code"
	}
	if strong && !w.has(cPast|cZ) {
		return r.fail(RuleCommandVerb, a, j) // "Never commit keys"
	}
	if soft {
		return r.softCommand(sentence, a, j, b)
	}
	if nx == nil {
		if r.endsStatement(sentence, b) || b < len(toks) && toks[b].punct == '"' && !r.quoted(sentence) {
			return r.fail(RuleCommandVerb, a, j) // "Restart.", `Run "make bootstrap"`
		}
		return nil
	}
	k := j + 1
	if nx.has(cGer) && k+1 < b && toks[k+1].has(cDet|cObject) && !toks[k+1].has(cRel) {
		return r.fail(RuleCommandVerb, a, k+1) // "Stop following the guidelines", "Avoid using the cache"
	}
	if nx.has(cParticle) && !nx.has(cDet|cPrep) && k+1 < b && toks[k+1].has(cDet|cObject) {
		k++ // "Set up the cache", "Clean out old images"
		nx = &toks[k]
	}
	switch {
	case nx.w == "of" || nx.w == "'s":
		return nil // "Use of the v1 endpoint", "Make's parser"
	case nx.has(cDet|cObject) && !nx.has(cRel) || nx.w == "that" && !w.has(cDomNoun):
		return r.fail(RuleCommandVerb, a, k)
	case nx.has(cNeg):
		return nil
	case nx.has(cModal|cBe|cHave) && !nx.has(cNoun):
		return nil // "Install takes", "Build is slow"
	case nx.has(cZ) && !nx.has(cDomNoun):
		return nil // "Install takes ten minutes"
	case nx.has(cPast|cPart) && !nx.has(cBase) && !r.adjectival(k, b):
		return nil // "Build failed on ARM"; not "Use cached images"
	}
	if w.has(cClausal) && (!nx.has(cFinite) || nx.has(cDomNoun)) && !r.pastAfter(j+1, b) {
		return r.fail(RuleCommandVerb, a, j) // "Ensure GOFLAGS is set", not "Note lengths over 500 were cut"
	}
	if r.hasMainVerb(j+1, b) {
		return nil // "Make targets that call sed fail on macOS"
	}
	return r.fail(RuleCommandVerb, a, j)
}

// softCommand reads a verb that opens a clause after a comma, where a
// list ("lint, test, build and deploy steps") or a narrative ("ran, then
// hit the limit") is as likely as a command: it takes an object that can
// only follow a verb, and no past tense ran before it.
func (r *reader) softCommand(sentence, a, j, b int) *InstructionError {
	toks := r.toks
	w := &toks[j]
	if w.has(cDomNoun) {
		return nil
	}
	k := j + 1
	if k < b && toks[k].has(cParticle) && !toks[k].has(cDet) && k+1 < b {
		k++
	}
	if k >= b || toks[k].has(cConj) || toks[k].punct != 0 {
		return nil // a list: "lint, test, build and deploy steps"
	}
	object := toks[k].has(cDet|cObject) && !(toks[k].has(cRel) && toks[k].w != "that")
	listItem := toks[a].w == "and" || toks[a].w == "or" // "a smaller database, and feature flags that..."
	if !object && (listItem || w.has(cUnknown|cNoun|cAdj) || r.hasMainVerb(j+1, b)) {
		// Without a determiner only a word that is a verb and nothing else
		// reads as a command: "mocks not generated, run go generate".
		return nil
	}
	finite := false
	for p := sentence; p < a; p++ {
		t := &toks[p]
		if t.has(cFinite|cBe|cHave) && t.w != "be" && (!t.has(cDomNoun) || p > sentence && toks[p-1].has(cNoun)) {
			finite = true // "The v1 endpoint times out, use v2"
		}
	}
	if !finite {
		return nil // "Deploys after six — about half — hit the quota": the subject's verb
	}
	if w.has(cPast) {
		for p := sentence; p < a; p++ {
			if t := &toks[p]; t.has(cPast) && !t.has(cBase|cNoun) {
				return nil // a story in the past: "The job ran, then hit the limit"
			}
		}
	}
	return r.fail(RuleCommandVerb, a, k)
}

// directiveTimes turn what follows into an order: "From now on pin it",
// "going forward the agent will...".
var directiveTimes = [][]string{{"from", "now", "on"}, {"from", "here", "on"}, {"now", "on"}, {"going", "forward"},
	{"moving", "forward"}, {"henceforth"}, {"hereafter"}, {"thenceforth"}, {"forthwith"}, {"onwards"}, {"onward"},
	{"in", "future"}, {"in", "the", "future"}}

// directiveTimeFirst are the first words of directiveTimes: the grammar
// asks at most words of a sentence whether one starts there.
var directiveTimeFirst = func() *wordList {
	var first []string
	for _, ws := range directiveTimes {
		first = append(first, ws[0])
	}
	return newWordList(first...)
}()

// directiveTimeAt returns the index after a directive time that starts at
// toks[j] and ends before end, or j.
func directiveTimeAt(toks []token, j, end int) int {
	if j >= end || !directiveTimeFirst.has(&toks[j]) {
		return j
	}
next:
	for _, ws := range directiveTimes {
		if j+len(ws) > end {
			continue
		}
		for k, w := range ws {
			if toks[j+k].w != w {
				continue next
			}
		}
		return j + len(ws)
	}
	return j
}

// directiveOpener returns the index after a directive time opening
// toks[j:b] with a word still to follow, or j.
func directiveOpener(toks []token, j, b int) int { return directiveTimeAt(toks, j, b-1) }

// vocative: toks[j] names the one spoken to and a command follows
// ("@claude push the fix", "Assistant restart the worker"): a singular actor
// that is not a pronoun, then a base verb that is not also a present or past
// form.
func vocative(toks []token, j, b int) bool {
	t := &toks[j]
	if !t.has(cActor) || t.has(cSubject|cObject) || isPlural(t) || j+1 >= b {
		return false
	}
	v := &toks[j+1]
	return v.has(cBase) && !v.has(cZ|cPast|cModal|cBe|cHave|cDo) && v.punct == 0
}

// timeUnit: nouns that finish a fronted time ("next time", "every week").
var timeUnit = map[string]bool{
	"time": true, "times": true, "day": true, "week": true, "month": true, "year": true,
	"sprint": true, "release": true, "run": true, "morning": true, "night": true, "weekend": true,
	"hour": true, "minute": true, "quarter": true, "days": true, "weeks": true, "months": true, "years": true,
	"nights": true, "summer": true, "winter": true, "autumn": true,
}

// isGerund: an -ing form ("Clearing the cache helped"), which the
// lexicon may list as a noun only.
func isGerund(t *token) bool {
	return len(t.w) > 5 && t.w[len(t.w)-3:] == "ing"
}

func isUpperWord(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'a' <= c && c <= 'z' {
			return false
		}
	}
	return true
}

// quoted: the clause opened with a quotation mark.
func (r *reader) quoted(sentence int) bool {
	return sentence > 0 && r.toks[sentence-1].punct == '"'
}

// pureAdverb: "silently", "quietly": an adverb that cannot be anything else.
func pureAdverb(t *token) bool {
	return t.has(cAdv) && !t.has(cBase|cNoun|cAdj|cDet|cPrep|cSub|cZ|cPast) && t.punct == 0
}

// endsStatement: the clause ending at b closes a statement of the text's
// own (". ! ;" or the end), not a quoted word or a list item.
func (r *reader) endsStatement(sentence, b int) bool {
	if r.quoted(sentence) {
		return false
	}
	if b == len(r.toks) {
		return true
	}
	switch r.toks[b].punct {
	case '.', '!', ';':
		return true
	}
	return false
}

// codeVerb: a code span that holds one base verb ("`Disable`").
func (r *reader) codeVerb(t *token) bool {
	inner := r.text[t.s:t.e]
	if len(inner) < 3 || inner[0] != '`' {
		return false
	}
	inner = strings.ToLower(inner[1 : len(inner)-1])
	e := lexicon.get(inner)
	return isLetters(inner) && e&cBase != 0 && e&cDomNoun == 0
}

// pastAfter: toks[k:b] holds a verb in the past tense, which a command
// to ensure or verify something does not take.
func (r *reader) pastAfter(k, b int) bool {
	for ; k < b; k++ {
		t := &r.toks[k]
		if t.w == "was" || t.w == "were" || t.has(cPast) && !t.has(cBase|cZ) && !r.adjectival(k, b) && !r.toks[k-1].has(cBe|cHave) {
			return true
		}
	}
	return false
}

// purposeAfter: the duty at toks[v:b] is a condition for something else
// to happen ("must be restarted for config changes to apply", "has to run
// as root for the mount to work", "must run first, or it crashes"), which
// describes how a thing works rather than telling anyone what to do.
func (r *reader) purposeAfter(v, b int) bool {
	toks := r.toks
	for k := v; k < b; k++ {
		switch toks[k].w {
		case "for":
			for m := k + 2; m < b && m <= k+7; m++ {
				if toks[m].w == "to" && m+1 < b && toks[m+1].has(cBase) {
					return true
				}
			}
		case "order", "that":
			if toks[k].w == "order" && k > v && toks[k-1].w == "in" || toks[k].w == "that" && toks[k-1].w == "so" {
				return true
			}
		}
	}
	// ", or it crashes": a consequence after the clause.
	if b+2 < len(toks) && toks[b].punct == ',' && toks[b+1].w == "or" && toks[b+2].has(cDet|cSubject|cObject) {
		return true
	}
	return false
}

// adjectival: the past form at k describes the noun after it ("cached
// images") rather than being the clause's verb.
func (r *reader) adjectival(k, b int) bool {
	if k+1 >= b {
		return false
	}
	t := &r.toks[k+1]
	return t.punct == 0 && t.has(cNoun|cAdj) && !t.code && !t.has(cDet|cPrep|cObject|cAdv|cSub|cRel|cTime)
}

// hasMainVerb: the words after a clause-opening verb-like word hold a
// finite verb outside relative and subordinate clauses, so the opener was
// the head of a subject ("Print statements left in the handler flooded the
// logs", "Make targets that call sed fail on macOS").
func (r *reader) hasMainVerb(from, b int) bool {
	toks := r.toks
	plural := false  // the subject's head noun so far is plural
	inPP := false    // inside a prepositional phrase after the head
	relVerb := false // a relative clause's own verb is still to come
	for k := from; k < b || k < len(toks) && k == b && (toks[k].punct == '-' || toks[k].punct == '('); k++ {
		t := &toks[k]
		if t.punct == '-' || t.punct == '(' {
			// Read past a parenthesis: "Build times — measured over 30
			// runs — dropped by a third".
			close := t.punct
			if close == '(' {
				close = ')'
			}
			m := k + 1
			for m < len(toks) && toks[m].punct != close && !sentenceEnd(&toks[m]) {
				m++
			}
			if m >= len(toks) || toks[m].punct != close {
				return false
			}
			k, b = m, r.clauseEnd(m+1)
			continue
		}
		if t.punct == ',' {
			continue // only when the caller reads past commas
		}
		if t.punct != 0 {
			return false
		}
		prev := &toks[k-1]
		nounSlot := (prev.has(cDet|cPrep) || prev.has(cAdj) && !prev.has(cNoun)) && !prev.has(cBase)
		switch {
		case t.has(cSub) && !t.has(cRel):
			return false // "until", "because", "after": the rest is subordinate
		case t.has(cSubject):
			return false // "... the keys you have seen": a clause of its own
		case (t.has(cConj) || t.w == "so") && k+1 < b && (toks[k+1].has(cDet|cSubject) || t.w == "so" && r.nounAt(k+1)):
			return false // "... or the scripts will misbehave", "... so reviewers can keep up": a clause of its own
		case t.has(cRel):
			relVerb = true
			continue
		case t.has(cPrep):
			inPP = true
			continue
		}
		if prev.w == "to" || prev.has(cConj) && t.has(cBase) && !t.has(cZ|cPast) {
			continue // an infinitive ("twice to reproduce"), or a verb joined to the opener ("and reinstall")
		}
		verbish := t.has(cFinite|cBe|cHave|cDo) && !t.has(cDet) || t.has(cBase) && !nounSlot
		if relVerb && verbish {
			relVerb = false
			continue
		}
		if nounSlot && !t.has(cModal|cBe|cHave|cDo) {
			if !inPP && t.has(cNoun) {
				plural = isPlural(t)
			}
			continue
		}
		switch {
		case t.has(cModal|cBe|cHave|cDo) && !t.has(cNoun):
			return true
		case t.has(cZ) && !t.has(cDomNoun):
			return true
		case t.has(cPast) && !t.has(cBase|cAdj) || t.has(cPast|cPart) && k > from && (!r.adjectival(k, b) || inPP && r.nounAt(k-1)):
			return true // "Retry logic in the HTTP client retried POST requests"
		case t.has(cBase) && plural && k > from && !t.has(cDomNoun) && (!t.has(cAdj) || k+1 < b &&
			(isNumber(toks[k+1].w) || toks[k+1].has(cDet|cPrep|cAdv) || toks[k+1].punct != 0)):
			return true // "Make targets assume GNU sed", "Ping times average 80 ms"
		case t.has(cZ) && k+1 < b && isNumber(toks[k+1].w):
			return true // "Latency to the API averages 140 ms"
		case t.has(cZ) && inPP && r.nounAt(k-1) && !isPlural(prev) && !prev.has(cDet|cAdj|cPrep) &&
			k+1 < b && (toks[k+1].has(cPrep|cAdv|cDet) || isNumber(toks[k+1].w) || isPlural(&toks[k+1])) && !toks[k+1].has(cConj):
			return true // "Sort order of `ls` output differs between GNU and BSD"
		case t.has(cBase) && plural && k > from && k+1 < b && toks[k+1].has(cParticle):
			return true // "Merge queues in the monorepo batch up to five PRs"
		case t.has(cZ) && prev.has(cAdv|cLead) && !prev.has(cDet|cNoun) && k > from:
			return true // "Yarn never hoists packages", "Move detection in git only works when…"
		case t.has(cBase|cZ) && k > from && k+1 < b && toks[k+1].has(cDet|cObject) && !toks[k+1].has(cRel):
			return true // "Update notices from npm clutter the CI logs"
		}
		if !inPP && t.has(cNoun) {
			plural = isPlural(t)
		}
	}
	return false
}

// nounAt: toks[k] is a noun, by the lexicon or by standing right after a
// determiner or preposition ("this cluster", whatever the lexicon says).
func (r *reader) nounAt(k int) bool {
	t := &r.toks[k]
	if t.has(cNoun) {
		return true
	}
	if k == 0 || t.punct != 0 {
		return false
	}
	p := &r.toks[k-1]
	return p.has(cDet|cPrep) && !p.has(cBase)
}

// sentenceEnd returns the index of the first mark at or after k that is
// not a comma.
func (r *reader) sentenceEnd(k int) int {
	for k < len(r.toks) && (r.toks[k].punct == 0 || r.toks[k].punct == ',') {
		k++
	}
	return k
}

// clauseEnd returns the index of the first mark at or after k.
func (r *reader) clauseEnd(k int) int {
	for k < len(r.toks) && r.toks[k].punct == 0 {
		k++
	}
	return k
}

func isPlural(t *token) bool {
	n := len(t.w)
	return n > 2 && t.w[n-1] == 's' && t.w[n-2] != 's' && t.has(cNoun)
}

// obligation reads toks[a:b] for a duty put on anyone: a modal of
// obligation with a base verb, "have to", "need to", "is to", "is expected
// to" said of an actor, a future "will" after "from now on", or a duty
// said of a gerund ("Running the formatter is mandatory").
func (r *reader) obligation(sentence, a, b int) *InstructionError {
	toks := r.toks
	for i := a; i < b; i++ {
		t := &toks[i]
		if t.punct != 0 || t.code {
			continue
		}
		switch t.w {
		case "must", "shall", "should", "ought":
			v := r.skipAdverbs(i+1, b)
			if t.w == "ought" {
				switch {
				case v < b && toks[v].w == "to":
					v = r.skipAdverbs(v+1, b)
				case v > i+1: // "Agents oughtn't keep the lockfile"
				default:
					continue
				}
			}
			if v >= b {
				continue
			}
			if !r.dutyVerb(v, b) {
				continue
			}
			actor := r.actorBefore(sentence, i)
			if !actor && (r.reportedBefore(sentence, i) || r.purposeAfter(v, b)) {
				continue // "The spec says a client must mask every frame", "must be restarted for X to apply"
			}
			if t.w != "should" || actor || toks[v].w == "be" || !toks[v].has(cOutcome) {
				return r.fail("obligation", i, v)
			}
		case "hafta", "needa", "wanna", "gonna":
			if v := r.skipAdverbs(i+1, b); v < b && r.dutyVerb(v, b) && (t.w != "gonna" || r.readerBefore(sentence, i)) {
				return r.fail("obligation", i, v) // "Agents hafta delete the lockfile"
			}
		case "dare", "sha", "wants", "want", "deserves":
			// "Agents dare not keep it", "The agent shan't keep it", "The
			// lockfile wants deleting", "... deserves to be deleted".
			v := r.skipAdverbs(i+1, b)
			if v < b && toks[v].w == "to" {
				v++
			}
			if v < b && (isGerund(&toks[v]) && t.w != "dare" && t.w != "sha" || r.dutyVerb(v, b) && (toks[v].w == "be" || t.w == "dare" || t.w == "sha")) {
				return r.fail("obligation", i, v)
			}
		case "need", "needs", "have", "has", "got", "gotta", "'ve":
			if (t.w == "need" || t.w == "needs") && i+1 < b && isGerund(&toks[i+1]) {
				return r.fail("obligation", i, i+1) // "The lockfile needs removing"
			}
			if (t.w == "need" || t.w == "needs") && i+2 < b && toks[i+1].w == "only" && toks[i+2].has(cBase) {
				return r.fail("obligation", i, i+2) // "Agents need only delete it"
			}
			if i > a && toks[i-1].has(cModal|cDo) && toks[i-1].w != "do" && toks[i-1].w != "does" {
				continue // "would have to": hypothetical
			}
			v := i + 1
			if t.w == "gotta" {
				v = i
			} else if v < b && toks[v].w == "to" {
				v++
			} else if (t.w == "need" || t.w == "needs") && v < b && toks[v].w == "not" {
				v++
			} else {
				continue
			}
			v = r.skipAdverbs(v, b)
			if v < b && r.dutyVerb(v, b) && !(toks[v].w == "do" && v+1 < b && toks[v+1].w == "with") &&
				!(r.purposeAfter(v, b) && !r.actorBefore(sentence, i)) {
				return r.fail("obligation", i, v)
			}
		case "please", "pls", "plz", "kindly":
			if i > a && i+1 < b && toks[i+1].has(cBase) && !toks[i+1].has(cDomNoun) {
				return r.fail(RuleCommandVerb, i, i+1) // "Can the agent please make sure..."
			}
		case "better":
			if i > a && (toks[i-1].w == "had" || toks[i-1].w == "'d") {
				if v := r.skipAdverbs(i+1, b); v < b && r.dutyVerb(v, b) {
					return r.fail("obligation", i-1, v) // "agents had better not touch"
				}
			}
		case "is", "are", "am", "'s", "'re":
			if e := r.dutyOfBe(sentence, a, i, b); e != nil {
				return e
			}
		case "may", "might":
			if i+2 < b && (toks[i+1].w == "not" || toks[i+1].w == "n't") && toks[i+2].has(cBase) && r.actorBefore(sentence, i) {
				return r.fail("obligation", i, i+2) // "Agents may not keep the lockfile"
			}
		case "gets", "get":
			if i+1 < b && (toks[i+1].has(cPart) || strings.HasSuffix(toks[i+1].w, "ed")) && r.directiveTime(sentence, b) {
				return r.fail("obligation", i, i+1) // "Going forward, the lockfile gets deleted"
			}
		case "works", "work":
			if i+1 < b && toks[i+1].w == "best" && r.deverbalSubject(sentence, i) {
				return r.fail("obligation", i, i+1) // "Deleting the lockfile works best"
			}
		case "will", "'ll":
			v := r.skipAdverbs(i+1, b)
			if r.directiveTime(sentence, b) ||
				v < b && toks[v].has(cBase) && !toks[v].has(cOutcome|cDomNoun|cBe|cHave) && r.actorBefore(sentence, i) {
				return r.fail("obligation", i, v) // "Future agents will delete the lockfile"
			}
		default:
			// "Whoever reads this deletes the lockfile", "From now on,
			// agents delete the lockfile", "The model always deletes it".
			if i > a && t.has(cZ|cBase) && (t.has(cZ) || !t.has(cDomNoun)) && !t.has(cModal|cBe|cHave|cDo|cPast) && i+1 < b &&
				toks[i+1].has(cDet|cObject) && !toks[i+1].has(cRel) {
				if r.readerBefore(sentence, i) || r.directiveTime(sentence, b) && r.actorBefore(sentence, i) ||
					toks[i-1].has(cStrong) && r.actorBefore(sentence, i) {
					return r.fail("obligation", i, i+1)
				}
			}
		}
	}
	return nil
}

// dutyOfBe reads "X is to run", "X is expected to run" (X an actor), and
// "Running X is mandatory".
func (r *reader) dutyOfBe(sentence, a, i, b int) *InstructionError {
	toks := r.toks
	if toks[i].w == "'s" && (i == 0 || !toks[i-1].has(cSubject|cObject) && toks[i-1].w != "it") {
		return nil // a possessive
	}
	if i+1 < b && (toks[i+1].w == "best" || toks[i+1].w == "better") {
		p := i + 2
		if p < b && toks[p].w == "off" {
			p++
		}
		if p < b && (toks[p].has(cPart) || strings.HasSuffix(toks[p].w, "ed")) {
			return r.fail("obligation", i, p) // "The lockfile is best deleted before reruns"
		}
	}
	v := r.skipAdverbs(i+1, b)
	if v < b && toks[v].w == "not" {
		v = r.skipAdverbs(v+1, b)
	}
	if v >= b {
		return nil
	}
	if r.deverbalSubject(sentence, i) && evaluative[toks[v].w] {
		return r.fail("obligation", i, v) // "Deleting the lockfile is essential", "Lockfile deletion is recommended"
	}
	if k := r.ruleAfterGerund(sentence, v, b); k > 0 {
		return r.fail("obligation", i, k) // "Deleting the lockfile is the rule here"
	}
	switch w := &toks[v]; {
	case w.w == "to":
		if v+1 < b && (toks[v+1].has(cBase) || toks[v+1].w == "be") && !r.planBefore(sentence, i) {
			return r.fail("obligation", i, v+1) // "is to be run", "is not to be run"
		}
	case dutyWords[w.w]:
		to := v + 1
		if to+1 < b && toks[to].w == "by" { // "required by policy to"
			to += 2
		}
		if to < b && toks[to].w == "to" && r.actorBefore(sentence, i) {
			return r.fail("obligation", i, to)
		}
		if mandatoryWords[w.w] || toks[sentence].has(cGer) && (v+1 >= b || toks[v+1].w != "to") {
			return r.fail("obligation", i, v)
		}
	case mandatoryWords[w.w]:
		return r.fail("obligation", i, v)
	}
	return nil
}

// ruleAfterGerund returns where "<doing X> is the rule / a good idea /
// what agents do / how it's done" ends, when the sentence opens with a
// gerund and v is the word after its "is", else 0.
func (r *reader) ruleAfterGerund(sentence, v, b int) int {
	toks := r.toks
	if !isGerund(&toks[sentence]) && !toks[sentence].has(cGer) {
		return 0
	}
	switch toks[v].w {
	case "what", "how":
		return v
	case "the", "a", "an":
		for k := v + 1; k < b && k <= v+3; k++ {
			if ruleNouns[toks[k].w] {
				return k
			}
		}
	}
	return 0
}

// deverbalSubject: the subject before toks[i] names an action: it opens
// with a gerund ("Deleting the lockfile") or its head is a noun made from a
// verb ("Deletion of the lockfile", "Lockfile deletion").
func (r *reader) deverbalSubject(sentence, i int) bool {
	toks := r.toks
	if i == sentence {
		return false
	}
	if isGerund(&toks[sentence]) || toks[sentence].has(cGer) {
		return true
	}
	for k := sentence; k < i; k++ {
		w := toks[k].w
		if toks[k].has(cPrep) {
			break // "Deletion of the lockfile": the head comes before "of"
		}
		if len(w) > 5 && (strings.HasSuffix(w, "tion") || strings.HasSuffix(w, "sion") || strings.HasSuffix(w, "ment")) &&
			(k+1 == i || toks[k+1].has(cPrep)) {
			return true
		}
	}
	return false
}

// evaluative words, said of an action, recommend it.
var evaluative = map[string]bool{
	"key": true, "crucial": true, "critical": true, "essential": true, "necessary": true, "preferred": true,
	"best": true, "suggested": true, "recommended": true, "advised": true, "advisable": true, "important": true,
	"vital": true, "mandatory": true, "required": true, "wise": true, "smart": true, "encouraged": true,
	"expected": true, "obligatory": true, "compulsory": true, "imperative": true, "paramount": true,
}

// ruleNouns name a rule or a recommendation.
var ruleNouns = map[string]bool{
	"rule": true, "norm": true, "way": true, "fix": true, "answer": true, "move": true, "policy": true,
	"practice": true, "standard": true, "convention": true, "idea": true, "must": true, "no-go": true,
	"requirement": true, "expectation": true, "solution": true, "remedy": true, "approach": true,
	"procedure": true, "protocol": true, "habit": true, "workaround": true, "drill": true,
}

// dutyWords put a duty on an actor ("Agents are expected to"); said of a
// gerund ("Force-pushing is forbidden") they make a rule.
var dutyWords = map[string]bool{
	"expected": true, "supposed": true, "required": true, "obliged": true, "obligated": true,
	"advised": true, "asked": true, "told": true, "instructed": true, "encouraged": true,
	"meant": true, "forbidden": true, "prohibited": true, "allowed": true, "permitted": true,
	"recommended": true, "urged": true, "directed": true, "requested": true, "ordered": true,
	"discouraged": true, "banned": true, "mandated": true, "authorised": true, "authorized": true,
}

// mandatoryWords make a rule whatever the subject ("Signing is mandatory").
var mandatoryWords = map[string]bool{
	"mandatory": true, "compulsory": true, "obligatory": true, "forbidden": true,
	"prohibited": true, "banned": true, "verboten": true, "non-negotiable": true,
}

// dutyVerb: toks[v] is a base verb that a modal of obligation governs;
// "must have run" and "must be timing out" describe, "must be cleared"
// obliges.
func (r *reader) dutyVerb(v, b int) bool {
	t := &r.toks[v]
	switch t.w {
	case "have", "'ve":
		// "must have run" describes; "must have type hints" obliges.
		p := v + 1
		return p < b && !r.toks[p].has(cPart|cPast|cAdv) && !strings.HasSuffix(r.toks[p].w, "ed") &&
			(r.toks[p].has(cDet|cNoun|cAdj) || r.toks[p].has(cUnknown))
	case "be":
		p := r.skipAdverbs(v+1, b)
		return p < b && (r.toks[p].has(cPart|cPast) || strings.HasSuffix(r.toks[p].w, "ed")) &&
			!r.toks[p].has(cGer) && r.toks[p].w != "able"
	}
	return t.has(cBase) && !t.has(cModal) && !t.code
}

func (r *reader) skipAdverbs(k, b int) int {
	for k < b && (r.toks[k].has(cAdv|cStrong|cNeg) && !r.toks[k].has(cBase) || r.toks[k].w == "always" || r.toks[k].w == "never") {
		k++
	}
	return k
}

// actorBefore: the subject of the verb at i names someone who can be
// told to act: you, agents, the assistant, whoever, developers.
func (r *reader) actorBefore(sentence, i int) bool {
	for k := i - 1; k >= sentence; k-- {
		t := &r.toks[k]
		if t.has(cActor) {
			return true
		}
		if t.punct != 0 || reportVerbs.has(t) {
			return false // the subject of what was said starts after these
		}
	}
	return false
}

// reportedBefore: a verb of saying opens the sentence's clause before i
// ("The maintainer said the fix should land in 1.4"), so the modal is part
// of what was said about a thing.
func (r *reader) reportedBefore(sentence, i int) bool {
	for k := i - 1; k >= sentence; k-- {
		if reportVerbs.has(&r.toks[k]) {
			return true
		}
	}
	return false
}

var reportVerbs = newWordList(
	"said", "says", "say", "noted", "notes", "mentioned",
	"mentions", "reported", "reports", "claimed", "claims",
	"explained", "explains", "wrote", "writes", "thinks",
	"thought", "believes", "believed", "expects", "expected",
	"states", "stated", "specifies", "specified", "documents",
	"documented", "warns", "warned", "announced", "promised",
	"suggests", "suggested", "assumed", "assumes", "requires",
)

// readerBefore: the subject of the verb at i is the reader ("Whoever
// reads this", "Anybody reading this", "the next agent to read this").
func (r *reader) readerBefore(sentence, i int) bool {
	for k := i - 1; k >= sentence; k-- {
		t := &r.toks[k]
		if t.punct != 0 && t.punct != ',' || reportVerbs.has(t) {
			return false
		}
		if t.has(cReader) && !(k > sentence && r.toks[k-1].has(cDet|cSub)) {
			return true // not "when you run them": a generic "you" in a condition
		}
		if (t.w == "this" || t.w == "these") && k > sentence && (r.toks[k-1].w == "reading" || r.toks[k-1].w == "reads" || r.toks[k-1].w == "read") {
			return true
		}
	}
	return false
}

// planBefore: "The plan is to ...", which states an aim.
func (r *reader) planBefore(sentence, i int) bool {
	for k := i - 1; k >= sentence && k >= i-3; k-- {
		if r.toks[k].has(cPlan) {
			return true
		}
	}
	return false
}

// directiveTime: the sentence holds "from now on", "going forward",
// "henceforth" and the like, which turn "will" into an order.
func (r *reader) directiveTime(sentence, b int) bool {
	for k := sentence; k < b; k++ {
		if directiveTimeAt(r.toks, k, b) > k {
			return true
		}
	}
	return false
}
