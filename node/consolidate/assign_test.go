package consolidate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// tableSim is a Similarity given by a table: 1 for equal texts, the table's
// value for a listed pair (either order), 0 otherwise.
type tableSim struct {
	pairs map[[2]string]float64
	err   error
	calls int
}

func (s *tableSim) Similarity(_ context.Context, a, b string) (float64, error) {
	s.calls++
	if s.err != nil {
		return 0, s.err
	}
	if a == b {
		return 1, nil
	}
	if v, ok := s.pairs[[2]string{a, b}]; ok {
		return v, nil
	}
	return s.pairs[[2]string{b, a}], nil
}

func sims(kv ...any) *tableSim {
	s := &tableSim{pairs: make(map[[2]string]float64)}
	for i := 0; i < len(kv); i += 3 {
		s.pairs[[2]string{kv[i].(string), kv[i+1].(string)}] = kv[i+2].(float64)
	}
	return s
}

func TestLinkage(t *testing.T) {
	ctx := context.Background()
	sim := sims("x", "e1", 0.9, "x", "e2", 0.3, "x", "lesson", 0.6)
	cases := []struct {
		name string
		g    Group
		want float64
	}{
		{"mean over episodes and text", Group{ID: "g", Text: "lesson", Episodes: []string{"e1", "e2"}}, (0.9 + 0.3 + 0.6) / 3},
		{"text only", Group{ID: "g", Text: "lesson"}, 0.6},
		{"episodes only (blank text left out)", Group{ID: "g", Text: "  ", Episodes: []string{"e1", "e2"}}, 0.6},
		{"blank episodes left out", Group{ID: "g", Text: "lesson", Episodes: []string{"", "e1"}}, 0.75},
		{"an episode equal to the text counts 1", Group{ID: "g", Text: "lesson", Episodes: []string{"x"}}, 0.8},
		{"nothing to compare", Group{ID: "g"}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Linkage(ctx, sim, "x", c.g)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(got-c.want) > 1e-12 {
				t.Fatalf("Linkage = %v, want %v", got, c.want)
			}
		})
	}
	if _, err := Linkage(ctx, &tableSim{err: errors.New("boom")}, "x", Group{ID: "g", Text: "t"}); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("error not passed on: %v", err)
	}
	if _, err := Linkage(ctx, nil, "x", Group{ID: "g", Text: "t"}); err == nil {
		t.Fatal("nil similarity accepted")
	}
}

func ep(kind, text string) Episode { return Episode{Kind: kind, Text: text} }

func TestAssign(t *testing.T) {
	ctx := context.Background()
	sim := sims(
		"a1", "lessonA", 0.8, "a1", "ea", 0.6, // a1 → A: (0.8+0.6)/2 = 0.7
		"a1", "lessonB", 0.75, // a1 → B: 0.75, but B's episode pulls it down
		"a1", "eb", 0.5, // a1 → B: (0.75+0.5)/2 = 0.625
		"n1", "n2", 0.9, "n1", "n3", 0.5, "n2", "n3", 0.3, // n1,n2 merge; n3 averages 0.4
		"c1", "n1", 0.95, // a correction never clusters with an error
	)
	groups := []Group{
		{ID: "B", Text: "lessonB", Episodes: []string{"eb"}},
		{ID: "A", Text: "lessonA", Episodes: []string{"ea"}},
	}
	eps := []Episode{ep("error", "n1"), ep("error", "a1"), ep("error", "n2"), ep("correction", "n3"), ep("correction", "c1"), ep("error", "n3")}
	got, err := Assign(ctx, sim, 0.45, groups, eps)
	if err != nil {
		t.Fatal(err)
	}
	want := Assignment{
		Joined:      map[int]string{1: "A"},
		NewClusters: [][]int{{0, 2}, {3}, {4}, {5}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Assign:\n got %+v\nwant %+v", got, want)
	}

	// With a lower threshold, n3 (error) joins n1+n2 by average linkage 0.4;
	// the correction n3 stays apart (another family).
	got, err = Assign(ctx, sim, 0.4, groups, eps)
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]int{{0, 2, 5}, {3}, {4}}; !reflect.DeepEqual(got.NewClusters, want) {
		t.Fatalf("NewClusters at 0.4 = %v, want %v", got.NewClusters, want)
	}
}

