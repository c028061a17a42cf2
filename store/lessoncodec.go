package store

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// A lesson is stored as the JSON encoding/json writes for it. The receive
// path reads and writes many lessons per delivered batch (each candidate a
// received lesson corroborates), and encoding/json's reflection was most of
// that cost, so lessons have their own codec for the common form: it
// writes the same bytes as json.Marshal and reads what json.Marshal wrote
// as json.Unmarshal would. Anything else (a string that needs escapes, a
// float written with an exponent, a time outside years 0 to 9999, a key
// out of place) goes to encoding/json, so the stored form and its reading
// are those of encoding/json in every case.

// marshalLesson is json.Marshal(l).
func marshalLesson(l *Lesson) ([]byte, error) {
	if b, ok := appendLesson(make([]byte, 0, lessonSize(l)), l); ok {
		return b, nil
	}
	return json.Marshal(l)
}

// unmarshalLesson is json.Unmarshal(data, l) for a zero l.
func unmarshalLesson(data []byte, l *Lesson) error {
	if decodeLesson(data, l) {
		return nil
	}
	*l = Lesson{}
	return json.Unmarshal(data, l)
}

func lessonSize(l *Lesson) int {
	n := 256 + len(l.Hash) + len(l.ID) + len(l.Kind) + len(l.Text) + len(l.Layer)
	for _, ss := range [][]string{l.Scopes, l.Projects, l.WrittenFrom, l.Episodes, l.Corroborators} {
		for _, s := range ss {
			n += len(s) + 3
		}
	}
	return n
}

// appendLesson appends l as json.Marshal writes it, or reports false when
// l holds something it leaves to encoding/json.
func appendLesson(b []byte, l *Lesson) ([]byte, bool) {
	ok := true
	str := func(name, s string, omitEmpty bool) {
		if omitEmpty && s == "" {
			return
		}
		b = append(b, ',', '"')
		b = append(b, name...)
		b = append(b, '"', ':')
		b, ok = appendPlain(b, s, ok)
	}
	strs := func(name string, ss []string) {
		if len(ss) == 0 {
			return
		}
		b = append(b, ',', '"')
		b = append(b, name...)
		b = append(b, '"', ':', '[')
		for i, s := range ss {
			if i > 0 {
				b = append(b, ',')
			}
			b, ok = appendPlain(b, s, ok)
		}
		b = append(b, ']')
	}
	flag := func(name string, v bool) {
		if v {
			b = append(b, ',', '"')
			b = append(b, name...)
			b = append(b, `":true`...)
		}
	}
	stamp := func(name string, t time.Time) {
		b = append(b, ',', '"')
		b = append(b, name...)
		b = append(b, '"', ':', '"')
		if y := t.Year(); y < 0 || y > 9999 {
			ok = false
		}
		if _, off := t.Zone(); off != 0 {
			ok = false // written with an offset, which MarshalJSON checks
		}
		b = t.AppendFormat(b, time.RFC3339Nano)
		b = append(b, '"')
	}
	b = append(b, `{"hash":`...)
	b, ok = appendPlain(b, l.Hash, ok)
	str("id", l.ID, true)
	str("kind", l.Kind, false)
	str("text", l.Text, false)
	b = append(b, `,"seen":`...)
	b = strconv.AppendInt(b, l.Seen, 10)
	b = append(b, `,"strength":`...)
	if f := l.Strength; math.IsNaN(f) || math.IsInf(f, 0) || (f != 0 && (math.Abs(f) < 1e-6 || math.Abs(f) >= 1e21)) {
		ok = false // refused, or written with an exponent
	} else {
		b = strconv.AppendFloat(b, f, 'f', -1, 64)
	}
	stamp("updated", l.Updated)
	flag("own", l.Own)
	if !l.Arrived.IsZero() {
		stamp("arrived", l.Arrived)
	}
	strs("scopes", l.Scopes)
	strs("projects", l.Projects)
	strs("written_from", l.WrittenFrom)
	strs("episodes", l.Episodes)
	flag("met_before", l.MetBefore)
	flag("confirmed", l.Confirmed)
	str("draft", l.Draft, true)
	flag("published", l.Published)
	str("layer", l.Layer, true)
	strs("corroborators", l.Corroborators)
	flag("dirty", l.Dirty)
	return append(b, '}'), ok
}

// appendPlain appends s quoted when encoding/json writes it without
// escapes (encPlain). ok turns false otherwise.
func appendPlain(b []byte, s string, ok bool) ([]byte, bool) {
	if !ok || !encPlain(s) {
		return b, false
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"'), true
}

// encPlain reports whether encoding/json writes s as it is: valid UTF-8
// with no control character, quote, backslash, the HTML characters it
// escapes (<, >, &) or U+2028 and U+2029.
func encPlain(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if !encSafe[c] {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || r == '\u2028' || r == '\u2029' {
			return false
		}
		i += n
	}
	return true
}

// encSafe marks the ASCII bytes encoding/json writes as they are.
var encSafe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// decPlain reports whether encoding/json reads the bytes of a string as
// they are: valid UTF-8 with no control character, quote or backslash.
func decPlain(s []byte) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == '"' || c == '\\' {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && n == 1 {
			return false
		}
		i += n
	}
	return true
}

