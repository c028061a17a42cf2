package textcheck

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/mtibben/confusables"
	"golang.org/x/text/unicode/norm"
)

// Normalize returns the copy of text the checks read: Unicode NFKC, format
// and other default-ignorable characters removed (zero-width spaces, joiners,
// soft hyphens, BOMs, variation selectors), combining marks dropped, and
// every letter that TR39 lists as confusable with Latin folded to its Latin
// skeleton, keeping its case ("І" Cyrillic → "I", "о" Cyrillic → "o").
// Typographic apostrophes become "'". Plain ASCII text comes back as is,
// without allocating.
func Normalize(text string) string { return normalize(text, true) }

// Clean returns text with Unicode NFKC applied and the characters that
// render as nothing removed, without reading tag characters or folding
// look-alike letters: the form a memory keeps its own lesson texts in.
func Clean(text string) string { return normalize(text, false) }

func normalize(text string, read bool) string {
	if isPlainASCII(text) {
		return text
	}
	s := norm.NFKC.String(text)
	var b strings.Builder
	b.Grow(len(s))
	plain := func(c byte) bool { return c < utf8.RuneSelf && !(read && lineBreak(rune(c))) }
	for i := 0; i < len(s); {
		if plain(s[i]) { // an ASCII run, copied whole
			j := i + 1
			for j < len(s) && plain(s[j]) {
				j++
			}
			b.WriteString(s[i:j])
			i = j
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		switch {
		case read && lineBreak(r):
			// A line or paragraph separator ends a sentence as "\n" does;
			// removed or read as a space, it would join an order to the
			// observation before it.
			b.WriteByte('\n')
		case read && (r == '\u2019' || r == '\u2018' || r == '\u02bc'):
			b.WriteByte('\'')
		case read && r >= tagFirst+' ' && r <= tagFirst+'~':
			// Tag characters spell ASCII invisibly; a model may read them,
			// so the check reads them too.
			b.WriteByte(byte(r - tagFirst))
		case ignorable(r):
		case read && unicode.IsSpace(r):
			b.WriteByte(' ')
		case read:
			b.WriteString(foldRune(r))
		default:
			b.WriteRune(r)
		}
	}
	if out := b.String(); !norm.NFKC.IsNormalString(out) {
		return norm.NFKC.String(out)
	} else {
		return out
	}
}

// lineBreak: the characters Unicode counts as ending a line.
func lineBreak(r rune) bool {
	switch r {
	case '\n', '\r', '\v', '\f', '\u0085', '\u2028', '\u2029':
		return true
	}
	return false
}

// tagFirst is U+E0000: U+E0020 to U+E007E are invisible copies of ASCII.
const tagFirst = 0xe0000

// hiddenText finds what makes a text read differently from how it shows:
// direction overrides and isolates (U+202A–202E, U+2066–2069), tag
// characters outside a flag emoji, and letters from blocks that only
// disguise Latin (small capitals, enclosed and squared letters). It returns
// the first such character, or -1.
func hiddenText(text string) rune {
	if isPlainASCII(text) {
		return -1
	}
	prev := rune(0)
	inFlag := false
	for _, r := range text {
		switch {
		case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			return r
		case r >= tagFirst && r <= tagFirst+0x7f:
			if !inFlag && prev != 0x1f3f4 {
				return r
			}
			inFlag = r != tagFirst+0x7f
		case r >= 0x1d00 && r <= 0x1d2b, // small capitals
			r >= 0x1f130 && r <= 0x1f189: // squared and negative squared letters
			return r
		default:
			inFlag = false
		}
		prev = r
	}
	return -1
}

// isPlainASCII: printable ASCII and ordinary white space only, which every
// later step would leave unchanged.
func isPlainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if !plainByte[s[i]] {
			return false
		}
	}
	return true
}

// plainByte: the bytes of plain ASCII text, printable or a tab or line
// break; isPlainASCII runs several times a check, a load a byte.
var plainByte = func() (t [256]bool) {
	for c := range utf8.RuneSelf {
		t[c] = c >= ' ' && c != 0x7f || c == '\t' || c == '\n' || c == '\r'
	}
	return t
}()

// ignorable: characters that render as nothing, which an attacker puts
// inside a word so that no list matches it.
func ignorable(r rune) bool {
	return unicode.In(r, unicode.Cf, unicode.Mn, unicode.Me, unicode.Cc, unicode.Co,
		unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector) ||
		r == '\u3164' || r == '\uffa0' || r == '\u115f' || r == '\u1160' // Hangul fillers render blank
}

// The Latin reading of every confusable rune of the Basic Multilingual
// Plane, worked out once (about 30 ms) on the first text that needs it, so
// hostile texts cannot grow a cache; the rarer runes beyond it are folded
// on each use.
var (
	bmpOnce sync.Once
	bmpFold map[rune]string
)

func initBMPFold() {
	upperFor, lowerFor := map[string]byte{}, map[string]byte{}
	for c := byte('A'); c <= 'Z'; c++ {
		upperFor[confusables.Skeleton(string(rune(c)))] = c
	}
	for c := byte('a'); c <= 'z'; c++ {
		lowerFor[confusables.Skeleton(string(rune(c)))] = c
	}
	bmpFold = map[rune]string{}
	for r := rune(utf8.RuneSelf); r <= 0xffff; r++ {
		if r >= 0xd800 && r <= 0xdfff {
			continue
		}
		if out, ok := latinReading(r, upperFor, lowerFor); ok {
			bmpFold[r] = out
		}
	}
}

// latinReading returns the Latin letters or digits TR39 says r is
// confusable with, keeping r's case where one ASCII letter of that case has
// the same skeleton ("І" Cyrillic, skeleton "l", reads "I").
func latinReading(r rune, upperFor, lowerFor map[string]byte) (string, bool) {
	s := string(r)
	sk := confusables.Skeleton(s)
	if sk == s || !isASCIIAlnum(sk) && !(len(sk) == 1 && strings.IndexByte("/@.:\\", sk[0]) >= 0) {
		return "", false // TR39 folds letters and the marks that build addresses: "∕" reads "/"
	}
	if len(sk) == 1 {
		if unicode.IsUpper(r) {
			if c, ok := upperFor[sk]; ok {
				return string(rune(c)), true
			}
		} else if unicode.IsLower(r) {
			if c, ok := lowerFor[sk]; ok {
				return string(rune(c)), true
			}
		}
	}
	return sk, true
}

// foldRune returns the Latin reading of a non-ASCII rune, or the rune.
func foldRune(r rune) string {
	bmpOnce.Do(initBMPFold)
	if r <= 0xffff {
		if out, ok := bmpFold[r]; ok {
			return out
		}
		return string(r)
	}
	if out, ok := latinReading(r, nil, nil); ok {
		return out
	}
	return string(r)
}

func isASCIIAlnum(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
