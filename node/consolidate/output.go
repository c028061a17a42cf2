package consolidate

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/remem/remem/protocol/textcheck"
)

// Essential is what the default writer takes from an event field: for tool
// output (a field of several lines, or one line with a log's marks) the
// message of the line that says what failed, with the agent's own words
// that explain it after a comma; any other field as it is. It is how the
// writer says what failed in its own words instead of pasting the output
// (SPEC §3, written, not pasted).
//
// Each line is cleaned first: terminal escapes, box-drawing and other
// symbol characters, a log's prefixes (timestamps, levels in brackets,
// BuildKit's "#8 41.02", npm's "npm ERR!", pytest's "E   ", a
// "file:line:col:" location) go. Lines that say nothing of the failure go
// too: progress and status lines ("Downloading", "Compiling", "[2/4]"),
// table rows and headers, stack frames, rules ("====="), advice ("hint:",
// "note:", "Please", "Run with"), prompts. Of the rest, the line with the
// strongest marks of an error is the essential one: an error code
// (error[E0425], TS2322, NU1101, ERROR 1045, ERESOLVE, PERMISSION_DENIED),
// an exception or error class with its message (IntegrityError: ...), a
// "panic:", a failure phrase ("no space left on device", "Access denied",
// "timed out"), an HTTP status; a line that only says that something
// failed ("BUILD FAILURE", "exit code 1") counts least. Its message is cut
// to its first sentence and a length a reader takes in at once, never
// after a word that leaves the clause open. A line that reads as the
// agent's words (a sentence with a verb, "the mocks are not committed")
// is kept as the explanation.
func Essential(s string) string {
	type cand struct {
		line  string
		score int
	}
	var cands []cand
	if !looksLikeOutput(s) {
		if len(nonBlankLines(s)) == 1 {
			if l := cleanLine(s); l != strings.TrimSpace(s) && l != "" {
				return l // "curl: (22) The requested URL ..." → "The requested URL ..."
			}
			if errorOpening(s) {
				return longMessage(strings.TrimSpace(s)) // "ERROR 1045 (28000): Access denied for user 'app'@'…'"
			}
		}
		return s
	}
	lines := joinWrapped(allLines(stripEscapes(s)))
	var prose []string
	table, lastCol := false, -1
	for _, raw := range lines {
		if strings.HasPrefix(strings.TrimSpace(raw), "-- ") {
			continue // CMake's and Meson's status lines
		}
		l := cleanLine(raw)
		if tableHeader(l) {
			// A table's header: its rows follow. A MESSAGE column
			// (kubectl's events, Argo CD) is the one a row's error is in.
			table, lastCol = true, -1
			if k := strings.LastIndex(raw, "MESSAGE"); k > 0 && strings.HasSuffix(strings.TrimSpace(raw), "MESSAGE") {
				lastCol = k
			}
			continue
		}
		// A row is aligned in columns: two spaces in a row or a tab.
		if table && !isProse(l) && (strings.Contains(strings.TrimSpace(raw), "  ") || strings.Contains(raw, "\t")) {
			if lastCol > 0 && len(raw) > lastCol && raw[lastCol-1] == ' ' {
				if m := cleanLine(raw[lastCol:]); errorScore(m) >= 2 {
					cands = append(cands, cand{m, errorScore(m)})
				}
			}
			continue
		}
		table = false
		// "X changed since Y was generated. Run `z` to fix it.": the
		// statement before the advice is kept, the advice goes.
		if k := strings.Index(l, ". "); k > 0 && holdsOrder(l) && !holdsOrder(l[:k]) && len(strings.Fields(l[:k])) >= 4 {
			l = l[:k]
		}
		if l == "" || noiseLine(l) {
			continue
		}
		if r, _ := utf8.DecodeRuneInString(strings.TrimSpace(raw)); unicode.IsLetter(r) && isProse(l) {
			if advice(l) {
				continue
			}
			prose = append(prose, strings.TrimRight(l, ". "))
			continue
		}
		cands = append(cands, cand{l, errorScore(l)})
	}
	// The first line within one point of the strongest: output states the
	// failure first and its details after.
	best, bestScore := "", -1<<30
	for _, c := range cands {
		bestScore = max(bestScore, c.score)
	}
	for _, c := range cands {
		if c.score >= bestScore-1 {
			best = message(c.line)
			break
		}
	}
	if best == "" && len(prose) == 0 {
		return warningOnly(lines)
	}
	if bestScore < 1 && len(prose) > 0 {
		best = ""
	}
	parts := []string{}
	if best != "" {
		parts = append(parts, best)
	}
	for _, p := range prose {
		if len(parts) >= 2 {
			break
		}
		if !strings.Contains(strings.ToLower(strings.Join(parts, " ")), strings.ToLower(p)) {
			if len(parts) > 0 && proseOpeners[firstField(p)] && firstField(p) != "It" {
				p = strings.ToLower(p[:1]) + p[1:] // "…, the bits may have been replaced"
			}
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, ", ")
}

// warningOnly is the first warning of output that holds nothing else
// (docker compose's "WARN[0000] ...: `version` is obsolete"): for a
// report that is all warnings, the warning is what happened.
func warningOnly(lines []string) string {
	for _, raw := range lines {
		l := strings.TrimSpace(raw)
		w := firstField(l)
		switch {
		case bracketLevel(w) == "warn" || bracketLevel(w) == "warning", w == "WARNING:", w == "warning:", w == "Warning:":
			l = strings.TrimSpace(strings.TrimPrefix(l, w))
		case strings.HasPrefix(l, "npm WARN "):
			l = strings.TrimPrefix(l, "npm WARN ")
		default:
			continue
		}
		if m := message(cleanLine(l)); m != "" {
			return m
		}
	}
	return ""
}

// errorOpening: a line that opens as a tool's error message does.
func errorOpening(s string) bool {
	w := firstField(strings.TrimSpace(s))
	switch w {
	case "ERROR", "ERROR:", "FATAL:", "FATAL", "Error:", "panic:":
		return true
	}
	return false
}

// allLines is s cut at every line break, blank lines kept.
func allLines(s string) []string {
	var out []string
	start := 0
	for i, r := range s {
		if isLineBreak(r) {
			out = append(out, s[start:i])
			start = i + utf8.RuneLen(r)
		}
	}
	return append(out, s[start:])
}

// joinWrapped joins the lines a tool wrapped in the middle of a sentence:
// a line that opens with a plain lower-case word (not a prefix of output
// such as "at", "npm", "note:") goes on the line before it when that one
// has four words or more and ends in a plain lower-case word or a comma
// ("…, or an attacker may" + "have intercepted the download attempt.").
// A blank line between two lines ends the first's sentence.
func joinWrapped(lines []string) []string {
	var out []string
	blank := false
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" {
			blank = true
			continue
		}
		first := firstField(t)
		if n := len(out); n > 0 && !blank && lowerWord(first) && !strings.HasSuffix(first, ":") && !outputWords[first] {
			prev := strings.TrimRight(out[n-1], " ")
			pf := strings.Fields(prev)
			if last := pf[len(pf)-1]; len(pf) >= 4 && !strings.Contains(strings.TrimSpace(prev), "  ") && !strings.Contains(prev, "\t") && (lowerWord(last) || strings.HasSuffix(last, ",") && lowerWord(strings.TrimSuffix(last, ","))) {
				out[n-1] = prev + " " + t
				continue
			}
		}
		blank = false
		out = append(out, l)
	}
	return out
}

