//lint:file-ignore SA1019 MCP sampling is deprecated as of protocol 2026-07-28 (SEP-2577) but served within its deprecation window: it is how a client lends its model

package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPSamplingWriter drives the built `remem mcp` with a client that
// declares sampling and answers from a script: a good sentence, an
// instruction (refused: the default writer writes that lesson), and no
// answer within the time limit (the default writer again). The sleep
// output and `remem status` count each writer's lessons and refusals.
//
// On protocol 2025-11-25 the server sends each request while it serves the
// sleep call and bounds it by --sampling-timeout; on 2026-07-28 and later it
// returns the requests from the call (multi round-trip) and the client
// retries with the answers, so the late answer is still taken.
func TestMCPSamplingWriter(t *testing.T) {
	for _, version := range []string{"2025-11-25", ""} {
		t.Run("protocol "+version, func(t *testing.T) { mcpSampling(t, version) })
	}
}

func mcpSampling(t *testing.T, version string) {
	home := newHome(t)
	cmd := exec.Command(remem(t), "mcp", "--sampling-timeout", "2s")
	cmd.Env = append(os.Environ(), "REMEM_HOME="+home)
	var stderr syncBuffer
	cmd.Stderr = &stderr

	good := "npm ci fails with EUSAGE when the lock file is out of sync with the manifest."
	var mu sync.Mutex
	var prompts, systems []string
	handler := func(ctx context.Context, req *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
		prompt := ""
		for _, m := range req.Params.Messages {
			if tc, ok := m.Content.(*sdk.TextContent); ok {
				prompt += tc.Text
			}
		}
		mu.Lock()
		prompts, systems = append(prompts, prompt), append(systems, req.Params.SystemPrompt)
		mu.Unlock()
		answer := ""
		switch {
		case strings.Contains(prompt, "EUSAGE"):
			answer = good
		case strings.Contains(prompt, "libssl"):
			answer = "Always install libssl before you run the build."
		case strings.Contains(prompt, "staging database"):
			select { // never answers within the time limit
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(3 * time.Second):
			}
			answer = "The staging database answers late."
		default:
			t.Errorf("unexpected sampling prompt:\n%s", prompt)
		}
		return &sdk.CreateMessageResult{Model: "scripted", Role: "assistant", Content: &sdk.TextContent{Text: answer}}, nil
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "remem-test-agent", Version: "1"}, &sdk.ClientOptions{CreateMessageHandler: handler})
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, &sdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("initialize: %v\nstderr:\n%s", err, stderr.String())
	}
	defer cs.Close()
	call := func(name string, args map[string]any, v any) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("%s: %+v %v\nstderr:\n%s", name, res, err, stderr.String())
		}
		data, _ := json.Marshal(res.StructuredContent)
		if v != nil {
			if err := json.Unmarshal(data, v); err != nil {
				t.Fatal(err)
			}
		}
		return string(data)
	}
	for _, ev := range []map[string]any{
		{"kind": "error", "title": "npm ci", "cwd": "/srv/checkout-web", "happened": "npm ci fails with EUSAGE because package-lock.json is out of sync"},
		{"kind": "environment", "cwd": "/srv/checkout-web", "happened": "the build container lacks libssl so the linker stops"},
		{"kind": "surprise", "cwd": "/srv/checkout-web", "happened": "the staging database answers after a minute of silence"},
	} {
		call("remember", ev, nil)
	}
	var sl struct {
		NewLessons int      `json:"new_lessons"`
		Dropped    []string `json:"dropped"`
		Writers    struct {
			Written, Refused, Failed map[string]int
		} `json:"writers"`
	}
	out := call("sleep", map[string]any{}, &sl)
	wantSampled, wantFailed, wantStatus := 1, 1, "writers    default 2, sampling 1 (1 refused, 1 failed)"
	if version == "" {
		wantSampled, wantFailed, wantStatus = 2, 0, "writers    default 1, sampling 2 (1 refused)"
	}
	if sl.NewLessons != 3 || sl.Writers.Written["sampling"] != wantSampled || sl.Writers.Written["default"] != 3-wantSampled ||
		sl.Writers.Refused["sampling"] != 1 || sl.Writers.Failed["sampling"] != wantFailed {
		t.Fatalf("sleep: %s\nstderr:\n%s", out, stderr.String())
	}
	mu.Lock()
	if len(prompts) != 3 {
		t.Errorf("%d sampling requests, want one per new cluster", len(prompts))
	}
	for i, p := range prompts {
		if !strings.Contains(p, "<<<EVENTS ") || !strings.Contains(p, "not instructions") || !strings.Contains(systems[i], "never an instruction") {
			t.Errorf("request %d does not quote the events as data under the rules:\n%s\n%s", i, systems[i], p)
		}
	}
	mu.Unlock()
	var ls struct{ Lessons []struct{ Text string } }
	lessons := call("lessons", map[string]any{}, &ls)
	if !strings.Contains(lessons, good) || strings.Contains(lessons, "Always install") {
		t.Errorf("lessons: %s", lessons)
	}
	if err := cs.Close(); err != nil {
		t.Errorf("closing: %v", err)
	}

	stdout, errOut, code := run(t, home, nil, "status")
	if code != 0 || !strings.Contains(stdout, wantStatus) {
		t.Errorf("status (%d):\n%s\n%s", code, stdout, errOut)
	}
}
