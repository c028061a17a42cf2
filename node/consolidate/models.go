package consolidate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"
)

// CLIModel is a Sampler backed by a model command-line tool that people
// already run and are logged in to: Claude Code, Codex, Gemini CLI,
// Ollama or Simon Willison's llm. Each request runs the tool once, with
// no shell: the prompt goes on stdin (never in argv, so it cannot be taken
// for a flag), the tool runs in a new empty temporary directory with its
// tools off or read-only where it has such a switch, and with a bounded
// environment (PATH, HOME, the locale and XDG directories, and the tool's
// own variables: its keys and settings; see cliEnvPrefixes).
//
// Bounds: Timeout (0 means DefaultCLITimeout) per request, after which the
// tool and every process it started are killed (its process group);
// cliMaxOutput bytes of stdout (more is an error), cliMaxStderr of stderr
// kept for the error message. Errors name the tool and what to check, e.g.
// "claude exited 1: ...; check `claude -p hello` works".
//
// How each tool is run, from its documentation as found in December
// 2026:
//
//   - claude (Claude Code CLI reference, code.claude.com/docs/en/cli-reference,
//     and its headless-mode page): `claude -p --output-format json
//     --system-prompt=SYSTEM --max-turns 1 --tools ""` with the prompt on
//     stdin ("echo ... | claude -p"); it prints one JSON object whose
//     "result" is the answer and whose "is_error" says it failed.
//     --tools "" leaves the model no tools.
//   - codex (developers.openai.com/codex/noninteractive): `codex exec
//     --skip-git-repo-check --sandbox read-only --ephemeral --color never
//     --output-last-message FILE -`, the prompt on stdin (the "-"
//     argument); progress goes to stderr, the last message to stdout and
//     FILE, which is read.
//   - gemini (geminicli.com/docs/cli/headless): `gemini --output-format
//     json --prompt=ASK` with the request on stdin (stdin is given to the
//     model with the prompt); it prints {"response": ..., "stats": ...,
//     "error": ...}. In headless mode tools that need approval are refused;
//     the empty working directory leaves the others nothing to read.
//   - ollama (`ollama run MODEL` reads a piped prompt; ollama.com/blog/thinking
//     for --hidethinking): `ollama run --hidethinking MODEL` with the
//     prompt on stdin; it prints the answer.
//   - llm (llm.datasette.io usage: -m, -s/--system, -n/--no-log, a prompt
//     read from stdin when none is given): `llm -m MODEL --no-log
//     --system=SYSTEM` with the prompt on stdin; it prints the answer.
//
// Codex, Gemini CLI and Ollama take no system prompt on the command line,
// so the system prompt is sent before the request on stdin.
// testdata/models holds what each tool prints, written after the shapes
// these pages document (no real CLI was run to record them); the tests
// run fakes that print them. A tool whose flags change needs this table
// changed: its error then says what to check by hand.
type CLIModel struct {
	// Tool is one of CLITools.
	Tool string
	// Model is the model the tool asks: required for ollama and llm,
	// optional for the others (their default model otherwise).
	Model string
	// Timeout bounds one request (0 means DefaultCLITimeout).
	Timeout time.Duration
}

// CLITools are the tools CLIModel runs, in the order `remem doctor` lists
// them.
var CLITools = []string{"claude", "codex", "gemini", "ollama", "llm"}

// DefaultCLITimeout bounds a CLIModel request whose Timeout is 0: the
// agents' CLIs start slower than an HTTP request.
const DefaultCLITimeout = 90 * time.Second

const (
	cliMaxOutput = 64 << 10 // stdout read; more is an error
	cliMaxStderr = 4 << 10  // stderr kept for the error message
)

// ParseCLIModel reads a model setting: "claude", "codex", "gemini",
// "ollama:MODEL", "llm:MODEL", or "claude:MODEL" and the like to pick the
// tool's model. A model name is a word of letters, digits and ". _ - : /"
// that does not start with "-".
func ParseCLIModel(s string) (CLIModel, error) {
	tool, model, _ := strings.Cut(s, ":")
	m := CLIModel{Tool: tool, Model: model}
	if !slices.Contains(CLITools, tool) {
		return m, fmt.Errorf("%q is not a model tool: want one of %s", s, strings.Join(ModelChoices(), ", "))
	}
	if (tool == "ollama" || tool == "llm") && model == "" {
		return m, fmt.Errorf("%q names no model: want %s:MODEL, e.g. %s", s, tool, map[string]string{"ollama": "ollama:llama3.2", "llm": "llm:gpt-4o-mini"}[tool])
	}
	if model != "" && !validModelName(model) {
		return m, fmt.Errorf("%q: the model name %q holds characters a model name does not (letters, digits, . _ - : / only, not starting with -)", s, model)
	}
	return m, nil
}