func TestAssignKinds(t *testing.T) {
	ctx := context.Background()
	sim := sims("e", "lesson", 0.9)
	groups := []Group{{ID: "corr", Text: "lesson", Kind: "correction"}}
	got, err := Assign(ctx, sim, 0.5, groups, []Episode{ep("error", "e")})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Joined) != 0 {
		t.Fatalf("an error joined a correction lesson: %v", got.Joined)
	}
	// environment and note events make surprise lessons
	groups[0].Kind = "surprise"
	for _, k := range []string{"environment", "note", "surprise"} {
		got, err := Assign(ctx, sim, 0.5, groups, []Episode{ep(k, "e")})
		if err != nil {
			t.Fatal(err)
		}
		if got.Joined[0] != "corr" {
			t.Fatalf("%s event did not join a surprise lesson: %+v", k, got)
		}
	}
	// errors and surprises are one family: an error joins a surprise
	// lesson, a note an error lesson, and they cluster together; a
	// correction does neither
	if got, _ := Assign(ctx, sim, 0.5, groups, []Episode{ep("error", "e")}); got.Joined[0] != "corr" {
		t.Fatalf("an error did not join a surprise lesson: %+v", got)
	}
	groups[0].Kind = "error"
	if got, _ := Assign(ctx, sim, 0.5, groups, []Episode{ep("note", "e")}); got.Joined[0] != "corr" {
		t.Fatalf("a note did not join an error lesson: %+v", got)
	}
	got, err = Assign(ctx, sims("x", "y", 0.9, "x", "z", 0.9, "y", "z", 0.9), 0.5, nil, []Episode{ep("error", "x"), ep("environment", "y"), ep("correction", "z")})
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]int{{0, 1}, {2}}; !reflect.DeepEqual(got.NewClusters, want) {
		t.Fatalf("NewClusters %v, want %v", got.NewClusters, want)
	}
}

func TestAssignTiesAndGroupOrder(t *testing.T) {
	ctx := context.Background()
	sim := sims("e", "t1", 0.7, "e", "t2", 0.7, "e", "t3", 0.7)
	groups := []Group{{ID: "m", Text: "t1"}, {ID: "b", Text: "t2"}, {ID: "x", Text: "t3"}}
	got, err := Assign(ctx, sim, 0.5, groups, []Episode{ep("error", "e")})
	if err != nil {
		t.Fatal(err)
	}
	if got.Joined[0] != "b" {
		t.Fatalf("a tie went to %q, want the smallest ID %q", got.Joined[0], "b")
	}
}

func TestAssignErrors(t *testing.T) {
	ctx := context.Background()
	eps := []Episode{ep("error", "e")}
	cases := []struct {
		name   string
		sim    Similarity
		groups []Group
		th     float64
		want   string
	}{
		{"nil similarity", nil, nil, 0.5, "no similarity"},
		{"empty ID", sims(), []Group{{Text: "t"}}, 0.5, "no ID"},
		{"duplicate ID", sims(), []Group{{ID: "a", Text: "t"}, {ID: "a", Text: "u"}}, 0.5, "given twice"},
		{"NaN threshold", sims(), nil, math.NaN(), "NaN"},
		{"similarity fails", &tableSim{err: errors.New("boom")}, []Group{{ID: "a", Text: "t"}}, 0.5, "boom"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Assign(ctx, c.sim, c.th, c.groups, eps)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
		})
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Assign(cctx, NewLexical(), 0.5, nil, eps); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled context: %v", err)
	}
}

