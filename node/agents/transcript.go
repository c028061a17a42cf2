package agents

import (
	"bytes"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"

	"github.com/remem/remem/internal/regularfile"
)

// maxTranscriptTail bounds what LastAgentTurn reads of a transcript: its
// end, where the turn before the person's prompt is.
const maxTranscriptTail = 256 << 10

// maxAgentDidChars bounds what a correction keeps of the agent's turn.
const maxAgentDidChars = 600

// LastAgentTurn says what the agent did just before the person's prompt,
// from the session transcript the payload names: its last tool call
// ("Edit /src/app.go", "Bash: npm install") or the start of its last text.
// It reads only a regular file under the tool's own transcript directory
// in userHome, so a payload cannot make it read anything else, and gives
// "" when it finds nothing. The transcripts' format is the tools' own and
// undocumented (Claude Code: {"type":"assistant","message":{"content":
// [blocks]}}; Codex: {"type":"response_item","payload":{...}}): anything
// it does not know is skipped.
func LastAgentTurn(t *Tool, transcript, userHome string) string {
	if t.transcripts == "" || transcript == "" || userHome == "" {
		return ""
	}
	dir, err := filepath.EvalSymlinks(filepath.Join(userHome, t.transcripts))
	if err != nil {
		return ""
	}
	path, err := filepath.EvalSymlinks(transcript)
	if err != nil {
		return ""
	}
	if rel, err := filepath.Rel(dir, path); err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return ""
	}
	f, err := regularfile.Open(path)
	if err != nil {
		return ""
	}
	defer func() { _ = f.Close() }() // read only
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	start := max(0, fi.Size()-maxTranscriptTail)
	data, err := io.ReadAll(io.NewSectionReader(f, start, fi.Size()-start))
	if err != nil {
		return ""
	}
	lines := bytes.Split(data, []byte("\n"))
	if start > 0 && len(lines) > 0 {
		lines = lines[1:] // cut mid-line
	}
	for i := len(lines) - 1; i >= 0; i-- {
		if did := agentTurn(lines[i]); did != "" {
			return clip(cleanText(did), maxAgentDidChars, false)
		}
	}
	return ""
}

// agentTurn reads one transcript line for what the agent did.
func agentTurn(line []byte) string {
	var rec struct {
		Type    string          `json:"type"`
		Message json.RawMessage `json:"message"`
		Payload json.RawMessage `json:"payload"`
	}
	if json.Unmarshal(line, &rec) != nil {
		return ""
	}
	body := rec.Message
	if len(body) == 0 {
		body = rec.Payload
	}
	var m struct {
		Type      string            `json:"type"`
		Role      string            `json:"role"`
		Name      string            `json:"name"`
		Arguments string            `json:"arguments"`
		Content   []json.RawMessage `json:"content"`
	}
	if json.Unmarshal(body, &m) != nil {
		return ""
	}
	if m.Type == "function_call" && m.Name != "" { // Codex
		return callTitle(m.Name, json.RawMessage(m.Arguments))
	}
	if m.Role != "assistant" {
		return ""
	}
	text := ""
	for i := len(m.Content) - 1; i >= 0; i-- {
		var b struct {
			Type  string          `json:"type"`
			Text  string          `json:"text"`
			Name  string          `json:"name"`
			Input json.RawMessage `json:"input"`
		}
		if json.Unmarshal(m.Content[i], &b) != nil {
			continue
		}
		switch b.Type {
		case "tool_use":
			return callTitle(b.Name, b.Input)
		case "text", "output_text":
			if text == "" {
				text = strings.TrimSpace(b.Text)
			}
		}
	}
	return text
}
