package agents

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"
)

var hookNow = time.Date(2026, 12, 2, 16, 0, 0, 0, time.UTC)

// Every recorded payload (testdata/hooks/TOOL/EVENT*.json, from each tool's
// documentation) gives the action it should.
func TestReadHookRecordedPayloads(t *testing.T) {
	want := map[string]string{
		"claude-code/PostToolUse.Bash.json":                        "",
		"claude-code/PostToolUse.Edit.json":                        "",
		"claude-code/PostToolUse.Write.json":                       "",
		"claude-code/PostToolUse.mcp-isError.json":                 "error",
		"claude-code/PostToolUseFailure.Bash.json":                 "error",
		"claude-code/PostToolUseFailure.Read.json":                 "",
		"claude-code/SessionStart.json":                            "context",
		"claude-code/UserPromptSubmit.json":                        "",
		"claude-code/UserPromptSubmit.correction.json":             "correction",
		"codex/PostToolUse.Bash-nonzero-exit.json":                 "error",
		"codex/PostToolUse.Bash.json":                              "",
		"codex/PostToolUse.apply_patch.json":                       "",
		"codex/SessionStart.json":                                  "context",
		"codex/Stop.json":                                          "",
		"codex/UserPromptSubmit.json":                              "",
		"gemini-cli/AfterTool.mcp.json":                            "",
		"gemini-cli/AfterTool.read_file.failure.json":              "",
		"gemini-cli/AfterTool.run_shell_command.nonzero-exit.json": "error",
		"gemini-cli/AfterTool.run_shell_command.success.json":      "",
		"gemini-cli/BeforeAgent.json":                              "",
		"gemini-cli/SessionStart.json":                             "context",
	}
	files, _ := filepath.Glob("testdata/hooks/*/*.json")
	if len(files) != len(want) {
		t.Errorf("%d recorded payloads, %d expectations", len(files), len(want))
	}
	for _, f := range files {
		rel := strings.TrimPrefix(filepath.ToSlash(f), "testdata/hooks/")
		exp, ok := want[rel]
		if !ok {
			t.Errorf("%s: no expectation", rel)
			continue
		}
		tool, err := Find(strings.Split(rel, "/")[0])
		if err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(f)
		a, err := ReadHook(tool, data, hookNow)
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		got := ""
		switch {
		case a.ContextFor != "":
			got = "context"
		case a.Event != nil:
			got = a.Event.Kind
		}
		if got != exp {
			t.Errorf("%s: %q (%s), want %q", rel, got, a.Why, exp)
		}
		if a.Why == "" {
			t.Errorf("%s: no reason given", rel)
		}
		if a.Event != nil {
			if a.Event.Agent != tool.Name || a.Event.Session == "" || a.Event.At != "2026-12-02T16:00:00Z" {
				t.Errorf("%s: event %+v", rel, a.Event)
			}
			if err := a.Event.Validate(); err != nil {
				t.Errorf("%s: %v", rel, err)
			}
		}
	}
}

// What a failed call's event says: the call as the title, the error's
// text as what happened, without the tool's framing.
func TestHookErrorEvents(t *testing.T) {
	for _, tc := range []struct {
		file, title, happened string
	}{
		{"claude-code/PostToolUseFailure.Bash.json", "Bash: npm test", "Command exited with non-zero status code 1"},
		{"codex/PostToolUse.Bash-nonzero-exit.json", "Bash: false", "exit status 7"},
		{"gemini-cli/AfterTool.run_shell_command.nonzero-exit.json", "run_shell_command: go test ./pkg/store", "--- FAIL: TestPut (0.00s)\nFAIL\texample.com/remem/pkg/store\t0.010s"},
		{"claude-code/PostToolUse.mcp-isError.json", "mcp__github__create_issue", `[{"type": "text", "text": "Bad credentials"}]`},
	} {
		tool, _ := Find(strings.Split(tc.file, "/")[0])
		data, _ := os.ReadFile("testdata/hooks/" + tc.file)
		a, err := ReadHook(tool, data, hookNow)
		if err != nil || a.Event == nil {
			t.Fatalf("%s: %v %+v", tc.file, err, a)
		}
		if a.Event.Title != tc.title || a.Event.Happened != tc.happened {
			t.Errorf("%s:\n title %q want %q\n happened %q want %q", tc.file, a.Event.Title, tc.title, a.Event.Happened, tc.happened)
		}
	}
}

