package textcheck

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// More of what SPEC §6 calls private: names written in other scripts,
// quotes of a private conversation, keys and webhook secrets of a known
// shape, and a user at a machine ("wei.zhang@wz-thinkpad").

// rawScriptNames finds people's names written in scripts other than Latin,
// outside quotation marks and code spans: a word in such a script that owns
// something ("Иван Петров's session", "田中さん's machine"), carries an
// honorific ("さん", "様"), follows a word that introduces a person ("the PR
// from 李明", "the commit author 김민준"), or is two capitalised words of a
// cased script. A place or a product ("the 日本 build") is none of these.
func rawScriptNames(text string, add func(kind string, s, e int)) {
	if !mayHoldOtherScript(text) {
		return
	}
	var q quotes
	start, quoted := -1, false
	flush := func(end int) {
		if start >= 0 && rawScriptName(text, start, end, quoted) {
			add("name", start, end)
		}
		start = -1
	}
	for i, r := range text {
		in := q.inside(text, i, r)
		if in != quoted || in && !unicode.IsLetter(r) && !unicode.IsMark(r) && r != ' ' {
			flush(i) // a run never crosses a quotation mark
			quoted = in
			if !unicode.IsLetter(r) {
				continue
			}
		}
		switch {
		case unicode.IsLetter(r) && r >= utf8.RuneSelf && !unicode.Is(unicode.Latin, r):
			if start < 0 {
				start = i
			}
		case start >= 0 && (unicode.IsLetter(r) || unicode.IsMark(r) || r == ' ' && nextNonLatin(text, i+1)):
			// "Иван Петров": one name across the space; a Latin letter
			// inside keeps the run (the normalised copy folds some).
		default:
			flush(i)
		}
	}
	flush(len(text))
}

// rawScriptName: the run text[s:e] of letters in another script is a name
// by its cues.
func rawScriptName(text string, s, e int, quoted bool) bool {
	run := text[s:e]
	after := text[e:]
	if !quoted && (strings.HasPrefix(after, "'s") || strings.HasPrefix(after, "\u2019s") || strings.HasPrefix(after, "'")) {
		return true
	}
	for _, h := range [...]string{"さん", "様", "君", "ちゃん", "氏", "씨", "님"} {
		if strings.Contains(run, h) {
			return true
		}
	}
	words := strings.Fields(run)
	if len(words) == 2 {
		capitals := 0
		for _, w := range words {
			if r, _ := utf8.DecodeRuneInString(w); unicode.IsUpper(r) {
				capitals++
			}
		}
		if capitals == 2 {
			return true
		}
	}
	if rawNameShaped(run) {
		return true
	}
	if strings.HasSuffix(strings.TrimRight(text[:s], " '\""), "-by:") {
		return true // a commit trailer: "Co-authored-by: 陳怡君"
	}
	if quoted {
		return false // a tool's message in another language, unless a cue above says a name
	}
	if w := strings.Fields(run); len(w) == 2 && caselessScript(run) {
		return true // two words of a script without capitals, in English prose: "שירה לוי"
	}
	before := strings.Fields(strings.ToLower(text[:s]))
	for k := len(before) - 1; k >= 0 && k >= len(before)-2; k-- {
		if w := strings.Trim(before[k], ",:;("); rawPersonCue[w] || w == "at" && k > 0 && strings.HasPrefix(before[k-1], "point") {
			return true
		}
	}
	// "김민준 noticed …", "王伟 reviewed …": the subject of a sentence that
	// says what someone did.
	if len(before) == 0 || strings.HasSuffix(strings.TrimSpace(text[:s]), ".") {
		next := strings.Fields(after)
		if len(next) > 0 {
			w := strings.ToLower(strings.Trim(next[0], ",.;:"))
			if e := lexicon.get(w); e&(cPast|cZ) != 0 && e&cDet == 0 || strings.HasSuffix(w, "ed") {
				return true
			}
		}
	}
	return false
}

