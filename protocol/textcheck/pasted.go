package textcheck

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Pasted says whether a lesson sentence carries tool output instead of
// telling what happened in a writer's own words (SPEC §3, "Written, not
// pasted"): "" when it reads as written, else a short reason. Such a
// sentence is a draft: kept and shown locally, never signed.
//
// The rule, in the order the reasons are given. A word is a run of
// characters between spaces; a quote is a span between double quotes,
// curly quotes or backticks, or between single quotes that open after a
// space and close before one. The text is pasted when it holds:
//
//   - "several lines": a line break (\n, \r, NEL, U+2028, U+2029);
//   - "terminal escapes": an ESC character or a colour code such as "[31m";
//   - "box-drawing characters": any character of the Box Drawing or Block
//     Elements blocks (U+2500–U+259F: ╷ │ ╵ ┌ ─ └ ╭ ━ █ …);
//   - "a stack frame": `File "…", line N`; "Traceback (most recent call";
//     "goroutine N ["; a word starting "+0x"; a memory address (0x and
//     six hex digits or more); a receiver such as ".(*T)";
//     "-->" before a file location; the word "at" followed, within two
//     words, by a location in parentheses ("(Foo.java:88)", "(x.js:14:23)");
//     or two or more file locations ("main.rs:12:5", "a/b.go:88");
//   - "a log line": a time of day with seconds (12:03:44), a date joined to
//     a time (2024-05-01T12:03), a level in brackets ("[ERROR]", "[info]",
//     "WARN[0000]"), a CI workflow command ("::error"), or two or more
//     words of lower-case key=value fields (level=error msg=…; a word
//     ending in "," is no field), or a shell's "<script>: line N:";
//   - "key = value fields": two or more "key = value" with spaces around
//     "=", the key a lower-case word ("code = Unknown desc = failed"), or
//     two or more 'key: "value"' ('name: "web" namespace: "shop"');
//   - "table columns": three ALL-CAPS words in a row (NAME READY STATUS)
//     that do not open a quote ('REMOTE HOST IDENTIFICATION HAS CHANGED' is
//     a message quoted),
//     three numeric cells in a row (50G 48G 2.0G, 1950m 97% 7412Mi, 0/1 5
//     3m), three or more lone "|" cells, or a border word of - + = | with a
//     "+" or "|" in it ("----+----"); four or more Title-Case words in a
//     row of which one after the first is a capitalised function word
//     (From, On, Of, To, In, At, By, For) or ends in "%" ("Filesystem Size
//     Used Avail Use% Mounted on", "Type Reason Age From Message"); a
//     sentence of ALL-CAPS words only ("NAMES PORTS.");
//   - "markup tags": an element's opening and closing tag ("<b>…</b>");
//   - "an encoded URL": a word with two or more percent escapes ("%2F");
//   - "a placeholder standing for raw data": one of the redaction's words
//     (RedactRawData: "an internal host", "a file in the home directory",
//     "a password", …) joined to a word or a symbol on either side
//     ("build07.an internal host", "an internal host:5432", "git@…";
//     "a person", "a token" and "a password" after a space and before a
//     letter are the start of a word, "a personal token"; "'s" may
//     follow), right after a flag, or followed by a cell of a table row
//     (a number with a unit, "4.0K", or an identifier); a placeholder
//     that is the whole of a quote ("'a person'"), or the argument of a
//     call told as "Running <call> <placeholder>";
//   - "a run of identifiers": four or more words in a row that are each an
//     identifier rather than a word: with a digit (a bare number too), a
//     flag ("-race", "--frozen-lockfile": "-" and a letter), an inner _ /
//     = : @ or ., or a capital after a lower-case letter; a word ending in
//     "," or ";" ends the run (a list in prose);
//   - "an underline or progress bar": four or more of one of ^ = # ~ * in
//     a row, five or more "-", or " *** ";
//   - "a shell prompt": the text opens with "$ ", "> " or "PS C:\", or
//     holds " $ " before a word;
//   - "a long quoted output": a quote of more than 100 characters;
//   - "stitched fragments": two or more semicolons outside quotes, or a
//     semicolon before a tool's message prefix (or "npm ERR!"), or two or more message
//     prefixes (error:, Error:, ERROR, FATAL, fatal:, warning:, note:,
//     hint:, panic:, npm's ERR!, Caused by:, error[E…]:), prefixes in a
//     row counting once ("FATAL ERROR:") and a lower-case one after a word
//     without a final mark not at all (it is a phrase: "runtime error:");
//     a semicolon outside quotes before a capitalised sentence opener
//     (The, This, It, A, There, Is, Please, … or a capitalised -ing word:
//     "; The app's limit …", "; Connecting to …"); three or more quotes
//     joined by " / " (lines of output quoted one after another);
//   - "cut off …": the text ends in "..." or "…"; or leaves a "(" or a
//     "[" or a quote open (an odd number of " or of backticks, more “
//     than ”, a single quote opening after a space or "(" that never
//     closes, an empty "" glued to a word); or ends on a flag that lost its
//     value ("--out=", or a long flag after a flag and its value:
//     "--region eu-west1 --project"); or on an auxiliary right after
//     "which" or "who" ("…, which does"); or on a determiner and an
//     adjective that needs its noun ("the current", "the entire"); or its last mark
//     before the final . ! or ? is , : ; or -; or its last word, written
//     in lower case (a capital makes it a name: "connected to A"), is one
//     that leaves the sentence open:
//     an article or determiner (a, an, the, its, their, our, your, his,
//     her, my, these, those, this, no: a lesson stands alone, so a final
//     "this" points at nothing), a conjunction or subordinator (and, or, but,
//     nor, because, that, which, whose, when, while, if, unless, until,
//     as, whether, where, than), an auxiliary or a modal (is, are, was,
//     were, be, been, has, have, do, does, did, can, could, may, might,
//     must, shall, should, will, would), or a preposition (to, with, for,
//     of, from, by, at, into, onto, via, toward, towards, per, against,
//     among, between, during, except, within, without, upon, like).
//     Three exceptions: an auxiliary or modal in a clause (the words since
//     the last , ; or :) that holds what, where, how, who, which, as, than,
//     wherever or whatever ("where the token is", "than it should"); a
//     preposition after "to" and a verb ("the config to extend from"); a
//     preposition in a clause that holds what, which, whom, who or
//     whatever ("what we test against"). Particles (on, in, up, out, off,
//     down, over) and adverbs (before, after, since) end sentences.
//
// A written sentence may name commands, flags, paths, versions and error
// codes, and may quote one short message ("npm ci fails with 'EUSAGE'").
// Pasted is linear in the length of the text; it uses no regular
// expression.
func Pasted(text string) string {
	if strings.ContainsAny(text, "\n\r\u0085\u2028\u2029") {
		return "several lines"
	}
	if strings.IndexByte(text, 0x1b) >= 0 || colourCode(text) {
		return "terminal escapes"
	}
	for _, r := range text {
		if r >= 0x2500 && r <= 0x259F {
			return "box-drawing characters"
		}
	}
	words := strings.Fields(text)
	if stackFrame(text, words) {
		return "a stack frame"
	}
	if logLine(words) {
		return "a log line"
	}
	if tableColumns(words) || titleHeader(words) || capsTail(words) {
		return "table columns"
	}
	if shellLineLocation(words) {
		return "a log line"
	}
	if spacedFields(words) || colonFields(words) {
		return "key = value fields"
	}
	if placeholderStanding(text) || placeholderQuoted(text, words) {
		return "a placeholder standing for raw data"
	}
	if identifierRun(words) {
		return "a run of identifiers"
	}
	if markupTags(text) {
		return "markup tags"
	}
	if encodedURL(words) {
		return "an encoded URL"
	}
	if symbolRun(text) || strings.Contains(text, " *** ") {
		return "an underline or progress bar"
	}
	if strings.HasPrefix(text, "$ ") || strings.HasPrefix(text, "> ") || strings.HasPrefix(text, `PS C:\`) || promptInside(text) {
		return "a shell prompt"
	}
	quotes := quoteSpans(text)
	for _, q := range quotes {
		if utf8.RuneCountInString(text[q[0]:q[1]]) > 100 {
			return "a long quoted output"
		}
	}
	if stitched(text, words, quotes) || newSentenceAfterSemicolon(text, quotes) || quotedLines(text, quotes) {
		return "stitched fragments"
	}
	return cutOff(text, quotes)
}

// colourCode finds an SGR colour code whose ESC was lost: "[31m", "[0m",
// "[1;33m".
func colourCode(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '[' {
			continue
		}
		j := i + 1
		for j < len(s) && (isDigitByte(s[j]) || s[j] == ';') {
			j++
		}
		if j > i+1 && j < len(s) && s[j] == 'm' && isDigitByte(s[i+1]) {
			return true
		}
	}
	return false
}

func isDigitByte(c byte) bool { return '0' <= c && c <= '9' }

func stackFrame(text string, words []string) bool {
	if k := strings.Index(text, `", line `); k >= 0 && k+8 < len(text) && isDigitByte(text[k+8]) {
		return true
	}
	if strings.Contains(text, "Traceback (most recent call") || strings.Contains(text, ".(*") {
		return true
	}
	locations := 0
	for i, w := range words {
		switch {
		case w == "goroutine" && i+2 < len(words) && allDigits(words[i+1]) && strings.HasPrefix(words[i+2], "["):
			return true
		case strings.HasPrefix(w, "+0x") || hexAddress(w):
			return true
		case w == "-->" && i+1 < len(words) && location(words[i+1]):
			return true
		case w == "at":
			for _, n := range words[i+1 : min(len(words), i+3)] {
				if parenLocation(n) {
					return true
				}
			}
		}
		if location(w) {
			locations++
		}
	}
	return locations >= 2
}

