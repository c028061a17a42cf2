package textcheck

import (
	"regexp"
	"strings"
)

// Private data that has no shape of its own but a context that makes it
// private: a person's given name that no list holds, told by how the
// sentence uses it ("Marisol's runs", "Aoife from the finance team"), a
// handle inside a compound ("svc-mrossi", "feat/lkim-shader-cache"), a
// company's bucket or image, a customer named as one, what someone said in
// a private conversation, a password given with -u and a home directory
// percent-encoded in a URL. The token rules read the tokens once.

// rawContextual adds what these rules find in text, whose tokens are toks.
func rawContextual(text string, toks []token, has *byteSet, joined bool, add func(kind string, s, e int)) {
	// joined: some word may be a compound ('-', '_', '/' or a dot inside
	// a word), what a compound handle and an organisation's path need.
	private := -1 // the token of the last privacy cue ("DM", "privately")
	for i := range toks {
		t := &toks[i]
		if t.punct != 0 {
			if endsSentence(t) {
				private = -1
			}
			continue
		}
		context := t.has(cContext)
		switch {
		case context && rawPrivacyCue(toks, i):
			private = i
		case context && private >= 0 && i-private <= 12 && rawSpeechVerbs[t.w]:
			add("transcript", toks[private].s, rawSentenceEnd(toks, i))
			private = -1
		case t.cap && rawPersonByUse(text, toks, i): // most words are not capitalised
			add("name", t.s, t.e)
		case joined && !t.cap && rawCompoundHandle(text[t.s:t.e]):
			add("name", t.s, t.e)
		case joined && !t.cap && has.has('/') && rawPrivateOrgPath(text[t.s:t.e]):
			add("id", t.s, t.e)
		case context && rawCustomerWords[t.w]:
			if s, e, ok := rawCustomerName(text, toks, i); ok {
				add("name", s, e)
			}
		}
	}
	// has, the bytes of text, leaves most texts out of the searches below.
	if has.has('-') && (strings.Contains(text, " -u ") || strings.Contains(text, "--user ")) {
		for _, m := range rawUserPass.FindAllStringSubmatchIndex(text, -1) {
			if s := m[0]; rawCredValue(text[m[2]:m[3]], true) {
				for rawSpace(text[s]) {
					s++
				}
				add("secret", s, m[1]) // "curl -u deploy:fh38Gk2pLq"
			}
		}
	}
	if joined && (strings.Contains(text, "rivate ") || strings.Contains(text, "nternal ")) {
		for _, m := range rawInternalPackage.FindAllStringSubmatchIndex(text, -1) {
			if !rawLists.tool[text[m[2]:m[3]]] {
				add("private", m[2], m[3]) // "the private acme-telemetry wheel"
			}
		}
	}
	if has.has('-') && strings.Contains(text, "--") {
		for _, m := range rawOrgFlag.FindAllStringSubmatchIndex(text, -1) {
			if v := strings.ToLower(text[m[2]:m[3]]); !rawGenericFlagValue[v] && len(v) >= 3 {
				add("id", m[2], m[3]) // "aws sso login --profile acme-dev-admin"
			}
		}
	}
	if has.has('%') && strings.Contains(text, "%2") {
		rawEncodedHomes(text, add)
	}
	if has.has(':') && strings.Contains(text, "://") {
		for _, m := range rawBucketURL.FindAllStringSubmatchIndex(text, -1) {
			if !rawPublicBucket(text[m[2]:m[3]]) {
				add("id", m[0], rawTrimEnd(text, m[0], m[1]))
			}
		}
	}
}

// rawOrgFlag: the value of a flag that names an organisation's own
// profile, project, account or tenant on a cloud CLI's command line.
var rawOrgFlag = regexp.MustCompile(`--(?:profile|project|account|subscription|tenant|org|organization|organisation)[= ]([A-Za-z0-9][A-Za-z0-9._\-]*)`)

