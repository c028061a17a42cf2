package node

import (
	"context"
	"testing"

	"github.com/remem/remem/node/consolidate"
	"github.com/remem/remem/protocol"
)

// A sleep run with a judge in its context asks it about the pairs lexical
// similarity leaves in doubt: two reports of one fact in different words
// become one lesson when the model says so, two without it.
func TestSleepAsksTheJudgeAboutDoubtfulPairs(t *testing.T) {
	events := []protocol.Event{
		{Kind: "error", Title: "deploy", Happened: "the staging database is empty on Monday mornings", Session: "s1"},
		{Kind: "error", Title: "deploy", Happened: "a cron job wipes staging every Sunday night", Session: "s2"},
	}
	lessons := func(judge consolidate.Sampler) (int, int) {
		t.Helper()
		m, project := openTest(t, nil)
		evs := append([]protocol.Event(nil), events...)
		for i := range evs {
			evs[i].Cwd = project
		}
		if _, err := m.Remember(evs); err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		asked := 0
		if judge != nil {
			ctx = WithJudge(ctx, func(ctx context.Context, system, prompt string, n int) (string, error) {
				asked++
				return judge(ctx, system, prompt, n)
			})
		}
		rep, err := m.Sleep(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return rep.NewLessons, asked
	}
	if n, _ := lessons(nil); n != 2 {
		t.Fatalf("without a judge: %d lessons, want 2 (the pair is not alike in words)", n)
	}
	yes := func(context.Context, string, string, int) (string, error) { return "yes", nil }
	if n, asked := lessons(yes); n != 1 || asked == 0 {
		t.Fatalf("with a judge that says yes: %d lessons after %d questions, want 1", n, asked)
	}
}