// rawNameShaped: run, a whole run of letters in another script, has the
// shape of a person's name: two or three ideographs after a common
// Chinese family name ("李伟", "陳怡君"), a common Japanese family name
// with or without the given name ("田中 美咲"), or three hangul syllables
// after a common Korean family name ("김서연").
func rawNameShaped(run string) bool {
	words := strings.Fields(run)
	if len(words) == 0 || len(words) > 2 {
		return false
	}
	first := []rune(words[0])
	n := len(first)
	for _, w := range words[1:] {
		n += utf8.RuneCountInString(w)
	}
	switch {
	case unicode.Is(unicode.Han, first[0]):
		if len(first) >= 2 && rawJapaneseFamily[string(first[:2])] && n <= 5 {
			return true
		}
		return len(words) == 1 && (n == 2 || n == 3) && strings.ContainsRune(rawChineseFamily, first[0])
	case unicode.Is(unicode.Hangul, first[0]):
		return len(words) == 1 && n == 3 && strings.ContainsRune(rawKoreanFamily, first[0]) && !rawKoreanWords[run]
	}
	return false
}

// Common family names, the first of a name's characters: they are rarely
// the first of a word a tool prints.
const (
	rawChineseFamily = "李王张張刘劉陈陳杨楊赵趙黄黃周吴吳徐孙孫胡朱郭罗羅梁宋郑鄭谢謝韩韓唐冯馮董曹袁邓鄧许許沈曾彭吕呂苏蘇卢盧蒋蔣蔡贾賈魏薛叶葉潘杜戴夏钟鍾汪姚谭譚廖邹鄒熊陆陸郝孔崔秦顾顧侯邵孟段雷钱錢汤湯尹黎龚龔"
	rawKoreanFamily  = "김이박최정강조윤장임한오서신권황안송류홍"
)

// rawKoreanWords are words of three syllables that open as a family name.
var rawKoreanWords = map[string]bool{"한국어": true, "이메일": true, "이미지": true, "정보를": true, "오류가": true, "서비스": true, "이름을": true, "장치가": true}

// rawJapaneseFamily are common Japanese family names in kanji.
var rawJapaneseFamily = map[string]bool{
	"佐藤": true, "鈴木": true, "高橋": true, "田中": true, "伊藤": true, "渡辺": true, "山本": true, "中村": true,
	"小林": true, "加藤": true, "吉田": true, "山田": true, "佐々": true, "山口": true, "松本": true, "井上": true,
	"木村": true, "斎藤": true, "清水": true, "山崎": true, "森田": true, "池田": true, "橋本": true, "阿部": true,
	"石川": true, "前田": true, "藤田": true, "岡田": true, "後藤": true, "長谷": true, "村上": true, "近藤": true,
}

// caselessScript: run is written in a script without capitals in which
// names and words look alike (Arabic, Hebrew, the Indic scripts, Thai).
func caselessScript(run string) bool {
	for _, r := range run {
		if unicode.IsLetter(r) {
			return unicode.In(r, unicode.Arabic, unicode.Hebrew, unicode.Devanagari, unicode.Bengali, unicode.Tamil,
				unicode.Telugu, unicode.Gujarati, unicode.Gurmukhi, unicode.Kannada, unicode.Malayalam, unicode.Thai)
		}
	}
	return false
}

// rawPersonCue are words after which a name of a person follows.
var rawPersonCue = map[string]bool{
	"by": true, "from": true, "author": true, "authored": true, "user": true, "colleague": true, "engineer": true,
	"developer": true, "reviewer": true, "committer": true, "named": true, "called": true, "thanks": true,
	"asked": true, "told": true, "cc": true, "assignee": true, "owner": true, "maintainer": true, "contributor": true,
	"as": true, "shows": true, "showed": true, "approved": true, "reviewed": true, "for": true,
}

// mayHoldOtherScript: text has a UTF-8 lead byte of Greek, Cyrillic,
// Hebrew, Arabic, the Indic scripts, kana, ideographs or hangul; Latin
// letters with marks and typographic punctuation have none of these.
func mayHoldOtherScript(text string) bool {
	for i := 0; i < len(text); i++ {
		if c := text[i]; c >= 0xce && c <= 0xdf || c == 0xe0 || c >= 0xe3 && c <= 0xed {
			return true
		}
	}
	return false
}