// hexAddress: a memory address, "0x00c0001b4010", "[4121:0x5a1c3f0]".
func hexAddress(w string) bool {
	k := strings.Index(w, "0x")
	if k < 0 {
		return false
	}
	n := 0
	for _, c := range []byte(w[k+2:]) {
		if !isDigitByte(c) && !('a' <= c && c <= 'f') && !('A' <= c && c <= 'F') {
			break
		}
		n++
	}
	return n >= 6
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigitByte(s[i]) {
			return false
		}
	}
	return true
}

// parenLocation: a word holding "(…:N)" or "(…:N:N)".
func parenLocation(w string) bool {
	open := strings.IndexByte(w, '(')
	if open < 0 {
		return false
	}
	end := strings.IndexByte(w[open:], ')')
	if end < 0 {
		return false
	}
	return location(w[open+1 : open+end])
}

// location: a file and a line, "main.go:17", "src/main.rs:12:5",
// "node:internal/process/task_queues:95:5".
func location(w string) bool {
	w = strings.TrimRight(strings.TrimLeft(w, "(["), ".,;:)]")
	k := strings.IndexByte(w, ':')
	if k <= 0 {
		return false
	}
	file, rest := w[:k], w[k+1:]
	line, col, _ := strings.Cut(rest, ":")
	if !allDigits(line) || col != "" && !allDigits(col) {
		if !strings.Contains(rest, "/") {
			return false
		}
		// node:internal/x:95:5: the file goes on after the first colon.
		k = strings.LastIndexByte(w, ':')
		if j := strings.LastIndexByte(w[:k], ':'); j > 0 && allDigits(w[j+1:k]) && allDigits(w[k+1:]) {
			return true
		}
		return false
	}
	if dot := strings.LastIndexByte(file, '.'); dot > 0 && dot < len(file)-1 {
		for _, r := range file[dot+1:] {
			if !unicode.IsLetter(r) {
				return false
			}
		}
		return true
	}
	return strings.Contains(file, "/") && col != ""
}

