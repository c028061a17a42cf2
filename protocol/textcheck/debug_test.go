package textcheck

import (
	"fmt"
	"os"
	"testing"
)

func TestDebugTokens(t *testing.T) {
	s := os.Getenv("TC_DEBUG")
	if s == "" {
		t.Skip()
	}
	n := Normalize(s)
	toks := tokenize(n, string(appendLowerASCII(nil, n)), nil)
	for _, tk := range toks {
		fmt.Printf("%q p=%q cls=%s\n", tk.w, tk.punct, clsString(tk.cls))
	}
	fmt.Println(CheckObservation(s))
}

func clsString(c uint64) string {
	names := []string{"Base", "Z", "Past", "Part", "Ger", "Noun", "Proper", "Adj", "Adv", "Det", "Object", "Subject", "Prep", "Conj", "Sub", "Rel", "Be", "BePresent", "Have", "Do", "Neg", "Particle", "Modal", "Lead", "Strong", "Force", "Actor", "Plan", "Known", "DomNoun", "Outcome", "Time", "Unknown"}
	out := ""
	for i, n := range names {
		if c&(1<<i) != 0 {
			out += n + " "
		}
	}
	return out
}
