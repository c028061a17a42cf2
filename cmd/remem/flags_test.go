package main

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/remem/remem/node"
)

// ingestFile writes a session file with a good line and a bad second line.
func ingestFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "session.jsonl")
	lines := `{"kind":"error","title":"go test ./...","happened":"undefined: mocks.NewClient"}` + "\nnot json\n"
	if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestIngestTakesFileArgument: FILE is the argument, as for import and
// verify; - reads stdin; the old --events still works; a bad line is named
// FILE:LINE with and without a running node.
func TestIngestTakesFileArgument(t *testing.T) {
	file := ingestFile(t)
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	check := func(home, name string, args ...string) {
		t.Helper()
		stdin := []byte(nil)
		if args[len(args)-1] == "-" {
			stdin = data
		}
		out, errOut, code := run(t, home, stdin, append([]string{"ingest"}, args...)...)
		if code != 0 || !strings.Contains(out, "rejected 1") {
			t.Fatalf("ingest %v: exit %d\n%s%s", args, code, out, errOut)
		}
		if want := name + ":2: "; !strings.HasPrefix(errOut, want) {
			t.Errorf("ingest %v names the bad line %q, want it to start %q", args, errOut, want)
		}
		var rep node.IngestReport
		if err := json.Unmarshal([]byte(must(t, home, stdin, append([]string{"ingest", "--json"}, args...)...)), &rep); err != nil {
			t.Fatal(err)
		}
		if len(rep.Rejected) != 1 || rep.Rejected[0].Source != name || rep.Rejected[0].Line != 2 {
			t.Errorf("ingest --json %v: rejected %+v, want %s line 2", args, rep.Rejected, name)
		}
	}
	home := t.TempDir()
	must(t, home, nil, "init")
	check(home, file, file)
	check(home, "stdin", "-")
	check(home, file, "--events", file) // deprecated, hidden, still taken
	runTestNode(t, home)
	check(home, file, file) // through the node's API, still the file's name
	check(home, "stdin", "-")

	for _, args := range [][]string{{"a.jsonl", "b.jsonl"}, {"--events", file, file}} {
		_, errOut, code := run(t, home, nil, append([]string{"ingest"}, args...)...)
		if code != 2 || !strings.Contains(errOut, "one FILE") || strings.Count(errOut, "\n") > 2 {
			t.Errorf("ingest %v: exit %d, %q; want a usage error", args, code, errOut)
		}
	}
}

// TestContextJSONFlag: --json like every other command; the old --format
// json gives the same, --format anything else is refused.
func TestContextJSONFlag(t *testing.T) {
	home := t.TempDir()
	must(t, home, nil, "init")
	must(t, home, nil, "publish", "--kind", "error", "go test fails on a clean checkout without the generated mocks")
	dir := t.TempDir()
	out := must(t, home, nil, "context", "--json", "--cwd", dir)
	var got contextJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil || len(got.Lessons) != 1 {
		t.Fatalf("context --json: %v, %d lessons\n%s", err, len(got.Lessons), out)
	}
	if old := must(t, home, nil, "context", "--format", "json", "--cwd", dir); old != out {
		t.Errorf("--format json and --json differ:\n%s\n%s", old, out)
	}
	if _, errOut, code := run(t, home, nil, "context", "--format", "yaml"); code != 2 || !strings.Contains(errOut, "--json") {
		t.Errorf("--format yaml: exit %d, %q", code, errOut)
	}
	if help := must(t, home, nil, "context", "--help"); strings.Contains(help, "--format") {
		t.Errorf("the help still offers --format:\n%s", help)
	}
}

func TestHashJSON(t *testing.T) {
	home := t.TempDir()
	plain := strings.TrimSpace(must(t, home, nil, "hash", "--kind", "error", "Go test", "fails"))
	var got struct{ Hash, Kind, Text string }
	if err := json.Unmarshal([]byte(must(t, home, nil, "hash", "--json", "--kind", "error", "Go test", "fails")), &got); err != nil {
		t.Fatal(err)
	}
	if got.Hash != plain || got.Kind != "error" || got.Text != "Go test fails" {
		t.Errorf("hash --json = %+v, want hash %s", got, plain)
	}
}

// TestStateAndAllRefused: --all used to drop --state without a word.
func TestStateAndAllRefused(t *testing.T) {
	home := t.TempDir()
	must(t, home, nil, "init")
	out, errOut, code := run(t, home, nil, "lessons", "--state", "common", "--all")
	if code != 2 || out != "" || !strings.Contains(errOut, "give one") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("lessons --state common --all: exit %d, %q %q", code, out, errOut)
	}
	must(t, home, nil, "lessons", "--state", "revoked")
	must(t, home, nil, "lessons", "--all")
}

// jqExample is a --help example that pipes --json output into jq.
var jqExample = regexp.MustCompile(`^\s*(remem .*?)\s*\|\s*jq (?:-r )?'?([^']*)'?$`)

