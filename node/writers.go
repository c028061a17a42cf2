package node

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/remem/remem/node/consolidate"
	"github.com/remem/remem/protocol"
)

// WriterCounts tell which writer wrote how many lessons and how many of
// their answers were not kept, by writer name (consolidate.WriterName:
// default, command, sampling, or the configured model's name, e.g.
// claude).
type WriterCounts struct {
	// Written counts the new lessons each writer wrote.
	Written map[string]int `json:"written,omitempty"`
	// Refused counts the sentences a writer gave that failed the checks of
	// SPEC §6 (the default writer then wrote the lesson).
	Refused map[string]int `json:"refused,omitempty"`
	// Failed counts the requests that gave no sentence: an error, no answer
	// within the time limit, or more than one sentence.
	Failed map[string]int `json:"failed,omitempty"`
	// Skipped counts the clusters a writer was not asked about because its
	// budget for the sleep was spent.
	Skipped map[string]int `json:"skipped,omitempty"`
	// Rewritten counts the drafts a writer wrote again as a sentence that
	// passes (rewriteDrafts).
	Rewritten map[string]int `json:"rewritten,omitempty"`
}

// Empty reports whether nothing was counted.
func (c WriterCounts) Empty() bool {
	return len(c.Written)+len(c.Refused)+len(c.Failed)+len(c.Skipped)+len(c.Rewritten) == 0
}

// Add adds o's counts to c.
func (c *WriterCounts) Add(o WriterCounts) {
	add := func(dst *map[string]int, src map[string]int) {
		for k, v := range src {
			if *dst == nil {
				*dst = map[string]int{}
			}
			(*dst)[k] += v
		}
	}
	add(&c.Written, o.Written)
	add(&c.Refused, o.Refused)
	add(&c.Failed, o.Failed)
	add(&c.Skipped, o.Skipped)
	add(&c.Rewritten, o.Rewritten)
}

func (c *WriterCounts) count(m *map[string]int, name string) {
	if *m == nil {
		*m = map[string]int{}
	}
	(*m)[name]++
}

