package display

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// hostile holds every kind of character a display must not pass raw.
const hostile = "red \x1b[31mtext\x07 bell \u009b2J csi \u202eevil\u2066 \x7f\x00 line\nbreak\r\u2028sep \u200bzw \U000e0041 tag"

// raw reports the first character of s that no display may show raw (line
// breaks and tabs allowed when lines).
func raw(s string, lines bool) (rune, bool) {
	for _, r := range s {
		if lines && (r == '\n' || r == '\t') {
			continue
		}
		if Unsafe(r) {
			return r, true
		}
	}
	return 0, false
}

func TestText(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "go vet reports a copied lock", "go vet reports a copied lock"},
		{"non-ASCII letters stay", "Der Build schlägt fehl — «ok» 日本", "Der Build schlägt fehl — «ok» 日本"},
		{"backslash and quotes stay", `C:\tmp says "no"`, `C:\tmp says "no"`},
		{"escape sequence", "a\x1b[31mb", `a\x1b[31mb`},
		{"bell and DEL", "a\x07b\x7f", `a\ab\x7f`},
		{"C1 CSI", "a\u009b2J", `a\u009b2J`},
		{"bidi override and isolate", "a\u202eb\u2066c\u2069", `a\u202eb\u2066c\u2069`},
		{"line breaks", "one\ntwo\r\u2028three\u2029", `one\ntwo\r\u2028three\u2029`},
		{"bad byte", "a\xffb", `a\xffb`},
		{"tag character", "a\U000e0041", `a\U000e0041`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Text(tc.in); got != tc.want {
				t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
	if r, ok := raw(Text(hostile), false); ok {
		t.Errorf("Text left %U raw", r)
	}
}

func TestLinesKeepsLineBreaksOnly(t *testing.T) {
	got := Lines("first \x1b[2J\nsecond\u202e")
	if got != "first \\x1b[2J\nsecond\\u202e" {
		t.Errorf("Lines = %q", got)
	}
}

func TestQuote(t *testing.T) {
	if got := Quote("IGNORE\u202e\x1b"); got != `"IGNORE\u202e\x1b"` {
		t.Errorf("Quote = %s", got)
	}
}

// The writer is the net under every CLI output: it leaves nothing unsafe
// raw but line breaks and tabs, keeps JSON the same JSON, and handles a
// rune cut across two writes.
func TestWriter(t *testing.T) {
	val := map[string]string{"text": hostile, "ok": "plain ü"}
	js, err := json.Marshal(val)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	w := NewWriter(&out)
	for i := 0; i < len(js); i += 3 { // cut runes on purpose
		if _, err := w.Write(js[i:min(i+3, len(js))]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if r, ok := raw(out.String(), true); ok {
		t.Errorf("the writer let %U through: %q", r, out.String())
	}
	var back map[string]string
	if err := json.Unmarshal(out.Bytes(), &back); err != nil {
		t.Fatalf("the JSON written through is no longer JSON: %v\n%s", err, out.String())
	}
	if back["text"] != hostile || back["ok"] != "plain ü" {
		t.Errorf("the JSON written through holds other data: %q", back)
	}

	out.Reset()
	w = NewWriter(&out)
	if _, err := w.Write([]byte("table\tline\nnext \x1b[31m\xff\xe2\x80")); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "table\tline\nnext \\u001b[31m\\ufffd\\ufffd"; got != want {
		t.Errorf("writer wrote %q, want %q", got, want)
	}
	if !utf8.ValidString(out.String()) || strings.ContainsRune(out.String(), 0x1b) {
		t.Errorf("writer output %q", out.String())
	}
}
