package display

import (
	"io"
	"unicode/utf8"
)

// Writer escapes, in what passes through it, every unsafe character but
// the line breaks and tabs a program writes itself, as \uNNNN (a surrogate
// pair above U+FFFF) and a byte that is not UTF-8 as \ufffd. That form is
// an escape inside a JSON string as well, so JSON written through it stays
// the same JSON (encoding/json leaves C1, DEL and format characters raw),
// and a table or a message reads as before. It is the net under Text: a
// field some output forgot to escape still reaches no terminal raw.
//
// A rune cut across two writes is held until the next; Flush writes what
// is held at the end (a cut rune there is a bad byte).
type Writer struct {
	w       io.Writer
	pending []byte // the start of a rune cut at the end of the last Write
	buf     []byte
}

// NewWriter returns a Writer writing to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Raw is the writer underneath, for output that is data whose bytes must
// stay exact (signed record lines).
func (d *Writer) Raw() io.Writer { return d.w }

func (d *Writer) Write(p []byte) (int, error) {
	n := len(p)
	if len(d.pending) > 0 {
		p = append(d.pending, p...)
		d.pending = nil
	}
	out := d.buf[:0]
	for i := 0; i < len(p); {
		c := p[i]
		if c < utf8.RuneSelf {
			if (c < ' ' && c != '\n' && c != '\t') || c == 0x7f {
				out = appendU(out, rune(c))
			} else {
				out = append(out, c)
			}
			i++
			continue
		}
		if !utf8.FullRune(p[i:]) {
			d.pending = append([]byte(nil), p[i:]...)
			break
		}
		r, size := utf8.DecodeRune(p[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			out = appendU(out, utf8.RuneError)
		case Unsafe(r):
			out = appendU(out, r)
		default:
			out = append(out, p[i:i+size]...)
		}
		i += size
	}
	d.buf = out
	if _, err := d.w.Write(out); err != nil {
		return 0, err
	}
	return n, nil
}

// Flush writes a rune cut at the end of the output as what it is, a bad
// byte.
func (d *Writer) Flush() error {
	if len(d.pending) == 0 {
		return nil
	}
	d.pending = nil
	_, err := d.w.Write(appendU(nil, utf8.RuneError))
	return err
}

// appendU appends r as \uNNNN, or as a UTF-16 surrogate pair of them.
func appendU(out []byte, r rune) []byte {
	if r > 0xffff {
		r -= 0x10000
		out = appendU(out, 0xd800+(r>>10))
		return appendU(out, 0xdc00+(r&0x3ff))
	}
	const digits = "0123456789abcdef"
	return append(out, '\\', 'u', digits[r>>12&0xf], digits[r>>8&0xf], digits[r>>4&0xf], digits[r&0xf])
}
