//go:build unix

package consolidate

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/remem/remem/internal/testutil"
	"github.com/remem/remem/protocol/textcheck"
)

const recordedSentence = "The integration tests time out when the local database container starts after them."

// fakeTool writes an executable shell script named name into dir: it
// records its arguments, stdin and environment next to itself, then runs
// body.
func fakeTool(t *testing.T, dir, name, body string) {
	t.Helper()
	script := "#!/bin/sh\n" +
		`printf '%s\n' "$@" > "$0.args"` + "\n" +
		`cat > "$0.stdin"` + "\n" +
		`env > "$0.env"` + "\n" + body + "\n"
	if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

// fakePath puts a new directory first on PATH (the system's after it, for
// sh, cat and sleep) and returns it.
func fakePath(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("PATH", dir+":/usr/bin:/bin")
	return dir
}

func testdataModel(name string) string { return filepath.Join("testdata", "models", name) }

func TestRecordedSentencePasses(t *testing.T) {
	if err := textcheck.CheckObservation(recordedSentence); err != nil {
		t.Fatalf("the recorded sentence is refused: %v", err)
	}
}

// Each tool's recorded good answer is read as the tool prints it.
func TestCLIModelGoodAnswers(t *testing.T) {
	for _, c := range []struct {
		model   CLIModel
		payload string
	}{
		{CLIModel{Tool: "claude"}, "claude-ok.json"},
		{CLIModel{Tool: "claude", Model: "sonnet"}, "claude-ok.json"},
		{CLIModel{Tool: "gemini"}, "gemini-ok.json"},
		{CLIModel{Tool: "ollama", Model: "llama3.2"}, "ollama-ok.txt"},
		{CLIModel{Tool: "llm", Model: "gpt-4o-mini"}, "llm-ok.txt"},
		{CLIModel{Tool: "codex"}, "codex-ok.txt"},
	} {
		t.Run(c.model.Name(), func(t *testing.T) {
			dir := fakePath(t)
			payload, err := filepath.Abs(testdataModel(c.payload))
			if err != nil {
				t.Fatal(err)
			}
			body := "cat " + payload
			if c.model.Tool == "codex" {
				// Progress on stderr, the last message in the file and on stdout.
				body = `while [ $# -gt 0 ]; do [ "$1" = --output-last-message ] && cp ` + payload + ` "$2"; shift; done; echo 'codex: thinking' >&2; cat ` + payload
			}
			fakeTool(t, dir, c.model.Tool, body)
			t.Setenv("REMEM_TEST_SECRET", "s3cret")
			t.Setenv("ANTHROPIC_API_KEY", "key-for-claude")
			got, err := c.model.Ask(context.Background(), "SYSTEM RULES", "-rf the prompt with --flags inside", 200)
			if err != nil {
				t.Fatal(err)
			}
			if s, err := oneLine(c.model.Tool, got); err != nil || s != recordedSentence {
				t.Fatalf("answer %q (%v), want the recorded sentence", got, err)
			}
			args := read(t, filepath.Join(dir, c.model.Tool+".args"))
			stdin := read(t, filepath.Join(dir, c.model.Tool+".stdin"))
			env := read(t, filepath.Join(dir, c.model.Tool+".env"))
			if strings.Contains(args, "the prompt") || !strings.Contains(stdin, "-rf the prompt with --flags inside") {
				t.Fatalf("the prompt went in argv, not stdin:\nargs %q\nstdin %q", args, stdin)
			}
			if strings.Contains(env, "REMEM_TEST_SECRET") || !strings.Contains(env, "HOME=") || !strings.Contains(env, "PATH=") {
				t.Fatalf("environment not bounded: %s", env)
			}
			if c.model.Tool == "claude" && !strings.Contains(env, "ANTHROPIC_API_KEY=key-for-claude") {
				t.Fatalf("claude's own key was dropped: %s", env)
			}
			if c.model.Model != "" && !strings.Contains(args, c.model.Model) {
				t.Fatalf("the model %q is not asked for: %s", c.model.Model, args)
			}
			if strings.Contains(env, "PWD="+mustGetwd(t)) {
				t.Fatalf("the tool ran in the caller's directory")
			}
		})
	}
}

func mustGetwd(t *testing.T) string {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Bad answers and failures are errors that name the tool and what to try.
func TestCLIModelBadAnswers(t *testing.T) {
	abs := func(name string) string {
		p, err := filepath.Abs(testdataModel(name))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		name, tool, body, want string
	}{
		{"claude is_error", "claude", "cat " + abs("claude-error.json"), "reported an error"},
		{"claude max turns", "claude", "cat " + abs("claude-max-turns.json"), "error_max_turns"},
		{"claude invalid JSON", "claude", "echo 'The tests fail.'", "no JSON result"},
		{"claude exits 1", "claude", "cat " + abs("claude-error.json") + "; echo 'auth failed' >&2; exit 1", "claude exited 1: stderr: auth failed: reported an error"},
		{"gemini error", "gemini", "cat " + abs("gemini-error.json"), "FatalAuthenticationError"},
		{"gemini invalid JSON", "gemini", "echo '{\"resp'", "no JSON response"},
		{"gemini no response", "gemini", "echo '{}'", "without a response"},
		{"ollama exits 1", "ollama", "echo 'Error: model \"nope\" not found, try pulling it first' >&2; exit 1", "ollama exited 1"},
		{"llm huge answer", "llm", "head -c 10000000 /dev/zero | tr '\\0' a", "more than 64 KiB"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := fakePath(t)
			fakeTool(t, dir, c.tool, c.body)
			m := CLIModel{Tool: c.tool, Model: map[string]string{"ollama": "nope", "llm": "m"}[c.tool]}
			got, err := m.Ask(context.Background(), "system", "prompt", 200)
			if err == nil {
				t.Fatalf("answer %q, want an error", got[:min(len(got), 80)])
			}
			if !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), c.tool) || !strings.Contains(err.Error(), "check `"+c.tool) && !strings.Contains(err.Error(), "not one sentence") {
				t.Fatalf("error %q, want it to start with %q, hold %q and say what to check", err, c.tool, c.want)
			}
		})
	}
}

