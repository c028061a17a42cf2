package progress

import (
	"context"
	"testing"
)

func TestReportReachesTheFuncAndNamedAddsItsName(t *testing.T) {
	Report(context.Background(), "nobody listens", 1, 2) // must not panic
	var got []string
	ctx := With(context.Background(), func(stage string, done, total int) {
		got = append(got, stage)
		if done != 3 || total != 4 {
			t.Errorf("done %d of %d, want 3 of 4", done, total)
		}
	})
	Report(ctx, "clustering", 3, 4)
	Report(Named(ctx, "error"), "clustering", 3, 4)
	if len(got) != 2 || got[0] != "clustering" || got[1] != "clustering error" {
		t.Fatalf("stages %q", got)
	}
	if Named(context.Background(), "x") != context.Background() {
		t.Fatal("Named without a Func made a new context")
	}
}
