package textcheck

import (
	_ "embed"
	"net/netip"
	"regexp"
	"strings"
)

// What SPEC §6 counts as public or well known (system and tool paths,
// public hosts, special addresses, documented default credentials) and the
// finders for raw data that needs more than one regular expression: handles
// and machine names made of words, chat user ids, spelled-out e-mail,
// passwords given as command-line values, and organisation ids. The lists
// are in lists/rawdata.txt so a reader can see and extend them.

//go:embed lists/rawdata.txt
var rawdataTxt string

var rawLists = loadRawLists()

type rawListSet struct {
	publicPath      []string
	homePublic      map[string]bool
	placeholderUser map[string]bool
	publicHost      map[string]bool
	privateLabel    map[string]bool
	privateSuffix   map[string]bool
	publicIP        map[string]bool
	defaultCred     map[string]bool
	surname         map[string]bool
	machine         map[string]bool
	publicNets      []netip.Prefix // [publicnet]: every address in them is public
	tenantDomain    map[string]bool
	serviceLabel    map[string]bool
	publicDomain    map[string]bool
	tool            map[string]bool
	commonWord      map[string]bool
	publicKey       map[string]bool
	deskPrefix      map[string]bool
}

func loadRawLists() *rawListSet {
	l := &rawListSet{}
	set := func(ws []string) map[string]bool {
		m := make(map[string]bool, len(ws))
		for _, w := range ws {
			m[w] = true
		}
		return m
	}
	for class, words := range parseSections(rawdataTxt) {
		switch class {
		case "publicpath":
			l.publicPath = words
		case "homepublic":
			l.homePublic = set(words)
		case "placeholderuser":
			l.placeholderUser = set(words)
		case "publichost":
			l.publicHost = set(words)
		case "privatelabel":
			l.privateLabel = set(words)
		case "privatesuffix":
			l.privateSuffix = set(words)
		case "publicip":
			l.publicIP = set(words)
		case "publicnet":
			for _, w := range words {
				p, err := netip.ParsePrefix(w)
				if err != nil {
					panic("textcheck: lists/rawdata.txt [publicnet]: " + err.Error())
				}
				l.publicNets = append(l.publicNets, p)
			}
		case "defaultcred":
			l.defaultCred = set(words)
		case "surname":
			l.surname = set(words)
		case "machine":
			l.machine = set(words)
		case "tenantdomain":
			l.tenantDomain = set(words)
		case "servicelabel":
			l.serviceLabel = set(words)
		case "publicdomain":
			l.publicDomain = set(words)
		case "tool":
			l.tool = set(words)
		case "commonword":
			l.commonWord = set(words)
		case "publickey":
			l.publicKey = set(words)
		case "deskprefix":
			l.deskPrefix = set(words)
		default:
			panic("textcheck: lists/rawdata.txt has an unknown class [" + class + "]")
		}
	}
	return l
}