var outputWords = set("at", "npm", "error", "warning", "note", "hint", "help", "info", "from", "in", "added", "removed",
	"changed", "found", "audited", "up", "ok", "running", "test", "failures", "collected", "platform", "warn", "debug",
	"goroutine", "exit", "main", "thread", "exec")

// tableHeader: a line of three words or more, all in capitals ("NAME
// READY STATUS RESTARTS AGE", "LAST SEEN TYPE REASON OBJECT MESSAGE").
func tableHeader(l string) bool {
	w := strings.Fields(l)
	if len(w) < 3 {
		return false
	}
	for _, x := range w {
		if len(x) < 2 || strings.IndexFunc(x, func(r rune) bool { return !unicode.IsUpper(r) && r != '%' && r != '-' && r != '_' }) >= 0 {
			return false
		}
	}
	return true
}

// Written returns the fields of e as DefaultWriter reads them, before it
// redacts them: the title as the name of a call (without its flags, paths
// and generated names) and the other fields through Essential. What the
// redaction would do to these may show in the writer's sentence; what
// they leave out cannot.
func (e Episode) Written() []string {
	return []string{callName(e.Title), Essential(e.Expected), Essential(e.Happened), Essential(e.Said),
		Essential(e.AgentDid), Essential(e.Text)}
}

// outputScore is how strongly a field says what failed: the errorScore of
// what Essential takes from it, 0 for a field in the agent's words, and
// less than any line when it gives nothing.
func outputScore(s string) int {
	if strings.TrimSpace(s) == "" {
		return -100
	}
	if !looksLikeOutput(s) {
		return 0
	}
	e := Essential(s)
	if e == "" {
		return -50
	}
	return errorScore(e)
}

// looksLikeOutput: several lines, or one with the marks of a log.
func looksLikeOutput(s string) bool {
	if len(nonBlankLines(s)) > 1 {
		return true
	}
	if strings.ContainsAny(s, "\x1b") || strings.Contains(s, "npm ERR!") || strings.Contains(s, "(error)") {
		return true
	}
	for _, r := range s {
		if r >= 0x2500 && r <= 0x259F {
			return true
		}
	}
	switch textcheck.Pasted(s) {
	case "a log line", "a stack frame", "terminal escapes":
		return true
	}
	return false
}

