package web

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/remem/remem/internal/display"
)

// The page escapes as internal/display does: shown() in app.js, run by
// Node.js where it is installed, writes every hostile text as display.Text.
func TestPageShowsTextsAsDisplayDoes(t *testing.T) {
	nodejs, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node (Node.js) on this machine to run app.js's shown()")
	}
	js, err := static.ReadFile("static/app.js")
	if err != nil {
		t.Fatal(err)
	}
	src := string(js)
	begin, end := strings.Index(src, "// shown:begin"), strings.Index(src, "// shown:end")
	if begin < 0 || end < begin {
		t.Fatal("app.js lost its shown:begin/shown:end markers")
	}
	texts := []string{
		"plain text, café ☕ and «quotes» stay",
		"red \x1b[31mtext\x07 bell",
		"csi \u009b2J and DEL \x7f",
		"abc\u202edcba \u2066iso\u2069 zw\u200bsp",
		"line\nbreak\r and \u2028 separator \u2029",
		"tag \U000e0041 char",
	}
	script := src[begin:end] + `
const lines = require('fs').readFileSync(0, 'utf8').split('\u0000');
process.stdout.write(lines.map(shown).join('\u0000'));
`
	cmd := exec.Command(nodejs, "-e", script)
	cmd.Stdin = strings.NewReader(strings.Join(texts, "\x00"))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	got := strings.Split(string(out), "\x00")
	if len(got) != len(texts) {
		t.Fatalf("node answered %d texts for %d: %q", len(got), len(texts), out)
	}
	for i, in := range texts {
		if want := display.Text(in); got[i] != want {
			t.Errorf("shown(%q) = %q, display.Text gives %q", in, got[i], want)
		}
	}
}
