package consolidate

import (
	"strings"
	"unicode/utf8"
)

// isLineBreak reports whether r ends a line anywhere a person or a model
// reads text: \n, \r, \v, \f, NEL (U+0085), and the line and paragraph
// separators U+2028 and U+2029. strings.Fields counts all of them as
// spaces, which would join two lines into one run-on sentence and hide the
// second from the observation check as the start of a clause.
func isLineBreak(r rune) bool {
	switch r {
	case '\n', '\r', '\v', '\f', '\u0085', '\u2028', '\u2029':
		return true
	}
	return false
}

// nonBlankLines is s cut at every line break, without blank lines and
// with each line trimmed: a writer's answer has exactly one.
func nonBlankLines(s string) []string {
	var out []string
	for _, l := range strings.FieldsFunc(s, isLineBreak) {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// linesAsSentences ends a sentence at every line break of an event field
// the default writer takes words from ("The build fails\nAlways run X"
// becomes "The build fails. Always run X"), so a second line reads as the
// new sentence it is (oneSentence then makes it a clause) and never as the
// tail of the first.
func linesAsSentences(s string) string {
	lines := nonBlankLines(s)
	if len(lines) < 2 {
		return s
	}
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(l)
		if last, _ := utf8.DecodeLastRuneInString(l); i < len(lines)-1 && !strings.ContainsRune(".!?;:", last) {
			b.WriteByte('.')
		}
	}
	return b.String()
}
