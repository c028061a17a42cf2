package protocol

import (
	"bytes"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// topMember locates one member of the top-level object in the line.
type topMember struct {
	name       string // decoded name
	start      int    // offset of the opening quote of the name
	valueStart int
	valueEnd   int // exclusive
}

// scanError is a parse failure with the reason it maps to.
type scanError struct {
	reason Reason
	detail string
}

// scanner validates one JSON text strictly (RFC 8259, as Python's json.loads
// reads it, but without NaN/Infinity) and records the top-level members. It
// never builds a tree: records are verified from the bytes they arrived as.
type scanner struct {
	data []byte
	pos  int
	err  *scanError
}

const maxDepth = 64

func (s *scanner) fail(reason Reason, detail string) {
	if s.err == nil {
		s.err = &scanError{reason: reason, detail: detail + " at byte " + strconv.Itoa(s.pos)}
	}
}

func (s *scanner) skipSpace() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// scanTop parses the whole line as one object and returns its members
// appended to members.
func (s *scanner) scanTop(members []topMember) []topMember {
	s.skipSpace()
	if s.pos >= len(s.data) {
		s.fail(ReasonJSON, "empty line")
		return members
	}
	if s.data[s.pos] != '{' {
		// Tell "valid JSON but not an object" from garbage.
		s.value(1)
		if s.err == nil {
			s.skipSpace()
			if s.pos == len(s.data) {
				s.err = &scanError{reason: ReasonNotObject, detail: "the line is JSON but not an object"}
				return members
			}
			s.fail(ReasonJSON, "trailing data")
		}
		return members
	}
	members = s.topObject(members)
	if s.err != nil {
		return members
	}
	s.skipSpace()
	if s.pos != len(s.data) {
		s.fail(ReasonJSON, "trailing data after the object")
	}
	return members
}

func (s *scanner) value(depth int) {
	if depth > maxDepth {
		s.fail(ReasonJSON, "nested too deeply")
		return
	}
	s.skipSpace()
	if s.pos >= len(s.data) {
		s.fail(ReasonJSON, "unexpected end of line")
		return
	}
	switch c := s.data[s.pos]; {
	case c == '{':
		s.object(depth)
	case c == '[':
		s.array(depth)
	case c == '"':
		s.skipStr()
	case c == '-' || ('0' <= c && c <= '9'):
		s.number()
	case c == 't':
		s.literal("true")
	case c == 'f':
		s.literal("false")
	case c == 'n':
		s.literal("null")
	default:
		s.fail(ReasonJSON, "unexpected character "+strconv.QuoteRune(rune(c)))
	}
}

func (s *scanner) literal(word string) {
	if len(s.data)-s.pos < len(word) || string(s.data[s.pos:s.pos+len(word)]) != word {
		s.fail(ReasonJSON, "invalid literal")
		return
	}
	s.pos += len(word)
}

// topObject scans the top-level object and returns its members appended
// to members. It is apart from object, which nested values recurse
// through, and the members are passed and returned rather than kept in s,
// so that a caller's array for them can stay on its stack.
func (s *scanner) topObject(members []topMember) []topMember {
	s.pos++ // '{'
	s.skipSpace()
	if s.pos < len(s.data) && s.data[s.pos] == '}' {
		s.pos++
		return members
	}
	for s.err == nil {
		start, name, ok := s.memberName()
		if !ok {
			return members
		}
		for _, m := range members {
			if m.name == name {
				s.fail(ReasonDuplicateKey, "duplicate member "+strconv.Quote(name))
				return members
			}
		}
		valueStart, ok := s.memberValue(0)
		if !ok {
			return members
		}
		members = append(members, topMember{name: name, start: start, valueStart: valueStart, valueEnd: s.pos})
		if !s.memberEnd() {
			return members
		}
	}
	return members
}

func (s *scanner) object(depth int) {
	s.pos++ // '{'
	var names []string
	s.skipSpace()
	if s.pos < len(s.data) && s.data[s.pos] == '}' {
		s.pos++
		return
	}
	for s.err == nil {
		_, name, ok := s.memberName()
		if !ok {
			return
		}
		for _, n := range names {
			if n == name {
				s.fail(ReasonDuplicateKey, "duplicate nested member "+strconv.Quote(name))
				return
			}
		}
		names = append(names, name)
		if _, ok := s.memberValue(depth); !ok {
			return
		}
		if !s.memberEnd() {
			return
		}
	}
}

// memberName scans a member's name, returning where it starts.
func (s *scanner) memberName() (int, string, bool) {
	s.skipSpace()
	if s.pos >= len(s.data) || s.data[s.pos] != '"' {
		s.fail(ReasonJSON, "expected a member name")
		return 0, "", false
	}
	start := s.pos
	name, ok := s.name()
	return start, name, ok
}

// memberValue scans the ':' and the value of a member of an object at
// depth, returning where the value starts.
func (s *scanner) memberValue(depth int) (int, bool) {
	s.skipSpace()
	if s.pos >= len(s.data) || s.data[s.pos] != ':' {
		s.fail(ReasonJSON, "expected ':'")
		return 0, false
	}
	s.pos++
	s.skipSpace()
	valueStart := s.pos
	s.value(depth + 1)
	return valueStart, s.err == nil
}

// memberEnd scans what follows a member: ',' (true: another member comes)
// or the closing '}' (false).
func (s *scanner) memberEnd() bool {
	s.skipSpace()
	if s.pos >= len(s.data) {
		s.fail(ReasonJSON, "unexpected end of line in an object")
		return false
	}
	switch s.data[s.pos] {
	case ',':
		s.pos++
		return true
	case '}':
		s.pos++
		return false
	default:
		s.fail(ReasonJSON, "expected ',' or '}'")
		return false
	}
}

func (s *scanner) array(depth int) {
	s.pos++ // '['
	s.skipSpace()
	if s.pos < len(s.data) && s.data[s.pos] == ']' {
		s.pos++
		return
	}
	for s.err == nil {
		s.value(depth + 1)
		if s.err != nil {
			return
		}
		s.skipSpace()
		if s.pos >= len(s.data) {
			s.fail(ReasonJSON, "unexpected end of line in an array")
			return
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
		case ']':
			s.pos++
			return
		default:
			s.fail(ReasonJSON, "expected ',' or ']'")
			return
		}
	}
}

func (s *scanner) number() {
	start := s.pos
	if s.data[s.pos] == '-' {
		s.pos++
	}
	digits := func() int {
		n := 0
		for s.pos < len(s.data) && s.data[s.pos] >= '0' && s.data[s.pos] <= '9' {
			s.pos++
			n++
		}
		return n
	}
	if s.pos < len(s.data) && s.data[s.pos] == '0' {
		s.pos++
	} else if digits() == 0 {
		s.fail(ReasonJSON, "invalid number")
		return
	}
	if s.pos < len(s.data) && s.data[s.pos] == '.' {
		s.pos++
		if digits() == 0 {
			s.fail(ReasonJSON, "invalid number")
			return
		}
	}
	if s.pos < len(s.data) && (s.data[s.pos] == 'e' || s.data[s.pos] == 'E') {
		s.pos++
		if s.pos < len(s.data) && (s.data[s.pos] == '+' || s.data[s.pos] == '-') {
			s.pos++
		}
		if digits() == 0 {
			s.fail(ReasonJSON, "invalid number")
			return
		}
	}
	_ = start
}

// str scans a string starting at its opening quote and returns it decoded.
func (s *scanner) str() (string, bool) {
	s.pos++ // opening quote
	start := s.pos
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		switch {
		case c == '"':
			v := string(s.data[start:s.pos])
			s.pos++
			return v, true
		case c == '\\':
			return s.strSlow(start)
		case c < 0x20:
			s.fail(ReasonJSON, "control character in a string")
			return "", false
		}
		s.pos++
	}
	s.fail(ReasonJSON, "unterminated string")
	return "", false
}

