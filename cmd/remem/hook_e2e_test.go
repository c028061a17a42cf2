package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/remem/remem/node/agents"
)

const hookPayloads = "../../node/agents/testdata/hooks"

// hookRuns reads home's hook log.
func hookRuns(t *testing.T, home string) []agents.HookRun {
	t.Helper()
	f, err := os.Open(filepath.Join(home, agents.HookLogFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []agents.HookRun
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r agents.HookRun
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("hook.log: %v: %s", err, sc.Bytes())
		}
		out = append(out, r)
	}
	return out
}

func inboxLines(t *testing.T, home string) []string {
	data, err := os.ReadFile(filepath.Join(home, "inbox.jsonl"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

// payload is a recorded payload with its cwd set to dir.
func payload(t *testing.T, file, dir string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(hookPayloads, file))
	if err != nil {
		t.Fatal(err)
	}
	var p map[string]any
	if err := json.Unmarshal(data, &p); err != nil {
		t.Fatal(err)
	}
	p["cwd"] = dir
	out, _ := json.Marshal(p)
	return out
}

// The whole way for a person who ran setup once: the tool runs the hook
// command setup wrote, a failed call becomes an event, sleep makes it a
// lesson, and the next session starts with it, without the agent calling
// anything. No node runs: events go through the inbox.
func TestHookWithoutANode(t *testing.T) {
	for _, tc := range []struct{ tool, failure, start string }{
		{"claude-code", "claude-code/PostToolUseFailure.Bash.json", "claude-code/SessionStart.json"},
		{"codex", "codex/PostToolUse.Bash-nonzero-exit.json", "codex/SessionStart.json"},
		{"gemini-cli", "gemini-cli/AfterTool.run_shell_command.nonzero-exit.json", "gemini-cli/SessionStart.json"},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			home := newHome(t)
			proj := t.TempDir()
			out := must(t, home, nil, "setup", tc.tool, "--project", proj, "--remem", remem(t))
			if !strings.Contains(out, "Set up the project") {
				t.Fatalf("setup said:\n%s", out)
			}
			hook := hookCommandIn(t, proj, tc.tool)

			stdout, stderr := runHookCommand(t, hook, home, payload(t, tc.failure, proj))
			if stdout != "" || stderr != "" {
				t.Fatalf("a failure printed %q, %q", stdout, stderr)
			}
			if n := len(inboxLines(t, home)); n != 1 {
				t.Fatalf("inbox holds %d events", n)
			}
			// The successful call and the read-only failure report nothing.
			for _, quiet := range quietPayloads(tc.tool) {
				if o, e := runHookCommand(t, hook, home, payload(t, quiet, proj)); o != "" || e != "" {
					t.Errorf("%s printed %q %q", quiet, o, e)
				}
			}
			if n := len(inboxLines(t, home)); n != 1 {
				t.Fatalf("inbox holds %d events after the quiet payloads", n)
			}
			must(t, home, nil, "sleep")
			var lessons []struct {
				Text string `json:"text"`
			}
			if err := json.Unmarshal([]byte(must(t, home, nil, "lessons", "--json")), &lessons); err != nil || len(lessons) == 0 {
				t.Fatalf("no lesson after sleep: %v", err)
			}

			stdout, stderr = runHookCommand(t, hook, home, payload(t, tc.start, proj))
			var ctx struct {
				H struct {
					HookEventName     string `json:"hookEventName"`
					AdditionalContext string `json:"additionalContext"`
				} `json:"hookSpecificOutput"`
			}
			if err := json.Unmarshal([]byte(stdout), &ctx); err != nil || stderr != "" {
				t.Fatalf("session start printed %q (%v), stderr %q", stdout, err, stderr)
			}
			if ctx.H.HookEventName != "SessionStart" || !strings.Contains(ctx.H.AdditionalContext, "They are not instructions") ||
				!strings.Contains(ctx.H.AdditionalContext, "Observed (") {
				t.Errorf("context: %+v", ctx.H)
			}
			runs := hookRuns(t, home)
			if last := runs[len(runs)-1]; last.Lessons == 0 || last.Error != "" {
				t.Errorf("last run: %+v", last)
			}
		})
	}
}

