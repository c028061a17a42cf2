package textcheck

import (
	"net/netip"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// The raw-data check (SPEC §6, "Nothing raw moves"): a lesson sentence must
// not carry what identifies a machine, a person or a credential. It runs at
// write time and on every received lesson, so the patterns are guarded by
// cheap tests for the characters they need.
//
// What counts, by kind:
//   - path: absolute (/a/b, at least two parts, so "/v1" or "and/or" are
//     not), home-relative (~/x, $HOME/x), dot-relative (./x, ../x), Windows
//     (C:\x, C:/x, \\server\share), or relative with at least two slashes and
//     a file name with an extension (src/app/main.go). Two-part names such as
//     "TCP/IP", "go/ast" or a module path without a file are not paths. The
//     path part of a URL is not a file system path.
//   - email: name@domain.tld.
//   - url: a scheme:// URL with user information (credentials) or a query
//     string or a fragment holding "="; plain URLs pass. file:// is a path.
//   - ip: IPv4 with four octets of at most 255 (not part of a longer dotted
//     number such as a version), optional :port or /prefix; IPv6 as
//     net/netip parses it.
//   - host: a host name under a private suffix (build07.corp.internal,
//     nas.home.arpa, ci-3.lan, printer.local).
//   - name: a person's name (names.go).
//   - secret: PEM blocks, AWS (AKIA/ASIA), OpenAI-style sk-, GitHub (ghp_,
//     github_pat_), Slack (xox?-), JWT-like eyJ..., "password=..."-style
//     assignments, bearer tokens, hex runs of 32 or more, and base64 runs of
//     32 or more that mix upper case, lower case and digits and hold no
//     words (so long CamelCase identifiers pass).

// RawFinding is one piece of raw data in a text: Start and End are byte
// offsets, Match is text[Start:End].
type RawFinding struct {
	Kind  string `json:"kind"`
	Start int    `json:"start"`
	End   int    `json:"end"`
	Match string `json:"match"`
}

// Placeholders, by kind, for what rawDescription cannot tell more of.
// Each is plain words that no pattern finds, so a replacement never
// becomes part of a new finding.
var rawPlaceholder = map[string]string{
	"path": "a local path", "email": "an e-mail address", "url": "a URL with credentials", "ip": "an IP address",
	"secret": "a token", "host": "an internal host", "name": "a person", "id": "an internal id",
	"private": "a private name", "transcript": "a private conversation", "channel": "a team channel",
}

// A path character: what file names use in practice, minus the characters
// that end a path in prose.
const rawPathChars = `[A-Za-z0-9._~+@%\-]`

// rawBefore is what may precede a path that starts with / ~ or .
const rawBefore = `(?:^|[\s(\[{"'` + "`" + `=:,])`

var (
	rawPEM     = regexp.MustCompile(`-----BEGIN [A-Z0-9 ]{0,64}-----(?:[\s\S]*?-----END [A-Z0-9 ]{0,64}-----)?`)
	rawURL     = regexp.MustCompile(`\b[A-Za-z][A-Za-z0-9+.\-]{0,15}://[^\s<>"'` + "`" + `]+`)
	rawEmail   = regexp.MustCompile(`[A-Za-z0-9._%+\-]+@[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,24}\b`)
	rawSecrets = withNeedSets([]rawPattern{
		{re: regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`), need: []string{"AKIA", "ASIA"}, long: true},
		{re: regexp.MustCompile(`\bsk-[A-Za-z0-9_\-]{16,}`), need: []string{"sk-"}, long: true},
		{re: regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{20,}`), need: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, long: true},
		{re: regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{20,}`), need: []string{"github_pat_"}, long: true},
		{re: regexp.MustCompile(`\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}`), need: []string{"k_live_", "k_test_"}, long: true},
		{re: regexp.MustCompile(`\bglpat-[A-Za-z0-9_\-]{16,}`), need: []string{"glpat-"}, long: true},
		{re: regexp.MustCompile(`\bAIza[0-9A-Za-z_\-]{30,}`), need: []string{"AIza"}, long: true},
		{re: regexp.MustCompile(`\bnpm_[A-Za-z0-9]{30,}`), need: []string{"npm_"}, long: true},
		{re: regexp.MustCompile(`\b(?:GR1348941|glrt-|glptt-|gldt-)[A-Za-z0-9_\-]{16,}`), need: []string{"GR1348941", "glrt-", "glptt-", "gldt-"}, long: true}, // GitLab runner, trigger and deploy tokens
		{re: regexp.MustCompile(`(?i)hooks\.slack\.com/services/[A-Za-z0-9/]+`), need: []string{"hooks.slack", "HOOKS.SLACK"}, long: true},
		{re: regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9\-]{8,}`), need: []string{"xox"}},
		{re: regexp.MustCompile(`\beyJ[A-Za-z0-9_\-]{8,}(?:\.[A-Za-z0-9_\-]+){0,2}`), need: []string{"eyJ"}},
		{re: regexp.MustCompile(`(?i)\b(?:password|passwd|pwd|secret|token|api[_\-]?key|access[_\-]?key|client[_\-]?secret|auth)=[^\s,;'"<>]{4,}`), need: []string{"="}, pre: rawSecretAssigned},
		{re: regexp.MustCompile(`(?i)\bpass(?:word|phrase)\s+(?:is|to|of|was|as|:)\s+[^\s<>]*[0-9][^\s<>]*[^\s<>.,;]`), need: []string{"assword", "ASSWORD", "assphrase", "ASSPHRASE"}, pre: rawPasswordSpaced},
		{re: regexp.MustCompile(`(?i)\bbearer\s+[A-Za-z0-9._~+/\-]{16,}=*`), need: []string{"earer", "EARER"}, long: true},
	})
	rawPaths = withNeedSets([]rawPattern{ // the path is submatch 1
		{re: regexp.MustCompile(rawBefore + `(/` + rawPathChars + `+(?:/` + rawPathChars + `*)+)`), need: []string{"/"}, pre: rawTwoSlashes},
		{re: regexp.MustCompile(rawBefore + `(~` + `[A-Za-z0-9._\-]*/(?:` + rawPathChars + `|/)*)`), need: []string{"~"}},
		{re: regexp.MustCompile(rawBefore + `(\.\.?/(?:` + rawPathChars + `|/)*)`), need: []string{"./"}},
		{re: regexp.MustCompile(`()\$\{?HOME\}?/(?:` + rawPathChars + `|/)*`), need: []string{"HOME"}},
		{re: regexp.MustCompile(`(?i)()%(?:USERPROFILE|APPDATA|LOCALAPPDATA|HOMEPATH)%\\[^\s<>"'|]*`), need: []string{"%"}},
		{re: regexp.MustCompile(`()\b[A-Za-z]:\\[^\s<>"'|*?]*`), need: []string{":\\"}},
		{re: regexp.MustCompile(`()\b[A-Za-z]:/` + rawPathChars + `[^\s<>"'|*?]*`), need: []string{":/"}},
		{re: regexp.MustCompile(`()\\\\[A-Za-z0-9._\-]+\\[^\s<>"'|]+`), need: []string{`\\`}},
		{re: regexp.MustCompile(`(?:^|[^A-Za-z0-9._~+@%/\-])(` + rawPathChars + `+/(?:` + rawPathChars + `+/)+` +
			`[A-Za-z0-9_\-][A-Za-z0-9._\-]*\.[A-Za-z][A-Za-z0-9]{0,9})\b`), need: []string{"/"}, pre: rawTwoSlashes},
	})
	rawHost = regexp.MustCompile(`(?i)\b[a-z0-9](?:[a-z0-9\-]{0,62}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9\-]{0,62}[a-z0-9])?)*\.(?:internal|intranet|corp|lan|local|localdomain|home\.arpa|home|private|priv|intra)\b`)
	// rawPackagePattern: "./...", "./cmd/...": a Go package pattern, not a
	// file system path.
	rawPackagePattern = regexp.MustCompile(`^\.\.?(?:/[A-Za-z0-9_.\-]+)*/\.\.\.`)
	rawSystemPath     = regexp.MustCompile(`(?:^|[\s(\["'=:,])((?:etc|var|usr|home|opt|tmp|proc|srv|root|mnt|Users|Library)/[A-Za-z0-9._~+@%\-]+(?:/[A-Za-z0-9._~+@%\-]*)*)`)
	// rawHandle: "@jdoe", someone's handle; not "@babel/core" (a package
	// scope) nor an e-mail address.
	rawHandle     = regexp.MustCompile(`(?:^|[\s(\["',])(@[A-Za-z][A-Za-z0-9_\-]{1,38})\b`)
	rawLocalEmail = regexp.MustCompile(`\b[A-Za-z0-9._%+\-]+@localhost\b`)
	rawIPv4       = regexp.MustCompile(`\b(?:\d{1,3}\.){3}\d{1,3}\b(?::\d{1,5}\b|/\d{1,2}\b)?`)
	rawHex        = regexp.MustCompile(`\b(?:0x)?[0-9A-Fa-f]{32,}\b`)
	rawBase64     = regexp.MustCompile(`[A-Za-z0-9+/_\-]{32,}={0,2}`)
)

