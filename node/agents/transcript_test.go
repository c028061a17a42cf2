package agents

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// place copies a recorded transcript into a user home where the tool
// keeps them.
func place(t *testing.T, tool *Tool, name string) (userHome, path string) {
	t.Helper()
	userHome = t.TempDir()
	data, err := os.ReadFile(filepath.Join("testdata/transcripts", name))
	if err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(userHome, tool.transcripts, "proj", "session.jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return userHome, path
}

func TestLastAgentTurn(t *testing.T) {
	home, path := place(t, claudeCode, "claude.jsonl")
	if got := LastAgentTurn(claudeCode, path, home); got != "Edit /home/user/my-project/config/app.yaml" {
		t.Errorf("claude: %q", got)
	}
	home, path = place(t, codex, "codex.jsonl")
	if got := LastAgentTurn(codex, path, home); got != "shell: go mod edit -go=1.27" {
		t.Errorf("codex: %q", got)
	}
	if got := LastAgentTurn(geminiCLI, path, home); got != "" {
		t.Errorf("gemini reads no transcript: %q", got)
	}
}

// A payload naming a file outside the tool's transcripts (or a link out
// of them) is not read: a hostile payload cannot make the hook copy the
// person's files into an event.
func TestLastAgentTurnReadsOnlyTranscripts(t *testing.T) {
	home, path := place(t, claudeCode, "claude.jsonl")
	secret := filepath.Join(home, ".ssh", "notes.jsonl")
	_ = os.MkdirAll(filepath.Dir(secret), 0o700)
	if err := os.WriteFile(secret, []byte(`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"SECRET"}]}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(filepath.Dir(path), "link.jsonl")
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{secret, link, filepath.Join(filepath.Dir(path), "..", "..", "..", ".ssh", "notes.jsonl"), "/etc/passwd", filepath.Join(home, claudeCode.transcripts)} {
		if got := LastAgentTurn(claudeCode, p, home); got != "" {
			t.Errorf("%s: read %q", p, got)
		}
	}
	// A huge transcript: only its tail is read.
	big := filepath.Join(filepath.Dir(path), "big.jsonl")
	data := strings.Repeat(`{"type":"user","message":{"role":"user","content":"x"}}`+"\n", 20000) +
		`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"I deleted the cache directory."}]}}` + "\n"
	if err := os.WriteFile(big, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := LastAgentTurn(claudeCode, big, home); got != "I deleted the cache directory." {
		t.Errorf("big: %q", got)
	}
}

func FuzzAgentTurn(f *testing.F) {
	for _, name := range []string{"claude.jsonl", "codex.jsonl"} {
		data, _ := os.ReadFile(filepath.Join("testdata/transcripts", name))
		for _, l := range strings.Split(string(data), "\n") {
			f.Add([]byte(l))
		}
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		_ = agentTurn(line)
	})
}
