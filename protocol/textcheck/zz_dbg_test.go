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
		fmt.Printf("%q p=%q cls=%x\n", tk.w, tk.punct, tk.cls)
	}
	fmt.Println(CheckObservation(s))
}
