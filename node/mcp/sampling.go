//lint:file-ignore SA1019 MCP sampling is deprecated as of protocol 2026-07-28 (SEP-2577) but served within its deprecation window: it is how a client lends its model

package mcp

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/remem/remem/node"
	"github.com/remem/remem/node/consolidate"
	"github.com/remem/remem/protocol"
)

// Options configure a server beyond its tools.
type Options struct {
	// NoSampling keeps the client's model out of sleep even when the client
	// declares the sampling capability.
	NoSampling bool
	// SamplingTimeout bounds one sampling request (0:
	// consolidate.DefaultSamplingTimeout).
	SamplingTimeout time.Duration
	// SamplingMax is how many sampling requests one sleep sends at most; the
	// other new clusters are written by the default writer (0:
	// consolidate.DefaultSamplingMax).
	SamplingMax int
}

// samples reports whether the session's client declared the sampling
// capability.
func samples(ss *sdk.ServerSession) bool {
	if ss == nil {
		return false
	}
	p := ss.InitializeParams()
	return p != nil && p.Capabilities != nil && p.Capabilities.Sampling != nil
}

// samplingWriter is the writer one sleep of a session uses: the client's
// model, through sampling/createMessage, within the options' budget.
func (o Options) samplingWriter(ss *sdk.ServerSession) *consolidate.SamplingWriter {
	return &consolidate.SamplingWriter{Ask: sampler(ss), Timeout: o.SamplingTimeout, Max: o.SamplingMax, Redact: protocol.RedactRawData}
}

// sampler sends a request to the session's client and returns the text of
// its answer.
func sampler(ss *sdk.ServerSession) consolidate.Sampler {
	return func(ctx context.Context, system, prompt string, maxTokens int) (string, error) {
		res, err := ss.CreateMessage(ctx, createParams(system, prompt, maxTokens))
		if err != nil {
			return "", fmt.Errorf("the client's model: %w", err)
		}
		if res == nil || res.Content == nil {
			return "", errors.New("the client's model gave no content")
		}
		tc, ok := res.Content.(*sdk.TextContent)
		if !ok {
			return "", fmt.Errorf("the client's model answered with %T, not text", res.Content)
		}
		return tc.Text, nil
	}
}

func createParams(system, prompt string, maxTokens int) *sdk.CreateMessageParams {
	return &sdk.CreateMessageParams{
		SystemPrompt: system,
		MaxTokens:    int64(maxTokens),
		Temperature:  0.2,
		Messages:     []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: prompt}}},
		ModelPreferences: &sdk.ModelPreferences{
			SpeedPriority: 0.7, CostPriority: 0.7, IntelligencePriority: 0.5,
		},
	}
}

// roundTrips reports whether the session's protocol version has the
// server ask for sampling by returning input requests from the tool call
// (multi round-trip, SEP-2322) rather than by sending a request while it
// serves one.
func roundTrips(ss *sdk.ServerSession) bool {
	p := ss.InitializeParams()
	return p != nil && p.ProtocolVersion >= "2026-07-28"
}

// samplingState is what a sleep asked the client's model, kept between the
// call that asked and its retry with the answers.
type samplingState struct {
	mu    sync.Mutex
	asked map[string]map[string]string // request state → input request id → cluster key
}

const maxSamplingStates = 16

func (s *samplingState) put(ids map[string]string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.asked == nil || len(s.asked) >= maxSamplingStates {
		s.asked = map[string]map[string]string{}
	}
	tok := newSessionID()
	s.asked[tok] = ids
	return tok
}

func (s *samplingState) take(tok string) map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := s.asked[tok]
	delete(s.asked, tok)
	return ids
}

// askModel plans the new clusters of the next sleep and, when there are
// some, returns the result that asks the client's model for their
// sentences (at most SamplingMax). asked is false when there is nothing to
// ask, or a running node holds the memory (it sleeps with its own writer).
func (t *tools) askModel(ctx context.Context) (_ *sdk.CallToolResult, asked bool, err error) {
	var clusters []consolidate.Cluster
	err = t.with(ctx, func(svc node.Service) (err error) {
		if l, ok := svc.(node.Local); ok {
			clusters, err = l.M.PlanClusters(ctx)
		}
		return err
	})
	if err != nil || len(clusters) == 0 {
		return nil, false, err
	}
	max := t.opts.SamplingMax
	if max <= 0 {
		max = consolidate.DefaultSamplingMax
	}
	reqs := sdk.InputRequestMap{}
	ids := map[string]string{}
	for i, c := range clusters[:min(len(clusters), max)] {
		prompt, err := consolidate.SamplingPrompt(c, protocol.RedactRawData)
		if err != nil {
			return nil, false, err
		}
		id := fmt.Sprintf("lesson-%d", i)
		reqs[id] = createParams(consolidate.SamplingSystemPrompt, prompt, consolidate.SamplingMaxTokens)
		ids[id] = consolidate.ClusterKey(c)
	}
	return &sdk.CallToolResult{InputRequests: reqs, RequestState: t.state.put(ids)}, true, nil
}

// answered is the writer of the sleep a retry runs: the answers the client's
// model gave to what askModel asked.
func (t *tools) answered(p *sdk.CallToolParamsRaw) consolidate.AnsweredWriter {
	w := consolidate.AnsweredWriter{Answers: map[string]string{}, Asked: map[string]bool{}}
	for id, key := range t.state.take(p.RequestState) {
		w.Asked[key] = true
		if text, ok := answerText(p.InputResponses[id]); ok {
			w.Answers[key] = text
		}
	}
	return w
}

func answerText(r sdk.InputResponse) (string, bool) {
	var content []sdk.Content
	switch r := r.(type) {
	case *sdk.CreateMessageResult:
		content = []sdk.Content{r.Content}
	case *sdk.CreateMessageWithToolsResult:
		content = r.Content
	default:
		return "", false
	}
	if len(content) != 1 {
		return "", false
	}
	tc, ok := content[0].(*sdk.TextContent)
	if !ok {
		return "", false
	}
	return tc.Text, true
}