// nextNonLatin: the rune at text[i] is a letter of a script other than
// Latin.
func nextNonLatin(text string, i int) bool {
	if i >= len(text) {
		return false
	}
	r, _ := utf8.DecodeRuneInString(text[i:])
	return unicode.IsLetter(r) && r >= utf8.RuneSelf && !unicode.Is(unicode.Latin, r)
}

// rawTranscripts finds a quotation of someone's own words from a private
// conversation: quoted words in the first person ("I", "my", "we") after a
// word that says a person wrote or said them, or that the words came from
// a direct message or a private thread. A tool's message ("pip prints
// 'Consider using --user'") is in no one's first person.
func rawTranscripts(text string, toks []token, add func(kind string, s, e int)) {
	cue := false
	for i := 0; i < len(toks); i++ {
		t := &toks[i]
		if t.punct == 0 && rawConversationWords.has(t) {
			cue = true
			continue
		}
		if t.punct != '"' || !cue {
			continue
		}
		j := i + 1
		first := false
		for j < len(toks) && toks[j].punct != '"' {
			if toks[j].punct == 0 && rawFirstPerson.has(&toks[j]) {
				first = true
			}
			j++
		}
		if first && j > i+2 {
			end := len(text)
			if j < len(toks) {
				end = toks[j].e
			}
			add("transcript", t.s, end)
		}
		i = j
	}
}

// rawConversationWords say that what follows is a person's words in a
// conversation.
var rawConversationWords = newWordList(
	"wrote", "said", "told", "messaged", "texted", "posted",
	"replied", "admitted", "confessed", "dm", "dms", "dm'd",
	"thread", "chat", "call", "meeting", "standup", "privately",
)

// rawFirstPerson are the words of someone speaking of themselves.
var rawFirstPerson = newWordList(
	"i", "me", "my", "mine", "we", "our", "us", "'m",
)

// rawKeyTokens finds keys in shapes that are not random base64 runs: a
// product or licence key of four or more groups of letters and digits
// ("LK-7H2Q-99ZX-4MNP-T3VA"), and a prefixed secret ("whsec_9XbLq2Tn7Rk4",
// "sk_live_…") whose body is 16 or more mixed letters and digits.
func rawKeyTokens(text string, add func(kind string, s, e int)) {
	rawWords(text, 0, func(s, e int) {
		w := strings.TrimRight(text[s:e], ".,;:!?)'\"")
		e = s + len(w)
		if len(w) < 16 {
			return
		}
		if rawGroupedKey(w) {
			add("secret", s, e)
			return
		}
		if k := strings.LastIndexByte(w, '_'); k > 0 && k <= 12 && rawMixedBody(w[k+1:]) {
			add("secret", s, e)
		}
	})
}

// rawGroupedKey: w is four or more groups of 4 to 6 letters and digits
// joined by hyphens, most groups holding both a letter and a digit.
func rawGroupedKey(w string) bool {
	groups := strings.Split(w, "-")
	if len(groups) < 4 {
		return false
	}
	mixed := 0
	for _, g := range groups {
		if len(g) < 2 || len(g) > 6 {
			return false
		}
		letters, digits := 0, 0
		for i := 0; i < len(g); i++ {
			switch c := g[i]; {
			case rawIsDigit(c):
				digits++
			case 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z':
				letters++
			default:
				return false
			}
		}
		if letters > 0 && digits > 0 {
			mixed++
		}
	}
	return mixed*2 > len(groups)
}