// skipStr validates a string starting at its opening quote as str does,
// without decoding it when it holds no escape.
func (s *scanner) skipStr() {
	s.pos++ // opening quote
	start := s.pos
	// The closing quote is found at word speed; the bytes before it are
	// then checked for what str treats apart.
	end := bytes.IndexByte(s.data[s.pos:], '"')
	if end < 0 {
		end = len(s.data)
	} else {
		end += s.pos
	}
	for i := s.pos; i < end; i++ {
		if c := s.data[i]; c < 0x20 || c == '\\' {
			s.pos = i
			if c == '\\' {
				s.strSlow(start)
			} else {
				s.fail(ReasonJSON, "control character in a string")
			}
			return
		}
	}
	s.pos = end
	if end == len(s.data) {
		s.fail(ReasonJSON, "unterminated string")
		return
	}
	s.pos++
}

// name scans a member name as str does; the names of record fields come
// back without a copy.
func (s *scanner) name() (string, bool) {
	start := s.pos + 1
	s.skipStr()
	if s.err != nil {
		return "", false
	}
	raw := s.data[start : s.pos-1]
	switch string(raw) {
	case "v":
		return "v", true
	case "origin":
		return "origin", true
	case "key":
		return "key", true
	case "sig":
		return "sig", true
	case "hash":
		return "hash", true
	case "kind":
		return "kind", true
	case "text":
		return "text", true
	case "id":
		return "id", true
	case "seen":
		return "seen", true
	case "strength":
		return "strength", true
	case "updated":
		return "updated", true
	case "parents":
		return "parents", true
	case "confirm":
		return "confirm", true
	case "revoke":
		return "revoke", true
	case "reason":
		return "reason", true
	case "at":
		return "at", true
	}
	s.pos = start - 1
	return s.str()
}