// String reads "sampling 3 (1 refused), default 2".
func (c WriterCounts) String() string {
	names := map[string]bool{}
	for _, m := range []map[string]int{c.Written, c.Refused, c.Failed, c.Skipped, c.Rewritten} {
		for k := range m {
			names[k] = true
		}
	}
	var parts []string
	for _, n := range slices.Sorted(maps.Keys(names)) {
		s := n + " " + strconv.Itoa(c.Written[n])
		var notes []string
		for _, x := range []struct {
			label string
			v     int
		}{{"drafts rewritten", c.Rewritten[n]}, {"refused", c.Refused[n]}, {"failed", c.Failed[n]}, {"over budget", c.Skipped[n]}} {
			if x.v > 0 {
				notes = append(notes, strconv.Itoa(x.v)+" "+x.label)
			}
		}
		if len(notes) > 0 {
			s += " (" + strings.Join(notes, ", ") + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

// writerCountsKey is the store meta key of the counts over the memory's
// life.
const writerCountsKey = "writer_counts"

type writerKey struct{}

// WithWriter returns ctx carrying w: a sleep of a local memory run with
// ctx writes its new lessons with w instead of the configured writer (the
// MCP server passes the client's model this way). Its sentences are held
// to the same checks, with the default writer as the fallback. A running
// node's API does not carry it: the node sleeps with its own writer.
func WithWriter(ctx context.Context, w consolidate.Writer) context.Context {
	return context.WithValue(ctx, writerKey{}, w)
}

func writerFrom(ctx context.Context) consolidate.Writer {
	w, _ := ctx.Value(writerKey{}).(consolidate.Writer)
	return w
}

type judgeKey struct{}

type simKey struct{}

// WithJudge returns ctx carrying ask: a sleep of a local memory run with
// ctx asks the model about the pairs of events its similarity leaves in
// doubt before it clusters them (consolidate.JudgedSimilarity, budgeted
// per sleep). The MCP server passes the client's model this way.
func WithJudge(ctx context.Context, ask consolidate.Sampler) context.Context {
	return context.WithValue(ctx, judgeKey{}, ask)
}

// judgeSpec is a judge with its budget (the configured model's, withModel);
// a zero max or timeout is JudgedSimilarity's default.
type judgeSpec struct {
	ask     consolidate.Sampler
	max     int
	timeout time.Duration
}

// withSleepSimilarity gives one sleep its similarity: the judged one when
// ctx carries a judge, so the judge's budget is the sleep's.
func (m *Memory) withSleepSimilarity(ctx context.Context) context.Context {
	spec, _ := ctx.Value(judgeKey{}).(judgeSpec)
	if ask, ok := ctx.Value(judgeKey{}).(consolidate.Sampler); ok {
		spec = judgeSpec{ask: ask}
	}
	if spec.ask == nil {
		return ctx
	}
	return context.WithValue(ctx, simKey{}, consolidate.Similarity(&consolidate.JudgedSimilarity{
		Base: m.sim, Ask: spec.ask, Threshold: m.cfg.Params.Threshold, Max: spec.max, Timeout: spec.timeout}))
}

// similarity is the similarity a sleep run with ctx clusters with.
func (m *Memory) similarity(ctx context.Context) consolidate.Similarity {
	if s, ok := ctx.Value(simKey{}).(consolidate.Similarity); ok {
		return s
	}
	return m.sim
}

// saveWriterCounts adds c to the counts kept in the store.
func (m *Memory) saveWriterCounts(c WriterCounts) error {
	if c.Empty() {
		return nil
	}
	var total WriterCounts
	if _, err := m.store.GetMeta(writerCountsKey, &total); err != nil {
		return err
	}
	total.Add(c)
	return m.store.SetMeta(writerCountsKey, total)
}

// WriterCounts are the writer counts over the memory's life.
func (m *Memory) WriterCounts() (WriterCounts, error) {
	var c WriterCounts
	_, err := m.store.GetMeta(writerCountsKey, &c)
	return c, err
}

// isBudget reports whether err says a writer's budget is spent.
func isBudget(err error) bool { return errors.Is(err, consolidate.ErrBudget) }

// PlanClusters tells, without changing anything, the new clusters the next
// sleep would write lessons for: the pending events that name no lesson and
// join no own lesson, clustered among themselves, one family of lesson
// kinds at a time (consolidate.Families). The verify pass may
// yet take some of their events (it confirms received candidates), so a
// planned cluster may not be written. The MCP server asks a client's model
// for their sentences before it sleeps (multi round-trip sampling).
func (m *Memory) PlanClusters(ctx context.Context) ([]consolidate.Cluster, error) {
	stored, err := m.store.PendingEvents()
	if err != nil || len(stored) == 0 {
		return nil, err
	}
	lessons, err := m.store.Lessons()
	if err != nil {
		return nil, err
	}
	var out []consolidate.Cluster
	for _, family := range consolidate.Families {
		var groups []consolidate.Group
		for _, l := range lessons {
			if l.Own && slices.Contains(family, l.Kind) {
				groups = append(groups, groupOf(l))
			}
		}
		var events []pending
		var episodes []consolidate.Episode
		for _, ev := range stored {
			if ev.Event.Matches == "" && slices.Contains(family, protocol.LessonKindOf(ev.Event.Kind)) {
				events = append(events, pending{ev: ev})
				episodes = append(episodes, episodeOf(ev.Event))
			}
		}
		if len(episodes) == 0 {
			continue
		}
		asg, err := consolidate.Assign(ctx, m.similarity(ctx), m.cfg.Params.Threshold, groups, episodes)
		if err != nil {
			return nil, fmt.Errorf("clustering events: %w", err)
		}
		for _, idx := range asg.NewClusters {
			c := consolidate.Cluster{Kind: kindOf(family, events, idx)}
			for _, i := range idx {
				c.Episodes = append(c.Episodes, episodes[i])
			}
			out = append(out, c)
		}
	}
	return out, nil
}