// FindRawData returns the raw data in text, in order and not overlapping,
// or nil when the text is clean.
func FindRawData(text string) []RawFinding {
	buf := scratchPool.Get().(*scratch)
	defer buf.release()
	low := buf.lower(text)
	buf.toks = tokenize(text, low, buf.toks[:0])
	return findRaw(buf, text, buf.toks)
}

// findRaw finds the raw data in text, whose tokens are toks; buf lends the
// model its buffers.
func findRaw(buf *scratch, text string, toks []token) []RawFinding {
	var found findings
	addc := found.add
	// Cheap tests first: most sentences hold no character a pattern needs,
	// and one pass over the bytes says which they hold.
	facts := scanRawBytes(text)
	has := facts.has
	colons, dots, longRun, longWord, spelledDot := facts.colons, facts.dots, facts.longRun, facts.longWord, facts.spelledDot
	slash := has.has('/') || has.has('\\')
	if has.has('-') && has.has('B') && has.has('G') && strings.Contains(text, "-----BEGIN") {
		for _, m := range rawPEM.FindAllStringIndex(text, -1) {
			addc("secret", m[0], m[1])
		}
	}
	var urls [][2]int // every URL, flagged or not: its path is not a file path
	if colons > 0 && slash && strings.Contains(text, "://") {
		for _, m := range rawURL.FindAllStringIndex(text, -1) {
			s, e := m[0], rawTrimEnd(text, m[0], m[1])
			urls = append(urls, [2]int{s, e})
			u := text[s:e]
			lowU := strings.ToLower(u)
			switch {
			case strings.HasPrefix(lowU, "file://"):
				if !rawPathPublic(u) {
					addc("path", s, e)
				}
			case strings.HasPrefix(lowU, "unix://") || strings.HasPrefix(lowU, "npipe://"):
				// A socket URL: its path is a file system path.
				if p := u[strings.Index(u, "://")+3:]; !rawPathPublic(p) && rawPathLike(p) {
					addc("path", s, e)
				}
			case rawURLFlagged(u):
				addc("url", s, e)
			}
		}
	}
	if has.has('@') {
		// The user information of a URL is judged with the URL.
		for _, m := range rawEmail.FindAllStringIndex(text, -1) {
			if !rawSSHClone(text, m[0], m[1]) && !rawInSpans(urls, m[0], m[1]) && !rawPublicEmail(text[m[0]:m[1]]) {
				addc("email", m[0], m[1])
			}
		}
		for _, m := range rawLocalEmail.FindAllStringIndex(text, -1) {
			if !rawInSpans(urls, m[0], m[1]) {
				addc("email", m[0], m[1])
			}
		}
		for _, m := range rawHandle.FindAllStringSubmatchIndex(text, -1) {
			if s, e := m[2], m[3]; rawChatHandle(text, s, e) && !strings.HasPrefix(text[s:], "@ts-") { // "@ts-expect-error" is a compiler directive
				addc("name", s, rawHandleEnd(text, e))
			}
		}
	}
	if has.has('#') {
		rawChannels(text, addc)
	}
	for i := range rawSecrets {
		p := &rawSecrets[i]
		if p.long && !longWord || !p.mayMatch(text, &has) {
			continue
		}
		for _, m := range p.re.FindAllStringIndex(text, -1) {
			if k := strings.IndexByte(text[m[0]:m[1]], '='); k < 0 || rawCredValue(text[m[0]+k+1:m[1]], true) {
				addc("secret", m[0], m[1])
			}
		}
	}
	if slash && rawSystemDirSlash(text) {
		for _, m := range rawSystemPath.FindAllStringSubmatchIndex(text, -1) {
			if e := rawTrimEnd(text, m[2], m[3]); !rawPathPublic("/" + text[m[2]:e]) {
				addc("path", m[2], e)
			}
		}
	}
	for i := range rawPaths {
		if !slash {
			break
		}
		p := &rawPaths[i]
		if !p.mayMatch(text, &has) {
			continue
		}
		for _, m := range p.re.FindAllStringSubmatchIndex(text, -1) {
			s, e := m[2], m[3]
			if s == e { // the patterns without a prefix capture nothing
				s, e = m[0], m[1]
			}
			e = rawTrimEnd(text, s, e)
			if !rawInSpans(urls, s, e) && !rawPackagePattern.MatchString(text[s:]) && !rawPathPublic(text[s:e]) {
				addc("path", s, e)
			}
		}
	}
	if dots >= 3 && rawDottedQuad(text) { // each of a dotted quad's dots is inside a word
		for _, m := range rawIPv4.FindAllStringIndex(text, -1) {
			if c := text[max(0, m[0]-2)]; m[0] > 1 && text[m[0]-1] == '/' && ('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
				continue // "Chrome/124.0.0.0": a product's version in a user agent
			}
			if rawIPv4OK(text, m[0], m[1]) {
				addc("ip", m[0], m[1])
			}
		}
	}
	if dots >= 2 || dots == 1 && rawHasPrivateSuffix(text) { // a private suffix's dot is inside a word
		rawPrivateHosts(text, addc)
	}
	findNames(text, toks, &found)
	rawHandlesAndMachines(text, toks, addc)
	if has[2]|has[3] != 0 { // a byte past ASCII: another script may be there
		rawScriptNames(text, addc)
	}
	rawContextual(text, toks, &has, has.has('-') || has.has('_') || slash || dots > 0, addc)
	if has.has('"') || has.has('\'') || has[2]|has[3] != 0 && (strings.Contains(text, "\u201c") || strings.Contains(text, "\u2018")) {
		rawTranscripts(text, toks, addc)
	}
	if longWord {
		rawKeyTokens(text, addc)
	}
	if has.has('@') {
		rawUserAtHost(text, addc)
	}
	if has.has('=') || has.has('-') && (strings.Contains(text, " -a ") || strings.Contains(text, "-p ") || strings.Contains(text, " -P ")) || has.has('/') && strings.Contains(text, " /p ") {
		rawAssignedSecrets(text, addc)
	}
	if has.has('-') || has.has('I') || has.has('C') || has.has('R') {
		rawTicketIDs(text, toks, addc)
	}
	rawNamedValues(text, toks, &has, addc)
	if has.has('<') && has.has('@') {
		rawChatIDs(text, addc)
	}
	if spelledDot {
		for _, m := range rawSpelledEmail.FindAllStringIndex(text, -1) {
			addc("email", m[0], m[1])
		}
	}
	if has.has('-') && rawMayHoldFlag(text) {
		rawCLIPasswords(text, addc)
	}
	if has.has('_') && rawHasIDPrefix(text) {
		for _, m := range rawPrefixedID.FindAllStringIndex(text, -1) {
			addc("id", m[0], m[1])
		}
	}
	if colons >= 2 {
		rawIPv6Runs(text, func(s, e int) {
			if s, e, ok := rawIPv6OK(text, s, e); ok {
				addc("ip", s, e)
			}
		})
	}
	if longRun {
		for _, m := range rawHex.FindAllStringIndex(text, -1) {
			if !rawPublicDigest(text, m[0]) {
				addc("secret", m[0], m[1])
			}
		}
		for _, m := range rawBase64.FindAllStringIndex(text, -1) {
			if rawLooksRandom(text[m[0]:m[1]]) {
				addc("secret", m[0], m[1])
			}
		}
	}
	// The model reads what the rules did not find: a word with no shape of
	// its own in a context that makes it private ("runs as abakshi").
	if len(found.list) == 0 {
		if s, e, ok := rawModelFinds(buf, text, toks, has[2]|has[3] == 0); ok {
			addc("private", s, e)
		}
	}
	cands := found.list
	if len(cands) == 0 {
		return nil
	}
	// Leftmost, then longest, wins; what overlaps a kept finding is dropped.
	sort.SliceStable(cands, func(a, b int) bool {
		if cands[a].Start != cands[b].Start {
			return cands[a].Start < cands[b].Start
		}
		return cands[a].End > cands[b].End
	})
	out := cands[:0]
	end := -1
	for _, c := range cands {
		if c.Start < end {
			continue
		}
		c.Match = text[c.Start:c.End]
		out = append(out, c)
		end = c.End
	}
	return out
}