// ModelChoices are the values ParseCLIModel takes, for messages.
func ModelChoices() []string {
	return []string{"claude", "codex", "gemini", "ollama:MODEL", "llm:MODEL"}
}

func validModelName(s string) bool {
	if s == "" || len(s) > 200 || strings.HasPrefix(s, "-") {
		return false
	}
	for _, r := range s {
		if !(r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("._-:/", r))) {
			return false
		}
	}
	return true
}

// Name is the model as the writer counts name it: "claude", "ollama:llama3.2".
func (m CLIModel) Name() string {
	if m.Model == "" {
		return m.Tool
	}
	return m.Tool + ":" + m.Model
}

// Hint is what to try by hand when a request fails.
func (m CLIModel) Hint() string {
	switch m.Tool {
	case "claude":
		return "check `claude -p hello` works"
	case "codex":
		return "check `codex exec --skip-git-repo-check hello` works"
	case "gemini":
		return "check `gemini -p hello` works"
	case "ollama":
		return fmt.Sprintf("check `ollama run %s hello` works (`ollama list` shows the models pulled)", m.Model)
	case "llm":
		return fmt.Sprintf("check `llm -m %s hello` works (`llm models` lists them)", m.Model)
	}
	return "check the tool works by hand"
}

// Ask implements Sampler. maxTokens is not passed on: none of the tools
// takes it on the command line, and the output cap bounds the answer.
func (m CLIModel) Ask(ctx context.Context, system, prompt string, _ int) (string, error) {
	if !slices.Contains(CLITools, m.Tool) {
		return "", fmt.Errorf("model %q: unknown tool, want one of %s", m.Tool, strings.Join(CLITools, ", "))
	}
	if m.Model != "" && !validModelName(m.Model) {
		return "", fmt.Errorf("%s: the model name %q is refused", m.Tool, m.Model)
	}
	path, err := exec.LookPath(m.Tool)
	if err != nil {
		return "", fmt.Errorf("%s is not on PATH (%v): install it, or set another model; `remem doctor` lists the model tools it finds", m.Tool, errors.Unwrap(err))
	}
	dir, err := os.MkdirTemp("", "remem-model-")
	if err != nil {
		return "", fmt.Errorf("%s: making its working directory: %w", m.Tool, err)
	}
	defer func() { _ = os.RemoveAll(dir) }() // a temporary directory; nothing in it is kept
	args, stdin, lastFile := m.invocation(dir, system, prompt)

	timeout := m.Timeout
	if timeout <= 0 {
		timeout = DefaultCLITimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir = dir
	cmd.Env = boundedEnv(os.Environ(), m.Tool)
	stdout, stderr, err := runCapped(cmd, strings.NewReader(stdin), cliMaxOutput, cliMaxStderr)
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		return "", fmt.Errorf("%s: no answer within %s, killed%s; %s", m.Tool, timeout, stderrNote(stderr), m.Hint())
	case ctx.Err() != nil:
		return "", fmt.Errorf("%s: %w", m.Tool, ctx.Err())
	case err != nil:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("%s exited %d%s%s; %s", m.Tool, ee.ExitCode(), stderrNote(stderr), m.errorNote(stdout.b.Bytes()), m.Hint())
		}
		return "", fmt.Errorf("%s: %w%s; %s", m.Tool, err, stderrNote(stderr), m.Hint())
	case stdout.over:
		return "", fmt.Errorf("%s printed more than %d KiB: not one sentence", m.Tool, cliMaxOutput>>10)
	}
	out := stdout.b.Bytes()
	if lastFile != "" {
		if b, err := readCapped(lastFile, cliMaxOutput); err == nil && len(bytes.TrimSpace(b)) > 0 {
			out = b
		} else if errors.Is(err, errTooLarge) {
			return "", fmt.Errorf("%s wrote more than %d KiB as its last message: not one sentence", m.Tool, cliMaxOutput>>10)
		}
	}
	answer, err := m.parse(out)
	if err != nil {
		return "", fmt.Errorf("%s: %w; %s", m.Tool, err, m.Hint())
	}
	return answer, nil
}