// A tool missing from PATH is a clear error.
func TestCLIModelMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	for _, tool := range CLITools {
		_, err := CLIModel{Tool: tool, Model: "m"}.Ask(context.Background(), "s", "p", 10)
		if err == nil || !strings.Contains(err.Error(), tool+" is not on PATH") || !strings.Contains(err.Error(), "remem doctor") {
			t.Fatalf("%s: %v", tool, err)
		}
	}
}

// A tool that hangs is killed, with the processes it started, at the
// time limit.
func TestCLIModelTimeoutKillsTheGroup(t *testing.T) {
	dir := fakePath(t)
	pidFile := filepath.Join(dir, "child.pid")
	fakeTool(t, dir, "claude", "sleep 30 & echo $! > "+pidFile+"; wait")
	start := time.Now()
	_, err := CLIModel{Tool: "claude", Timeout: 300 * time.Millisecond}.Ask(context.Background(), "s", "p", 10)
	took := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), "no answer within 300ms") {
		t.Fatalf("error %v", err)
	}
	if took > 3*time.Second {
		t.Fatalf("took %s, want the time limit and a little", took)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(read(t, pidFile)))
	if err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 2*time.Second, fmt.Sprintf("the tool's child %d to end", pid), func() bool { return !alive(pid) })
}

// alive: pid runs (a zombie waiting for its reaper does not count).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true // no /proc: trust kill
	}
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(f) == 0 || f[0] != "Z"
}

func TestParseCLIModel(t *testing.T) {
	for _, ok := range []string{"claude", "codex", "gemini", "ollama:llama3.2", "llm:gpt-4o-mini", "claude:sonnet", "ollama:hf.co/org/model:Q4_K_M"} {
		if _, err := ParseCLIModel(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "bogus", "ollama", "llm:", "ollama:-rf", "llm:a b", "ollama:x;rm", "claude:\x1b[31m"} {
		if _, err := ParseCLIModel(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	_, err := ParseCLIModel("bogus")
	for _, v := range ModelChoices() {
		if !strings.Contains(err.Error(), v) {
			t.Fatalf("the error does not list %s: %v", v, err)
		}
	}
}

// The chat endpoint's Ask is the request Write makes.
func TestChatWriterAsk(t *testing.T) {
	var asked string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		asked = r.URL.Path + " " + string(b)
		_, _ = w.Write([]byte(`{"choices":[{"message":{"role":"assistant","content":"yes"}}]}`))
	}))
	defer srv.Close()
	got, err := ChatWriter{URL: srv.URL + "/v1", Model: "small"}.Ask(context.Background(), "sys", "the prompt", 4)
	if err != nil || got != "yes" {
		t.Fatalf("%q %v", got, err)
	}
	for _, want := range []string{"/v1/chat/completions", `"content":"sys"`, `"content":"the prompt"`, `"max_tokens":4`, `"model":"small"`} {
		if !strings.Contains(asked, want) {
			t.Fatalf("request %s lacks %s", asked, want)
		}
	}
}