// TestHelpJSONExamples runs every `| jq` example of every command's help
// through the built binary and checks that each key the jq filter reads is
// a key of the JSON the command printed (".Accepted" once read nothing).
func TestHelpJSONExamples(t *testing.T) {
	home := t.TempDir()
	must(t, home, nil, "init")
	hash := strings.Fields(must(t, home, nil, "publish", "--kind", "error", "go test fails on a clean checkout without the generated mocks"))[1]
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "session.jsonl"), []byte("not json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	commonsURL := serveCommons(t)
	// The examples of what only a running node knows (its peers, its
	// addresses) run on a home with one.
	nodeHome := newHome(t)
	running := startNode(t, nodeHome, "--team", "examples", "--listen", "/ip4/127.0.0.1/tcp/0")
	defer running.stop(t)
	needsNode := func(cmdline, filter string) bool {
		return strings.HasPrefix(cmdline, "remem peers") || strings.HasPrefix(cmdline, "remem connect") ||
			(strings.HasPrefix(cmdline, "remem id") && strings.Contains(filter, "addrs"))
	}

	var examples [][]string
	var walk func(cmds []*cli.Command)
	walk = func(cmds []*cli.Command) {
		for _, c := range cmds {
			for _, line := range strings.Split(c.UsageText, "\n") {
				if m := jqExample.FindStringSubmatch(line); m != nil {
					examples = append(examples, m[1:])
				}
			}
			walk(c.Subcommands)
		}
	}
	walk(newApp().Commands)
	if len(examples) < 8 {
		t.Fatalf("found %d jq examples in the help, want the 8 or more written there: %q", len(examples), examples)
	}
	hexHash := regexp.MustCompile(`\b[0-9a-f]{32}\b`)
	field := regexp.MustCompile(`\.([A-Za-z_][A-Za-z0-9_]*)`)
	quoted := regexp.MustCompile(`"(?:[^"\\]|\\.)*"`) // string literals in a filter: "config.toml" reads no key
	for _, ex := range examples {
		cmdline := hexHash.ReplaceAllString(ex[0], hash)
		cmdline = strings.NewReplacer("http://127.0.0.1:8787", commonsURL, "https://commons.example.org", commonsURL).Replace(cmdline)
		sh := exec.Command("sh", "-c", cmdline)
		sh.Dir = work
		exHome := home
		if needsNode(cmdline, ex[1]) {
			exHome = nodeHome
		}
		sh.Env = append(os.Environ(), "REMEM_HOME="+exHome, "PATH="+filepath.Dir(remem(t))+string(os.PathListSeparator)+os.Getenv("PATH"))
		var out, errOut bytes.Buffer
		sh.Stdout, sh.Stderr = &out, &errOut
		if err := sh.Run(); err != nil {
			t.Errorf("%s: %v\n%s", cmdline, err, errOut.String())
			continue
		}
		var v any
		if err := json.Unmarshal(out.Bytes(), &v); err != nil {
			t.Errorf("%s: not JSON: %v\n%s", cmdline, err, out.String())
			continue
		}
		keys := map[string]bool{}
		collectKeys(v, keys)
		if len(keys) == 0 {
			// Nothing to read here (no peer without a network): the keys
			// of the type the command prints.
			shape, ok := emptyShapes[cmdline]
			if !ok {
				t.Errorf("%s printed %s: no key to check %q against", cmdline, bytes.TrimSpace(out.Bytes()), ex[1])
				continue
			}
			b, _ := json.Marshal(shape)
			_ = json.Unmarshal(b, &v)
			collectKeys(v, keys)
		}
		for _, m := range field.FindAllStringSubmatch(quoted.ReplaceAllString(ex[1], `""`), -1) {
			if !keys[m[1]] {
				t.Errorf("the help's example %q reads .%s, which %s does not print", ex[0]+" | jq "+ex[1], m[1], cmdline)
			}
		}
	}
}

// emptyShapes are what the examples that print an empty list here print
// elsewhere.
var emptyShapes = map[string]any{"remem peers --json": node.PeerStatus{}}

func collectKeys(v any, keys map[string]bool) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			keys[k] = true
			collectKeys(x, keys)
		}
	case []any:
		for _, x := range v {
			collectKeys(x, keys)
		}
	}
}

// serveCommons runs `remem commons serve` on a free loopback port until the
// test ends and returns its URL.
func serveCommons(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close() // the server takes the port next
	token := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(token, []byte("a-token-for-the-test\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(remem(t), "commons", "serve", "--listen", addr, "--data", t.TempDir(), "--token-file", token)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	url := "http://" + addr
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get(url + "/commons/index"); err == nil {
			_ = resp.Body.Close()
			return url
		}
		if time.Now().After(deadline) {
			t.Fatalf("commons serve on %s did not answer", addr)
		}
	}
}

// noJSON are the commands without --json: servers, parents of
// subcommands, a shell completion script (a script, not data), the
// config edits, which print nothing when they succeed, and the hook,
// whose output is the agent tool's own JSON protocol. Every other
// command prints data a program may read.
var noJSON = map[string]bool{"node": true, "mcp": true, "commons": true, "commons serve": true, "folder": true, "completion": true,
	"config": true, "config set": true, "config unset": true, "trust": true, "hook": true, "service": true}

// TestEveryDataCommandHasJSON: --json on every command that prints data.
func TestEveryDataCommandHasJSON(t *testing.T) {
	var walk func(prefix string, cmds []*cli.Command)
	walk = func(prefix string, cmds []*cli.Command) {
		for _, c := range cmds {
			name := strings.TrimSpace(prefix + " " + c.Name)
			has := false
			for _, f := range c.Flags {
				has = has || f.Names()[0] == "json"
			}
			if has == noJSON[name] {
				t.Errorf("remem %s: --json %v, want %v", name, has, !noJSON[name])
			}
			walk(name, c.Subcommands)
		}
	}
	walk("", newApp().Commands)
}

func TestWriterPromptJSON(t *testing.T) {
	cluster := []byte(`{"kind":"error","episodes":[{"kind":"error","title":"npm ci","happened":"EUSAGE"}]}`)
	plain := must(t, t.TempDir(), cluster, "writer-prompt")
	var got struct{ System, User string }
	if err := json.Unmarshal([]byte(must(t, t.TempDir(), cluster, "writer-prompt", "--json")), &got); err != nil {
		t.Fatal(err)
	}
	if got.System == "" || got.User == "" || plain != got.System+"\n\n"+got.User+"\n" {
		t.Errorf("writer-prompt --json = %+v, plain:\n%s", got, plain)
	}
}