// rawGenericFlagValue are values such a flag takes in every organisation.
var rawGenericFlagValue = set("default", "dev", "prod", "production", "staging", "stage", "test", "testing", "local", "sandbox",
	"admin", "readonly", "personal", "main", "demo", "example", "my-project", "myproject", "my-profile")

// rawInternalPackage: a compound name that "private" or "internal" calls
// an organisation's own package, image or service.
var rawInternalPackage = regexp.MustCompile(`\b(?:[Pp]rivate|[Ii]nternal|in-house)\s+([a-z][a-z0-9]*(?:[-_.][a-z0-9]+)+)\s+` +
	`(?:wheel|package|module|gem|crate|library|lib|image|chart|repo|repository|service|client|sdk|plugin)s?\b`)

// rawSentenceEnd is the end of the sentence toks[i] is in.
func rawSentenceEnd(toks []token, i int) int {
	for ; i+1 < len(toks); i++ {
		if endsSentence(&toks[i+1]) {
			break
		}
	}
	return toks[i].e
}

// rawPrivacyCue: toks[i] says that what follows was said in private: "DM",
// "privately", "in confidence", "a private channel / thread / note".
func rawPrivacyCue(toks []token, i int) bool {
	switch toks[i].w {
	case "dm", "dms", "privately", "confidentially", "1:1":
		return true
	case "private":
		return i+1 < len(toks) && rawPrivateVenue[toks[i+1].w] ||
			i+2 < len(toks) && toks[i+1].punct == 0 && rawPrivateVenue[toks[i+2].w] // "the private #sre-oncall channel"
	case "confidence":
		return i > 0 && toks[i-1].w == "in"
	case "direct":
		return i+1 < len(toks) && (toks[i+1].w == "message" || toks[i+1].w == "messages")
	}
	return false
}

var rawPrivateVenue = map[string]bool{
	"channel": true, "thread": true, "note": true, "notes": true, "message": true, "messages": true, "chat": true,
	"conversation": true, "email": true, "e-mail": true, "call": true, "review": true, "group": true,
}

// rawSpeechVerbs say that someone said or wrote something.
var rawSpeechVerbs = map[string]bool{
	"said": true, "says": true, "wrote": true, "told": true, "mentioned": true, "explained": true,
	"admitted": true, "shared": true, "read": true, "reads": true, "messaged": true, "noted": true,
	"confirmed": true, "complained": true, "revealed": true, "warned": true, "asked": true, "claimed": true,
}

// rawPersonByUse: toks[i], a capitalised word no list or lexicon knows,
// is used as a person: it owns something ("Marisol's runs"), or comes from
// a team ("Aoife from the finance team", "Aoife in finance").
func rawPersonByUse(text string, toks []token, i int) bool {
	t := &toks[i]
	if !t.cap || t.code || len(t.w) < 3 || i+2 >= len(toks) {
		return false
	}
	if next := toks[i+1].w; next != "'s" && next != "from" && next != "in" {
		return false // the cheap test first: most capitalised words are followed by none of these
	}
	if rawLists.tool[t.w] || notNames[t.w] || !rawNameWord(text, t) {
		return false
	}
	if toks[i+1].w == "'s" && rawPersonsThings[toks[i+2].w] {
		return true
	}
	if i+1 < len(toks) && toks[i+1].w == "from" {
		for k := i + 2; k < len(toks) && k <= i+6; k++ {
			if rawTeamWords[toks[k].w] {
				return true
			}
			if toks[k].punct != 0 {
				break
			}
		}
	}
	return toks[i+1].w == "in" && rawDepartments[toks[i+2].w]
}

