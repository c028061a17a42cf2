package testutil

import (
	"testing"
	"time"
)

func TestEventuallyWaitsForTheCondition(t *testing.T) {
	n := 0
	Eventually(t, 5*time.Second, "the third call", func() bool { n++; return n == 3 })
	if n != 3 {
		t.Fatalf("cond called %d times", n)
	}
}

func TestIdentityIsDeterministic(t *testing.T) {
	a, b, c := Identity(t, "alice"), Identity(t, "alice"), Identity(t, "bob")
	if a.Origin() != b.Origin() || a.Origin() == c.Origin() {
		t.Fatalf("origins %s %s %s", a.Origin(), b.Origin(), c.Origin())
	}
}

func TestJoinLines(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lines [][]byte
		want  string
	}{
		{"none", nil, ""},
		{"one", [][]byte{[]byte("a")}, "a\n"},
		{"an empty line stays", [][]byte{[]byte("a"), nil, []byte("b")}, "a\n\nb\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(JoinLines(tc.lines...)); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