// rawMixedBody: s is 16 or more letters and digits with both cases and a
// digit, and no long run of lower-case letters (a word).
func rawMixedBody(s string) bool {
	if len(s) < 16 {
		return false
	}
	up, low, dig, run, longest := 0, 0, 0, 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'A' <= c && c <= 'Z':
			up++
			run = 0
		case 'a' <= c && c <= 'z':
			low++
			run++
			longest = max(longest, run)
		case rawIsDigit(c):
			dig++
			run = 0
		default:
			return false
		}
	}
	return up > 0 && low > 0 && dig > 0 && longest < 6
}

// rawUserAtHost finds a user at a machine with no domain
// ("wei.zhang@wz-thinkpad", "deploy@build-box"): an SSH key's comment or a
// prompt, naming a person and a private machine. Package versions
// ("react@18", "eslint@latest"), scoped packages ("@types/node") and the
// git user of a clone URL are not.
func rawUserAtHost(text string, add func(kind string, s, e int)) {
	for i := 1; i+1 < len(text); i++ {
		if text[i] != '@' || !rawIsWordByte(text[i-1]) {
			continue
		}
		s := i
		for s > 0 && (rawIsWordByte(text[s-1]) || text[s-1] == '.' || text[s-1] == '-') {
			s--
		}
		e := i + 1
		for e < len(text) && (rawIsWordByte(text[e]) || text[e] == '-') {
			e++
		}
		user, host := text[s:i], text[i+1:e]
		if e < len(text) && (text[e] == '.' && e+1 < len(text) && rawIsWordByte(text[e+1]) || text[e] == ':' || text[e] == '/') {
			continue // an address, a clone URL or a path: judged elsewhere
		}
		if s > 0 && (text[s-1] == '/' || text[s-1] == '@') || len(host) < 3 || rawPackageTag(host) ||
			strings.EqualFold(user, "git") || strings.EqualFold(host, "localhost") {
			continue
		}
		if rawHasLetter(user) && rawHasLetter(host) && (strings.IndexByte(host, '-') > 0 || rawHasDigit(host) || strings.IndexByte(user, '.') > 0) {
			add("email", s, e)
		}
	}
}

// rawPackageTag: a package manager's version or tag after "@".
func rawPackageTag(h string) bool {
	switch strings.ToLower(h) {
	case "latest", "next", "beta", "alpha", "canary", "stable", "lts", "main", "master", "head", "none", "dev", "rc":
		return true
	}
	return rawIsDigit(h[0]) || (h[0] == 'v' || h[0] == 'V') && len(h) > 1 && rawIsDigit(h[1]) || strings.HasPrefix(strings.ToLower(h), "sha256")
}

func rawHasLetter(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' {
			return true
		}
	}
	return false
}

func rawHasDigit(s string) bool {
	for i := 0; i < len(s); i++ {
		if rawIsDigit(s[i]) {
			return true
		}
	}
	return false
}

// rawChatHandle: text[s:e], "@" and a name, is a person's handle: not the
// scope of a package ("@types/node"), not the user part of an address, and
// not a domain ("@example.com" is judged as an address).
func rawChatHandle(text string, s, e int) bool {
	if e >= len(text) {
		return true
	}
	switch text[e] {
	case '/', '@':
		return false
	case '.':
		// "@marta.k", "@wei.zhang": a handle with a dot; "@corp.example.com"
		// ends with a domain.
		end := rawHandleEnd(text, e)
		last := text[strings.LastIndexByte(text[s:end], '.')+s+1 : end]
		return end > e && !rawTopLevel[strings.ToLower(last)]
	}
	return true
}

// rawHandleEnd extends a handle over dotted parts ("@dani.kovac"), not over
// a sentence's full stop.
func rawHandleEnd(text string, e int) int {
	for e+1 < len(text) && text[e] == '.' && rawIsWordByte(text[e+1]) {
		e++
		for e < len(text) && (rawIsWordByte(text[e]) || text[e] == '-') {
			e++
		}
	}
	return e
}

// rawTopLevel are domain endings that make "@x.y" an address, not a handle.
var rawTopLevel = map[string]bool{
	"com": true, "org": true, "net": true, "io": true, "dev": true, "app": true, "edu": true, "gov": true,
	"co": true, "uk": true, "de": true, "fr": true, "jp": true, "cn": true, "ru": true, "in": true, "ai": true,
	"local": true, "internal": true, "corp": true, "lan": true, "cloud": true, "tech": true, "info": true,
}

