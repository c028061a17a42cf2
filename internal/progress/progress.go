// Package progress carries a report function in a context, so that long
// work deep in a call (clustering a sleep's events, taking an import) can
// tell a command's progress bar how far it is without knowing of the bar.
// Work run without one (a node's API, tests) reports to nobody.
package progress

import "context"

// Func is told that stage has done of total steps. It is called from the
// goroutine doing the work and must return quickly.
type Func func(stage string, done, total int)

type key struct{}

// With returns ctx carrying f.
func With(ctx context.Context, f Func) context.Context {
	return context.WithValue(ctx, key{}, f)
}

// Report tells the Func ctx carries, if any, how far stage is.
func Report(ctx context.Context, stage string, done, total int) {
	if f, _ := ctx.Value(key{}).(Func); f != nil {
		f(stage, done, total)
	}
}

// Named returns ctx whose reports carry name after their stage ("clustering"
// becomes "clustering error"), for work that runs once per kind.
func Named(ctx context.Context, name string) context.Context {
	f, _ := ctx.Value(key{}).(Func)
	if f == nil {
		return ctx
	}
	return With(ctx, func(stage string, done, total int) { f(stage+" "+name, done, total) })
}
