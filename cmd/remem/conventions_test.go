package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/remem/remem/internal/version"
)

// A missing or mistyped home is one error for every command that opens a
// memory, and none of them makes a memory there: only init does.
func TestMissingHomeIsOneErrorAndNoNewMemory(t *testing.T) {
	typo := filepath.Join(t.TempDir(), "remme")
	dir := t.TempDir()
	for _, args := range [][]string{
		{"lessons"}, {"show", "70e27c5e4a0cd6ab0657b9bdf8d0aeb7"}, {"recall", "go test"}, {"status"}, {"id"},
		{"export"}, {"context", "--cwd", dir}, {"commons", "pull", "http://127.0.0.1:1"}, {"folder", "sync", dir},
		{"remember", "--kind", "note", "--text", "the docs build takes four minutes"}, {"sleep"},
		{"publish", "--kind", "error", "The mirror build fails after midnight."},
	} {
		_, errOut, code := run(t, typo, nil, args...)
		want := "remem: no memory at " + typo + "; run `remem init` (or set REMEM_HOME to an existing memory)"
		if code != 1 || !strings.HasPrefix(errOut, want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("remem %v: exit %d, stderr %q, want %q", args, code, errOut, want)
		}
		if _, err := os.Stat(typo); !os.IsNotExist(err) {
			t.Fatalf("remem %v made %s (%v)", args, typo, err)
		}
	}
	if out := must(t, typo, nil, "init"); !strings.HasPrefix(out, "created memory ") {
		t.Errorf("init: %q", out)
	}
	must(t, typo, nil, "lessons")
}

// Unknown commands and flags, and missing required flags, are one line on
// stderr with a "did you mean" when a name is close, exit status 2, and no
// help on stdout.
func TestUsageErrorsAreOneLine(t *testing.T) {
	home := newHome(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"nosuch"}, `remem: "nosuch" is not a command (see ` + "`remem --help`)"},
		{[]string{"lesons"}, `remem: "lesons" is not a command; did you mean lessons? (see ` + "`remem --help`)"},
		{[]string{"help", "recal"}, `remem: "recal" is not a command; did you mean recall?`},
		{[]string{"comons", "push"}, `did you mean commons?`},
		{[]string{"commons", "pul"}, "remem: commons: \"pul\" is not a command; did you mean pull? (see `remem commons --help`)"},
		{[]string{"lessons", "--jsn"}, "remem: lessons: unknown flag --jsn; did you mean --json? (see `remem lessons --help`)"},
		{[]string{"commons", "push", "--tokenfile", "x"}, "did you mean --token-file?"},
		{[]string{"--hme", "x", "id"}, "remem: unknown flag --hme; did you mean --home?"},
		{[]string{"lessons", "--home", "x"}, "lessons: --home goes before the command"},
		{[]string{"lessons", "--state"}, "lessons: flag needs an argument: -state"},
		{[]string{"hash", "some text"}, "remem: hash: --kind is required (see `remem hash --help`)"},
		{[]string{"completion", "zhs"}, `no completion for shell "zhs"; want bash, zsh, fish (did you mean zsh?)`},
		{[]string{"-q", "-v", "id"}, "--quiet and --verbose exclude each other"},
	} {
		out, errOut, code := run(t, home, nil, c.args...)
		if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("remem %q: exit %d\nstdout %q\nstderr %q\nwant 2, no stdout, one line with %q", c.args, code, out, errOut, c.want)
		}
	}
	for _, args := range [][]string{{"help"}, {}, {"--help"}} {
		if out, _, code := run(t, home, nil, args...); code != 0 || !strings.Contains(out, "USAGE:") || !strings.Contains(out, "lessons") {
			t.Errorf("remem %q: exit %d, %.80q", args, code, out)
		}
	}
	if out, _, code := run(t, home, nil, "help", "recall"); code != 0 || !strings.Contains(out, "remem recall") {
		t.Errorf("remem help recall: exit %d, %.80q", code, out)
	}
	if out, _, code := run(t, home, nil, "help", "commons", "push"); code != 0 || !strings.Contains(out, "remem commons push - publish") {
		t.Errorf("remem help commons push: exit %d, %.80q", code, out)
	}
	// A command's words are its own, "help" too.
	if out, _, _ := run(t, home, nil, "recall", "help"); strings.Contains(out, "USAGE:") {
		t.Errorf("remem recall help printed the help:\n%s", out)
	}
}