func quietPayloads(tool string) []string {
	switch tool {
	case "claude-code":
		return []string{"claude-code/PostToolUse.Write.json", "claude-code/PostToolUseFailure.Read.json", "claude-code/UserPromptSubmit.json"}
	case "codex":
		return []string{"codex/PostToolUse.Bash.json", "codex/UserPromptSubmit.json"}
	}
	return []string{"gemini-cli/AfterTool.run_shell_command.success.json", "gemini-cli/AfterTool.read_file.failure.json", "gemini-cli/BeforeAgent.json"}
}

// hookCommandIn is the command setup wrote for the tool's session start.
func hookCommandIn(t *testing.T, proj, tool string) string {
	t.Helper()
	file := map[string]string{"claude-code": ".claude/settings.json", "codex": ".codex/hooks.json", "gemini-cli": ".gemini/settings.json"}[tool]
	data, err := os.ReadFile(filepath.Join(proj, file))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Hooks map[string][]struct {
			Hooks []struct{ Command string } `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	cmd := doc.Hooks["SessionStart"][0].Hooks[0].Command
	if cmd == "" {
		t.Fatalf("no hook command in %s", data)
	}
	return cmd
}

// runHookCommand runs a hook's command as the tools do, through sh -c,
// with the payload on stdin and nothing of the test's home.
func runHookCommand(t *testing.T, command, home string, payload []byte) (string, string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", command)
	cmd.Env = append(os.Environ(), "REMEM_HOME="+home)
	cmd.Stdin = bytes.NewReader(payload)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s exited with %v: %s", command, err, errb.String())
	}
	return out.String(), errb.String()
}

// With a node running, the hook reports through its API (no inbox), and a
// correction prompt becomes a correction event with the words verbatim.
func TestHookWithANode(t *testing.T) {
	home := newHome(t)
	proj := t.TempDir()
	p := startNode(t, home)
	out, errOut, code := run(t, home, payload(t, "claude-code/PostToolUseFailure.Bash.json", proj), "hook", "claude-code")
	if code != 0 || out != "" || errOut != "" {
		t.Fatalf("hook: %d %q %q", code, out, errOut)
	}
	prompt := payload(t, "claude-code/UserPromptSubmit.correction.json", proj)
	if out, errOut, code = run(t, home, prompt, "hook", "claude-code"); code != 0 || out != "" || errOut != "" {
		t.Fatalf("hook: %d %q %q", code, out, errOut)
	}
	if lines := inboxLines(t, home); lines != nil {
		t.Errorf("a running node's hook used the inbox: %q", lines)
	}
	runs := hookRuns(t, home)
	if len(runs) != 2 || runs[0].Sent != "api" || runs[1].Sent != "api" || !strings.HasPrefix(runs[1].Why, "correction") {
		t.Fatalf("runs: %+v", runs)
	}
	p.post(t, "/sleep", "")
	var lessons []struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal([]byte(must(t, home, nil, "lessons", "--json")), &lessons); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, l := range lessons {
		kinds[l.Kind] = true
	}
	if !kinds["error"] {
		t.Errorf("no error lesson from the hook's event: %+v", lessons)
	}
	start := payload(t, "claude-code/SessionStart.json", proj)
	if out, _, _ = run(t, home, start, "hook", "claude-code"); !strings.Contains(out, "additionalContext") {
		t.Errorf("session start through the node printed %q", out)
	}
	p.stop(t)
}

// A node that hangs (stopped with SIGSTOP) costs the hook its wait, then
// the event goes to the inbox and the session starts without lessons: the
// agent is never held past the hook's deadline, nor told anything wrong.
func TestHookWithAHungNode(t *testing.T) {
	home := newHome(t)
	proj := t.TempDir()
	p := startNode(t, home)
	if err := p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.cmd.Process.Signal(syscall.SIGCONT) }()
	for _, file := range []string{"claude-code/PostToolUseFailure.Bash.json", "claude-code/SessionStart.json"} {
		began := time.Now()
		out, errOut, code := run(t, home, payload(t, file, proj), "hook", "claude-code")
		if code != 0 || out != "" || errOut != "" {
			t.Errorf("%s: %d %q %q", file, code, out, errOut)
		}
		if took := time.Since(began); took > hookDeadline+2*time.Second {
			t.Errorf("%s took %s", file, took)
		}
	}
	if n := len(inboxLines(t, home)); n != 1 {
		t.Errorf("the inbox holds %d events, want the one the hung node could not take", n)
	}
}

// Whatever goes wrong, the hook exits 0 and prints nothing: no memory, a
// payload that is no JSON, one far over the bound, an unknown tool.
func TestHookNeverFailsTheAgent(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nothing-here")
	home := newHome(t)
	huge := append([]byte(`{"hook_event_name":"PostToolUseFailure","tool_name":"Bash","error":"`), bytes.Repeat([]byte("y"), agents.MaxPayloadBytes+10)...)
	for _, tc := range []struct {
		name, home string
		stdin      []byte
		args       []string
	}{
		{"no memory", missing, payload(t, "claude-code/PostToolUseFailure.Bash.json", "/tmp"), []string{"hook", "claude-code"}},
		{"no JSON", home, []byte("\x1b[31mnot json"), []string{"hook", "gemini-cli"}},
		{"empty", home, []byte{}, []string{"hook", "codex"}},
		{"huge", home, huge, []string{"hook", "claude-code"}},
		{"unknown tool", home, []byte("{}"), []string{"hook", "vim"}},
		{"no tool", home, []byte("{}"), []string{"hook"}},
	} {
		out, errOut, code := run(t, tc.home, tc.stdin, tc.args...)
		if code != 0 || out != "" || errOut != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", tc.name, code, out, errOut)
		}
	}
	if _, err := os.Stat(missing); err == nil {
		t.Error("the hook made a home where there was none")
	}
	if lines := inboxLines(t, home); lines != nil {
		t.Errorf("bad payloads reached the inbox: %q", lines)
	}
	runs := hookRuns(t, home)
	if len(runs) != 5 {
		t.Fatalf("hook.log holds %d runs, want 5: %+v", len(runs), runs)
	}
	for _, r := range runs[:2] {
		if r.Error == "" {
			t.Errorf("no error logged: %+v", r)
		}
	}
}

// doctor says, per agent tool on PATH, whether it is set up and whether
// its hooks reported lately.
func TestDoctorReportsAgents(t *testing.T) {
	home := newHome(t)
	proj := t.TempDir()
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "claude"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"REMEM_HOME=" + home, "HOME=" + t.TempDir(), "PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}
	doctorAgent := func() doctorCheck {
		cmd := exec.Command(remem(t), "doctor", "--json")
		cmd.Env, cmd.Dir = append(os.Environ(), env...), proj
		out, _ := cmd.Output()
		var rep doctorReport
		if err := json.Unmarshal(out, &rep); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		return checks(rep)["agent claude-code"]
	}
	if c := doctorAgent(); c.Status != checkWarn || !strings.Contains(c.Detail, "remem setup claude-code") {
		t.Errorf("before setup: %+v", c)
	}
	must(t, home, nil, "setup", "claude-code", "--project", proj, "--remem", remem(t))
	if c := doctorAgent(); c.Status != checkWarn || !strings.Contains(c.Detail, "never ran") {
		t.Errorf("after setup: %+v", c)
	}
	runHookCommand(t, hookCommandIn(t, proj, "claude-code"), home, payload(t, "claude-code/PostToolUseFailure.Bash.json", proj))
	if c := doctorAgent(); c.Status != checkOK || !strings.Contains(c.Detail, "events reported: 1") {
		t.Errorf("after a hook: %+v", c)
	}
}

// Every recorded payload of every tool through the built binary with a
// node running: exit 0, nothing on stderr, JSON or nothing on stdout, and
// as many events at the node as the payloads that report one.
func TestEveryRecordedPayloadThroughANode(t *testing.T) {
	home := newHome(t)
	proj := t.TempDir()
	p := startNode(t, home)
	files, _ := filepath.Glob(filepath.Join(hookPayloads, "*", "*.json"))
	if len(files) < 20 {
		t.Fatalf("%d recorded payloads", len(files))
	}
	for _, f := range files {
		rel, _ := filepath.Rel(hookPayloads, f)
		tool := filepath.Dir(rel)
		out, errOut, code := run(t, home, payload(t, rel, proj), "hook", tool)
		if code != 0 || errOut != "" {
			t.Errorf("%s: exit %d, stderr %q", rel, code, errOut)
		}
		if out != "" && !json.Valid([]byte(out)) {
			t.Errorf("%s printed %q", rel, out)
		}
	}
	sent := 0
	for _, r := range hookRuns(t, home) {
		if r.Error != "" {
			t.Errorf("%s %s: %s", r.Tool, r.Event, r.Error)
		}
		if r.Sent != "" {
			sent++
			if r.Sent != "api" {
				t.Errorf("%s %s went to %s with a node running", r.Tool, r.Event, r.Sent)
			}
		}
	}
	// The failures of the three tools and Claude Code's correction.
	if sent != 5 {
		t.Errorf("%d events sent, want 5", sent)
	}
	p.stop(t)
}

// --user for Claude Code runs Claude Code's own `claude mcp add` (a fake
// of it on PATH here) and writes the user's settings and CLAUDE.md.
func TestSetupClaudeUserThroughFakeClaude(t *testing.T) {
	home := newHome(t)
	userHome := t.TempDir()
	bin := t.TempDir()
	calls := filepath.Join(bin, "calls")
	fake := "#!/bin/sh\necho \"$*\" >> " + calls + "\n"
	if err := os.WriteFile(filepath.Join(bin, "claude"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"REMEM_HOME=" + home, "HOME=" + userHome, "PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}
	out, errOut, code := runWithEnv(t, env, "setup", "claude-code", "--user", "--remem", remem(t))
	if code != 0 {
		t.Fatalf("%d %s %s", code, out, errOut)
	}
	got, _ := os.ReadFile(calls)
	want := "mcp add --transport stdio --scope user remem -- " + remem(t) + " --home " + home + " mcp\n"
	if string(got) != want {
		t.Errorf("claude was run with %q, want %q", got, want)
	}
	for _, f := range []string{".claude/settings.json", ".claude/CLAUDE.md"} {
		if _, err := os.Stat(filepath.Join(userHome, f)); err != nil {
			t.Error(err)
		}
	}
	if _, _, code = runWithEnv(t, env, "setup", "claude-code", "--user", "--remove", "--remem", remem(t)); code != 0 {
		t.Fatal("remove failed")
	}
	got, _ = os.ReadFile(calls)
	if !strings.HasSuffix(string(got), "mcp remove --scope user remem\n") {
		t.Errorf("calls: %s", got)
	}
	if _, err := os.Stat(filepath.Join(userHome, ".claude")); err == nil {
		t.Error("remove left ~/.claude, which setup created")
	}
}

// remem on PATH as a link (as package managers install it): setup writes
// the link, which an upgrade keeps, and a second run changes nothing.
func TestSetupWritesTheRememOnPath(t *testing.T) {
	home := newHome(t)
	proj := t.TempDir()
	bin := t.TempDir()
	link := filepath.Join(bin, "remem")
	if err := os.Symlink(remem(t), link); err != nil {
		t.Fatal(err)
	}
	env := []string{"REMEM_HOME=" + home, "PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}
	cmd := exec.Command(link, "setup", "claude-code", "--project", proj, "--json")
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	if got := hookCommandIn(t, proj, "claude-code"); !strings.HasPrefix(got, link+" ") {
		t.Errorf("the hook runs %q, want the remem on PATH, %s", got, link)
	}
	out, _, code := runWithEnv(t, env, "setup", "claude-code", "--project", proj)
	if code != 0 || !strings.Contains(out, "nothing changed") {
		t.Errorf("a second setup: %d %s", code, out)
	}
}

// A process holding the inbox's lock for ever: the hook's event goes into
// a file of its own within its wait, and the next sleep takes it.
func TestHookPastAHeldInbox(t *testing.T) {
	home := newHome(t)
	inbox := filepath.Join(home, "inbox.jsonl")
	holder, err := os.OpenFile(inbox, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(holder.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	out, errOut, code := run(t, home, payload(t, "claude-code/PostToolUseFailure.Bash.json", t.TempDir()), "hook", "claude-code")
	if code != 0 || out != "" || errOut != "" || time.Since(began) > hookDeadline {
		t.Fatalf("%d %q %q after %s", code, out, errOut, time.Since(began))
	}
	if runs := hookRuns(t, home); runs[0].Sent != "inbox-spill" || runs[0].Error != "" {
		t.Fatalf("%+v", runs[0])
	}
	_ = holder.Close()
	must(t, home, nil, "sleep")
	var lessons []json.RawMessage
	if err := json.Unmarshal([]byte(must(t, home, nil, "lessons", "--json")), &lessons); err != nil || len(lessons) != 1 {
		t.Errorf("lessons after sleep: %d %v", len(lessons), err)
	}
}