// stripEscapes removes terminal escape sequences (ESC [ ... letter) and
// colour codes whose ESC was lost ("[31m").
func stripEscapes(s string) string {
	if !strings.ContainsAny(s, "\x1b[") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == 0x1b || c == '[' && i+1 < len(s) && isDigit(s[i+1]) {
			j := i + 1
			if c == 0x1b && j < len(s) && s[j] == '[' {
				j++
			}
			k := j
			for k < len(s) && (isDigit(s[k]) || s[k] == ';') {
				k++
			}
			if k < len(s) && (s[k] == 'm' || c == 0x1b && unicode.IsLetter(rune(s[k]))) {
				i = k
				continue
			}
			if c == 0x1b {
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// cleanLine drops what frames and prefixes a line of output.
func cleanLine(l string) string {
	l = ghLogLine(l)
	l = gnuQuote.ReplaceAllString(l, "'$1'")
	l = strings.Map(func(r rune) rune {
		switch {
		case r >= 0x2500 && r <= 0x259F, unicode.Is(unicode.So, r), r == '×', r == '›', r == '❯':
			return ' '
		case unicode.IsControl(r):
			return ' '
		}
		return r
	}, l)
	l = strings.Join(strings.Fields(l), " ")
	// gRPC's status "rpc error: code = Unknown desc = <message>": the
	// message says it.
	if k := strings.Index(l, "rpc error: code = "); k >= 0 {
		if d := strings.Index(l[k:], " desc = "); d > 0 {
			l = l[:k] + l[k+d+len(" desc = "):]
		}
	}
	// git's "remote: <message>", the server's words passed on.
	if rest, ok := strings.CutPrefix(l, "remote: "); ok && strings.Count(rest, " ") >= 3 {
		l = rest
		if f := firstField(l); len(f) > 2 && strings.HasSuffix(f, ":") && unicode.IsUpper(rune(f[0])) && isLetters(strings.TrimSuffix(f, ":")) {
			l = strings.TrimSpace(strings.TrimPrefix(l, f)) // "GitLab: You are not allowed ..."
		}
	}
	if strings.HasPrefix(l, "# ") {
		return "" // go's "# package" header
	}
	// syslog's "Mar 04 10:15:44 web-1 kernel: " and journald's
	// "api.service: ".
	if f := strings.Fields(l); len(f) > 4 && months[f[0]] && allDigitsStr(f[1]) && timestampWord(f[2]) {
		for k := 3; k < len(f) && k < 6; k++ {
			if strings.HasSuffix(f[k], ":") {
				l = strings.Join(f[k+1:], " ")
				if g := strings.Fields(l); len(g) > 1 && strings.HasSuffix(g[0], ".service:") {
					l = strings.Join(g[1:], " ")
				}
				break
			}
		}
	}
	step := false
	for {
		before := l
		if w := firstField(l); nginxPrefix(w) {
			l = strings.TrimSpace(strings.TrimPrefix(l, w))
			continue
		}
		l = strings.TrimLeft(l, "|>*!-: ")
		w := firstField(l)
		switch {
		case w == "npm" && strings.HasPrefix(l, "npm ERR!"):
			l = strings.TrimSpace(strings.TrimPrefix(l, "npm ERR!"))
			// npm's topic word before the code: "nospc ENOSPC: ...".
			if f := strings.Fields(l); len(f) > 1 && strings.ToLower(f[0]) == f[0] && codeWord(strings.TrimRight(f[1], ":")) &&
				strings.EqualFold(f[0], strings.TrimPrefix(strings.TrimRight(f[1], ":"), "E")) {
				l = strings.TrimPrefix(l, f[0])
			}
		case w == "npm" && strings.HasPrefix(l, "npm WARN"), w == "WARNING:" && !strings.HasPrefix(l, "WARNING: DATA RACE"), w == "warning:":
			return "" // a warning is not the failure
		case len(w) > 1 && w[0] == '#' && allDigitsStr(w[1:]):
			l, step = strings.TrimPrefix(l, w), true // BuildKit's step number and seconds
		case w != "" && (timestampWord(w) || numberWord(w) && step):
			l = strings.TrimPrefix(l, w)
		case bracketLevel(w) != "":
			switch bracketLevel(w) {
			case "warn", "warning", "info", "debug", "trace", "notice":
				return ""
			}
			l = strings.TrimPrefix(l, w)
		case (w == "Warning" || w == "Normal") && strings.Count(l, " ") >= 4:
			// A row of kubectl's events: type, reason, age, source, message.
			f := strings.Fields(l)
			for k, x := range f {
				if x == "kubelet" || strings.HasSuffix(x, "-scheduler") || strings.HasSuffix(x, "-controller") || strings.HasSuffix(x, "controller") {
					l = strings.Join(f[k+1:], " ")
					// The reason column names the event ("FailedScheduling"),
					// unless it only says that something failed.
					if r := f[1]; w == "Warning" && r != "Failed" && len(r) > 6 && unicode.IsUpper(rune(r[0])) && isLetters(r) &&
						strings.IndexFunc(r[1:], unicode.IsUpper) >= 0 && !strings.Contains(l, r) {
						l = r + ": " + l
					}
					break
				}
			}
			if w == "Normal" {
				return ""
			}
			if l == before {
				return l
			}
		case w == "[rejected]" || w == "[remote" && strings.HasPrefix(l, "[remote rejected]"):
			// git's "! [rejected] main -> main (fetch first)".
			switch {
			case strings.HasSuffix(l, "(fetch first)"):
				return "rejected as non-fast-forward because the remote has commits that the local branch lacks"
			case strings.HasSuffix(l, "(non-fast-forward)"):
				return "rejected as a non-fast-forward update"
			}
			return "rejected"
		case strings.HasPrefix(w, "[") && strings.HasSuffix(w, "]:") && strings.Count(l, " ") > 0:
			l = strings.TrimPrefix(l, w) // Ansible's "[web1]:"
		case w == "Error" && strings.HasPrefix(l, "Error message: "):
			l = strings.TrimPrefix(l, "Error message: ")
		case w == "E" || w == "(error)" || w == "error" && !strings.HasPrefix(l, "error:") && !strings.HasPrefix(l, "error["):
			l = strings.TrimPrefix(l, w)
		case strings.HasSuffix(w, ":") && location(strings.TrimSuffix(w, ":")):
			l = strings.TrimPrefix(l, w) // "main.go:14:9: undefined: X"
		case strings.HasSuffix(w, ":") && strings.Contains(w, ".") && strings.Contains(w, "/") && strings.Count(l, " ") > 1 &&
			allDigitsStr(strings.TrimSuffix(strings.Fields(l)[1], ":")) && strings.HasSuffix(strings.Fields(l)[1], ":"):
			// sh's "/path/script.sh: 1: ./gradlew: Permission denied".
			l = strings.Join(strings.Fields(l)[2:], " ")
		case strings.HasSuffix(w, ":") && strings.Contains(w, "/") && strings.Count(l, " ") > 2 && strings.Fields(l)[1] == "line" &&
			strings.HasSuffix(strings.Fields(l)[2], ":") && allDigitsStr(strings.TrimSuffix(strings.Fields(l)[2], ":")):
			// bash's "/path/script.sh: line 1: ./gradlew: Permission denied".
			l = strings.Join(strings.Fields(l)[3:], " ")
			if f := strings.Fields(l); len(f) > 1 && allDigitsStr(f[0]) {
				return "" // its job report, "213 Killed ./gradlew test": the exit code says it
			}
		case strings.HasSuffix(w, ":") && strings.HasPrefix(w, "/") && strings.Count(w, "/") >= 2 && !strings.Contains(w[:len(w)-1], ":") &&
			strings.Contains(w[strings.LastIndexByte(w, '/'):], ".") && strings.Count(l, " ") >= 2:
			// "/home/ana/src/crm/docker-compose.yml: `version` is obsolete":
			// the file's name says which file.
			l = w[strings.LastIndexByte(w, '/')+1:] + strings.TrimPrefix(l, w)
			return l
		case strings.HasSuffix(w, ":") && nameLine(strings.TrimSuffix(w, ":")):
			l = strings.TrimPrefix(l, w) // make's "Makefile:23: *** missing separator"
		case locationParen(w):
			l = strings.TrimPrefix(l, w) // "src/x.ts(41,7): error TS2322"
		case strings.Contains(w, "/") && strings.HasPrefix(strings.TrimPrefix(l, w), " : "):
			l = strings.TrimPrefix(strings.TrimPrefix(l, w), " : ") // "/src/Api.csproj : error NU1101"
		case w == "psql:" || w == "curl:" || w == "ssh:" || w == "fatal:" && strings.HasPrefix(l, "fatal: ["):
			l = strings.TrimPrefix(l, w)
		case strings.HasPrefix(w, "(") && strings.HasSuffix(w, ")") && allDigitsStr(strings.Trim(w, "()")):
			l = strings.TrimPrefix(l, w) // curl's "(22)"
		case nginxPrefix(w):
			l = strings.TrimPrefix(l, w)
		}
		l = strings.TrimSpace(l)
		if l == before {
			return l
		}
	}
}

func firstField(s string) string {
	if k := strings.IndexByte(s, ' '); k >= 0 {
		return s[:k]
	}
	return s
}

func allDigitsStr(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// numberWord: "41.02", "12.31" (BuildKit's seconds).
func numberWord(w string) bool {
	return strings.Trim(w, "0123456789.") == "" && strings.IndexFunc(w, unicode.IsDigit) >= 0
}

// timestampWord: "2024-05-01T12:03:44Z", "2024/03/04", "10:12:01", "[2024-05-01".
func timestampWord(w string) bool {
	w = strings.Trim(w, "[],:")
	if len(w) < 8 {
		return false
	}
	digits, seps := 0, 0
	for i := 0; i < len(w); i++ {
		switch c := w[i]; {
		case isDigit(c):
			digits++
		case c == '-' || c == '/' || c == ':' || c == '.' || c == 'T' || c == 'Z' || c == '+' || c == ',':
			seps++
		default:
			return false
		}
	}
	return digits >= 6 && seps >= 2
}

var months = set("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")

// bracketLevel is the level of a log's level word, "[INFO]", "[error]",
// "WARN[0000]", "INFO"; "" when w is none.
func bracketLevel(w string) string {
	level := ""
	switch {
	case strings.HasPrefix(w, "[") && strings.HasSuffix(w, "]"):
		level = strings.ToLower(w[1 : len(w)-1])
	case strings.IndexByte(w, '[') > 0 && strings.HasSuffix(w, "]") && allDigitsStr(w[strings.IndexByte(w, '[')+1:len(w)-1]):
		level = strings.ToLower(w[:strings.IndexByte(w, '[')])
	case w == "INFO" || w == "DEBUG" || w == "TRACE":
		level = strings.ToLower(w)
	case strings.HasSuffix(w, "]") && strings.Contains(w, "/"):
		level, _, _ = strings.Cut(strings.ToLower(w), "/") // Celery's "ERROR/MainProcess]"
	}
	switch level {
	case "info", "error", "warn", "warning", "debug", "fatal", "trace", "notice", "err", "crit":
		return level
	case "erro":
		return "error"
	case "debu":
		return "debug"
	case "fata":
		return "fatal"
	}
	return ""
}

// nginxPrefix: "29#29:" and "*1" of an nginx error log line.
func nginxPrefix(w string) bool {
	if k := strings.IndexByte(w, '#'); k > 0 && strings.HasSuffix(w, ":") && allDigitsStr(w[:k]) && allDigitsStr(w[k+1:len(w)-1]) {
		return true
	}
	return len(w) > 1 && w[0] == '*' && allDigitsStr(w[1:])
}

// location: "main.go:14:9", "src/main.rs:12", "tests/test_orders.py:88".
func location(w string) bool {
	k := strings.IndexByte(w, ':')
	if k <= 0 {
		return false
	}
	file, rest := w[:k], w[k+1:]
	line, col, _ := strings.Cut(rest, ":")
	if !allDigitsStr(line) || col != "" && !allDigitsStr(col) {
		return false
	}
	return strings.ContainsAny(file, "./")
}

// locationParen: "src/routes/orders.ts(41,7):".
func locationParen(w string) bool {
	k := strings.IndexByte(w, '(')
	return k > 0 && strings.HasSuffix(w, "):") && strings.ContainsAny(w[:k], "./") &&
		strings.Trim(w[k+1:len(w)-2], "0123456789,") == ""
}

// noiseStarts open lines of output that say nothing of the failure.
var noiseStarts = []string{
	"at ", "File \"", "Traceback", "goroutine ", "note:", "hint:", "help:", "info ", "Visit ", "For more information",
	"Run with", "run with", "Please", "Try", "Downloading", "Collecting", "Compiling", "Installing", "Resolving",
	"Fetching", "Building", "Checking", "Determining", "Running ", "Syncing", "added ", "up to date", "Task ",
	"What went wrong", "platform ", "collected ", "Test Suites:", "Tests:", "Snapshots:", "Time:", "Ran all",
	"test result:", "running ", "failures:", "To ", "Release ", "Lock Info", "ID:", "Path:", "Operation:", "Who:",
	"Version:", "Created:", "Info:", "with ", "on ", "status code:", "LINE ", "DETAIL:", "Verifying", "Determining",
	"Successfully", "Starting", "Started", "Pulling", "Waiting", "Digest:", "Status:", "Inspect:", "Vercel CLI",
	"PLAY ", "TASK ", "PLAY RECAP", "ok=", "server:", "date:", "content-type:", "content-length:", "Events:",
	"Normal ", "Oops!", "ESLint:", "Run actions/", "Run npm", "Run yarn", "Run go", "$ ", "in <module>",
	"main()", "Problem ", "Node.js 16 actions", "WARNING: file does not exist", "Failed to extract cache",
	"Found ", "<---", "The config ", "Lock ", "FAIL\t", "A web browser has been opened", "FAIL ", "ok ", "--- FAIL",
	"Error: Process completed with exit code",
}

// nameLine: a file named without an extension and a line number,
// "Makefile:23", "Dockerfile:14".
func nameLine(w string) bool {
	file, line, ok := strings.Cut(w, ":")
	if !ok || len(file) < 2 || !unicode.IsUpper(rune(file[0])) || !allDigitsStr(line) || line == "" {
		return false
	}
	return isLetters(file)
}

func noiseLine(l string) bool {
	// Advice: a line that reads as an instruction ("Tell CMake where to
	// find the compiler", "Alternatively, populate GH_TOKEN").
	return shapeNoise(l) || errorScore(l) < 2 && holdsOrder(l)
}

// shapeNoise: a line whose shape says it tells nothing of a failure:
// progress and status lines, table rows, stack frames, rules, a location
// alone, a source line.
func shapeNoise(l string) bool {
	for _, p := range noiseStarts {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	if strings.IndexFunc(l, unicode.IsLetter) < 0 || l == "FAIL" || l == "FAILED" {
		return true // rules, numbers, punctuation, a bare verdict
	}
	switch textcheck.Pasted(l) {
	case "table columns", "a stack frame", "a run of identifiers", "an underline or progress bar", "a log line":
		return true
	}
	// A status field, "Sync Status: Synced to main", "Name: argocd/shop".
	if k := strings.Index(l, ": "); k > 0 && k < 24 && errorScore(l) < 2 {
		key := l[:k]
		if r, _ := utf8.DecodeRuneInString(key); unicode.IsUpper(r) && strings.Count(key, " ") <= 2 &&
			strings.IndexFunc(key, func(r rune) bool { return !unicode.IsLetter(r) && r != ' ' }) < 0 && !errorWord(key) {
			return true
		}
	}
	// A location alone: "/src/cmd/server/config.go:41".
	if !strings.Contains(l, " ") && (location(l) || location(strings.TrimSuffix(l, ":"))) {
		return true
	}
	// "12 |     let port = config.port;": a source line shown with its number.
	if w := firstField(l); allDigitsStr(w) && strings.Contains(l, " | ") {
		return true
	}
	// A frame of a stack: "main.loadConfig(...)", "node::Abort() [node]".
	if w := firstField(l); (strings.HasSuffix(w, ")") || strings.HasSuffix(w, "()")) && strings.Contains(w, "(") && !strings.Contains(l, " ") {
		return true
	}
	return false
}

// holdsOrder: a clause of l reads as an instruction (textcheck.CheckGrammar).
func holdsOrder(l string) bool {
	if textcheck.CheckGrammar(l) != nil {
		return true
	}
	for _, cl := range clauses(l) {
		if textcheck.CheckGrammar(cl.text) != nil {
			return true
		}
	}
	return false
}

// errorWord: a key that names an error ("Error", "Exception", "Caused by").
func errorWord(key string) bool {
	low := strings.ToLower(key)
	return strings.Contains(low, "error") || strings.Contains(low, "exception") || strings.Contains(low, "fail") ||
		strings.Contains(low, "caused") || strings.Contains(low, "fatal") || strings.Contains(low, "panic")
}

// isProse: a line in the agent's words, not the tool's: it opens with a
// lower-case word or a capitalised function word, has five words or more,
// mostly plain words, and a verb or a word that gives a reason.
func isProse(l string) bool {
	if strings.ContainsAny(l, "{}[]<>|") {
		return false
	}
	w := strings.Fields(l)
	if len(w) < 5 {
		return false
	}
	first := w[0]
	if !proseOpeners[first] && strings.IndexFunc(first, func(r rune) bool { return !unicode.IsLower(r) }) >= 0 {
		return false
	}
	for _, x := range w {
		t := strings.Trim(x, ".,;:'\"()")
		envVar := strings.IndexFunc(t, func(r rune) bool { return !unicode.IsUpper(r) && r != '_' && !unicode.IsDigit(r) }) < 0
		if strings.Contains(t, ".") || strings.ContainsAny(x, "_@") && !envVar || strings.Contains(x, "::") {
			return false // a name from code: "sqlalchemy.exc.IntegrityError"
		}
	}
	plain, verb := 0, false
	for _, x := range w {
		x = strings.Trim(x, ".,;'\"()")
		lx := strings.ToLower(x)
		if x != "" && strings.IndexFunc(x, func(r rune) bool { return !unicode.IsLower(r) && r != '\'' && r != '-' }) < 0 {
			plain++
		}
		if proseVerbs[lx] {
			verb = true
		}
	}
	return verb && plain*10 >= len(w)*7 && !strings.HasSuffix(l, ":")
}

var proseOpeners = set("The", "This", "It", "A", "An", "Its", "There", "They", "We", "Our")

var proseVerbs = set("is", "are", "was", "were", "has", "have", "had", "does", "doesn't", "did", "didn't", "lacks",
	"needs", "uses", "changes", "fails", "crashes", "includes", "wants", "cannot", "can't", "never", "not", "because",
	"when", "until", "since", "after", "removed", "runs", "rotated", "held", "missing", "expects", "reuses", "moves",
	"reads", "writes", "points", "holds", "misses", "blocks", "requires", "returns", "stays", "waits")

// errorScore: how strongly a cleaned line says what failed.
func errorScore(l string) int {
	low := strings.ToLower(l)
	sc := 0
	w := strings.Fields(l)
	for i, x := range w {
		t := strings.Trim(x, ".,;:()'\"`")
		switch {
		case strings.HasPrefix(x, "error[") || strings.HasPrefix(x, "error TS") || i > 0 && w[i-1] == "error" && codeWord(t):
			sc += 4
		case i > 0 && strings.EqualFold(w[i-1], "error:") && i == len(w)-1 && kebabCode(t):
			sc += 4 // pip's "error: externally-managed-environment": a code in words
		case strings.HasSuffix(t, "Error") || strings.HasSuffix(t, "Exception") || strings.HasSuffix(t, "Violation"):
			if len(t) > 5 && unicode.IsUpper([]rune(t)[0]) || strings.Contains(t, ".") {
				sc += 3
			}
			if k := strings.LastIndexByte(t, '.'); k > 0 && k+1 < len(t) && unicode.IsUpper(rune(t[k+1])) {
				sc += 3 // a class named with its package, "java.lang.UnsupportedClassVersionError": the cause itself
			}
		case codeWord(t):
			sc += 3
		}
	}
	for _, p := range []string{"panic:", "fatal error", "fatal:", "error:", "denied", "refused", "not found", "cannot", "can't",
		"could not", "couldn't", "unable", "timed out", "no space", "not allowed", "does not exist", "is not defined",
		"undefined:", "no module named", "missing", "unauthorized", "forbidden", "not assignable", "conflict",
		"out of memory", "heap", "unreachable", "already", "invalid", "failed to", "not available", "verification failed",
		"does not satisfy", "obsolete", "rejected", "incompatible", "mismatch", "doesn't match", "not supported",
		"assignment to entry", "data race", "unwrap()", "no such", "not a function", "is null", "not set", "exceeded",
		"degraded", "killed", "oom", "be found", "pending", "could not be", "no versions", "not permitted", "timeout",
		"nil pointer", "format error"} {
		if strings.Contains(low, p) {
			sc += 2
		}
	}
	// Advice to the reader ("Make sure you have X installed", "If you
	// wish to ..."): what to do, not what failed.
	if advice(l) {
		sc -= 3
	}
	if strings.Contains(l, "An error occurred (") && strings.Contains(l, ") when calling the ") {
		sc += 3 // botocore's code of the error
	}
	for _, p := range []string{"build failure", "build failed", "exit code", "exit status", "process completed",
		"previous error", "failed with an exception", "installation failed", "tests run:", "did not complete",
		"failed to solve", "failed to restore", "failed building", "subprocess-exited", "failed to push"} {
		if strings.Contains(low, p) {
			sc -= 3
		}
	}
	for _, x := range w {
		if strings.HasPrefix(x, "HTTP/") && len(w) > 1 {
			sc += 3 // "HTTP/2 502"
			break
		}
	}
	if strings.HasPrefix(l, "FAILED ") || strings.HasPrefix(l, "FAIL ") {
		sc -= 4
	}
	if strings.HasPrefix(l, "Unable to find image '") && strings.HasSuffix(l, "' locally") || strings.Contains(l, ": Pulling from ") {
		sc -= 4 // docker run's notes before and while it pulls, no failure
	}
	if len(w) <= 2 && sc <= 2 {
		sc -= 2
	}
	return sc
}

// advice: a line that tells the reader what to do ("Make sure you have X
// installed", "If you wish to ...", "you can override this").
func advice(l string) bool {
	low := strings.ToLower(l)
	// A question to the reader: "Is the docker daemon running?"
	if f := firstField(l); (f == "Is" || f == "Are" || f == "Did" || f == "Do" || f == "Does" || f == "Have" || f == "Has") &&
		strings.Count(l, " ") >= 2 {
		return true
	}
	for _, p := range []string{"make sure", "sure you ", "if you ", "you can ", "you may ", "you might ", "you want",
		"you need to", "you should", "consider "} {
		if strings.Contains(low, p) {
			return true
		}
	}
	return false
}

// kebabCode: an error code written as words joined by hyphens,
// "externally-managed-environment", "non-fast-forward".
func kebabCode(t string) bool {
	if strings.Contains(t, "fail") || strings.Contains(t, "error") {
		return false // "metadata-generation-failed": a verdict, not what failed
	}
	return strings.Count(t, "-") >= 2 && lowerWord(t) && !strings.HasPrefix(t, "-") && !strings.HasSuffix(t, "-")
}

// codeWord: an error code: ERESOLVE, ENOSPC, PERMISSION_DENIED, NU1101,
// TS2322, E0425, 1045 after ERROR, HTTP/2 502.
func codeWord(t string) bool {
	if len(t) < 4 || len(t) > 40 {
		return false
	}
	upper, digit, other := 0, 0, 0
	for i := 0; i < len(t); i++ {
		switch c := t[i]; {
		case 'A' <= c && c <= 'Z':
			upper++
		case isDigit(c):
			digit++
		case c == '_':
		default:
			other++
		}
	}
	if other > 0 {
		return false
	}
	switch {
	case t[0] == 'E' && upper >= 4 && digit == 0: // ERESOLVE, ENOSPC, ECONNREFUSED
		return true
	case strings.Contains(t, "_") && upper >= 6 && digit == 0: // PERMISSION_DENIED, not GH_TOKEN
		for _, p := range []string{"DENIED", "FAIL", "ERR", "INVALID", "NOT_FOUND", "EXCEEDED", "REFUSED", "UNAVAILABLE",
			"TIMEOUT", "CONFLICT", "FORBIDDEN", "UNAUTHENTICATED", "ABORTED", "ISSUES", "MISSING", "VERIFY", "EXISTS"} {
			if strings.Contains(t, p) {
				return true
			}
		}
		return false
	case upper >= 1 && upper <= 3 && digit >= 3 && upper+digit == len(t): // NU1101, TS2322, E0425
		return true
	}
	return false
}

// details drops from a line of output what only a log needs: the
// package of an exception class ("sqlalchemy.exc.IntegrityError" is
// "IntegrityError"), a MySQL 'user'@'host', Ansible's JSON after "=>"
// (its "msg" kept) and parentheses of details (detailParens). message then
// cuts the line to its first sentence, at most about 110 characters, never
// ending on a word that leaves the clause open, and without the fields
// that follow a message (", client: ...").
func details(l string) string {
	w := strings.Fields(l)
	for i, x := range w {
		// sqlalchemy.exc.IntegrityError: → IntegrityError:
		core := strings.TrimRight(x, ":")
		if k := strings.LastIndexByte(core, '.'); k > 0 && k < len(core)-1 && strings.Count(core, ".") >= 1 &&
			(strings.HasSuffix(core, "Error") || strings.HasSuffix(core, "Exception")) && unicode.IsUpper(rune(core[k+1])) {
			w[i] = x[k+1:]
		}
	}
	kept := w[:0]
	for _, x := range w {
		if strings.Contains(x, "'@'") {
			continue // MySQL's 'user'@'host'
		}
		kept = append(kept, x)
	}
	l = strings.Join(kept, " ")
	// Python's "OSError: [Errno 28] No space left on device": the label
	// goes, the message it labels says it.
	if k := strings.Index(l, "[Errno "); k >= 0 {
		if e := strings.IndexByte(l[k:], ']'); e > 0 && allDigitsStr(strings.TrimPrefix(l[k+1:k+e], "Errno ")) {
			l = strings.TrimRight(l[:k], " ") + " " + strings.TrimSpace(l[k+e+1:])
		}
	}
	// A server's refusal told to its user, "You are not allowed to push
	// code to X": the server refuses pushing code to X.
	for _, p := range []string{"You are not allowed to ", "You do not have permission to ", "You don't have permission to "} {
		if rest, ok := strings.CutPrefix(l, p); ok {
			if v, obj, ok := strings.Cut(rest, " "); ok && isLetters(v) {
				l = "the server refuses " + gerund(v) + " " + obj
			}
		}
	}
	// "ERR_PNPM_BAD_PM_VERSION This project is ...": a code, then its
	// message as a sentence.
	if f := strings.Fields(l); len(f) > 2 && codeWord(f[0]) && len(f[1]) > 1 && unicode.IsUpper(rune(f[1][0])) && unicode.IsLower(rune(f[1][1])) {
		l = f[0] + ": " + strings.Join(f[1:], " ")
	}
	// Go's empty interface type in a message, "evaluating interface
	// {}.tag": the field is what it says.
	l = strings.ReplaceAll(l, "interface {}.", ".")
	// botocore's "An error occurred (AccessDenied) when calling the
	// PutObject operation: Access Denied": the code, the call, the message.
	if k := strings.Index(l, "An error occurred ("); k >= 0 {
		rest := l[k+len("An error occurred ("):]
		if code, after, ok := strings.Cut(rest, ") when calling the "); ok && !strings.Contains(code, " ") {
			if op, msg, ok := strings.Cut(after, " operation"); ok && !strings.Contains(op, " ") {
				l = strings.TrimRight(l[:k], " ") + " " + code + " from " + op + strings.TrimRight(msg, " ")
				l = strings.TrimSpace(l)
			}
		}
	}
	// CloudFormation's "UPDATE_FAILED ... returned message: "X"".
	if k := strings.Index(strings.ToLower(l), "message: "); k > 0 {
		code := ""
		for _, x := range strings.Fields(l[:k]) {
			if codeWord(strings.Trim(x, ":")) && code == "" {
				code = strings.Trim(x, ":") + ": "
			}
		}
		msg := l[k+len("message: "):]
		// A quoted message ends at its closing quote: "message: \"x\",
		// detail: None" is x.
		if q := msg[:min(1, len(msg))]; q == `"` || q == "'" {
			if e := strings.Index(msg[1:], q); e > 0 {
				msg = msg[1 : e+1]
			}
		}
		l = code + strings.Trim(msg, `"' `)
	}
	// The fields after a message: "(node) total-vm:4103220kB, anon-rss:...".
	if f := strings.Fields(l); len(f) > 3 {
		for k := 3; k < len(f); k++ {
			if c := strings.IndexByte(f[k], ':'); c > 0 && c+1 < len(f[k]) && isDigit(f[k][c+1]) && lowerWord(f[k][:c]) {
				l = strings.Join(f[:k], " ")
				break
			}
		}
	}
	l = detailParens(l)
	// Ansible's "fatal: [web1]: UNREACHABLE! => {..., "msg": "..."}".
	if head, js, ok := strings.Cut(l, " => {"); ok {
		l = head
		if _, m, ok := strings.Cut(js, `"msg": "`); ok {
			if m, _, ok = strings.Cut(m, `"`); ok {
				l = head + " " + m
			}
		}
	}
	return l
}

// longMessage is details(l), and for a line too long to tell, its
// first message up to the first "; " (what follows are details of it),
// cut as message cuts it.
func longMessage(l string) string {
	d := details(l)
	if utf8.RuneCountInString(d) <= MaxSentence-40 {
		return d
	}
	if k := strings.Index(d, "; "); k > 0 {
		d = d[:k]
	}
	return message(d)
}

// message is details(l) cut to its first sentence and to what a reader
// takes in at once.
func message(l string) string {
	l = details(l)
	if k := strings.Index(l, ". "); k > 0 {
		l = l[:k]
	}
	// The fields after a message: ", client: 172.18.0.1, server: x".
	for k := 0; k < len(l); {
		c := strings.Index(l[k:], ", ")
		if c < 0 {
			break
		}
		at := k + c
		if f := firstField(l[at+2:]); len(f) > 1 && strings.HasSuffix(f, ":") && lowerWord(strings.TrimSuffix(f, ":")) {
			l = l[:at]
			break
		}
		k = at + 2
	}
	l = strings.TrimRight(l, ".:; ")
	// "updates to go.mod needed; to update it": what follows says what to do.
	if k := strings.LastIndex(l, "; to "); k > 0 {
		l = l[:k]
	}
	const room = 110
	// A chain of messages too long to tell: its first and its last, the
	// most specific ("Error response from daemon: port is already allocated").
	if seg := strings.Split(l, ": "); utf8.RuneCountInString(l) > room && len(seg) >= 3 {
		// (A short last one, "401 Unauthorized", scores no penalty here.)
		last := seg[len(seg)-1]
		if t := seg[0] + ": " + last; utf8.RuneCountInString(t) <= room &&
			(errorScore(last) > 0 || len(strings.Fields(last)) <= 2 && errorScore(last) == 0) {
			l = t
		}
	}
	if utf8.RuneCountInString(l) > room {
		cut := []rune(l)[:room]
		s := string(cut)
		if k := strings.LastIndexAny(s, ",;"); k > 40 {
			s = s[:k]
		} else if k := strings.LastIndexByte(s, ' '); k > 0 {
			s = s[:k]
		}
		l = dropDangling(s)
	}
	return l
}

func lowerWord(s string) bool {
	return s != "" && strings.IndexFunc(s, func(r rune) bool { return !unicode.IsLower(r) && r != '-' && r != '_' }) < 0
}

// detailParens drops parentheses that hold details of a message rather
// than words: "(psycopg2.errors.UniqueViolation)", "(using password:
// YES)", "(28000)".
func detailParens(l string) string {
	var b strings.Builder
	for {
		open := strings.IndexByte(l, '(')
		if open < 0 {
			break
		}
		end := strings.IndexByte(l[open:], ')')
		if end < 0 {
			break
		}
		in := l[open+1 : open+end]
		if in == "" || allDigitsStr(in) || strings.Contains(in, "=") || strings.HasPrefix(in, "using ") ||
			!strings.Contains(in, " ") && strings.Contains(in, ".") {
			b.WriteString(strings.TrimRight(l[:open], " "))
			l = l[open+end+1:]
			continue
		}
		b.WriteString(l[:open+end+1])
		l = l[open+end+1:]
	}
	b.WriteString(l)
	return strings.Join(strings.Fields(b.String()), " ")
}

// dropDangling drops the words at the end of a cut s that leave its
// clause open by textcheck.Pasted's rule ("... connecting to" is "...
// connecting", and "in"/"on" go too, since the cut took their object), and
// a separator left after.
func dropDangling(s string) string {
	for range 8 {
		s = strings.TrimRight(s, ",;:- ")
		k := strings.LastIndexByte(s, ' ')
		if k < 0 {
			return s
		}
		last := strings.ToLower(s[k+1:])
		if !strings.HasPrefix(textcheck.Pasted(s+"."), "cut off after '") && last != "in" && last != "on" {
			return s
		}
		s = s[:k]
	}
	return s
}

// ghLogLine is a line of `gh run view --log` or `--log-failed` without the
// job and step names it opens with ("build\tCompute version\t2024-05-16T08:14:02.12Z
// fatal: ..." is "2024-05-16T08:14:02.12Z fatal: ..."), whose timestamp
// cleanLine drops as any log's.
func ghLogLine(l string) string {
	if strings.Count(l, "\t") < 2 {
		return l
	}
	parts := strings.SplitN(l, "\t", 3)
	if rest := strings.TrimLeft(parts[2], "\ufeff"); ghTimestamp.MatchString(rest) && parts[0] != "" && !strings.Contains(parts[0], " ") {
		return rest
	}
	return l
}

// gnuQuote: the old GNU quoting, a backtick and an apostrophe ("version
// `3.2.2' is not installed", "cannot stat `foo'"), which reads as an
// unclosed code span; it is told as 'x'.
var gnuQuote = regexp.MustCompile("`([^`'\\s]{1,80})'")

// ghTimestamp is the RFC 3339 time GitHub Actions puts before each line.
var ghTimestamp = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z(?:\s|$)`)