// toolPrinting is the body of a fake tool that prints text as the tool
// would print an answer (claude and gemini wrap it in their JSON).
func toolPrinting(tool, text string) string {
	q := strings.ReplaceAll(text, "'", `'\''`)
	switch tool {
	case "claude":
		return `printf '{"type":"result","subtype":"success","is_error":false,"result":"%s"}\n' '` + strings.ReplaceAll(q, "\n", `\n`) + `'`
	case "gemini":
		return `printf '{"response":"%s","stats":{}}\n' '` + strings.ReplaceAll(q, "\n", `\n`) + `'`
	case "codex":
		return `while [ $# -gt 0 ]; do [ "$1" = --output-last-message ] && printf '%s\n' '` + q + `' > "$2"; shift; done`
	}
	return `printf '%s\n' '` + q + `'`
}

// Through a SamplingWriter, every tool's answer of two lines is refused
// and its one sentence taken.
func TestCLIModelThroughSamplingWriter(t *testing.T) {
	c := Cluster{Kind: "error", Episodes: []Episode{{Kind: "error", Title: "go test", Happened: "the tests time out"}}}
	for _, tool := range CLITools {
		m := CLIModel{Tool: tool, Model: "m"}
		t.Run(tool, func(t *testing.T) {
			dir := fakePath(t)
			fakeTool(t, dir, tool, toolPrinting(tool, "Here is the lesson:\n"+recordedSentence))
			if _, err := (&SamplingWriter{Ask: m.Ask}).Write(context.Background(), c); err == nil || !strings.Contains(err.Error(), "2 lines") {
				t.Fatalf("two lines: %v", err)
			}
			fakeTool(t, dir, tool, toolPrinting(tool, recordedSentence))
			got, err := (&SamplingWriter{Ask: m.Ask, Name: m.Name()}).Write(context.Background(), c)
			if err != nil || got != recordedSentence {
				t.Fatalf("one sentence: %q %v", got, err)
			}
			if stdin := read(t, filepath.Join(dir, tool+".stdin")); !strings.Contains(stdin, `"happened": "the tests time out"`) || !strings.Contains(stdin, "<<<EVENTS ") {
				t.Fatalf("the events are not on stdin as quoted data: %s", stdin)
			}
		})
	}
}

// Every tool that hangs is killed at the time limit.
func TestCLIModelTimeoutEveryTool(t *testing.T) {
	for _, tool := range CLITools {
		t.Run(tool, func(t *testing.T) {
			dir := fakePath(t)
			fakeTool(t, dir, tool, "sleep 30")
			start := time.Now()
			_, err := CLIModel{Tool: tool, Model: "m", Timeout: 200 * time.Millisecond}.Ask(context.Background(), "s", "p", 10)
			if err == nil || !strings.Contains(err.Error(), tool+": no answer within 200ms, killed") {
				t.Fatalf("error %v", err)
			}
			if took := time.Since(start); took > 3*time.Second {
				t.Fatalf("took %s", took)
			}
		})
	}
}

// The argv of each tool, as its documentation gives it: the prompt is in
// none of them.
func TestCLIModelInvocations(t *testing.T) {
	for _, c := range []struct {
		m    CLIModel
		want string
	}{
		{CLIModel{Tool: "claude"}, `-p --output-format json --system-prompt=SYS --max-turns 1 --tools `},
		{CLIModel{Tool: "claude", Model: "sonnet"}, `-p --output-format json --system-prompt=SYS --max-turns 1 --tools  --model=sonnet`},
		{CLIModel{Tool: "codex"}, `exec --skip-git-repo-check --sandbox read-only --ephemeral --color never --output-last-message DIR/last-message.txt -`},
		{CLIModel{Tool: "gemini", Model: "gemini-2.5-flash"}, `--output-format json --prompt=Answer the request given on standard input, as it asks. --model=gemini-2.5-flash`},
		{CLIModel{Tool: "ollama", Model: "llama3.2"}, `run --hidethinking llama3.2`},
		{CLIModel{Tool: "llm", Model: "gpt-4o-mini"}, `-m gpt-4o-mini --no-log --system=SYS`},
	} {
		args, stdin, _ := c.m.invocation("DIR", "SYS", "PROMPT")
		if got := strings.Join(args, " "); got != c.want {
			t.Errorf("%s: %q, want %q", c.m.Name(), got, c.want)
		}
		if !strings.Contains(stdin, "PROMPT") {
			t.Errorf("%s: stdin %q", c.m.Name(), stdin)
		}
	}
}
