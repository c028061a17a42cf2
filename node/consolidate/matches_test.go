package consolidate

import (
	"context"
	"reflect"
	"testing"
)

// matchesByLinkage is Matches the slow way: Linkage for every group and text.
func matchesByLinkage(t *testing.T, sim Similarity, threshold float64, groups []Group, texts []string) [][]int {
	out := make([][]int, len(groups))
	for gi, g := range groups {
		for ti, text := range texts {
			s, err := Linkage(context.Background(), sim, text, g)
			if err != nil {
				t.Fatal(err)
			}
			if s >= threshold {
				out[gi] = append(out[gi], ti)
			}
		}
	}
	return out
}

// TestMatchesIsLinkage: the indexed Matches finds exactly the (group, text)
// pairs whose Linkage reaches the threshold, at several thresholds, with
// groups that share members and texts that are members, and a blank group.
func TestMatchesIsLinkage(t *testing.T) {
	groups, eps := corpus(t, 150, 300)
	groups = append(groups, Group{ID: "blank", Text: " "}, Group{ID: "shared", Text: groups[0].Text, Episodes: groups[1].Episodes})
	var texts []string
	for _, e := range eps {
		texts = append(texts, e.Content())
	}
	texts = append(texts, groups[2].Episodes[0], "", "zzz qqq")
	lex := NewLexical()
	found := 0
	for _, th := range []float64{0, 0.2, DefaultThreshold, 0.8} {
		got, err := Matches(context.Background(), lex, th, groups, texts)
		if err != nil {
			t.Fatal(err)
		}
		want := matchesByLinkage(t, lex, th, groups, texts)
		for gi := range groups {
			if len(got[gi]) == 0 && len(want[gi]) == 0 {
				continue
			}
			if !reflect.DeepEqual(got[gi], want[gi]) {
				t.Fatalf("threshold %v, group %s: Matches %v, Linkage %v", th, groups[gi].ID, got[gi], want[gi])
			}
			if th == DefaultThreshold {
				found += len(got[gi])
			}
		}
	}
	if found == 0 {
		t.Fatal("no text matches a group at the default threshold: the test proves nothing")
	}
	t.Logf("%d (group, text) matches at the default threshold", found)
}

// TestMatchesOtherSimilarity: a similarity other than Lexical is asked for
// every pair, and its errors are returned.
func TestMatchesOtherSimilarity(t *testing.T) {
	groups := []Group{{ID: "a", Text: "alpha"}, {ID: "b", Text: "beta", Episodes: []string{"alpha"}}}
	texts := []string{"alpha", "gamma"}
	got, err := Matches(context.Background(), equalText{}, 0.5, groups, texts)
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]int{{0}, {0}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Matches %v, want %v", got, want)
	}
	if _, err := Matches(context.Background(), nil, 0.5, groups, texts); err == nil {
		t.Fatal("no similarity accepted")
	}
}

// equalText scores 1 for equal texts and 0 otherwise.
type equalText struct{}

func (equalText) Similarity(_ context.Context, a, b string) (float64, error) {
	if a == b {
		return 1, nil
	}
	return 0, nil
}
