// Package display is the one place where text from a memory (lesson texts,
// revocation reasons, event fields, peer-provided names and errors, unknown
// record members) is made safe to show to a person or an agent: no terminal
// escape sequence, control character (C0, DEL, C1), bidi override or other
// invisible format character reaches a screen or a prompt raw (SPEC §6,
// "Text the checks can read", "Text beyond the lesson"). A received text may
// be old, may predate a check, or may come by a path that never checked it,
// so every output path escapes, whatever the store holds.
//
// It imports only the standard library, so that node, node/mcp and
// cmd/remem can all use it.
package display

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Unsafe reports whether r must not reach a screen or a prompt raw: a
// control character (C0, DEL, C1), a format character (Cf: the bidi
// embeddings, overrides and isolates U+202A–202E and U+2066–2069, zero-width
// characters), a line or paragraph separator, a private-use, surrogate or
// unassigned code point. Only graphic characters and the ASCII space pass.
func Unsafe(r rune) bool {
	return r != ' ' && !unicode.IsGraphic(r)
}

// Text is s as one line of printable text: every unsafe character, line
// breaks and tabs included, written as a Go escape (\x1b, \n, \u202e), and
// every byte that is not UTF-8 as \xNN. A text with nothing unsafe is
// returned as it is, so ordinary lessons read unchanged.
func Text(s string) string {
	i := unsafeAt(s)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for j := i; j < len(s); {
		r, n := utf8.DecodeRuneInString(s[j:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x`)
			b.WriteString(hex2(s[j]))
		case Unsafe(r):
			b.WriteString(escapeRune(r))
		default:
			b.WriteString(s[j : j+n])
		}
		j += n
	}
	return b.String()
}

// Lines is Text for a text of several lines, such as an error message a
// command prints: line breaks (\n) stay, everything else unsafe is escaped.
func Lines(s string) string {
	if unsafeAt(s) < 0 {
		return s
	}
	parts := strings.Split(s, "\n")
	for i, p := range parts {
		parts[i] = Text(p)
	}
	return strings.Join(parts, "\n")
}

// Texts is Text of each of ss (names, scopes, layers), nil for nil.
func Texts(ss []string) []string {
	if ss == nil {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = Text(s)
	}
	return out
}

// Quote is s as escaped data, always in double quotes, as Go's %q writes
// it but with every non-graphic character escaped: for what a person may
// see only as data, such as a record's unknown members.
func Quote(s string) string { return strconv.QuoteToGraphic(s) }

// unsafeAt is the index of the first unsafe character or bad byte of s, or -1.
func unsafeAt(s string) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < ' ' || c == 0x7f {
				return i
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || Unsafe(r) {
			return i
		}
		i += n
	}
	return -1
}

// escapeRune writes an unsafe r as Go writes it in a quoted string: \n,
// \t, \r, \a, \b, \f, \v by name, else \xNN below U+0080, \uNNNN,
// \UNNNNNNNN.
func escapeRune(r rune) string {
	q := strconv.QuoteRuneToASCII(r) // 'x' with the escape inside
	return q[1 : len(q)-1]
}

func hex2(b byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[b>>4], digits[b&0xf]})
}
