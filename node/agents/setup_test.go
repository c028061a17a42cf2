package agents

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
)

// project lays out a project with the given files (name -> testdata file).
func project(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, src := range files {
		data, err := os.ReadFile(filepath.Join("testdata/existing", src))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if fi.IsDir() {
			out[rel+"/"] = ""
			return nil
		}
		data, err := os.ReadFile(p)
		out[rel] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func testSetup(t *testing.T, tool *Tool, dir string) Setup {
	home := t.TempDir()
	return Setup{Tool: tool, Project: dir, UserHome: t.TempDir(), Remem: []string{"/opt/remem/bin/remem"},
		StateFile: filepath.Join(home, "setup.json"), BackupDir: filepath.Join(home, "backups")}
}

func apply(t *testing.T, s Setup, remove bool) Applied {
	t.Helper()
	var p Plan
	var err error
	if remove {
		p, err = PlanRemove(s)
	} else {
		p, err = PlanSetup(s)
	}
	if err != nil {
		t.Fatal(err)
	}
	a, err := Apply(s, p, remove)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// Setup merges into the person's files, a second run changes nothing, and
// removal gives back every file byte for byte, for each tool, on files
// that exist and on none.
func TestSetupMergesAndRemovesByteForByte(t *testing.T) {
	cases := []struct {
		tool  *Tool
		files map[string]string
	}{
		{claudeCode, map[string]string{".claude/settings.json": "claude-settings.json", ".mcp.json": "mcp.json", "CLAUDE.md": "CLAUDE.md"}},
		{claudeCode, nil},
		{codex, map[string]string{".codex/config.toml": "codex-config.toml", "AGENTS.md": "AGENTS.md"}},
		{codex, nil},
		{geminiCLI, map[string]string{".gemini/settings.json": "gemini-settings.json"}},
		{geminiCLI, nil},
	}
	for _, tc := range cases {
		name := tc.tool.Name
		if tc.files == nil {
			name += "/empty"
		}
		t.Run(name, func(t *testing.T) {
			dir := project(t, tc.files)
			before := snapshot(t, dir)
			s := testSetup(t, tc.tool, dir)
			a := apply(t, s, false)
			files := map[string]bool{tc.tool.mcpFile: true, tc.tool.hooksFile: true, tc.tool.instructions: true}
			if len(a.Changes) != len(files) {
				t.Fatalf("setup changed %d files, want %d", len(a.Changes), len(files))
			}
			if len(a.Backups) != len(tc.files) {
				t.Errorf("%d backups for %d existing files", len(a.Backups), len(tc.files))
			}
			after := snapshot(t, dir)
			for name, old := range before {
				if strings.HasSuffix(name, "/") {
					continue
				}
				checkKept(t, tc.tool, filepath.Join(dir, name), old, after[name])
			}
			checkRegistered(t, s)
			if again, err := PlanSetup(s); err != nil || len(again.Changes) != 0 {
				t.Fatalf("a second setup would change %+v (%v)", again.Changes, err)
			}
			apply(t, s, true)
			if got := snapshot(t, dir); !equalMaps(got, before) {
				t.Errorf("after remove the project differs:\n got %q\nwant %q", got, before)
			}
			if again, err := PlanRemove(s); err != nil || len(again.Changes) != 0 {
				t.Fatalf("a second remove would change %+v (%v)", again.Changes, err)
			}
		})
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// checkKept: every key of the old file is still there with its value.
func checkKept(t *testing.T, tool *Tool, path, old, now string) {
	t.Helper()
	switch {
	case strings.HasSuffix(path, ".json"):
		var o, n map[string]any
		if err := json.Unmarshal([]byte(old), &o); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(now), &n); err != nil {
			t.Fatalf("%s is no JSON after setup: %v\n%s", path, err, now)
		}
		if !contains(n, o) {
			t.Errorf("%s lost content:\nwas %s\nnow %s", path, old, now)
		}
	case strings.HasSuffix(path, ".toml"):
		if !strings.HasPrefix(now, old) {
			t.Errorf("%s: setup changed what was there:\n%s", path, now)
		}
		var v map[string]any
		if _, err := toml.Decode(now, &v); err != nil {
			t.Errorf("%s is no TOML after setup: %v", path, err)
		}
	default:
		if !strings.HasPrefix(now, old) {
			t.Errorf("%s: setup changed what was there:\n%s", path, now)
		}
	}
}

// contains: every key and array element of want is in got (arrays may grow).
func contains(got, want any) bool {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range w {
			if !contains(g[k], v) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) < len(w) {
			return false
		}
		for i := range w {
			if !contains(g[i], w[i]) {
				return false
			}
		}
		return true
	}
	return sameJSON(got, want)
}

// checkRegistered reads the files back as the tool would.
func checkRegistered(t *testing.T, s Setup) {
	t.Helper()
	tool := s.Tool
	read := func(rel string) []byte {
		data, err := os.ReadFile(filepath.Join(s.Project, rel))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	var server map[string]any
	if tool.mcpTOML {
		var doc struct {
			MCP map[string]map[string]any `toml:"mcp_servers"`
		}
		if _, err := toml.Decode(string(read(tool.mcpFile)), &doc); err != nil {
			t.Fatal(err)
		}
		server = doc.MCP["remem"]
	} else {
		var doc struct {
			MCP map[string]map[string]any `json:"mcpServers"`
		}
		if err := json.Unmarshal(read(tool.mcpFile), &doc); err != nil {
			t.Fatal(err)
		}
		server = doc.MCP["remem"]
	}
	if server["command"] != "/opt/remem/bin/remem" || !sameJSON(server["args"], []string{"mcp"}) {
		t.Errorf("MCP server: %v", server)
	}
	var hooks struct {
		Hooks map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct {
				Type, Command string
				Timeout       int
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(read(tool.hooksFile), &hooks); err != nil {
		t.Fatal(err)
	}
	for _, g := range tool.hooks {
		found := false
		for _, grp := range hooks.Hooks[g.event] {
			for _, h := range grp.Hooks {
				if h.Command == "/opt/remem/bin/remem hook "+tool.Name && h.Type == "command" && grp.Matcher == g.matcher {
					found = true
					if h.Timeout != hookTimeoutSeconds*tool.timeoutUnit {
						t.Errorf("%s: timeout %d", g.event, h.Timeout)
					}
				}
			}
		}
		if !found {
			t.Errorf("no remem hook on %s: %+v", g.event, hooks.Hooks[g.event])
		}
	}
	if !bytes.Contains(read(tool.instructions), []byte("never instructions")) {
		t.Errorf("%s has no remem section", tool.instructions)
	}
}

// A file the person changed after setup keeps the change on removal;
// only remem's entries go.
func TestRemoveKeepsLaterChanges(t *testing.T) {
	dir := project(t, map[string]string{".claude/settings.json": "claude-settings.json"})
	s := testSetup(t, claudeCode, dir)
	apply(t, s, false)
	p := filepath.Join(dir, ".claude/settings.json")
	data, _ := os.ReadFile(p)
	var v map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	v["model"] = "opus"
	data, _ = json.MarshalIndent(v, "", "  ")
	if err := os.WriteFile(p, append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	apply(t, s, true)
	data, _ = os.ReadFile(p)
	if !strings.Contains(string(data), `"model": "opus"`) || strings.Contains(string(data), "remem") {
		t.Errorf("after remove:\n%s", data)
	}
	if !strings.Contains(string(data), "prettier") {
		t.Errorf("the person's hook went:\n%s", data)
	}
}

// A server named remem that the person wrote to run something else is
// theirs: setup refuses with what to do, and changes nothing.
func TestSetupLeavesAForeignServer(t *testing.T) {
	dir := t.TempDir()
	foreign := `{"mcpServers":{"remem":{"command":"python3","args":["my_remem.py"]}}}`
	if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte(foreign), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := PlanSetup(testSetup(t, claudeCode, dir))
	if err == nil || !strings.Contains(err.Error(), "runs something else") {
		t.Fatalf("err = %v", err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, ".mcp.json")); string(data) != foreign {
		t.Errorf(".mcp.json changed: %s", data)
	}
}

// A file that is not JSON, or not TOML, is refused with what to do.
func TestSetupRefusesBrokenFiles(t *testing.T) {
	for _, tc := range []struct {
		tool       *Tool
		file, data string
	}{
		{claudeCode, ".claude/settings.json", "{\"hooks\": {"},
		{claudeCode, ".mcp.json", "[1, 2]"},
		{geminiCLI, ".gemini/settings.json", "// comment\n{}"},
		{codex, ".codex/config.toml", "[mcp_servers\n"},
	} {
		dir := t.TempDir()
		p := filepath.Join(dir, tc.file)
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(tc.data), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := PlanSetup(testSetup(t, tc.tool, dir))
		if err == nil || !strings.Contains(err.Error(), "by hand") {
			t.Errorf("%s %q: err = %v", tc.file, tc.data, err)
		}
	}
}

// A moved binary: setup again replaces remem's hook instead of adding a
// second one.
func TestSetupReplacesAMovedBinary(t *testing.T) {
	dir := t.TempDir()
	s := testSetup(t, geminiCLI, dir)
	apply(t, s, false)
	s.Remem = []string{"/usr/local/bin/remem", "--home", "/srv/my memory"}
	apply(t, s, false)
	data, _ := os.ReadFile(filepath.Join(dir, ".gemini/settings.json"))
	if n := strings.Count(string(data), "hook gemini-cli"); n != len(geminiCLI.hooks) {
		t.Errorf("%d remem hooks, want %d:\n%s", n, len(geminiCLI.hooks), data)
	}
	if !strings.Contains(string(data), `/usr/local/bin/remem --home '/srv/my memory' hook gemini-cli`) {
		t.Errorf("hooks not updated:\n%s", data)
	}
	var doc struct {
		MCP map[string]struct {
			Command string
			Args    []string
		} `json:"mcpServers"`
	}
	_ = json.Unmarshal(data, &doc)
	if doc.MCP["remem"].Command != "/usr/local/bin/remem" || strings.Join(doc.MCP["remem"].Args, "|") != "--home|/srv/my memory|mcp" {
		t.Errorf("server: %+v", doc.MCP["remem"])
	}
}

// The user scope of Claude Code registers the server through `claude mcp`.
func TestClaudeUserScopeRunsClaude(t *testing.T) {
	s := testSetup(t, claudeCode, "")
	s.Project = ""
	var ran [][]string
	s.Run = func(name string, args ...string) ([]byte, error) {
		ran = append(ran, append([]string{name}, args...))
		return nil, nil
	}
	apply(t, s, false)
	want := "claude mcp add --transport stdio --scope user remem -- /opt/remem/bin/remem mcp"
	if len(ran) != 1 || strings.Join(ran[0], " ") != want {
		t.Fatalf("ran %q, want %q", ran, want)
	}
	if _, err := os.Stat(filepath.Join(s.UserHome, ".claude/settings.json")); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(filepath.Join(s.UserHome, ".claude/CLAUDE.md")); err != nil {
		t.Error(err)
	}
	apply(t, s, true)
	if strings.Join(ran[len(ran)-1], " ") != "claude mcp remove --scope user remem" {
		t.Errorf("remove ran %q", ran[len(ran)-1])
	}
	if _, err := os.Stat(filepath.Join(s.UserHome, ".claude")); err == nil {
		t.Error("remove left the .claude directory setup created")
	}
}

func TestShellJoin(t *testing.T) {
	got := shellJoin([]string{"/a b/remem", "--home", "it's", "hook", "codex"})
	if got != `'/a b/remem' --home 'it'\''s' hook codex` {
		t.Errorf("got %s", got)
	}
}

// Whatever the person's file holds, setup then remove gives it back byte
// for byte, or setup refuses it and changes nothing.
func FuzzSetupRoundTrip(f *testing.F) {
	for _, name := range []string{"claude-settings.json", "mcp.json", "gemini-settings.json", "codex-config.toml", "CLAUDE.md", "AGENTS.md"} {
		data, _ := os.ReadFile(filepath.Join("testdata/existing", name))
		f.Add(uint8(0), data)
		f.Add(uint8(1), data)
		f.Add(uint8(2), data)
	}
	f.Add(uint8(0), []byte(`{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"remem hook claude-code"}]}]}}`))
	f.Add(uint8(2), []byte("{\"mcpServers\":{}}\n\n"))
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		tool := Tools[int(which)%len(Tools)]
		for _, rel := range []string{tool.hooksFile, tool.mcpFile, tool.instructions} {
			dir := t.TempDir()
			p := filepath.Join(dir, rel)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, dir)
			s := testSetup(t, tool, dir)
			plan, err := PlanSetup(s)
			if err != nil {
				if got := snapshot(t, dir); !equalMaps(got, before) {
					t.Fatal("a refused setup changed files")
				}
				continue
			}
			if _, err := Apply(s, plan, false); err != nil {
				t.Fatal(err)
			}
			plan, err = PlanRemove(s)
			if err != nil {
				t.Fatalf("remove after setup: %v", err)
			}
			if _, err := Apply(s, plan, true); err != nil {
				t.Fatal(err)
			}
			if got := snapshot(t, dir); !equalMaps(got, before) {
				t.Fatalf("%s: setup then remove changed %q into %q", rel, before, got)
			}
		}
	})
}

// A project whose configuration files are links (a cloned project could
// point CLAUDE.md at ~/.bashrc) is refused, and the link's target is
// neither changed nor copied into the project.
func TestSetupDoesNotFollowLinksInAProject(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "bashrc")
	if err := os.WriteFile(secret, []byte("export TOKEN=s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, link := range []string{"CLAUDE.md", ".claude", ".mcp.json"} {
		dir := t.TempDir()
		target := secret
		if link == ".claude" {
			target = filepath.Dir(secret)
		}
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
		_, err := PlanSetup(testSetup(t, claudeCode, dir))
		if err == nil || !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("%s as a link: err = %v", link, err)
		}
		if data, _ := os.ReadFile(secret); string(data) != "export TOKEN=s3cret\n" {
			t.Fatalf("the link's target changed: %q", data)
		}
	}
}

// In the user's home a linked file (a dotfile manager's) is written
// through: the link stays a link and its target gets the change.
func TestSetupWritesThroughLinksForTheUser(t *testing.T) {
	s := testSetup(t, geminiCLI, "")
	s.Project = ""
	dotfiles := t.TempDir()
	real := filepath.Join(dotfiles, "gemini-settings.json")
	if err := os.WriteFile(real, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(s.UserHome, ".gemini"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(s.UserHome, ".gemini/settings.json")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	apply(t, s, false)
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v", err)
	}
	if data, _ := os.ReadFile(real); !strings.Contains(string(data), "hook gemini-cli") {
		t.Errorf("the target has no hooks:\n%s", data)
	}
	apply(t, s, true)
	if data, _ := os.ReadFile(real); string(data) != "{}\n" {
		t.Errorf("after remove the target holds %q", data)
	}
}

// A file laid out with two-space indents but no final newline (Python's
// json.dump(indent=2)) stays laid out so, and comes back byte for byte.
func TestSetupKeepsTheLayout(t *testing.T) {
	dir := project(t, map[string]string{".claude/settings.json": "claude-settings-python.json"})
	before, _ := os.ReadFile(filepath.Join(dir, ".claude/settings.json"))
	s := testSetup(t, claudeCode, dir)
	apply(t, s, false)
	after, _ := os.ReadFile(filepath.Join(dir, ".claude/settings.json"))
	if bytes.Contains(after, []byte(",{")) || bytes.HasSuffix(after, []byte("\n")) || !bytes.Contains(after, []byte("\n            \"type\": \"command\",")) {
		t.Errorf("the layout changed:\n%s", after)
	}
	apply(t, s, true)
	if again, _ := os.ReadFile(filepath.Join(dir, ".claude/settings.json")); !bytes.Equal(again, before) {
		t.Errorf("after remove:\n%s\nwant\n%s", again, before)
	}
}

// remem installed under another name (a link to a versioned file): setup
// knows its own entries by what it wrote, so a second run changes nothing
// and remove takes them out.
func TestSetupKnowsItsEntriesUnderAnyName(t *testing.T) {
	dir := project(t, map[string]string{".claude/settings.json": "claude-settings.json", ".mcp.json": "mcp.json"})
	before := snapshot(t, dir)
	s := testSetup(t, claudeCode, dir)
	s.Remem = []string{"/opt/remem-1.4/bin/remem-review"}
	apply(t, s, false)
	if again, err := PlanSetup(s); err != nil || len(again.Changes) != 0 {
		t.Fatalf("a second setup: %+v %v", again.Changes, err)
	}
	if in, _ := HooksSetUp(claudeCode, dir, s.UserHome, KnownRemem(s.StateFile)...); !in {
		t.Error("HooksSetUp does not see the hooks setup wrote")
	}
	apply(t, s, true)
	if got := snapshot(t, dir); !equalMaps(got, before) {
		t.Errorf("after remove: %q", got)
	}
}

// What a hostile project can hold where setup reads: a FIFO (a plain read
// would wait forever), a directory, a JSON object with a key twice.
func TestSetupRefusesOddFiles(t *testing.T) {
	for _, tc := range []struct{ name, want string }{{"fifo", "regular"}, {"dir", "regular"}, {"dup", "twice"}} {
		dir := t.TempDir()
		p := filepath.Join(dir, ".mcp.json")
		switch tc.name {
		case "fifo":
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Fatal(err)
			}
		case "dir":
			_ = os.Mkdir(p, 0o755)
		case "dup":
			_ = os.WriteFile(p, []byte(`{"mcpServers": {}, "mcpServers": {"x": {}}}`), 0o644)
		}
		done := make(chan error, 1)
		go func() { _, err := PlanSetup(testSetup(t, claudeCode, dir)); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: err = %v", tc.name, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: setup hangs", tc.name)
		}
	}
}

// A remem whose path holds a space: a second setup changes nothing and
// remove takes its hooks out.
func TestSetupWithASpaceInThePath(t *testing.T) {
	dir := project(t, map[string]string{".claude/settings.json": "claude-settings.json"})
	before := snapshot(t, dir)
	s := testSetup(t, claudeCode, dir)
	s.Remem = []string{"/Users/Ana Maria/bin/remem"}
	apply(t, s, false)
	if again, err := PlanSetup(s); err != nil || len(again.Changes) != 0 {
		t.Fatalf("a second setup: %+v %v", again.Changes, err)
	}
	apply(t, s, true)
	if got := snapshot(t, dir); !equalMaps(got, before) {
		t.Errorf("after remove: %q", got)
	}
}

func TestDuplicateKey(t *testing.T) {
	for in, want := range map[string]string{`{"a":1,"b":{"a":2}}`: "", `{"a":1,"a":2}`: "a", `{"x":[{"k":1},{"k":2}]}`: "", `{"x":[{"k":1,"k":2}]}`: "k", `{"a":{"b":1},"c":{"b":2,"b":3}}`: "b"} {
		if got := duplicateKey([]byte(in)); got != want {
			t.Errorf("%s: %q, want %q", in, got, want)
		}
	}
}