// rawTicketIDs finds a ticket or case id of an organisation's tracker: an
// upper-case project key, a hyphen and three digits or more ("PAY-4412",
// "OPS-4471"), or a service desk's number ("INC0012345"). The keys of
// public trackers and registries (CVE, RFC, GHSA, KEP, JDK, KAFKA…) are
// lists/rawdata.txt [publickey].
func rawTicketIDs(text string, toks []token, add func(kind string, s, e int)) {
	for i := range toks {
		t := &toks[i]
		if t.punct != 0 || !t.code || !t.cap {
			continue
		}
		w := strings.TrimRight(text[t.s:t.e], ".,;:")
		k := 0
		for k < len(w) && 'A' <= w[k] && w[k] <= 'Z' {
			k++
		}
		if k < 2 || k > 8 || rawLists.publicKey[w[:k]] {
			continue
		}
		rest := w[k:]
		digits := 0
		if rest != "" && rest[0] == '-' {
			rest = rest[1:]
		} else if !rawLists.deskPrefix[w[:k]] {
			continue // "INC0012345" yes, "ABC123" no
		}
		for digits < len(rest) && rawIsDigit(rest[digits]) {
			digits++
		}
		if digits >= 3 && digits == len(rest) {
			add("id", t.s, t.s+len(w))
		}
	}
}

// rawAssignedSecrets finds a secret given as a value: an environment
// variable or a setting whose name says it holds one ("PGPASSWORD=…",
// "secret.key=…", `password="…"`), and the password of a command that
// takes it after a short flag ("redis-cli -a …", "docker login -u x -p
// …"). A placeholder ("$PGPASSWORD", "<password>", "***") or a documented
// default holds none.
func rawAssignedSecrets(text string, add func(kind string, s, e int)) {
	for i := 1; i+1 < len(text); i++ {
		if text[i] != '=' {
			continue
		}
		k := i
		for k > 0 && (rawIsWordByte(text[k-1]) || text[k-1] == '.' || text[k-1] == '-') {
			k--
		}
		if k == i || !rawSecretName(strings.ToLower(text[k:i])) {
			continue
		}
		vs, ve := rawValueAt(text, i+1)
		if v := strings.Trim(text[vs:ve], `'"`); ve > vs && rawCredValue(v, true) {
			add("secret", k, ve)
		}
	}
	for _, cmd := range [...]struct{ tool, flag string }{{"redis-cli", " -a "}, {"login", " -p "}, {"login", "`-p "}, {"mysql", " -p "}, {"mosquitto_pub", " -P "}, {"mosquitto_sub", " -P "}, {"signtool", " /p "}} {
		at := strings.Index(text, cmd.tool)
		if at < 0 {
			continue
		}
		f := strings.Index(text[at:], cmd.flag)
		if f < 0 {
			continue
		}
		vs, ve := rawValueAt(text, at+f+len(cmd.flag))
		if v := strings.Trim(text[vs:ve], `'"`); ve > vs && rawCredValue(v, true) && !rawAllDigits(v) {
			add("secret", at+f+1, ve)
		}
	}
}

// rawSecretName: a variable or setting name that holds a secret.
func rawSecretName(name string) bool {
	for _, w := range [...]string{"password", "passwd", "passphrase", "secret", "token", "apikey", "api_key", "api-key", "access_key", "access.key", "private_key", "requirepass"} {
		if strings.Contains(name, w) {
			return true
		}
	}
	return strings.HasSuffix(name, "_pass") || strings.HasSuffix(name, ".pass") || name == "pass" || name == "pwd"
}