// Redaction is what RedactRawDataReport did to a text.
type Redaction struct {
	Text string
	// Draft is set when a placeholder could not stand as the writer's own
	// words: it would be glued into a word ("build07.[host]", "a
	// person-dev"), sit inside a command or a `code` span, or the raw data
	// needed more than one pass. Such a lesson is a draft (SPEC §3): kept
	// and shown locally, never signed or published, until someone writes
	// it as a sentence.
	Draft bool
	// Reason says why it is a draft.
	Reason string
}

// RedactRawData replaces each finding with words that say what was there
// without carrying it: "a file in the home directory" for ~/src/x or
// /home/ann/x, "an internal host" for build07.corp.internal, "an internal
// address" for 10.0.0.1, "an e-mail address", "a token", "a password",
// "a person" (see rawDescription). Loopback addresses, which name no
// machine and so are not findings, are told in words too ("the IPv6
// loopback address" for ::1, "the loopback address" for 127.0.0.1), since
// a lesson reads better so and the address alone is easily lost. It
// repeats until nothing is found, so its output has no findings.
func RedactRawData(text string) string { return RedactRawDataReport(text).Text }

// RedactRawDataReport redacts as RedactRawData does and says whether the
// result is a draft (Redaction.Draft), so the caller keeps it local.
func RedactRawDataReport(text string) Redaction {
	text = describeLoopback(text)
	var r Redaction
	for pass := 0; ; pass++ {
		found := FindRawData(text)
		if found == nil {
			r.Text = text
			return r
		}
		if pass > 0 && !r.Draft {
			r.Draft, r.Reason = true, "raw data left after a redaction"
		}
		var b strings.Builder
		b.Grow(len(text))
		prev := 0
		for _, f := range found {
			if why := rawGlued(text, f); why != "" && !r.Draft {
				r.Draft, r.Reason = true, why
			}
			before := text[prev:f.Start]
			if f.Kind == "secret" && rawNamedAlready(before) {
				// "the token ghp_..." is "the token", not "the token a token".
				b.WriteString(strings.TrimRight(before, " "))
			} else {
				b.WriteString(before)
				b.WriteString(rawDescription(f))
			}
			prev = f.End
		}
		b.WriteString(text[prev:])
		text = b.String()
	}
}