func TestAssignEmpty(t *testing.T) {
	got, err := Assign(context.Background(), NewLexical(), DefaultThreshold, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Joined) != 0 || len(got.NewClusters) != 0 {
		t.Fatalf("Assign of nothing = %+v", got)
	}
}

// wrapped hides the *Lexical type, so Assign takes its generic path.
type wrapped struct{ s Similarity }

func (w wrapped) Similarity(ctx context.Context, a, b string) (float64, error) {
	return w.s.Similarity(ctx, a, b)
}

// corpus builds realistic groups and episodes from the labelled pairs: each
// pair's first text becomes a lesson with one absorbed episode, its second
// text a new event.
func corpus(t testing.TB, nGroups, nEpisodes int) ([]Group, []Episode) {
	t.Helper()
	pairs := loadPairs(t)
	r := rand.New(rand.NewPCG(1, 2))
	kinds := []string{"error", "error", "error", "correction", "environment"}
	var groups []Group
	for i := range nGroups {
		p := pairs[i%len(pairs)]
		q := pairs[r.IntN(len(pairs))]
		groups = append(groups, Group{
			ID:       fmt.Sprintf("lesson-%04d", i),
			Text:     p.A,
			Episodes: []string{p.A, q.B, fmt.Sprintf("%s (run %d)", p.A, i)},
		})
	}
	var eps []Episode
	for i := range nEpisodes {
		p := pairs[r.IntN(len(pairs))]
		text := p.B
		if i%3 == 0 {
			text = p.A
		}
		eps = append(eps, Episode{Kind: kinds[i%len(kinds)], Title: fmt.Sprintf("step %d", i%7), Happened: text})
	}
	return groups, eps
}

func TestAssignDeterministic(t *testing.T) {
	ctx := context.Background()
	groups, eps := corpus(t, 120, 80)
	lex := NewLexical()
	first, err := Assign(ctx, lex, DefaultThreshold, groups, eps)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Joined) == 0 || len(first.NewClusters) == 0 {
		t.Fatalf("corpus too easy or too hard: %d joined, %d new clusters", len(first.Joined), len(first.NewClusters))
	}
	// every episode is placed exactly once
	placed := make(map[int]int)
	for i := range first.Joined {
		placed[i]++
	}
	for _, c := range first.NewClusters {
		for _, i := range c {
			placed[i]++
		}
	}
	for i := range eps {
		if placed[i] != 1 {
			t.Fatalf("episode %d placed %d times", i, placed[i])
		}
	}
	// the order of groups does not matter
	r := rand.New(rand.NewPCG(3, 4))
	for range 5 {
		shuffled := append([]Group(nil), groups...)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		got, err := Assign(ctx, NewLexical(), DefaultThreshold, shuffled, eps)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, first) {
			t.Fatal("Assign depends on the order of groups")
		}
	}
	// the Lexical fast path gives what the generic path gives
	slow, err := Assign(ctx, wrapped{NewLexical()}, DefaultThreshold, groups, eps)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(slow, first) {
		t.Fatal("the Lexical fast path and the generic path disagree")
	}
}

func TestAgglomerateAverageLinkage(t *testing.T) {
	// 0-1 are close; 2 is close to 0 but far from 1: single linkage would
	// take it in at 0.6, complete linkage never, average linkage at (0.6+0.2)/2.
	s := map[[2]int]float64{{0, 1}: 0.9, {0, 2}: 0.6, {1, 2}: 0.2, {3, 4}: 0.5}
	sim := func(a, b int) (float64, bool, error) { return s[[2]int{a, b}], true, nil }
	for _, c := range []struct {
		th   float64
		want [][]int
	}{
		{0.95, [][]int{{0}, {1}, {2}, {3}, {4}}},
		{0.5, [][]int{{0, 1}, {2}, {3, 4}}},
		{0.4, [][]int{{0, 1, 2}, {3, 4}}},
		{0, [][]int{{0, 1, 2, 3, 4}}},
	} {
		got, err := agglomerate(context.Background(), 5, c.th, sim)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("threshold %v: %v, want %v", c.th, got, c.want)
		}
	}
	// pairs that may not merge never do, even at -Inf
	never := func(a, b int) (float64, bool, error) { return 1, false, nil }
	got, _ := agglomerate(context.Background(), 3, math.Inf(-1), never)
	if len(got) != 3 {
		t.Fatalf("forbidden pairs merged: %v", got)
	}
}

