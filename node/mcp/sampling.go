package mcp

import (
	"context"
	"errors"
	"fmt"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

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
		res, err := ss.CreateMessage(ctx, &sdk.CreateMessageParams{
			SystemPrompt: system,
			MaxTokens:    int64(maxTokens),
			Temperature:  0.2,
			Messages:     []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: prompt}}},
			ModelPreferences: &sdk.ModelPreferences{
				SpeedPriority: 0.7, CostPriority: 0.7, IntelligencePriority: 0.5,
			},
		})
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