// rawGlued says why words put in place of f would not read as a sentence:
// f is joined to a word or a symbol on either side (so its placeholder
// would be glued into a host name, a path or a flag), or it sits inside a
// `code` span, where a placeholder stands for the literal. "" when
// neither.
func rawGlued(text string, f RawFinding) string {
	joins := func(c byte) bool { return rawIsWordByte(c) || strings.IndexByte(`./\-_@:=+~%$#&|*`, c) >= 0 }
	if f.Start > 0 && joins(text[f.Start-1]) {
		return "a redaction placeholder would be glued into a word"
	}
	if e := f.End; e < len(text) {
		c := text[e]
		next := byte(' ')
		if e+1 < len(text) {
			next = text[e+1]
		}
		switch {
		case rawIsWordByte(c):
			return "a redaction placeholder would be glued into a word"
		case c == '\'' && (next == 's' || next == 'S') && (e+2 == len(text) || !rawIsWordByte(text[e+2])):
			// "Alice's laptop" reads as "a person's laptop".
		case joins(c) && (rawIsWordByte(next) || joins(next) && next != '.'):
			return "a redaction placeholder would be glued into a word"
		}
	}
	if f.Kind == "secret" && (strings.HasPrefix(f.Match, "-") || strings.Contains(f.Match, "=")) {
		return "a redaction placeholder would stand in a command"
	}
	if n := strings.Count(text[:f.Start], "`"); n%2 == 1 && strings.IndexByte(text[f.End:], '`') >= 0 {
		return "a redaction placeholder would stand inside a code span"
	}
	return ""
}

// rawNamedAlready: the words before a secret name what it is ("the
// token ", "API key ").
func rawNamedAlready(before string) bool {
	low := strings.ToLower(before)
	for _, w := range []string{"token ", "key ", "password ", "secret ", "passphrase "} {
		if strings.HasSuffix(low, w) {
			return true
		}
	}
	return false
}

// rawDescription says in words what a finding was.
func rawDescription(f RawFinding) string {
	m := f.Match
	low := strings.ToLower(m)
	switch f.Kind {
	case "path":
		switch {
		case rawHomePath.MatchString(m):
			return "a file in the home directory"
		case strings.HasPrefix(low, "file://"):
			return "a local file"
		case strings.HasPrefix(m, `\\`):
			return "a network share"
		case strings.HasPrefix(m, "./") || strings.HasPrefix(m, "../") || !strings.HasPrefix(m, "/") && !strings.Contains(m, ":") && !strings.HasPrefix(m, "%"):
			return "a file in the repository"
		case strings.HasPrefix(m, "/tmp/") || strings.HasPrefix(m, "/var/tmp/"):
			return "a temporary file"
		case strings.HasPrefix(m, "/etc/") || strings.HasPrefix(m, "/usr/") || strings.HasPrefix(m, "/var/") || strings.HasPrefix(m, "/opt/") || strings.HasPrefix(m, "/proc/"):
			return "a system file"
		}
	case "email":
		if _, domain, ok := strings.Cut(m, "@"); ok && (rawHost.MatchString(domain) || strings.EqualFold(domain, "localhost")) {
			return "an account on an internal host"
		}
	case "ip":
		addr, port := m, ""
		if k := strings.LastIndex(m, ":"); k > 0 && strings.Count(m, ":") == 1 {
			addr, port = m[:k], m[k+1:]
		}
		addr, _, _ = strings.Cut(addr, "/")
		what := "an IP address"
		if a, err := netip.ParseAddr(strings.Split(addr, "%")[0]); err == nil && (a.IsPrivate() || a.IsLinkLocalUnicast()) {
			what = "an internal address"
		} else if a, ok := rawParseIPv4(addr); ok && a.IsPrivate() {
			what = "an internal address"
		}
		if port != "" {
			return "port " + port + " on " + what
		}
		return what
	case "secret":
		switch {
		case strings.HasPrefix(m, "-----BEGIN"):
			return "a private key"
		case strings.Contains(low, "pass"):
			return "a password"
		case strings.Contains(low, "key=") || strings.HasPrefix(m, "AKIA") || strings.HasPrefix(m, "AIza"):
			return "an API key"
		}
	case "url":
		return "a URL with credentials"
	case "host":
		// A host found with what follows it (rawPrivateHosts).
		if k := strings.IndexByte(m, '/'); k >= 0 {
			if strings.ContainsAny(m[k:], ":@") {
				return "an image on an internal registry"
			}
			return "a path on an internal host"
		}
		if strings.IndexByte(m, ':') >= 0 {
			return "a port on an internal host"
		}
	}
	return rawPlaceholder[f.Kind]
}

// rawHomePath: a path in someone's home directory.
var rawHomePath = regexp.MustCompile(`^(?:~|\$\{?HOME\}?|/home/|/Users/|home/|Users/|/root/|(?i:%USERPROFILE%|%APPDATA%|%LOCALAPPDATA%|%HOMEPATH%)|[A-Za-z]:[\\/]Users[\\/])`)

