package textcheck

import "testing"

// TestLexTableHoldsTheLexicon: every word the lexicon is built from is
// found with its classes (init adds phrase and list bits on top), absent
// words read 0, and a table grown from empty keeps what it held.
func TestLexTableHoldsTheLexicon(t *testing.T) {
	built := buildLexicon()
	for w, bits := range built {
		if got := lexicon.get(w); got&bits != bits {
			t.Fatalf("%q: %#x, want the bits %#x", w, got, bits)
		}
	}
	for _, w := range []string{"zzqxv", "qwertyuiopasdfgh", "Run", "x y"} {
		if got := lexicon.get(w); got != 0 {
			t.Errorf("%q, not a word of the lexicon: %#x", w, got)
		}
	}
	var small lexTable
	small.resize(0)
	for i, w := range []string{"a", "b", "c", "a", "d", ""} {
		small.or(w, 1<<i)
	}
	for _, tc := range []struct {
		w    string
		want uint64
	}{{"a", 1 | 8}, {"b", 2}, {"c", 4}, {"d", 16}, {"", 0}, {"e", 0}} {
		if got := small.get(tc.w); got != tc.want {
			t.Errorf("small table, %q: %#x, want %#x", tc.w, got, tc.want)
		}
	}
	for i := range 1000 { // grows past its 64 first slots
		small.or(string(rune('A'+i%26))+string(rune('a'+i/26)), 1)
	}
	if small.get("a") != 1|8 || small.get("Za") != 1 || small.n != 1004 {
		t.Errorf("after growing: a=%#x Za=%#x, %d words", small.get("a"), small.get("Za"), small.n)
	}
}