// rawValueAt returns the value that starts at text[i]: a quoted string or
// a run up to white space, less the sentence's own punctuation.
func rawValueAt(text string, i int) (int, int) {
	if i >= len(text) {
		return i, i
	}
	if q := text[i]; q == '\'' || q == '"' {
		if j := strings.IndexByte(text[i+1:], q); j >= 0 {
			return i, i + j + 2
		}
	}
	j := i
	for j < len(text) && text[j] != ' ' && text[j] != '`' && text[j] != '\'' && text[j] != '"' && text[j] != ')' {
		j++
	}
	for j > i && strings.IndexByte(".,;:", text[j-1]) >= 0 {
		j--
	}
	return i, j
}

// rawOnsets are the pairs of consonants English words start with; a word
// the lexicon does not know that starts with another pair ("jmorales",
// "mwozniak", "tkimura") reads as an initial and a family name.
var rawOnsets = func() map[string]bool {
	m := map[string]bool{}
	for _, p := range strings.Fields("bl br ch cl cr cz dr dw fl fr gh gl gn gr kh kl kn kr ph pl pn pr ps pt rh sc sh sk sl sm sn sp sq st sv sw th tr ts tw wh wr zh") {
		m[p] = true
	}
	return m
}()

func rawVowel(c byte) bool { return strings.IndexByte("aeiouy", c) >= 0 }

// rawInitialAndName: w, in lower case letters, reads as an initial and a
// family name: two consonants no English word starts with, then a vowel
// within two letters, five letters or more, not a word or tool that
// lists/rawdata.txt [tool] or the lexicon knows.
func rawInitialAndName(w string) bool {
	if len(w) < 5 || len(w) > 16 || rawVowel(w[0]) || rawVowel(w[1]) || rawOnsets[w[:2]] || w[0] == 'x' || w[0] == 'q' {
		return false
	}
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	// The family name starts as names do: a consonant and a vowel
	// ("morales", "kimura"), or an onset and a vowel ("krishnan").
	rest := w[1:]
	if !rawVowel(rest[1]) && !(rawOnsets[rest[:2]] && rawVowel(rest[2])) {
		return false
	}
	if rawLists.tool[w] || rawKnownWord(w) || englishForm(w) || lexicon.get(rest)&cKnown != 0 || englishForm(rest) {
		return false
	}
	// "fsevents", "xdotool": a tool's name ends with an English word.
	for k := 1; k+4 <= len(rest); k++ {
		if lexicon.get(rest[k:])&cKnown != 0 && len(rest)-k >= 4 {
			return false
		}
	}
	return true
}

// rawNamedValues finds a secret or an id named by the words before it: a
// password written in prose ("the Wi-Fi password kettle-Birch-42", "with
// password wohnzimmer55"), an id after "team id", "client id", "user id"
// ("team id 7QX4K2M9LB"), a chat's thread id ("19:a7f3…@thread.tacv2"), a
// GKE context ("gke_globex-prod-3310_europe-west1_payments") and the
// domain parts of a directory name ("DC=meridian-labs,DC=local").
func rawNamedValues(text string, toks []token, has *byteSet, add func(kind string, s, e int)) {
	for i := 0; i+1 < len(toks); i++ {
		t := &toks[i]
		if t.punct != 0 || len(t.w) < 2 || len(t.w) > 10 || t.w[0] != 'p' && t.w != "id" {
			continue
		}
		secretWord := t.w == "password" || t.w == "passphrase" || t.w == "passcode" || t.w == "pin"
		if !secretWord && !(t.w == "id" && i > 0 && rawIDOwner[toks[i-1].w]) {
			continue // most words starting with p
		}
		next := i + 1
		if next < len(toks) && (toks[next].w == "is" || toks[next].punct == ':') {
			next++
		}
		if next >= len(toks) || toks[next].punct != 0 {
			continue
		}
		v := strings.TrimRight(text[toks[next].s:toks[next].e], ".,;:")
		switch {
		case t.w == "password" || t.w == "passphrase" || t.w == "passcode" || t.w == "pin" && rawHasDigit(v):
			if rawSecretLooking(v) {
				add("secret", toks[next].s, toks[next].s+len(v))
			}
		case t.w == "id" && i > 0 && rawIDOwner[toks[i-1].w]:
			if len(v) >= 6 && rawHasDigit(v) && rawHasLetter(v) || len(v) >= 6 && rawAllDigits(v) {
				add("id", toks[next].s, toks[next].s+len(v))
			}
		}
	}
	for _, marker := range [...]string{"@thread.", "gke_", "DC="} {
		if !has.has(marker[0]) || !has.has(marker[len(marker)-1]) {
			continue
		}
		for from := 0; ; {
			k := strings.Index(text[from:], marker)
			if k < 0 {
				break
			}
			k += from
			s, e := k, k+len(marker)
			for s > 0 && text[s-1] != ' ' && text[s-1] != '`' && text[s-1] != '\'' && text[s-1] != '"' {
				s--
			}
			for e < len(text) && text[e] != ' ' && text[e] != '`' && text[e] != '\'' && text[e] != '"' {
				e++
			}
			e = rawTrimEnd(text, s, e)
			word := text[s:e]
			switch marker {
			case "DC=":
				if !strings.Contains(strings.ToLower(word), "dc=example") {
					add("host", s, e)
				}
			case "gke_":
				if strings.Count(word, "_") >= 3 {
					add("id", s, e)
				}
			default:
				add("id", s, e)
			}
			from = e
			if from <= k {
				from = k + len(marker)
			}
		}
	}
}