// describeLoopback writes loopback addresses in words: "[::1]:8080" as
// "port 8080 on the IPv6 loopback address", "127.0.0.1" as "the loopback
// address".
func describeLoopback(text string) string {
	if !strings.Contains(text, "::1") && !strings.Contains(text, "127.") {
		return text
	}
	type span struct {
		s, e  int
		words string
	}
	var spans []span
	withPort := func(s, e int, what string) span {
		if e+1 < len(text) && text[e] == ':' && rawIsDigit(text[e+1]) {
			k := e + 1
			for k < len(text) && rawIsDigit(text[k]) {
				k++
			}
			if k == len(text) || !rawIsWordByte(text[k]) {
				return span{s, k, "port " + text[e+1:k] + " on " + what}
			}
		}
		return span{s, e, what}
	}
	rawIPv6Runs(text, func(s, e int) {
		for e > s && text[e-1] == '.' {
			e--
		}
		if s > 0 && (rawIsWordByte(text[s-1]) || text[s-1] == '.') || e < len(text) && rawIsWordByte(text[e]) {
			return
		}
		a, err := netip.ParseAddr(text[s:e])
		if err != nil || !a.Is6() || !a.IsLoopback() {
			return
		}
		if s > 0 && text[s-1] == '[' && e < len(text) && text[e] == ']' {
			spans = append(spans, withPort(s-1, e+1, "the IPv6 loopback address"))
			return
		}
		spans = append(spans, span{s, e, "the IPv6 loopback address"})
	})
	for _, m := range rawIPv4.FindAllStringIndex(text, -1) {
		s, e := m[0], m[1]
		ipEnd := s
		for ipEnd < e && text[ipEnd] != ':' && text[ipEnd] != '/' {
			ipEnd++
		}
		if s >= 1 && (text[s-1] == '.' || text[s-1] == 'v' || text[s-1] == 'V') || ipEnd < len(text) && text[ipEnd] == '.' && ipEnd+1 < len(text) && rawIsDigit(text[ipEnd+1]) {
			continue
		}
		if a, ok := rawParseIPv4(text[s:ipEnd]); ok && a.IsLoopback() && !rawVersionNear(text, s, ipEnd) {
			spans = append(spans, withPort(s, ipEnd, "the loopback address"))
		}
	}
	if len(spans) == 0 {
		return text
	}
	sort.Slice(spans, func(a, b int) bool { return spans[a].s < spans[b].s })
	var b strings.Builder
	prev := 0
	for _, sp := range spans {
		if sp.s < prev || rawJoinedAt(text, sp.s-1, sp.s-2) || rawJoinedAt(text, sp.e, sp.e+1) {
			// Words glued to a word by a joiner ("::1#0" read "the IPv6
			// loopback address#0", a handle) would make what they describe
			// raw: the address stays as written.
			continue
		}
		b.WriteString(text[prev:sp.s])
		b.WriteString(sp.words)
		prev = sp.e
	}
	b.WriteString(text[prev:])
	return b.String()
}

// rawJoinedAt: text[j] is a mark that joins words (' - . / @ + #) and
// text[w] a word byte, so whatever stands beside the mark reads as one
// word with text[w].
func rawJoinedAt(text string, j, w int) bool {
	return j >= 0 && w >= 0 && j < len(text) && w < len(text) && strings.IndexByte("'-./@+#", text[j]) >= 0 && rawIsWordByte(text[w])
}

// findings collects candidate findings.
type findings struct{ list []RawFinding }

func (f *findings) add(kind string, s, e int) {
	if s < e {
		f.list = append(f.list, RawFinding{Kind: kind, Start: s, End: e})
	}
}

// rawDottedQuad: text holds four runs of digits joined by three dots
// ("1.2.3.4"), which an IPv4 address needs; versions ("1.22.3") have
// fewer, and the pattern costs more than all the rules before it.
func rawDottedQuad(text string) bool {
	dots := 0 // in the current run of digits and dots, each between two digits
	for i := 1; i+1 < len(text); i++ {
		switch c := text[i]; {
		case rawIsDigit(c):
		case c == '.' && rawIsDigit(text[i-1]) && rawIsDigit(text[i+1]):
			if dots++; dots == 3 {
				return true
			}
		default:
			dots = 0
		}
	}
	return false
}

// rawHasPrivateSuffix: text holds ".internal", ".lan", ".local"... in any
// case, which the host pattern needs.
func rawHasPrivateSuffix(text string) bool {
	for i := 0; i+3 < len(text); i++ {
		if text[i] != '.' {
			continue
		}
		for _, suf := range rawPrivateSuffixes {
			if len(text)-i-1 >= len(suf) && strings.EqualFold(text[i+1:i+1+len(suf)], suf) {
				return true
			}
		}
	}
	return false
}

var rawPrivateSuffixes = []string{"int", "corp", "lan", "local", "home", "private", "priv"}

// rawBytes is what findRaw's first pass learns of a text's bytes.
type rawBytes struct {
	// has holds the text's bytes, and every lower-case letter whether the
	// text holds it or not (rawLowerLetters): a letter costs one load
	// then, and no test asks for one alone (a need's letters only spare a
	// search).
	has      byteSet
	colons   int
	dots     int  // dots inside a word: a host, a file, a version
	longRun  bool // a run of 32 key bytes or more
	longWord bool // a word of 16 bytes or more
	// spelledDot: " dot ", "[dot]", "(dot)" or "{dot}"
	spelledDot bool
}

// scanRawBytes reads text once, a load a byte for most bytes: a run's and
// a word's lengths are taken where they end. It is a function of its own
// so that its few variables stay in registers.
func scanRawBytes(text string) (f rawBytes) {
	runStart, wordStart := 0, 0
	for i := 0; i < len(text); i++ {
		for i < len(text) && rawByteKinds[text[i]] == rawLower {
			i++
		}
		if i == len(text) {
			break
		}
		c := text[i]
		f.has.add(c)
		if rawByteKinds[c] == rawRunByte {
			continue
		}
		switch n := i - runStart; {
		case n >= 32:
			f.longRun = true
		case n == 3 && text[i-3:i] == "dot" && rawSpelledDotAt(text, i-3):
			f.spelledDot = true
		}
		runStart = i + 1
		switch {
		case c == ' ':
			if i-wordStart >= 16 {
				f.longWord = true
			}
			wordStart = i + 1
		case c == ':':
			f.colons++
		case c == '.' && i+1 < len(text) && text[i+1] != ' ':
			f.dots++
		}
	}
	f.longRun = f.longRun || len(text)-runStart >= 32
	f.longWord = f.longWord || len(text)-wordStart >= 16
	f.has.or(&rawLowerLetters)
	return f
}

// byteSet is a set of byte values.
type byteSet [4]uint64

