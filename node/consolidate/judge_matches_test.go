package consolidate

import (
	"context"
	"strings"
	"testing"
)

// Matches with a judged similarity asks about the texts that nearly match
// a group and keeps those the model says are the same; a text that shares
// nothing with the group is not asked about.
func TestMatchesAsksTheJudge(t *testing.T) {
	groups := []Group{{ID: "g", Text: "the staging database is empty on Monday mornings"}}
	texts := []string{"a cron job wipes the staging database every Sunday night", "pip refuses to install into site-packages"}
	lex := NewLexical()
	plain, err := Matches(context.Background(), lex, DefaultThreshold, groups, texts)
	if err != nil || len(plain[0]) != 0 {
		t.Fatalf("lexical alone: %v %v", plain, err)
	}
	var asked []string
	j := &JudgedSimilarity{Base: lex, Threshold: DefaultThreshold, Ask: func(_ context.Context, _, prompt string, _ int) (string, error) {
		asked = append(asked, prompt)
		return "yes", nil
	}}
	got, err := Matches(context.Background(), j, DefaultThreshold, groups, texts)
	if err != nil || len(got[0]) != 1 || got[0][0] != 0 {
		t.Fatalf("judged: %v %v (asked %d)", got, err, len(asked))
	}
	for _, p := range asked {
		if strings.Contains(p, "pip refuses") {
			t.Fatalf("asked about a text that shares nothing: %s", p)
		}
	}
}
