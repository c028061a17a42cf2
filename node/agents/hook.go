package agents

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/remem/remem/protocol"
)

// MaxPayloadBytes bounds what a hook reads of its payload. A tool's payload
// carries the call's input and output, which the tools cap themselves (a
// few tens of KiB); a larger one is not parsed, and costs nothing.
const MaxPayloadBytes = 8 << 20

// Bounds of what an event keeps of a payload: the call as a title, the end
// of its error (where the message is), the person's words.
const (
	maxTitleChars    = 200
	maxHappenedChars = 2000
	maxSaidChars     = 4000
)

// Action is what one hook payload asks of the memory: an event to report,
// the lessons of a project to print, or nothing, with why.
type Action struct {
	Event *protocol.Event
	// ContextFor is the project directory whose lessons the tool wants
	// in its model's context (a session starts).
	ContextFor string
	// HookEvent is the tool's name of the event ("PostToolUseFailure").
	HookEvent string
	// Why says what was decided, for the hook log and doctor.
	Why string
	// Transcript is the payload's transcript_path: LastAgentTurn reads
	// what the agent did before a correction from it.
	Transcript string
}

// hookPayload holds the fields remem reads of every tool's hook payload;
// the tools name them alike (Claude Code set the shape, Codex and Gemini
// CLI follow it).
type hookPayload struct {
	HookEventName string          `json:"hook_event_name"`
	SessionID     string          `json:"session_id"`
	Cwd           string          `json:"cwd"`
	ToolName      string          `json:"tool_name"`
	ToolInput     json.RawMessage `json:"tool_input"`
	ToolResponse  json.RawMessage `json:"tool_response"`
	Error         json.RawMessage `json:"error"`
	IsInterrupt   bool            `json:"is_interrupt"`
	Prompt        string          `json:"prompt"`
	Timestamp     string          `json:"timestamp"`
	Transcript    string          `json:"transcript_path"`
}

// ReadHook decides what a hook payload of tool asks for. It never fails
// on content it does not know: an unknown event or tool call is an Action
// with no event and a Why; only a payload that is not a JSON object is an
// error.
func ReadHook(tool *Tool, data []byte, now time.Time) (Action, error) {
	var p hookPayload
	if err := json.Unmarshal(data, &p); err != nil {
		return Action{}, fmt.Errorf("the hook payload is not the JSON object %s sends: %w", tool.Title, err)
	}
	a := Action{HookEvent: p.HookEventName, Transcript: p.Transcript}
	ev := tool.events[p.HookEventName]
	switch ev {
	case hookSessionStart:
		a.ContextFor, a.Why = projectDir(p.Cwd), "session start"
		if a.ContextFor == "" {
			a.Why = "session start without an absolute cwd"
		}
		return a, nil
	case hookPrompt:
		ok, cue := Correction(p.Prompt)
		if !ok {
			a.Why = "prompt, not a correction"
			return a, nil
		}
		a.Event = &protocol.Event{Kind: protocol.EventCorrection, Said: clip(cleanText(p.Prompt), maxSaidChars, false)}
		a.Why = "correction (" + cue + ")"
	case hookToolDone, hookToolFailed:
		if skip := tool.quietTool(p.ToolName); skip != "" {
			a.Why = skip
			return a, nil
		}
		failed, happened := ev == hookToolFailed, ""
		if failed {
			if p.IsInterrupt {
				a.Why = "interrupted by the person"
				return a, nil
			}
			happened = rawText(p.Error)
		} else {
			failed, happened = tool.failure(p.ToolName, p.ToolResponse)
		}
		if !failed {
			a.Why = "successful call"
			return a, nil
		}
		if strings.TrimSpace(happened) == "" {
			happened = "the call failed with no message"
		}
		a.Event = &protocol.Event{Kind: protocol.EventError, Title: callTitle(p.ToolName, p.ToolInput),
			Happened: clip(cleanText(happened), maxHappenedChars, true)}
		a.Why = "failed " + p.ToolName
	default:
		a.Why = "event not handled: " + clip(cleanText(p.HookEventName), 60, false)
		return a, nil
	}
	a.Event.Agent = tool.Name
	a.Event.Session = clip(cleanText(p.SessionID), 200, false)
	a.Event.Cwd = projectDir(p.Cwd)
	a.Event.At = now.UTC().Format(time.RFC3339)
	if err := a.Event.Validate(); err != nil {
		a.Why += ", not reported: " + err.Error()
		a.Event = nil
	}
	return a, nil
}

// projectDir is cwd when it is a clean absolute path, else "".
func projectDir(cwd string) string {
	if cwd == "" || !filepath.IsAbs(cwd) || strings.ContainsFunc(cwd, unicode.IsControl) || len(cwd) > 4096 {
		return ""
	}
	return filepath.Clean(cwd)
}

// quietTool says why a call of name reports nothing even when it fails: a
// tool that only reads (a file not found is no surprise worth a lesson),
// or remem's own tools, whose failures the agent already sees.
func (t *Tool) quietTool(name string) string {
	switch {
	case name == "":
		return "no tool name"
	case t.readOnly[name]:
		return "read-only tool " + name
	case ownTool.MatchString(name):
		return "remem's own tool"
	}
	return ""
}

// ownTool matches remem's MCP tools as each tool names them
// (mcp__remem__recall, mcp_remem_recall).
var ownTool = regexp.MustCompile(`^mcp_+remem_+`)