// rawPathPublic: p, a path a pattern found, is a system or tool location,
// a conventional container or CI directory, or a home-relative pattern
// such as "$HOME/.npm" or "~/.config/tool", so it names no one.
func rawPathPublic(p string) bool {
	low := strings.ToLower(strings.ReplaceAll(p, `\`, "/"))
	if strings.HasPrefix(low, "file://") {
		low = strings.TrimPrefix(low, "file://")
		if !strings.HasPrefix(low, "/") { // file://host/x
			return false
		}
		if len(low) > 3 && low[2] == ':' { // file:///C:/x
			low = low[1:]
		}
	}
	if strings.HasPrefix(low, "%appdata%/") || strings.HasPrefix(low, "%localappdata%/") || strings.HasPrefix(low, "%programdata%/") ||
		strings.HasPrefix(low, "%programfiles%/") || strings.HasPrefix(low, "%temp%/") {
		return true // a Windows variable: a pattern that names no one
	}
	for _, pre := range []string{"~/", "$home/", "${home}/", "%userprofile%/"} {
		if rest, ok := strings.CutPrefix(low, pre); ok {
			first, _, _ := strings.Cut(rest, "/")
			return strings.HasPrefix(first, ".") || rawLists.homePublic[first] || pre[0] == '%' && first != "" && !strings.Contains(rest, "/")
		}
	}
	for _, home := range []string{"/home/", "/users/", "c:/users/", "d:/users/"} {
		if rest, ok := strings.CutPrefix(low, home); ok {
			user, _, _ := strings.Cut(rest, "/")
			if rawLists.placeholderUser[user] || user == "" {
				return true
			}
		}
	}
	for _, pre := range rawLists.publicPath {
		// "/usr/" holds what is under it; a bare "/usr" is only itself.
		if strings.HasSuffix(pre, "/") && strings.HasPrefix(low, pre) || low == pre || low == strings.TrimSuffix(pre, "/") {
			return true
		}
	}
	return false
}

// rawIPPublic: a well-known special address (lists/rawdata.txt).
func rawIPPublic(addr string) bool {
	if rawLists.publicIP[strings.ToLower(addr)] {
		return true
	}
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return false
	}
	for _, p := range rawLists.publicNets {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// rawHostLabel: a host name label, letters, digits and inner hyphens.
func rawHostLabel(l string) bool {
	if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
		return false
	}
	for i := 0; i < len(l); i++ {
		if c := l[i]; !rawIsWordByte(c) && c != '-' || c == '_' {
			return false
		}
	}
	return true
}

// rawFileExt: last labels that are file extensions, so "config.int.yaml"
// or "app.local.js" is a file, not a host.
var rawFileExt = map[string]bool{
	"js": true, "ts": true, "py": true, "go": true, "rs": true, "sh": true, "md": true, "db": true,
	"cs": true, "pl": true, "rb": true, "so": true, "gz": true, "xz": true, "h": true, "c": true,
	"cc": true, "mk": true, "el": true, "ex": true, "kt": true, "tf": true, "pm": true, "ps": true,
}

var rawTLD = map[string]bool{
	"com": true, "net": true, "org": true, "io": true, "dev": true, "cloud": true, "co": true, "tech": true,
	"systems": true, "group": true, "services": true, "biz": true, "info": true, "app": true, "ai": true,
	"xyz": true, "site": true, "online": true, "tools": true, "network": true, "works": true, "software": true,
	"solutions": true, "digital": true, "company": true, "global": true, "studio": true, "run": true, "edu": true, "gov": true,
	"team": true, "host": true, "zone": true, "space": true, "live": true, "pro": true, "work": true, "link": true, "page": true,
	"mil": true,
}

// rawPrivateHosts calls add for each host name of a private network: under
// a private top-level name (build07.corp.internal, printer.local) or with
// a private label before a public one (artifacts.int.example-corp.net). A
// host followed by a path or an image tag is found with it
// ("artifacts.int.example-corp.net/team/app:1.2"), so that a redaction
// never leaves half an image reference behind.
func rawPrivateHosts(text string, add func(kind string, s, e int)) {
	for i := 0; i < len(text); {
		c := text[i]
		if !rawIsWordByte(c) || c == '_' {
			i++
			continue
		}
		s := i
		for i < len(text) && (rawIsWordByte(text[i]) && text[i] != '_' || text[i] == '-' || text[i] == '.') {
			i++
		}
		e := i
		for e > s && (text[e-1] == '.' || text[e-1] == '-') {
			e--
		}
		run := text[s:e]
		if strings.IndexByte(run, '.') < 0 || s > 0 && (text[s-1] == '.' || text[s-1] == '@' || text[s-1] == '/' && !rawAfterScheme(text, s)) || e < len(text) && text[e] == '@' {
			continue
		}
		low := strings.ToLower(run)
		labels := strings.Split(low, ".")
		ok := true
		for _, l := range labels {
			if !rawHostLabel(l) {
				ok = false
				break
			}
		}
		last := labels[len(labels)-1]
		if !ok || rawLists.publicHost[low] || rawIsDigit(last[0]) || len(labels) == 2 && rawPlaceholderLabel(labels[0]) {
			continue
		}
		private := rawLists.privateSuffix[last] || len(labels) >= 3 && last == "arpa" && labels[len(labels)-2] == "home"
		if !private && len(labels) >= 3 && (rawTLD[last] || len(last) == 2 && !rawFileExt[last]) {
			for _, l := range labels[:len(labels)-2] {
				if rawLists.privateLabel[l] {
					private = true
					break
				}
			}
		}
		private = private || rawOrgHost(labels)
		if !private || rawClusterDNS(labels) {
			continue
		}
		end := e
		if end < len(text) && (text[end] == '/' || text[end] == ':') && end+1 < len(text) && rawIsWordByte(text[end+1]) {
			for end < len(text) && !rawSpace(text[end]) && strings.IndexByte(`"'<>()[]{}`+"`", text[end]) < 0 {
				end++
			}
			end = rawTrimEnd(text, e, end)
		}
		add("host", s, end)
	}
}

// rawAfterScheme: text[s] starts the host of a scheme:// URL.
func rawAfterScheme(text string, s int) bool {
	return s >= 3 && text[s-3:s] == "://"
}

// rawClusterDNS: a Kubernetes service name of the kube-system or default
// namespace, the same in every cluster.
// rawOrgHost: a host of one organisation under a public top-level domain:
// a tenant's sub-domain of a hosted service ("northwind.okta.com"), an
// account's registry ("739105882214.dkr.ecr…amazonaws.com"), or a service
// an organisation runs for itself ("registry.acmepay.io",
// "sonar.eng.fintrack-labs.io") under a domain that is not a public one.
func rawOrgHost(labels []string) bool {
	n := len(labels)
	if n < 3 {
		return false
	}
	if len(labels[0]) == 12 && rawAllDigits(labels[0]) {
		return true // an AWS account id
	}
	if n >= 5 && labels[n-2] == "amazonaws" {
		// "orders-prod.c9xk2lq8rzt4.eu-west-1.rds.amazonaws.com": a label of
		// letters and digits AWS generates for one account's resource.
		for _, l := range labels[1 : n-3] {
			if len(l) >= 10 && rawHasDigit(l) && rawHasLetter(l) && strings.IndexByte(l, '-') < 0 {
				return true
			}
		}
	}
	for k := 1; k < n-1; k++ {
		if rawLists.tenantDomain[strings.Join(labels[k:], ".")] {
			return !rawPlaceholderLabel(labels[k-1]) && !rawPublicSub[labels[k-1]]
		}
	}
	domain := labels[n-2] + "." + labels[n-1]
	if rawLists.publicDomain[domain] || n >= 3 && rawLists.publicDomain[labels[n-3]+"."+domain] || rawPlaceholderLabel(labels[n-2]) {
		return false
	}
	if last := labels[n-1]; !rawTLD[last] && !(len(last) == 2 && !rawFileExt[last]) {
		return false // "maven.compiler.release": a property's name, no domain
	}
	for _, l := range labels[:n-2] {
		if rawLists.serviceLabel[l] {
			return true
		}
	}
	return strings.Contains(labels[n-2], "-internal") || strings.HasPrefix(labels[n-2], "internal-")
}

// rawPublicSub are sub-domains of a hosted service that name no tenant.
var rawPublicSub = map[string]bool{
	"www": true, "login": true, "developer": true, "developers": true, "docs": true, "status": true,
	"help": true, "support": true, "api": true, "app": true, "cdn": true, "static": true, "auth": true,
}

func rawClusterDNS(labels []string) bool {
	n := len(labels)
	if n < 4 || labels[n-1] != "local" || labels[n-2] != "cluster" || labels[n-3] != "svc" {
		return false
	}
	ns := labels[n-4]
	return ns == "default" || ns == "kube-system" || rawPlaceholderLabel(ns) && (n == 4 || rawPlaceholderLabel(labels[n-5]))
}

// rawPlaceholderLabel: a host label that documentation writes for any
// name ("my-svc.my-namespace.svc.cluster.local", "chart-example.local").
func rawPlaceholderLabel(l string) bool {
	return strings.HasPrefix(l, "my-") || strings.HasPrefix(l, "your-") || strings.Contains(l, "example") || l == "foo" || l == "bar"
}

func rawSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// rawWords calls fn for each run of letters, digits and ".-_/" in
// text[from:]: the shape handles, branches, machine names and ids are
// written in.
func rawWords(text string, from int, fn func(s, e int)) {
	for i := from; i < len(text); {
		if !rawIsWordByte(text[i]) {
			i++
			continue
		}
		s := i
		for i < len(text) && (rawIsWordByte(text[i]) || text[i] == '-' || text[i] == '.' || text[i] == '/') {
			i++
		}
		fn(s, i)
	}
}

// rawKnownWord: the lexicon knows w or a base form of it.
func rawKnownWord(w string) bool {
	if lexicon.get(w)&cKnown != 0 || notNames[w] {
		return true
	}
	for _, b := range baseForms(w) {
		if lexicon.get(b)&cKnown != 0 {
			return true
		}
	}
	return false
}

// rawHandle reports whether w, a lower-case word, is a person's handle: an
// initial and a family name ("kpatel", "rnguyen"), or a given name joined
// to a family name or an initial ("maria.garcia", "john_doe").
func rawHandleWord(w string) bool {
	n := len(w)
	for n > 0 && rawIsDigit(w[n-1]) {
		n--
	}
	if n < len(w) && len(w)-n <= 3 && n >= 4 {
		w = w[:n] // "mgarcia2", "jsmith2"
	}
	if len(w) < 4 || len(w) > 40 {
		return false
	}
	k := -1 // the first '.', '_' or '-'; one pass, as this runs on most words the lexicon lacks
	for i := 0; i < len(w); i++ {
		if c := w[i]; 'a' <= c && c <= 'z' {
			continue
		} else if c != '.' && c != '_' && c != '-' {
			return false
		}
		if k < 0 {
			k = i
		}
	}
	if k > 0 {
		first, rest := w[:k], w[k+1:]
		if k == 1 && rawLists.surname[rest] {
			return true // "m.rossi"
		}
		if (rawHandleSuffix[rest] || len(rest) == 1) && (rawLists.surname[first[1:]] || rawInitialAndName(first)) {
			return true // "dchen-bot", "lchen_admin", "lfernandes-ext"
		}
		return givenNames[first] && !notNames[first] && (rawLists.surname[rest] || len(rest) == 1)
	}
	return rawLists.surname[w[1:]] && len(w) >= 5 && !rawKnownWord(w) && !givenNames[w] || rawInitialAndName(w)
}

// rawDottedName: w is two words of lower-case letters joined by one dot
// ("ahmet.yilmaz", "a.lindqvist"), the shape of an account name.
func rawDottedName(w string) bool {
	k := strings.IndexByte(w, '.')
	if k < 1 || k == len(w)-1 || strings.IndexByte(w[k+1:], '.') >= 0 || len(w)-k-1 < 3 {
		return false
	}
	for i := 0; i < len(w); i++ {
		if c := w[i]; i != k && !('a' <= c && c <= 'z') {
			return false
		}
	}
	// "pypi.org": a domain, which the host rules read.
	return !rawKnownWord(w[k+1:]) && !rawLists.tool[w[:k]] && !rawTLD[w[k+1:]]
}

// rawBranchType are the first parts of branch names that a person's name
// may follow.
var rawBranchType = map[string]bool{
	"feature": true, "feat": true, "fix": true, "bugfix": true, "hotfix": true, "wip": true,
	"users": true, "user": true, "dev": true, "topic": true, "spike": true, "chore": true, "exp": true,
}

// rawHandleSuffix are what a person's handle ends with besides the name.
var rawHandleSuffix = map[string]bool{
	"dev": true, "bot": true, "ext": true, "admin": true, "adm": true, "ops": true, "mac": true,
	"work": true, "wip": true, "e": true, "x": true, "sa": true, "test": true, "old": true, "new": true,
	"oncall": true, "prod": true, "md": true, "personal": true, "laptop": true,
}

// rawHandlesAndMachines finds lower-case handles (alone or as the first
// part of a branch, "rnguyen/hotfix-login"), a given name as a branch's
// owner ("alice/fix-login"), machine names ("ci-runner-12", "build07"),
// UUIDs (tenant and subscription ids), 12-digit account ids and ids a word
// names ("customer 48213"). It reads the tokens: only words the lexicon
// does not know and code-like words (digits, symbols) can be any of
// these, so most words cost one bit test.
func rawHandlesAndMachines(text string, toks []token, add func(kind string, s, e int)) {
	for i := range toks {
		t := &toks[i]
		if t.punct != 0 || t.cap && !t.code || !t.code && t.has(cKnown) {
			continue // a capitalised word is an id only with digits: "CUST-20931"
		}
		if t.w == "`" {
			rawWords(text[:t.e-1], t.s+1, func(s, e int) { rawIdentWord(text, toks, -1, s, e, add) })
			continue
		}
		rawIdentWord(text, toks, i, t.s, t.e, add)
	}
}