var logLevels = map[string]bool{"error": true, "err": true, "warn": true, "warning": true, "info": true, "debug": true,
	"trace": true, "fatal": true, "notice": true, "critical": true, "crit": true, "panic": true}

func logLine(words []string) bool {
	kv := 0
	for _, w := range words {
		t := strings.Trim(w, ".,;()")
		if timeWithSeconds(t) || dateTime(t) {
			return true
		}
		if strings.HasPrefix(t, "[") && strings.HasSuffix(t, "]") && logLevels[strings.ToLower(t[1:len(t)-1])] {
			return true
		}
		if k := strings.IndexByte(t, '['); k > 0 && strings.HasSuffix(t, "]") && logLevels[strings.ToLower(t[:k])] && allDigits(t[k+1:len(t)-1]) {
			return true
		}
		if cmd, ok := strings.CutPrefix(t, "::"); ok {
			if k := strings.IndexAny(cmd, ": "); k >= 0 {
				cmd = cmd[:k]
			}
			if logLevels[strings.ToLower(cmd)] {
				return true
			}
		}
		if k := strings.IndexByte(t, '='); k > 0 && k < len(t)-1 && lowerKey(t[:k]) && !strings.HasSuffix(w, ",") {
			kv++
		}
	}
	return kv >= 2
}