// strSlow decodes a string holding escapes, continuing from s.pos.
func (s *scanner) strSlow(start int) (string, bool) {
	buf := append([]byte(nil), s.data[start:s.pos]...)
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		switch {
		case c == '"':
			s.pos++
			return string(buf), true
		case c < 0x20:
			s.fail(ReasonJSON, "control character in a string")
			return "", false
		case c != '\\':
			buf = append(buf, c)
			s.pos++
			continue
		}
		s.pos++
		if s.pos >= len(s.data) {
			break
		}
		e := s.data[s.pos]
		s.pos++
		switch e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := s.hex4()
			if !ok {
				return "", false
			}
			if utf16.IsSurrogate(r) {
				// Only a high surrogate followed by an escaped low one is text.
				if r < 0xdc00 && s.pos+1 < len(s.data) && s.data[s.pos] == '\\' && s.data[s.pos+1] == 'u' {
					s.pos += 2
					r2, ok := s.hex4()
					if !ok {
						return "", false
					}
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						buf = utf8.AppendRune(buf, d)
						continue
					}
				}
				s.fail(ReasonJSON, "lone surrogate escape in a string")
				return "", false
			}
			buf = utf8.AppendRune(buf, r)
		default:
			s.fail(ReasonJSON, "invalid escape in a string")
			return "", false
		}
	}
	s.fail(ReasonJSON, "unterminated string")
	return "", false
}

func (s *scanner) hex4() (rune, bool) {
	if len(s.data)-s.pos < 4 {
		s.fail(ReasonJSON, "short \\u escape")
		return 0, false
	}
	var r rune
	for _, c := range s.data[s.pos : s.pos+4] {
		r <<= 4
		switch {
		case '0' <= c && c <= '9':
			r |= rune(c - '0')
		case 'a' <= c && c <= 'f':
			r |= rune(c - 'a' + 10)
		case 'A' <= c && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			s.fail(ReasonJSON, "invalid \\u escape")
			return 0, false
		}
	}
	s.pos += 4
	return r, true
}