// decodeLesson reads data as json.Unmarshal would into a zero l, when data
// is in the form appendLesson writes: compact, the keys of Lesson each at
// most once, strings without escapes. It reports false, l then partly
// filled, for anything else.
func decodeLesson(data []byte, l *Lesson) bool {
	d := lessonDecoder{data: data}
	if !d.byte('{') {
		return false
	}
	seen := 0 // bits of the keys read
	for first := true; ; first = false {
		if d.peek('}') {
			d.pos++
			break
		}
		if !first && !d.byte(',') {
			return false
		}
		key, ok := d.str()
		if !ok || !d.byte(':') {
			return false
		}
		bit, ok := lessonKeys[string(key)]
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
		switch string(key) {
		case "hash":
			l.Hash, ok = d.text()
		case "id":
			l.ID, ok = d.text()
		case "kind":
			l.Kind, ok = d.text()
		case "text":
			l.Text, ok = d.text()
		case "layer":
			l.Layer, ok = d.text()
		case "draft":
			l.Draft, ok = d.text()
		case "seen":
			var n []byte
			if n, ok = d.number(); ok {
				var err error
				l.Seen, err = strconv.ParseInt(string(n), 10, 64)
				ok = err == nil
			}
		case "strength":
			var n []byte
			if n, ok = d.number(); ok {
				var err error
				l.Strength, err = strconv.ParseFloat(string(n), 64)
				ok = err == nil
			}
		case "updated":
			ok = d.time(&l.Updated)
		case "arrived":
			ok = d.time(&l.Arrived)
		case "own":
			l.Own, ok = d.flag()
		case "met_before":
			l.MetBefore, ok = d.flag()
		case "confirmed":
			l.Confirmed, ok = d.flag()
		case "published":
			l.Published, ok = d.flag()
		case "dirty":
			l.Dirty, ok = d.flag()
		case "scopes":
			l.Scopes, ok = d.texts()
		case "projects":
			l.Projects, ok = d.texts()
		case "written_from":
			l.WrittenFrom, ok = d.texts()
		case "episodes":
			l.Episodes, ok = d.texts()
		case "corroborators":
			l.Corroborators, ok = d.texts()
		}
		if !ok {
			return false
		}
	}
	return d.pos == len(d.data)
}

// lessonKeys are the JSON names of Lesson's fields, each a bit.
var lessonKeys = map[string]int{
	"hash": 1 << 0, "id": 1 << 1, "kind": 1 << 2, "text": 1 << 3, "seen": 1 << 4, "strength": 1 << 5,
	"updated": 1 << 6, "own": 1 << 7, "arrived": 1 << 8, "scopes": 1 << 9, "projects": 1 << 10,
	"episodes": 1 << 11, "met_before": 1 << 12, "confirmed": 1 << 13, "published": 1 << 14,
	"layer": 1 << 15, "corroborators": 1 << 16, "dirty": 1 << 17, "draft": 1 << 18, "written_from": 1 << 19,
}

type lessonDecoder struct {
	data []byte
	pos  int
}

func (d *lessonDecoder) peek(c byte) bool { return d.pos < len(d.data) && d.data[d.pos] == c }

func (d *lessonDecoder) byte(c byte) bool {
	if !d.peek(c) {
		return false
	}
	d.pos++
	return true
}

// str reads a string without escapes, returning its bytes.
func (d *lessonDecoder) str() ([]byte, bool) {
	if !d.byte('"') {
		return nil, false
	}
	end := bytes.IndexByte(d.data[d.pos:], '"')
	if end < 0 {
		return nil, false
	}
	s := d.data[d.pos : d.pos+end]
	if !decPlain(s) {
		return nil, false
	}
	d.pos += end + 1
	return s, true
}

func (d *lessonDecoder) text() (string, bool) {
	s, ok := d.str()
	return string(s), ok
}

func (d *lessonDecoder) texts() ([]string, bool) {
	if !d.byte('[') {
		return nil, false
	}
	out := []string{} // json.Unmarshal makes an empty, non-nil slice of []
	for first := true; ; first = false {
		if d.byte(']') {
			return out, true
		}
		if !first && !d.byte(',') {
			return nil, false
		}
		s, ok := d.text()
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
}

// number reads the bytes of a JSON number as json.Marshal writes one.
func (d *lessonDecoder) number() ([]byte, bool) {
	start := d.pos
	for d.pos < len(d.data) {
		c := d.data[d.pos]
		if !('0' <= c && c <= '9' || c == '-' || c == '.') {
			break
		}
		d.pos++
	}
	n := d.data[start:d.pos]
	// JSON's grammar: an optional minus, no leading zero, digits after a point.
	digits := n
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || digits[0] == '.' || digits[len(digits)-1] == '.' ||
		bytes.IndexByte(digits, '-') >= 0 || bytes.Count(digits, []byte{'.'}) > 1 ||
		(len(digits) > 1 && digits[0] == '0' && digits[1] != '.') {
		return nil, false
	}
	return n, true
}

func (d *lessonDecoder) flag() (bool, bool) {
	switch {
	case bytes.HasPrefix(d.data[d.pos:], []byte("true")):
		d.pos += 4
		return true, true
	case bytes.HasPrefix(d.data[d.pos:], []byte("false")):
		d.pos += 5
		return false, true
	}
	return false, false
}

// time reads a time as encoding/json does: by the time's UnmarshalJSON.
func (d *lessonDecoder) time(t *time.Time) bool {
	start := d.pos
	if _, ok := d.str(); !ok {
		return false
	}
	return t.UnmarshalJSON(d.data[start:d.pos]) == nil
}
