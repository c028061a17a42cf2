package node

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/remem/remem/node/consolidate"
	"github.com/remem/remem/protocol"
)

// The budgets of a configured model (Config.Model) in one sleep: a model
// CLI starts slower than an HTTP request, and the node sleeps every ten
// minutes, so a sleep asks it little and gives up on it soon.
const (
	// ModelWrites is how many sentences a sleep asks the model for: new
	// lessons first, then drafts to rewrite.
	ModelWrites = 10
	// ModelJudgements is how many pairs in doubt a sleep asks it about.
	ModelJudgements = 20
	// ModelTimeout bounds one request.
	ModelTimeout = 90 * time.Second
	// ModelSleepTime bounds the time a sleep spends waiting for the
	// model over all its requests; past it the rest fall back at once.
	ModelSleepTime = 5 * time.Minute
)

// withModel gives one sleep the configured model, budgeted for that
// sleep: as its writer, unless ctx carries one (WithWriter), and as its
// judge, unless ctx carries one (WithJudge).
func (m *Memory) withModel(ctx context.Context) context.Context {
	if m.cfg.Model == nil {
		return ctx
	}
	ask := sleepBudget(m.cfg.Model, ModelSleepTime)
	if writerFrom(ctx) == nil {
		name := m.cfg.ModelName
		if name == "" {
			name = "model"
		}
		ctx = WithWriter(ctx, &consolidate.SamplingWriter{Ask: ask, Name: name, Max: ModelWrites, Timeout: ModelTimeout, Redact: protocol.RedactRawData})
	}
	if _, ok := ctx.Value(judgeKey{}).(consolidate.Sampler); !ok {
		if _, ok := ctx.Value(judgeKey{}).(judgeSpec); !ok {
			ctx = context.WithValue(ctx, judgeKey{}, judgeSpec{ask: ask, max: ModelJudgements, timeout: ModelTimeout})
		}
	}
	return ctx
}

// sleepBudget wraps ask so that its requests together wait at most total:
// each gets the time left, and once it is spent a request fails at once
// with consolidate.ErrBudget (the writer counts it as over budget).
func sleepBudget(ask consolidate.Sampler, total time.Duration) consolidate.Sampler {
	var mu sync.Mutex
	left := total
	return func(ctx context.Context, system, prompt string, maxTokens int) (string, error) {
		mu.Lock()
		budget := left
		mu.Unlock()
		if budget <= 0 {
			return "", fmt.Errorf("the model's time for this sleep (%s) is spent: %w", total, consolidate.ErrBudget)
		}
		start := time.Now()
		ctx, cancel := context.WithTimeout(ctx, budget)
		defer cancel()
		answer, err := ask(ctx, system, prompt, maxTokens)
		mu.Lock()
		left -= time.Since(start)
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			// The request ran until its deadline, the budget's end: the
			// clock read after it may still fall short of it by a hair,
			// which must not leave a next request a sliver of time.
			left = 0
		}
		mu.Unlock()
		return answer, err
	}
}