// rawPersonsThings are what a person owns in a lesson and a tool does not:
// "Marisol's runs", "Tomek's kubeconfig" ("Kibana's saved-object export"
// is a tool's).
var rawPersonsThings = map[string]bool{
	"fix": true, "fixes": true, "review": true, "comment": true, "comments": true, "notebook": true, "laptop": true,
	"machine": true, "benchmark": true, "benchmarks": true, "kubeconfig": true, "shell": true,
	"pr": true, "patch": true, "commit": true, "commits": true, "change": true, "changes": true, "hook": true,
	"script": true, "dotfiles": true, "desk": true, "vm": true, "workstation": true, "session": true, "team": true,
	"manager": true, "message": true, "email": true, "e-mail": true, "phone": true, "calendar": true, "home": true,
	"fork": true, "preset": true, "runs": true, "numbers": true, "notes": true, "approval": true, "ticket": true,
	"terminal": true, "editor": true, "setup": true, "ssh": true, "keys": true, "password": true, "profile": true,
	"draft": true, "clone": true, "checkout": true, "worktree": true, "jupyter": true, "kernel": true, "csv": true,
	"spreadsheet": true, "export": true, "query": true, "dashboard": true, "pipeline": true, "experiment": true,
	"account": true, "credentials": true, "token": true, "mac": true, "macbook": true, "pc": true, "device": true,
	"tablet": true, "env": true, "venv": true, "config": true, "pre-commit": true, "local": true, "last": true,
}

// rawNameWord: t reads as a name: a word the lexicon does not know, of
// letters (hyphenated parts each unknown: "Seo-yeon").
func rawNameWord(text string, t *token) bool {
	w := text[t.s:t.e]
	for k := 1; k < len(w); k++ {
		if c := w[k]; 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
			return false // "README", "RabbitMQ", "GitLab": a name of a thing
		}
	}
	if strings.IndexByte(t.w, '-') > 0 {
		for _, p := range strings.Split(t.w, "-") {
			if len(p) < 2 || lexicon.get(p)&cKnown != 0 || rawLists.tool[p] {
				return false
			}
		}
		return true
	}
	return unknownCapital(t) && lexicon.get(t.w)&cKnown == 0 && !rawKnownWord(t.w)
}

var rawTeamWords = map[string]bool{
	"team": true, "group": true, "squad": true, "department": true, "desk": true, "crew": true, "office": true,
	"lab": true, "unit": true, "guild": true, "chapter": true,
}

var rawDepartments = map[string]bool{
	"finance": true, "legal": true, "hr": true, "accounting": true, "sales": true, "marketing": true,
	"procurement": true, "payroll": true, "compliance": true, "support": true, "qa": true,
}

// rawCompoundHandle: w, a lower-case compound ("svc-mrossi", "jwu-ext",
// "feat/lkim-shader-cache", "risk-scorer-mkovacs-test"), has a part that
// is an initial and a family name.
func rawCompoundHandle(w string) bool {
	if len(w) < 6 {
		return false
	}
	joined := false
	for k := 0; k < len(w); k++ {
		switch w[k] {
		case '-', '_', '/', '.':
			joined = true
		case ':', '@':
			return false // a URL or an address: other rules read these
		}
	}
	if !joined {
		return false
	}
	parts := strings.FieldsFunc(w, func(r rune) bool { return r == '-' || r == '_' || r == '/' || r == '.' })
	if len(parts) < 2 {
		return false
	}
	for _, p := range parts {
		if len(parts) >= 3 && len(p) >= 4 && givenNames[p] && !notNames[p] && lexicon.get(p)&cKnown == 0 {
			return true // "dev-sara-perf-tuning"
		}
		if len(p) >= 4 && rawLists.surname[p[1:]] && !rawKnownWord(p) && !rawLists.tool[p] && !givenNames[p] || rawInitialAndName(p) {
			return true
		}
	}
	return false
}

// rawUserPass: a user and a password given to a command ("-u user:pass");
// the password is submatch 1.
var rawUserPass = regexp.MustCompile(`(?:^|\s)(?:-u|--user)\s+['"]?[A-Za-z0-9._\-]+:([^\s'"]+)`)