func (b *byteSet) add(c byte)      { b[c>>6] |= 1 << (c & 63) }
func (b *byteSet) has(c byte) bool { return b[c>>6]&(1<<(c&63)) != 0 }

func (b *byteSet) or(m *byteSet) {
	for i := range b {
		b[i] |= m[i]
	}
}

// The kinds of byte findRaw's first pass tells apart with one load a byte
// instead of a chain of comparisons: a lower-case letter, another byte of
// a run that may be a key or a digest (word bytes, '+', '/' and '-'), and
// any other.
const (
	rawLower byte = iota
	rawRunByte
	rawOtherByte
)

var rawByteKinds = func() (t [256]byte) {
	for c := range 256 {
		switch b := byte(c); {
		case 'a' <= b && b <= 'z':
			t[c] = rawLower
		case rawIsWordByte(b) || b == '+' || b == '/' || b == '-':
			t[c] = rawRunByte
		default:
			t[c] = rawOtherByte
		}
	}
	return t
}()

// rawLowerLetters is the set of the letters a to z.
var rawLowerLetters = func() (set byteSet) {
	for c := byte('a'); c <= 'z'; c++ {
		set.add(c)
	}
	return set
}()

// covers: every byte of m is in b.
func (b *byteSet) covers(m *byteSet) bool {
	return b[0]&m[0] == m[0] && b[1]&m[1] == m[1] && b[2]&m[2] == m[2] && b[3]&m[3] == m[3]
}

// rawPattern is a pattern of raw data that runs only on a text holding
// one of its needed strings.
type rawPattern struct {
	re   *regexp.Regexp
	need []string // one of these must occur, else the pattern is skipped
	// long: a match holds 16 bytes or more with no space between them, so
	// a text without so long a word holds none.
	long bool
	sets []byteSet // the bytes of each need: a text lacking one lacks it
	rare []int     // the offset of each need's rarest byte, which the search looks for
	// pre, when set, is a test every match passes that costs less than
	// the pattern, asked after the needs.
	pre func(text string) bool
}

// withNeedSets fills each pattern's byte sets, so that most patterns are
// left out by four AND operations rather than a search per needed string.
func withNeedSets(ps []rawPattern) []rawPattern {
	for i := range ps {
		for _, n := range ps[i].need {
			var set byteSet
			for j := 0; j < len(n); j++ {
				set.add(n[j])
			}
			ps[i].sets = append(ps[i].sets, set)
			ps[i].rare = append(ps[i].rare, rarestByte(n))
		}
	}
	return ps
}

// mayMatch: text, whose bytes are has, holds one of p's needed strings.
func (p *rawPattern) mayMatch(text string, has *byteSet) bool {
	for i, sub := range p.need {
		if has.covers(&p.sets[i]) && containsBy(text, sub, p.rare[i]) {
			return p.pre == nil || p.pre(text)
		}
	}
	return false
}

// englishLetters are the lower-case letters, commonest first.
const englishLetters = "etaoinshrdlcumwfgypbvkjxqz"

// rarestByte is the offset in s of the byte likeliest to be rarest in an
// English text: any but a lower-case letter, else the letter latest in
// englishLetters.
func rarestByte(s string) int {
	best, rank := 0, -1
	for i := 0; i < len(s); i++ {
		r := strings.IndexByte(englishLetters, s[i])
		if r < 0 {
			return i
		}
		if r > rank {
			best, rank = i, r
		}
	}
	return best
}

// containsBy is strings.Contains(text, sub), searching for sub[k], the
// rarest byte of sub: a common first byte ("assword") stops a search at
// every word.
func containsBy(text, sub string, k int) bool {
	c := sub[k]
	for i := k; i < len(text); i++ {
		j := strings.IndexByte(text[i:], c)
		if j < 0 {
			return false
		}
		i += j
		if s := i - k; s+len(sub) <= len(text) && text[s:s+len(sub)] == sub {
			return true
		}
	}
	return false
}

// rawSecretAssigned: some "=" follows a secret's name ("token=", "API_KEY=",
// "client-secret="), in any case, as the assignment pattern needs.
func rawSecretAssigned(text string) bool {
	if rawFoldTwins(text) {
		return true
	}
	for i := strings.IndexByte(text, '='); i >= 0; i = rawNextByte(text, '=', i) {
		for _, name := range [...]string{"password", "passwd", "pwd", "secret", "token", "key", "auth"} {
			if i >= len(name) && strings.EqualFold(text[i-len(name):i], name) {
				return true
			}
		}
	}
	return false
}

// rawPasswordSpaced: "password" or "passphrase", in any case, is followed
// by white space somewhere, as "the password is …" needs ("passwords" is
// not).
func rawPasswordSpaced(text string) bool {
	if rawFoldTwins(text) {
		return true
	}
	for i := 0; i < len(text); i++ {
		if text[i]|0x20 != 'p' {
			continue
		}
		for _, w := range [...]string{"password", "passphrase"} {
			if e := i + len(w); e < len(text) && strings.EqualFold(text[i:e], w) && rawPatternSpace(text[e]) {
				return true
			}
		}
	}
	return false
}

// rawFoldTwins: text holds "ſ" or the Kelvin sign "K", the only letters
// outside ASCII that a case-insensitive pattern reads as ASCII ones ("s",
// "k"); the tests before such a pattern then leave it to the pattern.
func rawFoldTwins(text string) bool {
	return strings.Contains(text, "\u017f") || strings.Contains(text, "\u212a")
}

// rawPatternSpace: c is white space as a pattern's \s reads it.
func rawPatternSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

// rawTwoSlashes: text holds two slashes, as a path of two parts needs
// ("/home/x", "src/app/main.go"); "vendor/" and "CI/CD" have one.
func rawTwoSlashes(text string) bool {
	i := strings.IndexByte(text, '/')
	return i >= 0 && strings.IndexByte(text[i+1:], '/') >= 0
}

// rawSystemDirs are the first directories of rawSystemPath.
var rawSystemDirs = [...]string{"etc", "var", "usr", "home", "opt", "tmp", "proc", "srv", "root", "mnt", "Users", "Library"}

