package protocol

import (
	"encoding/hex"
	"hash"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/crypto/blake2b"
)

// LessonHash is the lesson's identity across memories: hex BLAKE2b-128 over
// kind immediately followed by Norm(text) (SPEC §4).
func LessonHash(kind, text string) string {
	h := lessonHashOfNorm(kind, Norm(text))
	return string(h[:])
}

// lessonHashOfNorm is LessonHash of a text already normalised (norm is
// Norm(text)), in hex.
func lessonHashOfNorm(kind, norm string) [32]byte {
	h := lessonHashers.Get().(hash.Hash)
	defer lessonHashers.Put(h)
	h.Reset()
	buf := make([]byte, 0, len(kind)+len(norm))
	buf = append(append(buf, kind...), norm...)
	h.Write(buf)
	var sum [16]byte
	var out [32]byte
	hex.Encode(out[:], h.Sum(sum[:0]))
	return out
}

// lessonHashers are BLAKE2b-128 states for lessonHashOfNorm; verifying
// every received lesson would otherwise allocate one each.
var lessonHashers = sync.Pool{New: func() any {
	h, _ := blake2b.New(16, nil) // cannot fail for size 16 without a key
	return h
}}

// Norm is Python's `" ".join(text.lower().split())`: full Unicode lowercase
// (with the special cases Python applies) and splitting on Python's notion of
// white space. Any difference here would split one lesson into two hashes.
func Norm(text string) string {
	var b strings.Builder
	b.Grow(len(text))
	pendingSpace := false
	for i, r := range text {
		if isPySpace(r) {
			pendingSpace = b.Len() > 0
			continue
		}
		if pendingSpace {
			b.WriteByte(' ')
			pendingSpace = false
		}
		if r < utf8.RuneSelf {
			if 'A' <= r && r <= 'Z' {
				r += 'a' - 'A'
			}
			b.WriteByte(byte(r))
			continue
		}
		writePyLower(&b, text, i, r)
	}
	return b.String()
}

// writePyLower writes the lowercase of r as Python's str.lower does: the
// unconditional full mappings of SpecialCasing.txt and the Final_Sigma rule.
func writePyLower(b *strings.Builder, text string, i int, r rune) {
	switch r {
	case 'İ': // U+0130 lowercases to i + combining dot above
		b.WriteString("i\u0307")
		return
	case 'Σ':
		if finalSigma(text, i) {
			b.WriteRune('ς')
		} else {
			b.WriteRune('σ')
		}
		return
	}
	b.WriteRune(unicode.ToLower(r))
}

// finalSigma reports whether the capital sigma at byte i ends a word: a cased
// letter precedes it and none follows, skipping case-ignorable characters.
func finalSigma(text string, i int) bool {
	before := false
	for j := i; j > 0; {
		r, size := utf8.DecodeLastRuneInString(text[:j])
		j -= size
		if isCaseIgnorable(r) {
			continue
		}
		before = isCased(r)
		break
	}
	if !before {
		return false
	}
	for j := i + len("Σ"); j < len(text); {
		r, size := utf8.DecodeRuneInString(text[j:])
		j += size
		if isCaseIgnorable(r) {
			continue
		}
		return !isCased(r)
	}
	return true
}

func isCased(r rune) bool {
	return unicode.IsUpper(r) || unicode.IsLower(r) || unicode.IsTitle(r) ||
		unicode.Is(unicode.Other_Lowercase, r) || unicode.Is(unicode.Other_Uppercase, r)
}

func isCaseIgnorable(r rune) bool {
	switch r {
	case '\'', '.', ':', '^', '`', '\u00b7', '\u0387', '\u055f', '\u05f4', '\u2018', '\u2019',
		'\u2024', '\u2027', '\ufe13', '\ufe52', '\ufe55', '\uff07', '\uff0e', '\uff1a':
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk)
}

// isPySpace is Python's str.isspace for one code point: bidirectional class
// WS, B or S, or general category Zs.
func isPySpace(r rune) bool {
	switch {
	case r == ' ' || ('\t' <= r && r <= '\r') || ('\x1c' <= r && r <= '\x1f'):
		return true
	case r < 0x80:
		return false
	case r == 0x85 || r == 0xa0 || r == 0x1680 || (0x2000 <= r && r <= 0x200a) ||
		r == 0x2028 || r == 0x2029 || r == 0x202f || r == 0x205f || r == 0x3000:
		return true
	}
	return false
}