// rawIdentWord looks at one word, text[s:e], the token toks[i] when i >= 0.
func rawIdentWord(text string, toks []token, i, s, e int, add func(kind string, s, e int)) {
	for e > s && !rawIsWordByte(text[e-1]) {
		e--
	}
	if e-s < 4 || s > 0 && (text[s-1] == '@' || text[s-1] == '$' || text[s-1] == '%') {
		return
	}
	w := text[s:e]
	first := w
	if k := strings.IndexByte(w, '/'); k > 0 {
		first = w[:k]
		if k+1 < len(w) && strings.IndexByte(w[k+1:], '/') < 0 && strings.IndexByte(w[k+1:], '-') > 0 && givenNames[first] && !notNames[first] {
			add("name", s, e) // "alice/fix-login"
			return
		}
	}
	if k := strings.IndexByte(w, '/'); k > 0 && rawBranchType[strings.ToLower(w[:k])] {
		// "feature/ppatel-redis-tls", "users/tbrennan/wip": a branch that
		// carries its author's name.
		seg := w[k+1:]
		if j := strings.IndexAny(seg, "-_/."); j > 0 {
			seg = seg[:j]
		}
		if givenNames[seg] && !notNames[seg] || rawHandleWord(seg) || len(seg) > 4 && givenNames[seg[:len(seg)-1]] && !notNames[seg[:len(seg)-1]] {
			add("name", s, e)
			return
		}
	}
	if i > 0 && rawDottedName(w) && rawPersonCue[toks[i-1].w] {
		add("name", s, e) // "approved by ahmet.yilmaz", "shows a.lindqvist"
		return
	}
	if rawHandleWord(first) {
		if len(first) < len(w) {
			add("name", s, e)
		} else {
			add("name", s, s+len(first))
		}
		return
	}
	digits := 0
	for k := 0; k < len(w); k++ {
		if rawIsDigit(w[k]) {
			digits++
		}
	}
	switch {
	case digits == 0:
	case rawUUIDAt(w):
		add("id", s, e)
	case len(w) == 12 && digits == 12:
		add("id", s, e) // an AWS account id
	case rawMachineName(w), rawWindowsMachine(w):
		add("host", s, e)
	case i > 0 && rawNamedID(w, digits) && rawOrgNamed(toks, i):
		add("id", s, e)
	}
}