// BenchmarkAssign places 200 episodes against 500 lessons of 3 episodes
// each (2,000 member texts). "warm" reuses one Lexical, as a node does from
// one sleep to the next, so token sets are cached; "cold" tokenises every
// text in every iteration.
func BenchmarkAssign(b *testing.B) {
	groups, eps := corpus(b, 500, 200)
	ctx := context.Background()
	b.Run("warm", func(b *testing.B) {
		lex := NewLexical()
		for b.Loop() {
			if _, err := Assign(ctx, lex, DefaultThreshold, groups, eps); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			if _, err := Assign(ctx, NewLexical(), DefaultThreshold, groups, eps); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func TestLexIndexMatchesPairwise(t *testing.T) {
	groups, eps := corpus(t, 60, 30)
	l := NewLexical()
	tab := l.tables()
	var texts []string
	for _, g := range groups {
		texts = append(texts, g.members()...)
	}
	for _, e := range eps {
		texts = append(texts, e.Content())
	}
	profs := make([]*profile, len(texts))
	ms := make([]int, len(texts))
	for i, s := range texts {
		profs[i] = tab.build(s)
		ms[i] = i
	}
	x := newLexIndex(profs, ms)
	out := make([]float64, len(texts))
	for q := range texts {
		x.scores(tab, profs, q, out)
		for m := range texts {
			if want := tab.score(profs[q], profs[m]); out[m] != want {
				t.Fatalf("index score %v, pairwise %v\n q: %q\n m: %q", out[m], want, texts[q], texts[m])
			}
		}
	}
}

// Two events whose words look like one surprise, but whose agents proposed
// sentences that are not alike, are kept apart (blind set b29e's two
// ImagePullBackOff pods: one lacked its pull secret, one its image); an
// event without a proposal goes with the part most like it, and agents
// that proposed alike sentences stay in one cluster.
func TestAssignKeepsApartWhatAgentsToldApart(t *testing.T) {
	pod := "kubectl describe pod shows Failed to pull image, ErrImagePull, Back-off pulling image, ImagePullBackOff in namespace shop"
	eps := []Episode{
		{Kind: "error", Title: "kubectl describe pod checkout", Happened: pod + " for checkout: no basic auth credentials",
			Lesson: "The checkout pod could not pull its image because the recreated namespace lacks the registry pull secret."},
		{Kind: "error", Title: "kubectl describe pod cart", Happened: pod + " for cart: manifest unknown, not found",
			Lesson: "The cart image tag was never pushed after its pipeline failed, so the pull finds no such manifest."},
		{Kind: "error", Title: "kubectl describe pod cart", Happened: pod + " for cart: manifest unknown, not found, again"},
	}
	got, err := Assign(context.Background(), NewLexical(), DefaultThreshold, nil, eps)
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]int{{0}, {1, 2}}; !reflect.DeepEqual(got.NewClusters, want) {
		t.Errorf("clusters %v, want %v", got.NewClusters, want)
	}
	eps[1].Lesson = "The checkout pod could not pull its image because the recreated namespace lacks the pull secret."
	got, err = Assign(context.Background(), NewLexical(), DefaultThreshold, nil, eps)
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]int{{0, 1, 2}}; !reflect.DeepEqual(got.NewClusters, want) {
		t.Errorf("alike proposals: clusters %v, want %v", got.NewClusters, want)
	}
}