// rawSystemDirSlash: one of rawSystemDirs comes before a slash, as
// rawSystemPath needs.
func rawSystemDirSlash(text string) bool {
	for i := strings.IndexByte(text, '/'); i >= 0; i = rawNextByte(text, '/', i) {
		for _, d := range rawSystemDirs {
			if i >= len(d) && text[i-len(d):i] == d {
				return true
			}
		}
	}
	return false
}

// rawNextByte is the index of the next c in text after i, or -1.
func rawNextByte(text string, c byte, i int) int {
	if k := strings.IndexByte(text[i+1:], c); k >= 0 {
		return i + 1 + k
	}
	return -1
}

// rawTrimEnd drops sentence punctuation that a greedy match took along.
func rawTrimEnd(text string, s, e int) int {
	for e > s && strings.IndexByte(`.,;:!?)]}'"`, text[e-1]) >= 0 {
		e--
	}
	return e
}

// rawURLFlagged: user information before the host, a query, or a fragment
// holding a key=value.
func rawURLFlagged(u string) bool {
	rest := u[strings.Index(u, "://")+3:]
	auth := rest
	if k := strings.IndexAny(rest, "/?#"); k >= 0 {
		auth = rest[:k]
	}
	if k := strings.LastIndexByte(auth, '@'); k >= 0 {
		// "git@" of an SSH clone URL and documented default credentials
		// ("guest:guest@") carry nothing private.
		user, pass, hasPass := strings.Cut(auth[:k], ":")
		user, pass = strings.ToLower(user), strings.ToLower(pass)
		switch {
		case !hasPass && (user == "git" || user == "anonymous" || rawLists.defaultCred[user]):
		case hasPass && rawLists.defaultCred[user] && (rawLists.defaultCred[pass] || pass == ""):
		default:
			return true
		}
	}
	if k := strings.IndexByte(rest, '?'); k >= 0 && k+1 < len(rest) {
		return true
	}
	if k := strings.IndexByte(rest, '#'); k >= 0 && strings.Contains(rest[k:], "=") {
		return true
	}
	return false
}

func rawIPv4OK(text string, s, e int) bool {
	// Not a piece of a longer dotted number such as a version.
	if s >= 2 && text[s-1] == '.' && rawIsDigit(text[s-2]) {
		return false
	}
	if s >= 1 && (text[s-1] == 'v' || text[s-1] == 'V') {
		return false
	}
	ipEnd := s
	for ipEnd < e && text[ipEnd] != ':' && text[ipEnd] != '/' {
		ipEnd++
	}
	if ipEnd+1 < len(text) && text[ipEnd] == '.' && rawIsDigit(text[ipEnd+1]) {
		return false
	}
	if e+1 < len(text) && text[e] == '.' && rawIsDigit(text[e+1]) {
		return false
	}
	if rawVersionNear(text, s, ipEnd) {
		return false // "version 10.2.3.4", "the 1.0.0.0 assembly version"
	}
	if rawLists.publicIP[text[s:e]] {
		return false // a documented network: "10.96.0.0/12"
	}
	a, ok := rawParseIPv4(text[s:ipEnd])
	// Loopback and unspecified addresses name no machine, nor do the
	// well-known special ones.
	return ok && !a.IsLoopback() && !a.IsUnspecified() && !rawIPPublic(a.String())
}

// rawParseIPv4 parses four decimal octets, leading zeros allowed
// ("10.0.03.017" is an address to a person and to most tools).
func rawParseIPv4(s string) (netip.Addr, bool) {
	var b [4]byte
	parts := strings.Split(s, ".")
	if len(parts) != 4 {
		return netip.Addr{}, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || n > 255 || len(p) > 3 {
			return netip.Addr{}, false
		}
		b[i] = byte(n)
	}
	return netip.AddrFrom4(b), true
}

// rawVersionNear: a word just before or after text[s:e] says it is a
// version.
func rawVersionNear(text string, s, e int) bool {
	before := strings.Fields(strings.ToLower(text[max(0, s-20):s]))
	after := strings.Fields(strings.ToLower(text[e:min(len(text), e+24)]))
	near := append(before[max(0, len(before)-2):], after[:min(2, len(after))]...)
	for _, w := range near {
		switch strings.Trim(w, ".,;:()") {
		case "version", "versions", "semver", "release", "build", "assembly", "driver", "firmware", "v":
			return true
		}
	}
	return false
}

// rawIPv6Runs calls fn for each maximal run of hex digits, colons and dots
// that holds two colons or more, with a %zone when one follows. (A regexp
// with nested counted repeats was a hundred times slower than the rest.)
func rawIPv6Runs(text string, fn func(s, e int)) {
	isRun := func(c byte) bool {
		return c == ':' || c == '.' || rawIsDigit(c) || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
	}
	for i := 0; i < len(text); {
		if !isRun(text[i]) {
			i++
			continue
		}
		s, colons := i, 0
		for i < len(text) && isRun(text[i]) {
			if text[i] == ':' {
				colons++
			}
			i++
		}
		e := i
		if colons < 2 {
			continue
		}
		if e+1 < len(text) && text[e] == '%' && rawIsWordByte(text[e+1]) {
			for e++; e < len(text) && rawIsWordByte(text[e]) && text[e] != '_'; e++ {
			}
			i = e
		}
		fn(s, e)
	}
}

func rawIPv6OK(text string, s, e int) (int, int, bool) {
	for s < e && text[s] == '.' {
		s++
	}
	for e > s && (text[e-1] == '.' || (text[e-1] == ':' && (e-2 < s || text[e-2] != ':'))) {
		e--
	}
	if s > 0 && (rawIsWordByte(text[s-1]) || text[s-1] == ':' || text[s-1] == '.') {
		return 0, 0, false
	}
	if e < len(text) && (rawIsWordByte(text[e]) || text[e] == ':') {
		return 0, 0, false
	}
	cand := text[s:e]
	if strings.Count(cand, ":") < 2 || !strings.ContainsAny(cand, "0123456789abcdefABCDEF") {
		return 0, 0, false
	}
	a, err := netip.ParseAddr(cand)
	return s, e, err == nil && a.Is6() && !a.IsLoopback() && !a.IsUnspecified() && !rawIPPublic(a.String())
}