// remem version and remem --version print the same line; --json is
// internal/version's Info; a build that records its VCS revision names it.
func TestVersion(t *testing.T) {
	home := newHome(t)
	line := must(t, home, nil, "version")
	if !strings.HasPrefix(line, "remem ") || strings.Count(line, "\n") != 1 {
		t.Errorf("remem version: %q", line)
	}
	if got := must(t, home, nil, "--version"); got != line {
		t.Errorf("remem --version %q, remem version %q", got, line)
	}
	var in version.Info
	if err := json.Unmarshal([]byte(must(t, home, nil, "version", "--json")), &in); err != nil || in.Go == "" || in.Module == "" {
		t.Errorf("remem version --json: %+v %v", in, err)
	}

	// Go stamps no revision in a git worktree (.git is a file) nor under
	// GOFLAGS=-buildvcs=false: build from a fresh repository of this tree.
	src, head := vcsCopy(t)
	bin := filepath.Join(t.TempDir(), "remem")
	build := exec.Command("go", "build", "-buildvcs=true", "-o", bin, "./cmd/remem")
	build.Dir = src
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -buildvcs=true: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version", "--json").Output()
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out, &in); err != nil || in.Revision != head {
		t.Errorf("version --json of a VCS build: %s (%v), want revision %s", out, err, head)
	}
	out, _ = exec.Command(bin, "--version").Output()
	if want := "remem " + in.String() + " (" + head; !strings.HasPrefix(string(out), want) {
		t.Errorf("--version of a VCS build: %q, want %q…", out, want)
	}
}

// remem completion prints a script for each shell; bash parses it, and the
// words it asks the binary for are the commands and flags.
func TestCompletion(t *testing.T) {
	home := newHome(t)
	for shell, want := range map[string]string{"bash": "complete -o bashdefault", "zsh": "compdef _remem_complete remem", "fish": "complete -c remem"} {
		out := must(t, home, nil, "completion", shell)
		if !strings.Contains(out, want) {
			t.Errorf("completion %s lacks %q:\n%s", shell, want, out)
		}
		if shell == "bash" {
			cmd := exec.Command("bash", "-n")
			cmd.Stdin = strings.NewReader(out)
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("bash -n: %v\n%s", err, b)
			}
		}
	}
	if out := must(t, home, nil, "--generate-bash-completion"); !strings.Contains(out, "\nlessons\n") || !strings.Contains(out, "\ncompletion\n") {
		t.Errorf("command words: %q", out)
	}
	if out := must(t, home, nil, "lessons", "-", "--generate-bash-completion"); !strings.Contains(out, "--json\n") {
		t.Errorf("lessons flag words: %q", out)
	}
}