// rawNamedID: w, after a word such as "customer", is an id: five digits
// or more, or digits mixed with letters; "account 2" or "tenant 2024" is a
// count or a year.
func rawNamedID(w string, digits int) bool {
	return digits >= 5 || digits >= 2 && digits < len(w) && len(w) >= 6 && !rawVersionLike(w)
}

// rawOrgNamed: a word before toks[i] names an organisation's id
// ("customer 48213", "tenant id 4f2a…", "account #40012", "org: 7781x2").
func rawOrgNamed(toks []token, i int) bool {
	for k := i - 1; k >= 0 && k >= i-3; k-- {
		w := toks[k].w
		switch {
		case rawOrgWords[w]:
			return true
		case w == "id" || w == "ids" || w == "#" || w == ":" || w == "number" || w == "no" || w == "no." || w == "=":
		default:
			return false
		}
	}
	return false
}

// rawMachineName: a lower-case name of machine words ending in a number,
// "ci-runner-12", "build07", "db-replica-2", "ip-10-0-3-17"; a glued number
// needs two digits ("db2" is a product).
func rawMachineName(w string) bool {
	if len(w) < 4 || strings.IndexByte(w, '/') >= 0 || strings.IndexByte(w, '.') >= 0 {
		return false
	}
	n := len(w)
	d := n
	for d > 0 && rawIsDigit(w[d-1]) {
		d--
	}
	if d == n || n-d > 3 || d == 0 {
		return false
	}
	hyphen := w[d-1] == '-'
	if !hyphen && n-d < 2 {
		return false
	}
	stem := strings.TrimSuffix(w[:d], "-")
	for i := 0; i < len(stem); i++ {
		if c := stem[i]; !('a' <= c && c <= 'z') && c != '-' && !rawIsDigit(c) {
			return false
		}
	}
	if strings.HasPrefix(w, "ip-") && strings.Count(w, "-") == 4 {
		return true
	}
	parts := strings.Split(stem, "-")
	if rawLists.machine[parts[len(parts)-1]] || len(parts) >= 2 && rawLists.machine[strings.Join(parts[len(parts)-2:], "-")] {
		return true
	}
	// "db-replica-sgp-02": a machine word among three parts or more.
	for _, p := range parts[:len(parts)-1] {
		if len(parts) >= 3 && rawLists.machine[p] {
			return true
		}
	}
	return false
}