// rawPublicEmail: a placeholder mailbox at a reserved or documentation
// domain ("user@example.com"; RFC 2606: example.com, .test, .invalid) or a
// service's no-reply sender, which names no one.
func rawPublicEmail(addr string) bool {
	low := strings.ToLower(addr)
	at := strings.LastIndexByte(low, '@')
	if at < 0 {
		return false
	}
	local, domain := low[:at], low[at+1:]
	if local == "noreply" || local == "no-reply" || strings.HasSuffix(domain, "users.noreply.github.com") {
		return true
	}
	if local == "git" && rawPublicForge[domain] {
		return true // "git@github.com": the SSH user of a public forge, no one's mailbox
	}
	if !rawMailboxPlaceholder[local] && !rawLists.placeholderUser[local] {
		return false // "alice@example.com" still names Alice
	}
	for _, d := range [...]string{"example.com", "example.org", "example.net"} {
		if domain == d || strings.HasSuffix(domain, "."+d) {
			return true
		}
	}
	for _, tld := range [...]string{".test", ".invalid", ".example", ".localhost"} {
		if strings.HasSuffix(domain, tld) {
			return true
		}
	}
	return false
}

// rawPublicForge are the public code hosts whose SSH user is "git".
var rawPublicForge = map[string]bool{
	"github.com": true, "gitlab.com": true, "bitbucket.org": true, "codeberg.org": true, "ssh.dev.azure.com": true,
	"git.sr.ht": true, "gitee.com": true, "ssh.github.com": true,
}

// rawMailboxPlaceholder are mailboxes that name no one.
var rawMailboxPlaceholder = map[string]bool{
	"user": true, "test": true, "admin": true, "info": true, "support": true, "hello": true, "contact": true,
	"foo": true, "bar": true, "example": true, "someone": true, "nobody": true, "root": true, "postmaster": true,
	"webmaster": true, "mail": true, "email": true, "sales": true, "security": true, "abuse": true, "dev": true,
}

// rawLooksRandom: upper case, lower case and digits all present, and runs
// of lower case letters short on average (under 2.5). Words make identifiers
// such as TestLookupIPv6LinkLocalAddr run longer; random base64 averages
// about 1.7. On Go's own long function names this flags none, and it misses
// about 4% of random 32-character keys.
func rawLooksRandom(s string) bool {
	var up, low, dig, runs int
	inRun := false
	for k := 0; k < len(s); k++ {
		c := s[k]
		isLow := 'a' <= c && c <= 'z'
		switch {
		case 'A' <= c && c <= 'Z':
			up++
		case isLow:
			low++
			if !inRun {
				runs++
			}
		case '0' <= c && c <= '9':
			dig++
		}
		inRun = isLow
	}
	return up > 0 && low > 0 && dig > 0 && up+low+dig >= 28 && low*2 < runs*5
}

func rawIsDigit(c byte) bool { return '0' <= c && c <= '9' }

func rawIsWordByte(c byte) bool {
	return c == '_' || rawIsDigit(c) || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

// rawPathLike: p starts like a file system path.
func rawPathLike(p string) bool {
	return strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") || len(p) > 2 && p[1] == ':'
}

// rawSSHClone: text[s:e], an address, is the "git@host" of an SSH clone
// URL ("git@github.com:org/repo.git"), which names a repository, not a
// person. A private host is found by the host finder.
func rawSSHClone(text string, s, e int) bool {
	return e < len(text) && text[e] == ':' && strings.EqualFold(text[s:min(e, s+4)], "git@")
}

// rawFlagAfter: a flag of rawCLIPasswords' patterns may start after c.
func rawFlagAfter(c byte) bool {
	return rawPatternSpace(c) || c == '(' || c == '[' || c == '`' || c == '\'' || c == '"'
}

// rawMayHoldFlag: text may give a secret as a command-line value, which
// rawCLIPasswords needs.
func rawMayHoldFlag(text string) bool {
	for i := 0; i+2 < len(text); i++ {
		if text[i] != '-' || i > 0 && !rawFlagAfter(text[i-1]) {
			continue // not a dash, or one inside a word ("must-pass")
		}
		j := i + 1
		if text[j] == '-' {
			j++
		}
		if j < len(text) && (text[j] == 'p' || text[j] == 'P') {
			return true // "-p x", "-P 'x'", "-pS3cret", "--password"
		}
		rest := text[j:min(len(text), j+12)]
		for _, name := range [...]string{"pass", "pwd", "token", "secret", "key", "api", "auth", "access", "private", "client", "store", "require", "conn"} {
			// The first letters differ from most bytes after a dash: one
			// comparison before EqualFold (equal byte lengths match ASCII
			// only, so folding the first byte is exact).
			if len(rest) >= len(name) && rest[0]|0x20 == name[0] && strings.EqualFold(rest[:len(name)], name) {
				return true
			}
		}
		for k := j; k < min(len(text), j+24) && text[k] != ' '; k++ {
			if text[k] == '-' && k+4 < len(text) && strings.EqualFold(text[k+1:k+5], "pass") {
				return true // "--conn-password", "--db-pass"
			}
		}
	}
	return false
}

// rawHasIDPrefix: a word ends in "_" after a prefix rawPrefixedID knows.
func rawHasIDPrefix(text string) bool {
	for i := 2; i < len(text); i++ {
		if text[i] == '_' {
			switch {
			case i >= 2 && (text[i-2:i] == "ws"),
				i >= 3 && (text[i-3:i] == "cus" || text[i-3:i] == "sub" || text[i-3:i] == "org" || text[i-3:i] == "usr"),
				i >= 4 && (text[i-4:i] == "acct" || text[i-4:i] == "proj" || text[i-4:i] == "cust" || text[i-4:i] == "team"),
				i >= 6 && text[i-6:i] == "tenant":
				return true
			}
		}
	}
	return false
}

// rawPublicDigest: the hex run at s follows a digest algorithm
// ("sha256:…", "@sha256:…"): a content digest, public, not a secret.
func rawPublicDigest(text string, s int) bool {
	before := strings.ToLower(text[max(0, s-7):s])
	for _, p := range []string{"sha256:", "sha512:", "sha384:", "sha1:", "sha224:", "md5:", "blake3:", "sha256-"} {
		if strings.HasSuffix(before, p) {
			return true
		}
	}
	return false
}

// rawInSpans: text[s:e] overlaps one of spans.
func rawInSpans(spans [][2]int, s, e int) bool {
	for _, u := range spans {
		if s < u[1] && u[0] < e {
			return true
		}
	}
	return false
}
