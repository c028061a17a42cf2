package node

import "context"

type progressKey struct{}

// WithProgress returns ctx carrying report: a sleep of a local memory run
// with ctx tells it how far it is (stage "clustering" with the events of a
// lesson kind, then "writing" with the lessons written of those to write),
// so that `remem sleep` can draw a bar over a long import. A running node's
// API does not carry it.
func WithProgress(ctx context.Context, report func(stage string, done, total int)) context.Context {
	return context.WithValue(ctx, progressKey{}, report)
}

// progress reports to the function ctx carries, if any.
func progress(ctx context.Context, stage string, done, total int) {
	if f, _ := ctx.Value(progressKey{}).(func(string, int, int)); f != nil {
		f(stage, done, total)
	}
}