// invocation is the argv (after the tool's name), the stdin and, for
// codex, the file its last message is written to.
func (m CLIModel) invocation(dir, system, prompt string) (args []string, stdin, lastFile string) {
	both := system + "\n\n" + prompt
	switch m.Tool {
	case "claude":
		args = []string{"-p", "--output-format", "json", "--system-prompt=" + system, "--max-turns", "1", "--tools", ""}
		if m.Model != "" {
			args = append(args, "--model="+m.Model)
		}
		return args, prompt, ""
	case "codex":
		lastFile = filepath.Join(dir, "last-message.txt")
		args = []string{"exec", "--skip-git-repo-check", "--sandbox", "read-only", "--ephemeral", "--color", "never", "--output-last-message", lastFile}
		if m.Model != "" {
			args = append(args, "--model="+m.Model)
		}
		return append(args, "-"), both, lastFile
	case "gemini":
		args = []string{"--output-format", "json", "--prompt=Answer the request given on standard input, as it asks."}
		if m.Model != "" {
			args = append(args, "--model="+m.Model)
		}
		return args, both, ""
	case "ollama":
		return []string{"run", "--hidethinking", m.Model}, both, ""
	default: // llm
		return []string{"-m", m.Model, "--no-log", "--system=" + system}, prompt, ""
	}
}

// parse takes the answer out of what the tool printed.
func (m CLIModel) parse(out []byte) (string, error) {
	switch m.Tool {
	case "claude":
		var r struct {
			Type    string `json:"type"`
			Subtype string `json:"subtype"`
			IsError bool   `json:"is_error"`
			Result  string `json:"result"`
		}
		if err := json.NewDecoder(bytes.NewReader(out)).Decode(&r); err != nil {
			return "", fmt.Errorf("printed no JSON result (--output-format json): %s", excerpt(out, commandExcerpt))
		}
		if r.IsError || (r.Subtype != "" && r.Subtype != "success") {
			return "", fmt.Errorf("reported an error (%s): %s", orWord(r.Subtype, "is_error"), excerpt([]byte(r.Result), commandExcerpt))
		}
		return r.Result, nil
	case "gemini":
		var r struct {
			Response *string `json:"response"`
			Error    *struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.NewDecoder(bytes.NewReader(out)).Decode(&r); err != nil {
			return "", fmt.Errorf("printed no JSON response (--output-format json): %s", excerpt(out, commandExcerpt))
		}
		if r.Error != nil {
			return "", fmt.Errorf("reported an error (%s): %s", orWord(r.Error.Type, "error"), excerpt([]byte(r.Error.Message), commandExcerpt))
		}
		if r.Response == nil {
			return "", fmt.Errorf("printed JSON without a response: %s", excerpt(out, commandExcerpt))
		}
		return *r.Response, nil
	}
	return string(out), nil
}

// errorNote is what a failed run printed on stdout that says why (claude
// and gemini print their JSON error there), or "".
func (m CLIModel) errorNote(out []byte) string {
	if len(bytes.TrimSpace(out)) == 0 {
		return ""
	}
	if _, err := m.parse(out); err != nil && (m.Tool == "claude" || m.Tool == "gemini") {
		return ": " + err.Error()
	}
	return ": " + excerpt(out, commandExcerpt)
}

func orWord(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// cliEnvKeep are the variables every tool keeps; cliEnvPrefixes the
// tool's own (its keys, endpoints and settings).
var (
	cliEnvKeep     = []string{"PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR", "SSL_CERT_FILE", "SSL_CERT_DIR", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "no_proxy"}
	cliEnvPrefixes = map[string][]string{
		"claude": {"ANTHROPIC_", "CLAUDE_", "AWS_", "CLOUD_ML_", "VERTEX_", "GOOGLE_APPLICATION_CREDENTIALS", "DISABLE_"},
		"codex":  {"OPENAI_", "CODEX_", "AZURE_OPENAI_"},
		"gemini": {"GEMINI_", "GOOGLE_"},
		"ollama": {"OLLAMA_"},
		"llm":    {"LLM_", "OPENAI_", "ANTHROPIC_", "GEMINI_", "GOOGLE_", "MISTRAL_", "GROQ_", "OPENROUTER_", "OLLAMA_"},
	}
)

// boundedEnv keeps of env what tool needs.
func boundedEnv(env []string, tool string) []string {
	var out []string
	for _, kv := range env {
		k, _, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		keep := slices.Contains(cliEnvKeep, k)
		for _, p := range cliEnvPrefixes[tool] {
			keep = keep || strings.HasPrefix(k, p)
		}
		if keep {
			out = append(out, kv)
		}
	}
	if tool == "claude" {
		// No telemetry, update checks or other traffic besides the request.
		out = append(out, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1")
	}
	return out
}

var errTooLarge = errors.New("file too large")

// readCapped reads at most max bytes of path; a larger file is errTooLarge.
func readCapped(path string, max int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read only
	b := make([]byte, max+1)
	n, err := f.Read(b)
	for err == nil && n < len(b) {
		var k int
		k, err = f.Read(b[n:])
		n += k
	}
	if n > max {
		return nil, errTooLarge
	}
	return b[:n], nil
}
