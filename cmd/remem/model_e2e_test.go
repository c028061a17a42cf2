//go:build unix

package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeModelOnPath puts an executable named tool, printing body's output,
// first on the binary's PATH.
func fakeModelOnPath(t *testing.T, tool, body string) {
	t.Helper()
	remem(t) // built with the real PATH
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, tool), []byte("#!/bin/sh\ncat > /dev/null\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+":/usr/bin:/bin")
}

func claudePayload(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "node", "consolidate", "testdata", "models", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// init and doctor name the model CLI on PATH and the config line to use it.
func TestInitAndDoctorFindTheModel(t *testing.T) {
	fakeModelOnPath(t, "claude", "cat "+claudePayload(t, "claude-yes.json"))
	home := t.TempDir()
	out := must(t, home, nil, "init")
	if !strings.Contains(out, "found claude on PATH") || !strings.Contains(out, "remem config set model claude") {
		t.Fatalf("init:\n%s", out)
	}
	out, _, _ = run(t, home, nil, "doctor")
	if !strings.Contains(out, "no model configured") || !strings.Contains(out, "remem config set model claude") {
		t.Fatalf("doctor:\n%s", out)
	}
	must(t, home, nil, "config", "set", "model", "claude")
	out, _, _ = run(t, home, nil, "doctor")
	if !strings.Contains(out, "model claude (") {
		t.Fatalf("doctor with a model:\n%s", out)
	}
	out, _, _ = run(t, home, nil, "doctor", "--try-model")
	if !strings.Contains(out, `model claude (`) || !strings.Contains(out, `answered "yes" in`) {
		t.Fatalf("doctor --try-model:\n%s", out)
	}
}

// doctor --try-model says when the model fails, naming what to check.
func TestDoctorTryModelFails(t *testing.T) {
	fakeModelOnPath(t, "claude", "cat "+claudePayload(t, "claude-error.json"))
	home := t.TempDir()
	must(t, home, nil, "init")
	must(t, home, nil, "config", "set", "model", "claude")
	out, _, code := run(t, home, nil, "doctor", "--try-model")
	if code == 0 || !strings.Contains(out, "gave no answer") || !strings.Contains(out, "claude -p hello") {
		t.Fatalf("doctor --try-model exited %d:\n%s", code, out)
	}
	t.Setenv("PATH", t.TempDir())
	out, _, code = run(t, home, nil, "doctor")
	if code == 0 || !strings.Contains(out, "claude is not on PATH") {
		t.Fatalf("doctor without claude exited %d:\n%s", code, out)
	}
}

// A bad model value is refused, listing the valid ones, by the flag and
// by config set.
func TestModelBogusIsRefused(t *testing.T) {
	home := newHome(t)
	_, errOut, code := run(t, home, nil, "sleep", "--model", "bogus")
	if code == 0 || !strings.Contains(errOut, `--model = "bogus"`) {
		t.Fatalf("sleep --model bogus exited %d: %s", code, errOut)
	}
	for _, v := range []string{"claude", "codex", "gemini", "ollama:MODEL", "llm:MODEL", "endpoint"} {
		if !strings.Contains(errOut, v) {
			t.Fatalf("the error does not list %s: %s", v, errOut)
		}
	}
	for _, bad := range []string{"bogus", "ollama", "llm:-rf"} {
		if _, errOut, code := run(t, home, nil, "config", "set", "model", bad); code == 0 || !strings.Contains(errOut, "want one of") {
			t.Fatalf("config set model %s exited %d: %s", bad, code, errOut)
		}
	}
	if _, errOut, code := run(t, home, nil, "sleep", "--model", "claude", "--writer", "cat"); code == 0 || !strings.Contains(errOut, "a memory has one writer") {
		t.Fatalf("--model with --writer exited %d: %s", code, errOut)
	}
	if _, errOut, code := run(t, home, nil, "sleep", "--model", "endpoint"); code == 0 || !strings.Contains(errOut, "writer_url") {
		t.Fatalf("--model endpoint without writer_url exited %d: %s", code, errOut)
	}
}

// remem sleep with a fake claude writes its sentence, and status counts
// the lesson under claude.
func TestSleepWithModelFlag(t *testing.T) {
	fakeModelOnPath(t, "claude", "cat "+claudePayload(t, "claude-ok.json"))
	home := newHome(t)
	must(t, home, nil, "config", "set", "model", "claude")
	must(t, home, []byte(`{"kind":"error","title":"go test","happened":"the integration tests time out because the database container starts late","cwd":"/tmp"}`), "ingest", "-")
	out := must(t, home, nil, "sleep")
	if !strings.Contains(out, "written by claude 1") {
		t.Fatalf("sleep: %s", out)
	}
	out = must(t, home, nil, "lessons")
	if !strings.Contains(out, "The integration tests time out when the local database container star") {
		t.Fatalf("lessons: %s", out)
	}
	out = must(t, home, nil, "status")
	if !strings.Contains(out, "claude 1") {
		t.Fatalf("status: %s", out)
	}
}

// With ollama on PATH, init says to pick a model.
func TestInitSaysToPickAnOllamaModel(t *testing.T) {
	fakeModelOnPath(t, "ollama", "echo yes")
	home := t.TempDir()
	out := must(t, home, nil, "init")
	if !strings.Contains(out, "remem config set model ollama:MODEL") || !strings.Contains(out, "ollama list") {
		t.Fatalf("init:\n%s", out)
	}
}

// model = endpoint asks writer_url's chat endpoint as the model.
func TestSleepWithEndpointModel(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"choices":[{"message":{"role":"assistant","content":"The integration tests time out when the local database container starts after them."}}]}`))
	}))
	defer srv.Close()
	home := newHome(t)
	must(t, home, nil, "config", "set", "writer_url", srv.URL+"/v1")
	must(t, home, nil, "config", "set", "model", "endpoint")
	must(t, home, []byte(`{"kind":"error","title":"go test","happened":"the integration tests time out because the database container starts late","cwd":"/tmp"}`), "ingest", "-")
	if out := must(t, home, nil, "sleep"); !strings.Contains(out, "written by endpoint 1") {
		t.Fatalf("sleep: %s", out)
	}
}
