package consolidate

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
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
//	error        "<title> fails: <happened>"
//	             "<title> returned <happened> where <expected> was expected"
//	correction   `The person corrected the agent with "<said>" after the agent's "<agent_did>"`
//	environment, surprise
//	             "<title>: <happened>", or "<happened>" (plus " (expected: <expected>)")
//	note         "<text>"
//
// It never writes an instruction: a title that opens with a verb is written
// as "Running <title>", a description that opens like a command is reported
// ("An agent reported "<text>""), and "you must/should/need to" in reported
// words becomes "the agent must/should/needs to". Redact is applied to every
// field first (nil leaves them as they are; the node passes its raw-data
// redactor). White space is collapsed, sentence breaks inside a field become
// semicolons, the sentence is cut at a word boundary to at most MaxSentence
// characters and ends with a period.
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
	title, happened, expected := f(e.Title), f(e.Happened), f(e.Expected)
	said, did, text := f(e.Said), f(e.AgentDid), f(e.Text)

	var s string
	switch kind {
	case "error":
		t := subject(title)
		switch {
		case t != "" && happened != "" && expected != "":
			s = t + " returned " + happened + " where " + expected + " was expected"
		case t != "" && happened != "" && strings.HasPrefix(strings.ToLower(happened), strings.ToLower(title)):
			// "npm ci fails with EUSAGE" already names the call.
			s = describe(happened)
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
			s = describe(happened) + " where " + expected + " was expected"
		}
	case "correction":
		if said != "" {
			s = `The person corrected the agent with "` + unquote(secondPerson(said)) + `"`
			if did != "" {
				s += ` after the agent's "` + unquote(secondPerson(did)) + `"`
			}
		}
	case "environment", "surprise":
		switch {
		case title != "" && happened != "":
			s = subject(title) + ": " + happened
		case happened != "":
			s = describe(happened)
		}
		if s != "" && expected != "" {
			s += " (expected: " + expected + ")"
		}
	case "note":
		s = describe(text)
	}
	if s == "" { // a field the kind does not name, or an unknown kind
		for _, v := range []string{happened, text, said, title} {
			if v != "" {
				s = describe(v)
				break
			}
		}
	}
	if s == "" {
		return "", errors.New("consolidate: default writer: the representative episode has no text")
	}
	return finish(obligations(s)), nil
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

// imperativeOpeners are first words that would make a sentence read as an
// order to the reader. It is deliberately broad: a false alarm only costs a
// rephrasing.
const imperativeOpeners = `use always never dont don do does make remember please avoid prefer be
check set run install uninstall add remove delete ensure try call keep stop start go get put let fix update
upgrade downgrade pin bump write read open close create build test push pull commit merge rebase
restart reboot reset clean clear enable disable configure export import move copy rename wait skip
ignore disregard note consider see look verify switch change replace apply deploy drop include
exclude pass send execute exec launch follow review ask tell give take leave mind beware just only
kill retry rerun regenerate generate format lint tag release publish upload download fetch mock stub
wrap split return log print sign login logout cd source sudo chmod chown mkdir rm mv cp cat echo curl
prefix add define declare must should need ought instead first`

// opensImperative reports whether s opens with a word from
// imperativeOpeners (quotes, dashes and apostrophes ignored, any case).
func opensImperative(s string) bool {
	s = strings.TrimLeftFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	end := strings.IndexFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' && r != '’' })
	if end < 0 {
		end = len(s)
	}
	w := strings.ToLower(strings.NewReplacer("'", "", "’", "").Replace(s[:end]))
	return w != "" && slices.Contains(strings.Fields(imperativeOpeners), w)
}

// subject turns a title into the subject of a sentence: "go test ./..."
// becomes "Running go test ./...", so the sentence does not open with a verb.
func subject(title string) string {
	if title == "" || !opensImperative(title) {
		return title
	}
	return "Running " + title
}

// describe returns s as a description: unchanged, or reported in quotes when
// it opens like a command.
func describe(s string) string {
	if s == "" || !opensImperative(s) {
		return s
	}
	return `An agent reported "` + unquote(s) + `"`
}

// unquote turns double quotes inside reported words into single ones, so
// the quotes around them stay balanced.
func unquote(s string) string {
	return strings.NewReplacer(`"`, "'", "“", "'", "”", "'").Replace(s)
}

// oneSentence joins the sentences of a field with semicolons.
func oneSentence(s string) string {
	// the end of a sentence inside a field: . ! or ? after a letter, digit,
	// closing bracket or quote, then space and a capital
	sentenceBreak := regexp.MustCompile(`([\p{L}\p{N})\]"'’])[.!?]+\s+(\p{Lu})`)
	return sentenceBreak.ReplaceAllStringFunc(s, func(m string) string {
		sub := sentenceBreak.FindStringSubmatch(m)
		return sub[1] + "; " + sub[2]
	})
}

// obligations rewrites "you should/must/need to/have to" as "the agent
// should/must/needs to/has to": an observation names who, it does not tell
// the reader.
func obligations(s string) string {
	obligation := regexp.MustCompile(`(?i)\byou\s+(should|must|need\s+to|needs\s+to|have\s+to|ought\s+to)\b`)
	return obligation.ReplaceAllStringFunc(s, func(m string) string {
		verb := strings.ToLower(strings.Join(strings.Fields(m)[1:], " "))
		switch verb {
		case "need to", "needs to":
			verb = "needs to"
		case "have to":
			verb = "has to"
		}
		return "the agent " + verb
	})
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