// A hostile payload: huge output, terminal escapes and control characters,
// a path outside any project, a prompt built to look like an order. The
// event keeps a bounded, printable report; nothing is lost or run.
func TestReadHookHostilePayloads(t *testing.T) {
	huge := strings.Repeat("x", 3<<20) + "\x1b[31mFATAL\x1b[0m: disk \x07full\x00\r\nat the end"
	p, _ := json.Marshal(map[string]any{
		"hook_event_name": "PostToolUseFailure", "session_id": "s\x1b]0;owned\x07", "cwd": "/etc/../../root",
		"tool_name": "Bash", "tool_input": map[string]any{"command": "make\x1b[2J\u202e build\nrm -rf /"},
		"error": huge,
	})
	a, err := ReadHook(claudeCode, p, hookNow)
	if err != nil || a.Event == nil {
		t.Fatalf("%v %+v", err, a)
	}
	ev := a.Event
	for name, s := range map[string]string{"title": ev.Title, "happened": ev.Happened, "session": ev.Session, "cwd": ev.Cwd} {
		if strings.ContainsFunc(s, func(r rune) bool {
			return r != '\n' && r != '\t' && (unicode.IsControl(r) || unicode.Is(unicode.Cf, r))
		}) {
			t.Errorf("%s keeps a control character: %q", name, s)
		}
	}
	if ev.Title != "Bash: make build" {
		t.Errorf("title %q", ev.Title)
	}
	if !strings.HasSuffix(ev.Happened, "FATAL: disk full\nat the end") || len([]rune(ev.Happened)) > maxHappenedChars {
		t.Errorf("happened keeps %d characters, ending %q", len([]rune(ev.Happened)), ev.Happened[len(ev.Happened)-40:])
	}
	if ev.Cwd != "/root" {
		t.Errorf("cwd %q", ev.Cwd)
	}
	line, _ := json.Marshal(ev)
	if len(line) > 64<<10 {
		t.Errorf("the event is %d bytes", len(line))
	}

	for _, bad := range []string{"", "null", "[1]", "{", `"x"`, strings.Repeat("[", 10000)} {
		if _, err := ReadHook(claudeCode, []byte(bad), hookNow); err == nil && bad != "null" {
			t.Errorf("%q: no error", bad)
		}
	}
	for _, odd := range []string{`{}`, `{"hook_event_name": "Notification"}`, `{"hook_event_name": "SessionStart", "cwd": "relative/dir"}`,
		`{"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_response": 42}`,
		`{"hook_event_name": "UserPromptSubmit", "prompt": 7}`} {
		a, err := ReadHook(claudeCode, []byte(odd), hookNow)
		if a.Event != nil || a.ContextFor != "" {
			t.Errorf("%s: %+v (%v)", odd, a, err)
		}
	}
}

func TestContextOutput(t *testing.T) {
	if ContextOutput("SessionStart", "") != nil {
		t.Error("empty context prints something")
	}
	var out struct {
		H struct {
			HookEventName     string `json:"hookEventName"`
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(ContextOutput("SessionStart", "## x\n- y"), &out); err != nil || out.H.AdditionalContext != "## x\n- y" || out.H.HookEventName != "SessionStart" {
		t.Errorf("%+v %v", out, err)
	}
}

func FuzzReadHook(f *testing.F) {
	files, _ := filepath.Glob("testdata/hooks/*/*.json")
	for _, file := range files {
		data, _ := os.ReadFile(file)
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, tool := range Tools {
			a, err := ReadHook(tool, data, hookNow)
			if err != nil {
				continue
			}
			if a.Event != nil {
				if err := a.Event.Validate(); err != nil {
					t.Fatalf("an invalid event: %v", err)
				}
				if line, _ := json.Marshal(a.Event); len(line) > 64<<10 {
					t.Fatalf("an event of %d bytes", len(line))
				}
			}
		}
	})
}