// rawWindowsMachine: a name in capitals of three parts or more with a
// machine word and a digit ("WS-ADM-0457", "PRN-FLOOR3-HR"), as Windows
// and on-premises networks name their computers.
func rawWindowsMachine(w string) bool {
	for _, pre := range [...]string{"DESKTOP-", "LAPTOP-", "WIN-"} {
		// Windows' own names for a new computer: "DESKTOP-7Q4M2KD".
		if rest, ok := strings.CutPrefix(w, pre); ok && len(rest) >= 5 && rawHasDigit(rest) && strings.ToUpper(rest) == rest {
			return true
		}
	}
	if len(w) < 6 || strings.Count(w, "-") < 2 || !rawHasDigit(w) {
		return false
	}
	machine := false
	for _, p := range strings.Split(w, "-") {
		if p == "" {
			return false
		}
		for i := 0; i < len(p); i++ {
			if c := p[i]; !('A' <= c && c <= 'Z') && !rawIsDigit(c) {
				return false
			}
		}
		machine = machine || rawLists.machine[strings.ToLower(strings.TrimRight(p, "0123456789"))]
	}
	return machine
}

func rawAllDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !rawIsDigit(s[i]) {
			return false
		}
	}
	return s != ""
}

// rawUUIDAt: w is a UUID, 8-4-4-4-12 hex digits.
func rawUUIDAt(w string) bool {
	if len(w) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := w[i]
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if c != '-' {
				return false
			}
		} else if !rawIsDigit(c) && !('a' <= c && c <= 'f') && !('A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// rawChatIDs finds chat user ids: Slack's "<@W012ABCDE>", Discord's
// "<@!123456789012345678>".
func rawChatIDs(text string, add func(kind string, s, e int)) {
	for i := 0; i+3 < len(text); i++ {
		if text[i] != '<' || text[i+1] != '@' {
			continue
		}
		j := i + 2
		if j < len(text) && (text[j] == '!' || text[j] == '&') {
			j++
		}
		k := j
		for k < len(text) && (rawIsDigit(text[k]) || 'A' <= text[k] && text[k] <= 'Z') {
			k++
		}
		if k-j >= 6 && k < len(text) && (text[k] == '>' || text[k] == '|') {
			end := strings.IndexByte(text[k:], '>')
			if end < 0 {
				end = 0
			}
			add("name", i, k+end+1)
		}
	}
}

var rawSpelledEmail = regexp.MustCompile(`(?i)\b[a-z0-9][a-z0-9._%+\-]*\s*(?:\(at\)|\[at\]|\{at\}|\sat\s)\s*[a-z0-9][a-z0-9\-]*(?:\s*(?:\(dot\)|\[dot\]|\{dot\}|\sdot\s)\s*[a-z0-9\-]+)+\b`)

// rawSpelledDotAt: text[k:] starts "dot" set off as in an e-mail address
// spelled out ("kim at example dot org"): " dot ", "[dot]", "(dot)" or
// "{dot}", which rawSpelledEmail needs. findRaw asks at each "dot" of its
// pass over the bytes.
func rawSpelledDotAt(text string, k int) bool {
	if k < 1 || k+3 >= len(text) || text[k:k+3] != "dot" {
		return false
	}
	switch before, after := text[k-1], text[k+3]; {
	case before == ' ' && after == ' ', before == '[' && after == ']',
		before == '(' && after == ')', before == '{' && after == '}':
		return true
	}
	return false
}

// rawCLIPassword finds a password or token given as a command-line value:
// "--password hunter2", "--password=hunter2", "-P 'x9…'", "mysql -u app
// -pS3cret". A placeholder ($DB_PASS, <password>, ***) or a documented
// default credential is not one; neither is a plain English word after a
// space ("--password prompt").
var rawCLIPassword = regexp.MustCompile(`(?i)(?:^|[\s(\[` + "`" + `'"])--?(?:password|passwd|pass|pwd|passphrase|requirepass|conn-password|token|auth-token|access-token|api-key|apikey|api-token|secret|client-secret|secret-key|access-key|private-key|storepass|keypass)(?:=|\s+)('[^']*'|"[^"]*"|[^\s'"` + "`" + `,;)]+)`)
var rawCLIShortPassword = regexp.MustCompile(`(?:^|[\s(\[` + "`" + `])-[pP](?:\s*('[^']+'|"[^"]+")|([^\s'"` + "`" + `,;)]{4,}))`)

func rawCLIPasswords(text string, add func(kind string, s, e int)) {
	for _, m := range rawCLIPassword.FindAllStringSubmatchIndex(text, -1) {
		vs, ve := m[2], m[3]
		v := text[vs:ve]
		quoted := v[0] == '\'' || v[0] == '"'
		eq := vs > 0 && text[vs-1] == '='
		if rawCredValue(strings.Trim(v, `'"`), quoted || eq) {
			s := m[0]
			for s < len(text) && text[s] != '-' {
				s++
			}
			add("secret", s, rawTrimEnd(text, s, ve))
		}
	}
	if !strings.Contains(text, "-p") && !strings.Contains(text, "-P") {
		return
	}
	for _, m := range rawCLIShortPassword.FindAllStringSubmatchIndex(text, -1) {
		s := m[0]
		for s < len(text) && text[s] != '-' {
			s++
		}
		switch {
		case m[2] >= 0: // quoted: "-P 'x9…'"
			if v := text[m[2]+1 : m[3]-1]; rawCredValue(v, true) && !rawAllDigits(v) {
				add("secret", s, m[3])
			}
		case m[4] >= 0: // glued: "-pS3cret" after a user "-u app"
			v := text[m[4]:m[5]]
			if strings.Contains(text[:s], " -u") && rawCredValue(v, true) && !rawAllDigits(v) && strings.ContainsAny(v, "0123456789") && strings.IndexByte(v, ':') < 0 {
				add("secret", s, rawTrimEnd(text, s, m[5]))
			}
		}
	}
}

// rawCredValue: v, the value of a password flag, is a real credential. A
// bare value after a space must hold a digit or a symbol, or be no
// English word, unless strict (quoted or after "=").
func rawCredValue(v string, strict bool) bool {
	low := strings.ToLower(v)
	if len(v) < 3 || rawLists.defaultCred[low] || strings.HasPrefix(v, "$") || strings.HasPrefix(v, "<") || strings.HasPrefix(v, "%") ||
		strings.HasPrefix(v, "{") || strings.Trim(v, "*x.…X") == "" || strings.HasPrefix(low, "-") || low == "stdin" || low == "file" || low == "env" {
		return false
	}
	if strict {
		return true
	}
	for i := 0; i < len(v); i++ {
		if !('a' <= v[i] && v[i] <= 'z' || 'A' <= v[i] && v[i] <= 'Z') {
			return true
		}
	}
	return !rawKnownWord(low)
}

// rawPrefixedID: ids whose prefix says what they are ("cus_N8Qx…",
// "acct_1Hh…"), as payment and SaaS platforms write them.
var rawPrefixedID = regexp.MustCompile(`\b(?:cus|acct|sub|org|tenant|proj|usr|cust|ws|team)_[A-Za-z0-9]{8,}\b`)

// rawOrgWords name an organisation-internal id when a number follows.
var rawOrgWords = map[string]bool{
	"customer": true, "tenant": true, "subscription": true, "account": true, "org": true, "organisation": true,
	"organization": true, "workspace": true, "client": true, "merchant": true, "user": true, "project": true,
	"ticket": true, "incident": true, "case": true, "invoice": true, "order": true,
}

// rawVersionLike: v reads as a version or a size ("v2", "3x", "16gb").
func rawVersionLike(v string) bool {
	low := strings.ToLower(v)
	return low[0] == 'v' && len(low) > 1 && rawIsDigit(low[1]) || strings.HasSuffix(low, "gb") || strings.HasSuffix(low, "mb")
}