// rawPrivateOrgPath: w, a path of an image, a package or a repository
// ("gcr.io/brightwave-internal/python-ml"), has a part that says it is an
// organisation's own: a name joined to "internal", "private" or "corp".
func rawPrivateOrgPath(w string) bool {
	if strings.IndexByte(w, '/') < 0 {
		return false
	}
	for _, seg := range strings.Split(w, "/") {
		for _, mark := range [...]string{"-internal", "internal-", "-private", "private-", "-corp", "corp-", "-intra"} {
			if strings.Contains(seg, mark) && len(seg) > len(mark)+2 {
				return true
			}
		}
	}
	return false
}

// rawCustomerWords name a company one works for or with.
var rawCustomerWords = map[string]bool{
	"customer": true, "tenant": true, "client": true, "merchant": true, "reseller": true, "partner": true,
	"vendor": true, "supplier": true, "account": true,
}

// rawCustomerName finds a company's name beside toks[i], a word such as
// "tenant" or "customer": "the Larkspur Insurance tenant", "merchant
// Glasswing Coffee". One of its words must be one no list knows.
func rawCustomerName(text string, toks []token, i int) (int, int, bool) {
	span := func(from, to int) (int, int, bool) { // toks[from:to], capitalised words
		unknown := false
		for k := from; k < to; k++ {
			t := &toks[k]
			if !t.cap || t.code || t.punct != 0 || rawLists.tool[t.w] || notNames[t.w] {
				return 0, 0, false
			}
			if rawNameWord(text, t) {
				unknown = true
			}
		}
		return toks[from].s, toks[to-1].e, unknown && to > from
	}
	// Before: "the Larkspur Insurance tenant".
	k := i
	for k > 0 && i-k < 3 && toks[k-1].cap && toks[k-1].punct == 0 && !toks[k-1].code && !toks[k-1].has(cDet|cPrep) {
		k--
	}
	if k < i && k > 0 && toks[k-1].has(cDet|cPrep) && toks[i].w != "client" { // "the Unity client" is software
		if s, e, ok := span(k, i); ok {
			return s, e, true
		}
	}
	// After: "merchant Glasswing Coffee".
	k = i + 1
	for k < len(toks) && k-i <= 3 && toks[k].cap && toks[k].punct == 0 && !toks[k].code {
		k++
	}
	if k > i+1 {
		return span(i+1, k)
	}
	return 0, 0, false
}

// rawBucketURL: a storage bucket's URL; the bucket is submatch 1.
var rawBucketURL = regexp.MustCompile(`\b(?:s3|gs|az|abfss|wasbs|oss|r2)://([A-Za-z0-9][A-Za-z0-9._\-]{2,62})`)

// rawPublicBucket: a bucket that names no one's organisation: a
// placeholder ("my-bucket", "example-data") or a public data set.
func rawPublicBucket(b string) bool {
	b = strings.ToLower(b)
	for _, p := range [...]string{"example", "my-", "my_", "your-", "your_", "sample", "bucket", "placeholder", "public", "open-data", "commoncrawl", "gcp-public-data", "nyc-tlc", "noaa", "aws-", "amazon-", "cloud-samples"} {
		if strings.Contains(b, p) {
			return true
		}
	}
	return false
}

// rawEncodedHomes finds a home directory percent-encoded in a field of
// text ("mongodb://%2Fhome%2Fsnakamura%2Fmongo.sock").
func rawEncodedHomes(text string, add func(kind string, s, e int)) {
	for s := 0; s < len(text); {
		e := s
		for e < len(text) && !rawSpace(text[e]) {
			e++
		}
		if w := strings.ToLower(text[s:e]); strings.Contains(w, "%2fhome%2f") || strings.Contains(w, "%2fusers%2f") {
			add("path", s, rawTrimEnd(text, s, e))
		}
		s = e + 1
	}
}