func lowerKey(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// timeWithSeconds: "12:03:44", "10:14:07.123456", "12:03:44,512".
func timeWithSeconds(w string) bool {
	parts := strings.SplitN(w, ":", 4)
	if len(parts) != 3 {
		return false
	}
	sec, _, _ := strings.Cut(strings.SplitN(parts[2], ",", 2)[0], ".")
	return len(parts[0]) >= 1 && len(parts[0]) <= 2 && allDigits(parts[0]) && len(parts[1]) == 2 && allDigits(parts[1]) &&
		len(sec) == 2 && allDigits(sec)
}

// dateTime: "2024-05-01T12:03" and longer.
func dateTime(w string) bool {
	if len(w) < 16 || w[4] != '-' || w[7] != '-' || w[10] != 'T' || w[13] != ':' {
		return false
	}
	return allDigits(w[:4]) && allDigits(w[5:7]) && allDigits(w[8:10]) && allDigits(w[11:13])
}

func tableColumns(words []string) bool {
	caps, nums, pipes := 0, 0, 0
	quoted := false // the run of capitals opens a quote: a message, not a header
	for _, w := range words {
		if w == "|" {
			pipes++
		}
		if border(w) {
			return true
		}
		bare := strings.Trim(w, quoteMarks)
		if capsWord(bare) {
			if caps == 0 {
				quoted = bare != w && strings.ContainsAny(w[:1], quoteMarks)
			}
			caps++
			if quoted {
				caps = min(caps, 1)
			}
			if strings.ContainsAny(w[len(w)-1:], quoteMarks) {
				caps = 0 // the quote closes
			}
		} else {
			caps = 0
		}
		if numericCell(w) {
			nums++
		} else {
			nums = 0
		}
		if caps >= 3 || nums >= 3 {
			return true
		}
	}
	return pipes >= 3
}

func border(w string) bool {
	if len(w) < 4 || !strings.ContainsAny(w, "+|") {
		return false
	}
	for i := 0; i < len(w); i++ {
		if strings.IndexByte("-+=|:", w[i]) < 0 {
			return false
		}
	}
	return strings.Count(w, "-")+strings.Count(w, "=") >= 3
}

// quoteMarks open or close a quoted message.
const quoteMarks = "'\"`‘’“”"

// capsWord: NAME, READY, USE%, CLUSTER-IP.
func capsWord(w string) bool {
	w = strings.TrimRight(w, "%")
	letters := 0
	for i := 0; i < len(w); i++ {
		c := w[i]
		switch {
		case 'A' <= c && c <= 'Z':
			letters++
		case c == '-' || c == '_' || c == '(' || c == ')':
		default:
			return false
		}
	}
	return letters >= 2
}

// numericCell: 50G, 2.0Gi, 96%, 0/1, 1950m, 3m, 100, "-" or "<none>" as
// an empty cell.
func numericCell(w string) bool {
	if w == "<none>" || w == "<unknown>" {
		return true
	}
	w = strings.TrimSuffix(w, "%")
	i := 0
	for i < len(w) && (isDigitByte(w[i]) || i > 0 && (w[i] == '.' || w[i] == '/')) {
		i++
	}
	if i == 0 || !isDigitByte(w[i-1]) {
		return false
	}
	unit := w[i:]
	if len(unit) > 3 {
		return false
	}
	for j := 0; j < len(unit); j++ {
		if c := unit[j]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// placeholderWords are the words RedactRawData puts where raw data was
// (rawPlaceholder, rawDescription).
var placeholderWords = []string{
	"a file in the home directory", "an account on an internal host", "an image on an internal registry",
	"a path on an internal host", "a port on an internal host", "a URL with credentials", "a file in the repository",
	"an internal host", "an internal address", "an internal id", "an e-mail address", "an IP address", "a local path",
	"a local file", "a network share", "a temporary file", "a system file", "a private key", "an API key",
	"a password", "a token", "a person", "a team channel",
}

// Placeholders are the words the raw-data redaction puts where raw data
// was, longest first (a copy).
func Placeholders() []string { return append([]string(nil), placeholderWords...) }

func placeholderStanding(text string) bool {
	joins := func(c byte) bool {
		return c == '-' || c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c >= 0x80 ||
			strings.IndexByte(`./\@:=+~%$#&|*`, c) >= 0
	}
	wordByte := func(c byte) bool {
		return c == '-' || c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c >= 0x80
	}
	for _, p := range placeholderWords {
		for from := 0; from < len(text); {
			k := strings.Index(text[from:], p)
			if k < 0 {
				break
			}
			s, e := from+k, from+k+len(p)
			from = e
			if s > 0 && joins(text[s-1]) {
				return true
			}
			if e < len(text) {
				c, next := text[e], byte(' ')
				if e+1 < len(text) {
					next = text[e+1]
				}
				if wordByte(c) && !(p == "a person" && c == 'a') || c != '\'' && joins(c) && (wordByte(next) || joins(next) && next != '.') {
					if !(wordByte(c) && s > 0 && text[s-1] == ' ' && placeholderPrefixOfWord(p)) {
						return true
					}
				}
			}
			// After a flag: "-p a password", "--host an internal host".
			if prev := lastWord(text[:s]); len(prev) > 1 && prev[0] == '-' {
				return true
			}
			// Before a table row: "an internal host 4.0K drwxr-xr-x".
			if next := firstWord(text[e:]); numericCell(next) && !allDigits(next) || identifier(next) {
				return true
			}
		}
	}
	return false
}

// lastWord and firstWord are the word that ends and the word that opens s.
func lastWord(s string) string {
	s = strings.TrimRight(s, " ")
	return s[strings.LastIndexByte(s, ' ')+1:]
}

func firstWord(s string) string {
	s = strings.TrimLeft(s, " ")
	if k := strings.IndexByte(s, ' '); k >= 0 {
		return s[:k]
	}
	return s
}

// placeholderPrefixOfWord: "a person" in "a personal token" is a word, not
// a placeholder.
func placeholderPrefixOfWord(p string) bool {
	return p == "a person" || p == "a token" || p == "a password"
}

// identifier: a word that names a thing in code rather than in English.
func identifier(w string) bool {
	w = strings.Trim(w, "\"'`()[]{}“”‘’")
	w = strings.TrimSuffix(w, ".")
	if w == "" {
		return false
	}
	if w[0] == '-' && len(w) > 1 && (unicode.IsLetter(rune(w[1])) || w[1] == '-' && len(w) > 2 && unicode.IsLetter(rune(w[2]))) {
		return true // a flag: -race, --frozen-lockfile
	}
	prevLower := false
	for i, r := range w {
		switch {
		case unicode.IsDigit(r):
			return true
		case i > 0 && i < len(w)-1 && strings.ContainsRune("_/=:@.", r):
			return true
		case unicode.IsUpper(r) && prevLower:
			return true
		}
		prevLower = unicode.IsLower(r)
	}
	return false
}

func identifierRun(words []string) bool {
	run := 0
	for _, w := range words {
		if identifier(w) {
			run++
			if run >= 4 {
				return true
			}
		} else {
			run = 0
		}
		if strings.HasSuffix(w, ",") || strings.HasSuffix(w, ";") {
			run = 0
		}
	}
	return false
}

func symbolRun(text string) bool {
	var last byte
	n := 0
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c == last {
			n++
		} else {
			last, n = c, 1
		}
		switch c {
		case '^', '=', '#', '~', '*':
			if n >= 4 {
				return true
			}
		case '-':
			if n >= 5 {
				return true
			}
		}
	}
	return false
}

func promptInside(text string) bool {
	k := strings.Index(text, " $ ")
	return k >= 0 && k+3 < len(text) && unicode.IsLetter(rune(text[k+3]))
}

// quoteSpans are the byte spans of the quotes in text, their marks
// included.
func quoteSpans(text string) [][2]int {
	var out [][2]int
	unclosed := map[string]bool{} // a mark with no close after some point has none after any later one
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		var closeMark string
		switch r {
		case '"':
			closeMark = `"`
		case '`':
			closeMark = "`"
		case '“':
			closeMark = "”"
		case '\'':
			if i == 0 || text[i-1] == ' ' || text[i-1] == '(' {
				closeMark = "'"
			}
		}
		if closeMark == "" || unclosed[closeMark] {
			i += size
			continue
		}
		end := -1
		for j := i + size; j < len(text); {
			k := strings.Index(text[j:], closeMark)
			if k < 0 {
				break
			}
			at := j + k
			after := at + len(closeMark)
			if closeMark != "'" || after == len(text) || !unicode.IsLetter(rune(text[after])) {
				end = after
				break
			}
			j = after
		}
		if end < 0 {
			unclosed[closeMark] = true
			i += size
			continue
		}
		out = append(out, [2]int{i, end})
		i = end
	}
	return out
}

// quoteCursor answers whether a position is inside a quote, for
// positions asked in increasing order.
type quoteCursor struct {
	quotes [][2]int
	k      int
}

func (c *quoteCursor) in(at int) bool {
	for c.k < len(c.quotes) && c.quotes[c.k][1] <= at {
		c.k++
	}
	return c.k < len(c.quotes) && at >= c.quotes[c.k][0]
}

// messagePrefix: a word that opens a line of a tool's output.
func messagePrefix(w string, next string) bool {
	switch w {
	case "error:", "Error:", "ERROR:", "ERROR", "FATAL", "FATAL:", "fatal:", "warning:", "Warning:", "WARNING:", "warn:",
		"note:", "hint:", "panic:", "ERR!", "E:", "W:":
		return true
	case "Caused":
		return next == "by:"
	}
	return strings.HasPrefix(w, "error[") && strings.HasSuffix(w, "]:")
}

func stitched(text string, words []string, quotes [][2]int) bool {
	semis := 0
	qc := quoteCursor{quotes: quotes}
	for i := 0; i < len(text); i++ {
		if text[i] != ';' || qc.in(i) {
			continue
		}
		semis++
		rest := strings.Fields(text[i+1 : min(len(text), i+40)])
		if len(rest) > 0 {
			next := ""
			if len(rest) > 1 {
				next = rest[1]
			}
			if messagePrefix(rest[0], next) || rest[0] == "npm" && next == "ERR!" {
				return true
			}
		}
	}
	if semis >= 2 {
		return true
	}
	prefixes, prev := 0, false
	for i, w := range words {
		next := ""
		if i+1 < len(words) {
			next = words[i+1]
		}
		is := messagePrefix(w, next)
		// "FATAL ERROR:" is one message; "runtime error:" is a phrase.
		phrase := i > 0 && w == strings.ToLower(w) && !strings.ContainsAny(words[i-1][len(words[i-1])-1:], ".:;!?")
		if is && !prev && !phrase {
			prefixes++
		}
		prev = is
	}
	return prefixes >= 2
}

// danglingWords cannot end a sentence: what they open is missing.
// strandable are the prepositions among them that a relative clause may
// leave at the end ("the config to extend from", "what we test against").
var (
	danglingWords = set("may", "might", "can", "could", "will", "would", "shall", "should", "must", "does", "do", "did",
		"a", "an", "the", "and", "or", "but", "nor", "because", "that", "which", "whose", "when", "while",
		"if", "unless", "until", "as", "whether", "is", "are", "was", "were", "be", "been", "has", "have", "its", "their",
		"our", "your", "his", "her", "my", "these", "those", "where", "than", "this", "no")
	// needsNoun are adjectives that, after a determiner, leave out the
	// noun they qualify ("the current", "the entire").
	needsNoun   = set("current", "previous", "entire", "whole", "following", "respective", "corresponding", "underlying")
	determiners = set("the", "a", "an", "this", "that", "its", "their", "our", "your", "his", "her", "my", "these", "those", "each", "every")
	strandable  = set("to", "with", "for", "of", "from", "by", "at", "into", "onto", "via", "toward", "towards", "per",
		"against", "among", "between", "during", "except", "within", "without", "upon", "like")
	relatives = set("what", "which", "whom", "whatever", "who")
	beForms   = set("is", "are", "was", "were", "be", "been", "has", "have", "may", "might", "can", "could", "will", "would", "shall", "should",
		"must", "does", "do", "did")
	wh = set("what", "where", "how", "who", "which", "as", "than", "wherever", "whatever")
)

func cutOff(text string, quotes [][2]int) string {
	t := strings.TrimSpace(text)
	if strings.HasSuffix(t, "...") || strings.HasSuffix(t, "…") {
		return "cut off"
	}
	depth, brackets := 0, 0
	qc := quoteCursor{quotes: quotes}
	lead := len(text) - len(strings.TrimLeft(text, " \t"))
	for i := 0; i < len(t); i++ {
		if qc.in(i + lead) {
			continue
		}
		switch t[i] {
		case '(':
			depth++
		case ')':
			if depth > 0 {
				depth--
			}
		case '[':
			brackets++
		case ']':
			if brackets > 0 {
				brackets--
			}
		}
	}
	if depth > 0 {
		return "cut off inside a parenthesis"
	}
	if brackets > 0 {
		return "cut off inside brackets"
	}
	if k := strings.Index(t, `""`); k > 0 && isWordChar(t[k-1]) {
		return "cut off inside a quote" // an empty quote glued to a word, `public""`: what it held is gone
	}
	if strings.Count(t, `"`)%2 == 1 || strings.Count(t, "“") > strings.Count(t, "”") || strings.Count(t, "`")%2 == 1 ||
		unclosedSingle(t, quotes, lead) {
		return "cut off inside a quote"
	}
	body := strings.TrimRight(t, ".!? ")
	if body != t && body != "" {
		switch body[len(body)-1] {
		case ',', ':', ';', '-':
			return "cut off after '" + body[len(body)-1:] + "'"
		}
	}
	f := strings.Fields(body)
	if len(f) == 0 {
		return ""
	}
	last := f[len(f)-1]
	if last != strings.ToLower(last) {
		return "" // "B is no longer connected to A": a name
	}
	if n := len(f); beForms[last] && n >= 2 && (strings.ToLower(f[n-2]) == "which" || strings.ToLower(f[n-2]) == "who") {
		return "cut off after '" + last + "'" // "…, which does": its verb is missing
	}
	if beForms[last] && clauseHas(f, wh) {
		return "" // "where the token is", "as it is"
	}
	if n := len(f); n >= 2 && needsNoun[last] && determiners[strings.ToLower(f[n-2])] {
		return "cut off after '" + last + "'" // "the current": its noun is missing
	}
	if flagWithoutValue(f) {
		return "cut off after a flag"
	}
	if danglingWords[last] {
		return "cut off after '" + last + "'"
	}
	if !strandable[last] {
		return ""
	}
	// A preposition a relative clause strands: "to <verb> from", or a
	// relative word earlier in its clause.
	if n := len(f); n >= 3 && strings.ToLower(f[n-3]) == "to" && lexicon.get(strings.ToLower(f[n-2]))&cBase != 0 {
		return ""
	}
	if clauseHas(f, relatives) {
		return ""
	}
	return "cut off after '" + last + "'"
}

// clauseHas: a word of in among the words of the last clause of f (since
// its last , ; or :), the last word left out.
func clauseHas(f []string, in map[string]bool) bool {
	for k := len(f) - 2; k >= 0; k-- {
		w := strings.ToLower(f[k])
		if in[strings.TrimRight(w, ",;:")] {
			return true
		}
		if strings.HasSuffix(w, ",") || strings.HasSuffix(w, ";") || strings.HasSuffix(w, ":") {
			return false
		}
	}
	return false
}

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// titleHeader: a table's header in Title Case, as df, kubectl describe's
// events and ps print it: four or more capitalised words in a row (each
// a capital and then lower-case letters, a final "%" allowed) among which
// one after the first is a capitalised function word (From, On, Of, To,
// In, At, By, For) or carries a "%" ("Filesystem Size Used Avail Use%
// Mounted on", "Type Reason Age From Message"). A name of several
// capitalised words ("Google Cloud Build") has neither.
func titleHeader(words []string) bool {
	run, marked := 0, false
	for _, w := range words {
		if !titleWord(w) {
			run, marked = 0, false
			continue
		}
		run++
		if run > 1 && (titleFunction[w] || strings.HasSuffix(w, "%")) {
			marked = true
		}
		if run >= 4 && marked {
			return true
		}
	}
	return false
}

var titleFunction = set("From", "On", "Of", "To", "In", "At", "By", "For")

// titleWord: a capital and then one or more lower-case ASCII letters, a
// final "%" or "." allowed (Size, Use%, Message.).
func titleWord(w string) bool {
	w = strings.TrimSuffix(strings.TrimSuffix(w, "."), "%")
	if len(w) < 2 || w[0] < 'A' || w[0] > 'Z' {
		return false
	}
	for i := 1; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}

// capsTail: the sentence is two or more ALL-CAPS words and nothing else
// ("NAMES PORTS."): column names, not a sentence.
func capsTail(words []string) bool {
	if len(words) < 2 {
		return false
	}
	for _, w := range words {
		if !capsWord(strings.TrimRight(w, ".!?")) {
			return false
		}
	}
	return true
}

// spacedFields: two or more "key = value" fields with spaces around "=",
// the key a lower-case word, as gRPC and config dumps print them ("rpc
// error: code = Unknown desc = failed").
func spacedFields(words []string) bool {
	n := 0
	for i := 1; i+1 < len(words); i++ {
		if words[i] == "=" && words[i-1] != "" && lowerKey(strings.ReplaceAll(words[i-1], "-", "_")) {
			n++
		}
	}
	return n >= 2
}

// colonFields: two or more "key: "value"" fields, a lower-case key and a
// quoted value ('name: "web" namespace: "shop"'), as tools print an
// object's identity.
func colonFields(words []string) bool {
	n := 0
	for i := 0; i+1 < len(words); i++ {
		k := words[i]
		if len(k) > 1 && strings.HasSuffix(k, ":") && lowerKey(k[:len(k)-1]) && strings.ContainsAny(words[i+1][:1], quoteMarks) {
			n++
		}
	}
	return n >= 2
}

// placeholderQuoted: a redaction's placeholder is the whole of a quote
// ("Repository 'a person' is not defined"), or the argument of a call
// told as "Running <call> <placeholder>": raw data stood there.
func placeholderQuoted(text string, words []string) bool {
	for _, q := range quoteSpans(text) {
		in := strings.TrimSpace(text[q[0]:q[1]])
		in = strings.Trim(in, quoteMarks)
		for _, p := range placeholderWords {
			if in == p {
				return true
			}
		}
	}
	for i, w := range words {
		if w != "Running" && w != "running" {
			continue
		}
		rest := strings.Join(words[i+1:min(len(words), i+8)], " ")
		for _, p := range placeholderWords {
			if k := strings.Index(rest, p); k > 0 && strings.Count(rest[:k], " ") <= 2 {
				return true
			}
		}
	}
	return false
}

// newSentenceAfterSemicolon: a semicolon outside quotes followed by a
// capitalised function word ("; The", "; It", "; This"): two sentences
// stitched, since a clause after a semicolon goes on in lower case (a
// name may follow: "; Gradle does not read it").
func newSentenceAfterSemicolon(text string, quotes [][2]int) bool {
	qc := quoteCursor{quotes: quotes}
	for i := 0; i < len(text); i++ {
		if text[i] != ';' || qc.in(i) {
			continue
		}
		if w := firstWord(text[i+1:]); sentenceOpeners[w] || len(w) > 4 && w[0] >= 'A' && w[0] <= 'Z' && strings.HasSuffix(w, "ing") && lowerKey(w[1:]) {
			return true // "; Connecting to ...": a gerund opens a new sentence
		}
	}
	return false
}

var sentenceOpeners = set("The", "This", "That", "These", "Those", "It", "Its", "A", "An", "There", "They", "We", "Our", "Then",
	"Is", "Are", "Was", "Were", "Do", "Does", "Did", "Please", "If", "Make")

// unclosedSingle: a single quote that opens after a space or "(" before a
// letter and starts no quote (quoteSpans found no close for it).
func unclosedSingle(t string, quotes [][2]int, lead int) bool {
	starts := map[int]bool{}
	for _, q := range quotes {
		starts[q[0]] = true
	}
	qc := quoteCursor{quotes: quotes}
	for i := 0; i+1 < len(t); i++ {
		if t[i] != '\'' || !(i == 0 || t[i-1] == ' ' || t[i-1] == '(') || qc.in(i+lead) {
			continue
		}
		if c := t[i+1]; ('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || isDigitByte(c)) && !starts[i+lead] {
			return true
		}
	}
	return false
}

// flagWithoutValue: the sentence ends on a flag that lost its value:
// "--out=", or a long flag after a flag and its value ("--region eu-west1
// --project"): flags given in pairs, the last one's value cut away. A
// flag after a word ("npm ci --legacy-peer-deps", "without --force") may
// take no value, and is kept.
func flagWithoutValue(f []string) bool {
	n := len(f)
	last := strings.TrimRight(f[n-1], ".!?")
	if !strings.HasPrefix(last, "-") || len(last) < 2 {
		return false
	}
	if strings.HasSuffix(last, "=") {
		return true
	}
	return n >= 3 && strings.HasPrefix(last, "--") && strings.HasPrefix(f[n-3], "-") && !strings.HasPrefix(f[n-2], "-") &&
		!strings.Contains(f[n-3], "=")
}

// shellLineLocation: a shell's error location "<script>: line <n>:"
// ("deploy.sh: line 12: foo: command not found").
func shellLineLocation(words []string) bool {
	for i := 1; i+1 < len(words); i++ {
		if words[i] == "line" && strings.HasSuffix(words[i-1], ":") && strings.HasSuffix(words[i+1], ":") &&
			allDigits(strings.TrimSuffix(words[i+1], ":")) {
			return true
		}
	}
	return false
}

// markupTags: an HTML or XML element, an opening tag and its closing tag
// ("<title>…</title>"), carried from a response body.
func markupTags(text string) bool {
	for from := 0; from < len(text); {
		k := strings.Index(text[from:], "</")
		if k < 0 {
			return false
		}
		at := from + k + 2
		end := at
		for end < len(text) && ('a' <= text[end] && text[end] <= 'z' || '0' <= text[end] && text[end] <= '9') {
			end++
		}
		if end > at && end < len(text) && text[end] == '>' && strings.Contains(text[:from+k], "<"+text[at:end]) {
			return true
		}
		from = at
	}
	return false
}

// quotedLines: three quotes or more joined by " / " ("`a` / `b` /
// `c`"): lines of output quoted one after another.
func quotedLines(text string, quotes [][2]int) bool {
	n := 0
	for i := 1; i < len(quotes); i++ {
		if strings.TrimSpace(text[quotes[i-1][1]:quotes[i][0]]) == "/" {
			n++
			if n >= 2 {
				return true
			}
		} else {
			n = 0
		}
	}
	return false
}

func isWordChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || isDigitByte(c) || c == '_'
}

// encodedURL: a word with two or more percent escapes ("%2Fvar%2Frun"):
// a URL as a program encoded it, not as a person writes it.
func encodedURL(words []string) bool {
	for _, w := range words {
		n := 0
		for i := 0; i+2 < len(w); i++ {
			if w[i] == '%' && isHex(w[i+1]) && isHex(w[i+2]) {
				n++
			}
		}
		if n >= 2 {
			return true
		}
	}
	return false
}

func isHex(c byte) bool { return isDigitByte(c) || 'A' <= c && c <= 'F' || 'a' <= c && c <= 'f' }
