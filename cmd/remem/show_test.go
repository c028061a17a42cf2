package main

import "testing"

// A received text is shown to a person as data: a terminal escape or a
// direction override is printed escaped, plain text as it is.
func TestPrintableEscapesWhatATerminalWouldAct(t *testing.T) {
	cases := map[string]string{
		"go test fails on ARM": "go test fails on ARM",
		"café ☕ works":         "café ☕ works",
		"red \x1b[31mtext":     `red \x1b[31mtext`,
		"abc\u202edcba":        `abc\u202edcba`,
		"line one\nline two":   `line one\nline two`,
	}
	for in, want := range cases {
		if got := printable(in); got != want {
			t.Errorf("printable(%q) = %q, want %q", in, got, want)
		}
	}
}
