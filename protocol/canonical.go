package protocol

import (
	"math"
	"strconv"
	"strings"
)

// member is one top-level member of a record being written.
type member struct {
	name  string
	value string // already encoded JSON
}

// encodeObject writes members in code point order of their names, with the
// separators of Python's json.dumps(sort_keys=True, separators=(",", ":")).
// The names used by records are ASCII, so byte order is code point order.
func encodeObject(members []member) []byte {
	sortMembers(members)
	n := 2
	for _, m := range members {
		n += len(m.name) + len(m.value) + 4
	}
	out := make([]byte, 0, n)
	out = append(out, '{')
	for i, m := range members {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, '"')
		out = append(out, m.name...)
		out = append(out, '"', ':')
		out = append(out, m.value...)
	}
	return append(out, '}')
}

func sortMembers(ms []member) {
	for i := 1; i < len(ms); i++ {
		for j := i; j > 0 && ms[j].name < ms[j-1].name; j-- {
			ms[j], ms[j-1] = ms[j-1], ms[j]
		}
	}
}

// EncodeString writes s as Python's json.dumps(ensure_ascii=False) does:
// raw UTF-8, escaping only `"`, `\` and control characters below U+0020.
// s must be valid UTF-8.
func EncodeString(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b.WriteString(s[start:i])
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			const hexdigits = "0123456789abcdef"
			b.WriteString(`\u00`)
			b.WriteByte(hexdigits[c>>4])
			b.WriteByte(hexdigits[c&0xf])
		}
		start = i + 1
	}
	b.WriteString(s[start:])
	b.WriteByte('"')
	return b.String()
}

// EncodeFloat writes f as Python's repr does: the shortest string that
// round-trips, exponent form when the decimal exponent is below -4 or at
// least 16, and integral values keep ".0".
func EncodeFloat(f float64) string {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		// Python writes Infinity/NaN, which is not JSON; records never hold them.
		return "null"
	}
	if f == 0 {
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64)
	mant, exp, _ := strings.Cut(e, "e")
	x, _ := strconv.Atoi(exp)
	if x < -4 || x >= 16 {
		return mant + "e" + exp
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsRune(s, '.') {
		s += ".0"
	}
	return s
}

func encodeStrings(ss []string) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, s := range ss {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(EncodeString(s))
	}
	b.WriteByte(']')
	return b.String()
}
