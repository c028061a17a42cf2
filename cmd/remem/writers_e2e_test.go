package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// runEnv runs the built remem with home as REMEM_HOME and env added, and
// fails the test unless it exits 0.
func runEnv(t *testing.T, home string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(remem(t), args...)
	cmd.Env = append(append(os.Environ(), "REMEM_HOME="+home), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("remem %v: %v\nstdout: %s\nstderr: %s", args, err, out.String(), errb.String())
	}
	return out.String()
}

// homeWith is a new home whose config.toml is toml.
func homeWith(t *testing.T, toml string) string {
	t.Helper()
	home := newHome(t)
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	return home
}

// sleepOneError reports one error event, sleeps, and returns the lessons
// as JSON.
func sleepOneError(t *testing.T, home string, env []string) string {
	t.Helper()
	runEnv(t, home, env, "remember", "--kind", "error", "--title", "npm ci", "--happened", "EUSAGE: the lock file is out of sync")
	runEnv(t, home, env, "sleep")
	return runEnv(t, home, env, "lessons", "--json")
}

const recipeSentence = "npm ci fails with EUSAGE when the lock file is out of sync."

// The README's recipe for a local model CLI: config.toml's writer pipes
// `remem writer-prompt` into `ollama run MODEL` or `llm -m MODEL`, which
// read the prompt on stdin (fakes here, on PATH).
func TestRecipeModelCLIWriter(t *testing.T) {
	bin := t.TempDir()
	fake := `#!/bin/sh
prompt=$(cat)
echo "$prompt" | grep -q 'Never an instruction' && echo "$prompt" | grep -q '"title": "npm ci"' || { echo "bad prompt: $prompt" >&2; exit 1; }
[ "$1" = "%s" ] && [ "$2" = "small" ] || { echo "bad arguments: $*" >&2; exit 1; }
echo
echo "` + recipeSentence + `"
`
	for name, arg := range map[string]string{"ollama": "run", "llm": "-m"} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(fmt.Sprintf(fake, arg)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	path := []string{"PATH=" + filepath.Dir(remem(t)) + ":" + bin + ":" + os.Getenv("PATH")}
	for _, cli := range []string{"ollama run small", "llm -m small"} {
		home := homeWith(t, fmt.Sprintf("writer = %q\n", "remem writer-prompt | "+cli))
		if out := sleepOneError(t, home, path); !strings.Contains(out, recipeSentence) {
			t.Errorf("writer %q: the lesson is not the model's: %s", cli, out)
		}
	}
}

// The README's recipe for an OpenAI-compatible chat endpoint: writer_url,
// writer_model and the token; an answer that is an instruction, or an
// error, leaves the lesson to the default writer.
func TestRecipeChatEndpointWriter(t *testing.T) {
	var answer atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Model string }
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &req)
		if r.URL.Path != "/v1/chat/completions" || req.Model != "small" || r.Header.Get("Authorization") != "Bearer sk-test" {
			http.Error(w, "unexpected request", http.StatusBadRequest)
			return
		}
		a := answer.Load().(string)
		if a == "" {
			http.Error(w, "overloaded", http.StatusInternalServerError)
			return
		}
		out, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"message": map[string]string{"content": a}}}})
		_, _ = w.Write(out)
	}))
	defer srv.Close()
	toml := fmt.Sprintf("writer_url = %q\nwriter_model = \"small\"\n", srv.URL+"/v1")
	env := []string{"REMEM_WRITER_TOKEN=sk-test"}

	answer.Store(recipeSentence)
	if out := sleepOneError(t, homeWith(t, toml), env); !strings.Contains(out, recipeSentence) {
		t.Errorf("a good answer is not the lesson: %s", out)
	}
	for _, a := range []string{"Always run npm install before npm ci.", ""} {
		answer.Store(a)
		out := sleepOneError(t, homeWith(t, toml), env)
		if strings.Contains(out, "Always") || !strings.Contains(out, "npm ci") {
			t.Errorf("answer %q: want the default writer's lesson: %s", a, out)
		}
	}
}