// failure reads a finished call's response for a failure the tool did not
// flag: an exit code, an error field, success: false.
func (t *Tool) failure(toolName string, resp json.RawMessage) (bool, string) {
	resp = bytes.TrimSpace(resp)
	if len(resp) == 0 || string(resp) == "null" {
		return false, ""
	}
	if resp[0] == '"' {
		var s string
		_ = json.Unmarshal(resp, &s)
		return textFailure(s)
	}
	var r map[string]json.RawMessage
	if json.Unmarshal(resp, &r) != nil {
		return false, ""
	}
	output := firstText(r, "stderr", "output", "llmContent", "stdout", "content", "returnDisplay")
	if e := rawText(r["error"]); e != "" {
		if output != "" && !strings.Contains(output, e) {
			return true, e + "\n" + output
		}
		return true, e
	}
	for _, k := range []string{"is_error", "isError"} {
		if string(r[k]) == "true" {
			return true, output
		}
	}
	if string(r["success"]) == "false" {
		return true, output
	}
	for _, k := range []string{"exit_code", "exitCode", "returncode", "exit_status"} {
		if n, err := strconv.Atoi(string(r[k])); err == nil && n != 0 {
			return true, output
		}
	}
	if ok, text := textFailure(output); ok {
		return true, text
	}
	return false, ""
}

// exitLine finds the exit status a shell tool writes into its output:
// Codex "Process exited with code 7", Gemini CLI "Exit Code: 1" and
// "Command exited with code: 1".
var exitLine = regexp.MustCompile(`(?m)^(?:Process exited with code|Exit Code:|Command exited with code:)\s*(-?\d+)\s*$`)

// textFailure reads a tool's text output for a non-zero exit status, and
// gives the output without the tool's own framing lines.
func textFailure(s string) (bool, string) {
	m := exitLine.FindStringSubmatch(s)
	if m == nil || m[1] == "0" {
		return false, ""
	}
	var kept []string
	for _, line := range strings.Split(s, "\n") {
		l := strings.TrimSpace(line)
		if exitLine.MatchString(line) || l == "Final output:" || strings.HasPrefix(l, "Chunk ID:") || strings.HasPrefix(l, "Process Group PGID:") ||
			strings.HasPrefix(l, "Wall time:") || l == "<untrusted_context>" || l == "</untrusted_context>" {
			continue
		}
		kept = append(kept, strings.TrimPrefix(line, "Output: "))
	}
	out := strings.TrimSpace(strings.Join(kept, "\n"))
	if out == "" || out == "(empty)" {
		out = "exit status " + m[1]
	}
	return true, out
}

func firstText(r map[string]json.RawMessage, keys ...string) string {
	for _, k := range keys {
		if s := rawText(r[k]); strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}

// rawText is a JSON value as text: a string as itself, an object's
// "message", anything else as its JSON.
func rawText(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || string(v) == "null" || string(v) == "false" {
		return ""
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	var o struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(v, &o) == nil && o.Message != "" {
		return o.Message
	}
	return string(v)
}

// callTitle names the call: a shell command by its first line, a file
// tool by its path, any other by its name.
func callTitle(name string, input json.RawMessage) string {
	var in map[string]json.RawMessage
	_ = json.Unmarshal(input, &in)
	for _, k := range []string{"command", "cmd"} {
		if c := rawText(in[k]); c != "" {
			if k == "command" && strings.HasPrefix(c, "*** Begin Patch") {
				break // Codex's apply_patch puts its patch in "command"
			}
			first, _, _ := strings.Cut(strings.TrimSpace(c), "\n")
			return clip(cleanText(name+": "+first), maxTitleChars, false)
		}
	}
	for _, k := range []string{"file_path", "path", "absolute_path", "notebook_path", "url"} {
		if p := rawText(in[k]); p != "" {
			return clip(cleanText(name+" "+p), maxTitleChars, false)
		}
	}
	return clip(cleanText(name), maxTitleChars, false)
}

// ansi matches the terminal escapes tools leave in their output.
var ansi = regexp.MustCompile("\x1b(?:\\[[0-?]*[ -/]*[@-~]|\\][^\x07\x1b]*(?:\x07|\x1b\\\\)|[@-Z\\\\-_])")

// cleanText drops terminal escapes and control characters but line
// breaks and tabs, and makes the text valid UTF-8: an event is a report
// for sleep, never a terminal's input.
func cleanText(s string) string {
	s = strings.ToValidUTF8(ansi.ReplaceAllString(s, ""), "\uFFFD")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case r == '\r':
			return '\n'
		case unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Cf, r):
			return -1
		}
		return r
	}, s)
}

// clip keeps at most n characters of s: its end when tail (an error's
// message is at the end of its output), else its start.
func clip(s string, n int, tail bool) string {
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	if tail {
		return "…" + strings.TrimLeftFunc(string(r[len(r)-n+1:]), unicode.IsSpace)
	}
	return strings.TrimRightFunc(string(r[:n-1]), unicode.IsSpace) + "…"
}

// ContextOutput is what a hook prints so that the tool puts markdown in
// its model's context: the hookSpecificOutput every one of the three
// tools reads on exit 0. Empty markdown prints nothing.
func ContextOutput(hookEvent, markdown string) []byte {
	if markdown == "" {
		return nil
	}
	out, _ := json.Marshal(map[string]any{"hookSpecificOutput": map[string]string{
		"hookEventName": hookEvent, "additionalContext": markdown}})
	return append(out, '\n')
}