// -q leaves only data on stdout and errors on stderr; -v adds the memory's
// info logs.
func TestQuietAndVerbose(t *testing.T) {
	home := newHome(t)
	rec := filepath.Join(t.TempDir(), "records.jsonl")
	if err := os.WriteFile(rec, []byte("not json\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, _ := run(t, home, nil, "verify", "--now", "2026-12-01T00:00:00Z", rec)
	if !strings.Contains(errOut, "1 lines, 1 rejected") {
		t.Fatalf("verify without -q: stdout %q stderr %q", out, errOut)
	}
	qout, qerr, _ := run(t, home, nil, "-q", "verify", "--now", "2026-12-01T00:00:00Z", rec)
	if qout != out || qerr != "" {
		t.Errorf("verify -q: stdout %q (want %q), stderr %q (want none)", qout, out, qerr)
	}
	if _, errOut, code := run(t, home, nil, "-q", "show", "70e27c5e4a0cd6ab0657b9bdf8d0aeb7"); code == 0 || errOut == "" {
		t.Errorf("-q hid the error: exit %d, stderr %q", code, errOut)
	}
	for _, verbose := range []bool{false, true} {
		title := map[bool]string{false: "npm ci", true: "go build"}[verbose]
		must(t, home, nil, "remember", "--kind", "error", "--title", title, "--happened", "the registry answered 503 for every tarball")
		args := []string{"sleep"}
		if verbose {
			args = []string{"-v", "sleep"}
		}
		if _, errOut, _ := run(t, home, nil, args...); strings.Contains(errOut, "msg=slept") != verbose {
			t.Errorf("remem %v: stderr %q; the memory's info log should show with -v only", args, errOut)
		}
	}
}

// vcsCopy copies the module's files (tracked and new) into a new git
// repository with one commit and returns its directory and revision.
func vcsCopy(t *testing.T) (dir, head string) {
	t.Helper()
	files, err := exec.Command("git", "-C", "../..", "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Skipf("no git checkout: %v", err)
	}
	dir = t.TempDir()
	for _, f := range strings.Split(strings.TrimRight(string(files), "\x00"), "\x00") {
		data, err := os.ReadFile(filepath.Join("../..", f))
		if os.IsNotExist(err) {
			continue // deleted in the work tree
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "copy"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	out, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	return dir, strings.TrimSpace(string(out))
}

// show and revoke take a unique prefix of 8 or more and the l-… id that
// show --json prints, with the memory opened or through a running node; a
// malformed hash is said to be malformed, and nothing is said twice.
func TestHashReferences(t *testing.T) {
	const text = "The integration suite times out when the VPN is down."
	for _, withNode := range []bool{false, true} {
		home := newHome(t)
		if withNode {
			runTestNode(t, home)
		}
		hash := strings.Fields(must(t, home, nil, "publish", "--kind", "error", text))[1]
		var shown struct{ Hash, ID string }
		if err := json.Unmarshal([]byte(must(t, home, nil, "show", "--json", hash[:8])), &shown); err != nil || shown.Hash != hash || shown.ID != "l-"+hash[:8] {
			t.Fatalf("node %v: show --json %s: %+v %v", withNode, hash[:8], shown, err)
		}
		if out := must(t, home, nil, "show", shown.ID); !strings.HasPrefix(out, hash+"  ") {
			t.Errorf("node %v: show %s: %q", withNode, shown.ID, out)
		}
		for ref, want := range map[string]string{
			"zzzz":                  `remem: not a lesson hash: "zzzz"; give the 32 hex characters, a unique prefix of at least 8, or the l-… id` + "\n",
			"0000000000":            "remem: no lesson with that hash is held here: none starts with 0000000000 (`remem lessons --all` lists the hashes)\n",
			strings.Repeat("0", 32): "remem: no lesson with that hash is held here: " + strings.Repeat("0", 32) + " (`remem lessons --all` lists the hashes)\n",
		} {
			if _, errOut, code := run(t, home, nil, "show", ref); code != 1 || errOut != want {
				t.Errorf("node %v: show %s: exit %d, stderr %q, want %q", withNode, ref, code, errOut, want)
			}
		}
		if out := must(t, home, nil, "revoke", "l-"+hash[:8]); !strings.HasPrefix(out, "revoked "+hash) {
			t.Errorf("node %v: revoke by id: %q", withNode, out)
		}
	}
}

// Errors say a thing once: a refused folder line names its reason once; a
// writer or embeddings URL without a scheme says what to write; commons
// serve on a taken port says so in one line, without "serving" first.
func TestErrorsSayItOnce(t *testing.T) {
	home := newHome(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "0123456789abcdef.jsonl"), []byte(`{"t":"lesson"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, _ := run(t, home, nil, "folder", "sync", dir)
	if !strings.Contains(out+errOut, "missing field (v)") || strings.Contains(out+errOut, "missing field: missing field") {
		t.Errorf("folder sync of a line without v:\n%s%s", out, errOut)
	}

	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := run(t, home, nil, "folder", "sync", file); code != 1 || strings.Count(errOut, "writing ") != 1 {
		t.Errorf("folder sync into a file: exit %d, %q", code, errOut)
	}

	for _, args := range [][]string{{"sleep", "--embed-url", "127.0.0.1:11434/v1"}, {"sleep", "--writer-url", "localhost:11434/v1"}} {
		want := fmt.Sprintf("remem: --%s = %q: want an http:// or https:// URL, like http://127.0.0.1:11434/v1\n", strings.TrimPrefix(args[1], "--"), args[2])
		if _, errOut, code := run(t, home, nil, args...); code != 2 || errOut != want {
			t.Errorf("remem %v: exit %d, %q, want %q", args, code, errOut, want)
		}
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("tok\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_, errOut, code := run(t, home, nil, "commons", "serve", "--data", t.TempDir(), "--token-file", token, "--listen", addr)
	if want := "remem: cannot listen on " + addr + ": the address is in use (stop what holds it, or give another with --listen)\n"; code != 1 || errOut != want {
		t.Errorf("commons serve on a taken port: exit %d, %q, want %q", code, errOut, want)
	}
	_, errOut, code = run(t, home, nil, "node", "--api", addr, "--mdns=false")
	if want := "remem: the local API cannot listen on " + addr + ": bind: address already in use (is another node running? use --api to pick another address)\n"; code != 1 || errOut != want {
		t.Errorf("node on a taken API port: exit %d, %q, want %q", code, errOut, want)
	}
}

// TestFlagUsagesHaveNoBackticks: urfave/cli takes the first `quoted` word
// of a flag's usage as its value's placeholder, so a backticked command in
// a usage printed "--threshold remem calibrate" in the help.
func TestFlagUsagesHaveNoBackticks(t *testing.T) {
	var walk func(prefix string, cmds []*cli.Command)
	walk = func(prefix string, cmds []*cli.Command) {
		for _, c := range cmds {
			name := strings.TrimSpace(prefix + " " + c.Name)
			for _, f := range c.Flags {
				if u, ok := f.(cli.DocGenerationFlag); ok && strings.Contains(u.GetUsage(), "`") {
					t.Errorf("remem %s --%s: a backtick in its usage becomes the placeholder: %q", name, f.Names()[0], u.GetUsage())
				}
			}
			walk(name, c.Subcommands)
		}
	}
	walk("", newApp().Commands)
}

// TestEmptyViewSaysWhatIsHeld: an empty view of a memory that holds
// lessons says so, instead of "no lessons yet" and how to make some.
func TestEmptyViewSaysWhatIsHeld(t *testing.T) {
	home := newHome(t)
	if out := must(t, home, nil, "lessons"); !strings.Contains(out, "no lessons yet") {
		t.Errorf("an empty memory: %q", out)
	}
	must(t, home, nil, "publish", "--kind", "error", "The integration suite times out when the VPN is down")
	if out := must(t, home, nil, "lessons", "--state", "common"); !strings.Contains(out, "no lessons are common (1 held in other states)") {
		t.Errorf("no common lesson of one held: %q", out)
	}
	if out := must(t, home, nil, "lessons", "--state", "common", "--json"); strings.TrimSpace(out) != "[]" {
		t.Errorf("--json of an empty view: %q", out)
	}
}

// TestPublishNeedsKind: publish without --kind says so, not `kind "" is
// not a lesson kind`.
func TestPublishNeedsKind(t *testing.T) {
	_, errOut, code := run(t, newHome(t), nil, "publish", "The integration suite times out when the VPN is down")
	if code != 2 || !strings.Contains(errOut, "needs --kind") {
		t.Errorf("publish without --kind: exit %d %q", code, errOut)
	}
}