// The README's recipe for embed_url: events are compared with the
// endpoint's vectors (REMEM_EMBED_MODEL names the model).
func TestRecipeEmbedURL(t *testing.T) {
	var calls atomic.Int32
	srv := fakeEmbeddings(t, &calls)
	home := homeWith(t, fmt.Sprintf("embed_url = %q\n", srv.URL+"/v1"))
	env := []string{"REMEM_EMBED_MODEL=nomic-embed-text"}
	runEnv(t, home, env, "remember", "--kind", "error", "--title", "npm ci", "--happened", "EUSAGE: the lock file is out of sync")
	runEnv(t, home, env, "remember", "--kind", "error", "--title", "npm ci", "--happened", "EUSAGE again: lock file out of sync")
	runEnv(t, home, env, "sleep")
	if calls.Load() == 0 {
		t.Fatal("sleep never asked the embeddings endpoint")
	}
}

// fakeEmbeddings answers /v1/embeddings for model nomic-embed-text: texts
// mentioning "npm" point one way, others another, so pairs about npm are
// the same and the rest different.
func fakeEmbeddings(t *testing.T, calls *atomic.Int32) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model string
			Input []string
		}
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &req); err != nil || r.URL.Path != "/v1/embeddings" || req.Model != "nomic-embed-text" {
			http.Error(w, "unexpected request", http.StatusBadRequest)
			return
		}
		calls.Add(1)
		var data []any
		for i, text := range req.Input {
			v := []float64{0.2, 1, float64(len(text)%7) / 20}
			if strings.Contains(text, "npm") {
				v = []float64{1, 0.2, float64(len(text)%7) / 20}
			}
			data = append(data, map[string]any{"index": i, "embedding": v})
		}
		out, _ := json.Marshal(map[string]any{"data": data})
		_, _ = w.Write(out)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestCalibrate(t *testing.T) {
	home := t.TempDir()
	out := runEnv(t, home, nil, "calibrate", "--pairs", "../../node/consolidate/testdata/pairs.jsonl", "--json")
	var res calibration
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if res.Similarity != "lexical" || res.Pairs != 260 || res.F1 < 0.85 || res.Threshold < 0.3 || res.Threshold > 0.6 ||
		len(res.Table) < 9 || res.Config[len(res.Config)-1] != "threshold = "+formatThreshold(res.Threshold) {
		t.Errorf("lexical on pairs.jsonl: %+v", res)
	}
	human := runEnv(t, home, nil, "calibrate", "--pairs", "../../node/consolidate/testdata/pairs.jsonl")
	if !strings.Contains(human, "<- chosen") || !strings.Contains(human, "  threshold = ") {
		t.Errorf("human output:\n%s", human)
	}

	var calls atomic.Int32
	srv := fakeEmbeddings(t, &calls)
	pairs := filepath.Join(t.TempDir(), "pairs.jsonl")
	lines := `{"a": "npm ci fails with EUSAGE", "b": "npm install: lock file out of sync", "same": true}
{"a": "npm ERR! code EACCES", "b": "global npm install hits permission denied", "same": true}
{"a": "npm ci fails with EUSAGE", "b": "go test ./... fails: undefined foo.Bar", "same": false}

{"a": "docker build runs out of disk", "b": "npm publish returns 403", "same": false, "split": "check"}
`
	if err := os.WriteFile(pairs, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	out = runEnv(t, home, []string{"REMEM_EMBED_MODEL=nomic-embed-text"}, "calibrate", "--pairs", pairs, "--embed-url", srv.URL+"/v1", "--json")
	res = calibration{}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if res.Similarity != "embeddings" || res.Pairs != 4 || res.F1 != 1 || res.Threshold <= 0.5 || res.Threshold > 1 ||
		res.Config[0] != fmt.Sprintf("embed_url = %q", srv.URL+"/v1") || calls.Load() == 0 {
		t.Errorf("embeddings: %+v", res)
	}

	for _, tc := range []struct{ content, want string }{
		{`{"a": "x", "same": true}` + "\n", ":1: want the texts a and b"},
		{`not json` + "\n", ":1:"},
		{`{"a": "x", "b": "y", "same": true}` + "\n", "both labels"},
	} {
		if err := os.WriteFile(pairs, []byte(tc.content), 0o600); err != nil {
			t.Fatal(err)
		}
		_, errOut, code := run(t, home, nil, "calibrate", "--pairs", pairs)
		if code == 0 || !strings.Contains(errOut, tc.want) {
			t.Errorf("pairs %q: exit %d, %s", tc.content, code, errOut)
		}
	}
}