// rawIDOwner are the words before "id" that make the next word one
// account's, team's or person's id.
var rawIDOwner = map[string]bool{
	"team": true, "user": true, "client": true, "tenant": true, "account": true, "owner": true,
	"member": true, "org": true, "organization": true, "organisation": true, "subscription": true, "app": true,
}

// rawSecretLooking: v, a word after "password", looks like one rather
// than a word of the sentence: digits, mixed case, or joined parts.
func rawSecretLooking(v string) bool {
	if len(v) < 6 || !rawCredValue(v, true) {
		return false
	}
	up, low := false, false
	for i := 0; i < len(v); i++ {
		c := v[i]
		up = up || 'A' <= c && c <= 'Z'
		low = low || 'a' <= c && c <= 'z'
	}
	return rawHasDigit(v) || up && low && strings.ContainsAny(v, "-_!") || strings.ContainsAny(v, "!@#$%^&*")
}

// rawChannel: "#platform" in "ask in #platform", "the #infra-oncall
// channel": an organisation's chat channel, which names its teams. A
// number ("PR #481"), a colour ("#fff" has no cue) and a C directive
// ("#include") are not channels.
var rawChannel = regexp.MustCompile(`(?:^|[\s(\["'])(#[a-z][a-z0-9_\-]{1,79})\b`)

// rawChannelCue are the words before a channel's name.
var rawChannelCue = set("in", "on", "to", "into", "from", "via", "the", "our", "their", "channel")

// rawChannels finds chat channels in text.
func rawChannels(text string, add func(kind string, s, e int)) {
	for _, m := range rawChannel.FindAllStringSubmatchIndex(text, -1) {
		s, e := m[2], m[3]
		if w := text[s+1 : e]; rawDirective[w] || rawHexColour(w) {
			continue
		}
		before := strings.Fields(strings.ToLower(text[:s]))
		after := strings.Fields(strings.ToLower(text[e:]))
		if len(before) > 0 && rawChannelCue[strings.Trim(before[len(before)-1], "(\"',")] ||
			len(after) > 0 && strings.HasPrefix(after[0], "channel") {
			add("channel", s, e)
		}
	}
}

// rawDirective are the C preprocessor's and a few languages' '#' words.
var rawDirective = set("include", "define", "undef", "if", "ifdef", "ifndef", "else", "elif", "endif", "pragma",
	"error", "warning", "region", "endregion", "import", "line")

// rawHexColour: "fff", "1e1e2e": a colour, not a channel.
func rawHexColour(w string) bool {
	if n := len(w); n != 3 && n != 4 && n != 6 && n != 8 {
		return false
	}
	for i := 0; i < len(w); i++ {
		if c := w[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
