package mcp_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/remem/remem/internal/version"
	"github.com/remem/remem/node"
	remcp "github.com/remem/remem/node/mcp"
	"github.com/remem/remem/protocol"
)

// ownLesson has m write one lesson through the tools and returns its hash.
func ownLesson(t *testing.T, cs *sdk.ClientSession) string {
	t.Helper()
	mustOK(t, "remember", call(t, cs, "remember", map[string]any{"kind": "error", "title": "go test -race",
		"happened": "the race detector needs cgo: CGO_ENABLED=0 makes go test -race fail", "cwd": "/work/project"}))
	mustOK(t, "sleep", call(t, cs, "sleep", map[string]any{}))
	var out remcp.LessonsOutput
	structured(t, call(t, cs, "lessons", map[string]any{}), &out)
	for _, l := range out.Lessons {
		if l.Own {
			return l.Hash
		}
	}
	t.Fatalf("no own lesson after sleep: %+v", out.Lessons)
	return ""
}

// receiveLesson puts a lesson another memory wrote into m.
func receiveLesson(t *testing.T, m *node.Memory) string {
	t.Helper()
	author, _ := protocol.NewIdentity(seed(7))
	rec, err := protocol.SignLesson(author, protocol.LessonDraft{Kind: "error",
		Text: "Running pip install inside the base conda environment breaks the solver on later updates.", Seen: 2, Strength: 0.75,
		Updated: time.Now().UTC().Add(-time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := m.Receive(context.Background(), "team:x", protocol.SplitLines(rec.Raw)); err != nil || len(rep.Refused) > 0 {
		t.Fatalf("receive: %+v %v", rep, err)
	}
	return rec.Hash
}

func TestRevokeOwnLessonOnly(t *testing.T) {
	m := openMemory(t)
	cs := connect(t, remcp.NewServer(node.Local{M: m}, "test"))
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var desc string
	for _, tool := range tools.Tools {
		if tool.Name == "revoke" {
			desc = tool.Description
		}
	}
	if !strings.Contains(desc, "quorum") || !strings.Contains(desc, "refuses") {
		t.Errorf("revoke's description should say another memory's lesson only counts toward a quorum and is refused: %q", desc)
	}

	theirs := receiveLesson(t, m)
	res := call(t, cs, "revoke", map[string]any{"hash": theirs})
	if !res.IsError || !strings.Contains(textOf(res), "quorum") || !strings.Contains(textOf(res), "not by this memory") {
		t.Errorf("revoking another memory's lesson should be a tool error about the quorum: %s", textOf(res))
	}
	if st := state(t, m, theirs); st == protocol.StateRevoked {
		t.Errorf("the refused revoke changed the lesson's state to %s", st)
	}

	rec, err := m.Publish("error", "go test -race fails when CGO_ENABLED=0 because the race detector needs cgo.")
	if err != nil {
		t.Fatal(err)
	}
	mine := rec.Hash
	res = call(t, cs, "revoke", map[string]any{"hash": mine, "reason": "fixed in go 1.27"})
	mustOK(t, "revoke", res)
	var out remcp.RevokeOutput
	structured(t, res, &out)
	if out.Origin != m.Origin() || !strings.Contains(out.Message, "revoked "+mine) || !strings.Contains(out.Message, "withdrew") {
		t.Errorf("revoke: %+v", out)
	}
	if st := state(t, m, mine); st != protocol.StateRevoked {
		t.Errorf("own lesson after revoke is %s, want revoked", st)
	}
	if res := call(t, cs, "revoke", map[string]any{"hash": strings.Repeat("0", 32)}); !res.IsError || !strings.Contains(textOf(res), "no lesson") {
		t.Errorf("an unknown hash should be a tool error: %s", textOf(res))
	}
	if res := call(t, cs, "revoke", map[string]any{"hash": " "}); !res.IsError || !strings.Contains(textOf(res), `"hash"`) {
		t.Errorf("no hash should be a tool error naming it: %s", textOf(res))
	}
}

func state(t *testing.T, m *node.Memory, hash string) protocol.State {
	t.Helper()
	p, err := m.Show(hash)
	if err != nil {
		t.Fatal(err)
	}
	return p.State
}

func TestLessonsAsResources(t *testing.T) {
	m := openMemory(t)
	cs := connect(t, remcp.NewServer(node.Local{M: m}, "test"))
	ctx := context.Background()
	mine := ownLesson(t, cs)
	theirs := receiveLesson(t, m)

	list, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	uris := map[string]*sdk.Resource{}
	for _, r := range list.Resources {
		uris[r.URI] = r
	}
	for _, uri := range []string{remcp.ListURI, remcp.LessonURI(mine), remcp.LessonURI(theirs)} {
		if uris[uri] == nil {
			t.Fatalf("resources/list lacks %s: %v", uri, list.Resources)
		}
	}
	if r := uris[remcp.LessonURI(theirs)]; !strings.HasPrefix(r.Title, "Observed (candidate") || r.MIMEType != "application/json" {
		t.Errorf("a lesson's resource: %+v", r)
	}

	res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: remcp.LessonURI(mine)})
	if err != nil {
		t.Fatal(err)
	}
	want, err := m.Show(mine)
	if err != nil {
		t.Fatal(err)
	}
	// The show tool's provenance: no signed line, no unknown member.
	var got remcp.Provenance
	if err := json.Unmarshal([]byte(res.Contents[0].Text), &got); err != nil {
		t.Fatalf("the lesson's resource is not the show tool's JSON: %v\n%s", err, res.Contents[0].Text)
	}
	if got.Lesson.Hash != mine || got.Lesson.Text != want.Text || len(got.Records) != len(want.Records) || res.Contents[0].MIMEType != "application/json" {
		t.Errorf("read %s: %+v, want show's %+v", remcp.LessonURI(mine), got, want)
	}

	res, err = cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: remcp.ListURI})
	if err != nil {
		t.Fatal(err)
	}
	var all remcp.LessonsOutput
	if err := json.Unmarshal([]byte(res.Contents[0].Text), &all); err != nil || len(all.Lessons) != 2 || all.Note != remcp.Header {
		t.Errorf("read %s: %v %s", remcp.ListURI, err, res.Contents[0].Text)
	}

	if _, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: remcp.LessonURI(strings.Repeat("0", 32))}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("an unknown lesson's resource should be not found: %v", err)
	}
}

// The context prompt is `remem context`'s Markdown for the project.
func TestContextPrompt(t *testing.T) {
	m := openMemory(t)
	cs := connect(t, remcp.NewServer(node.Local{M: m}, "test"))
	ctx := context.Background()
	ownLesson(t, cs)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# race detector tests\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	prompts, err := cs.ListPrompts(ctx, nil)
	if err != nil || len(prompts.Prompts) != 1 || prompts.Prompts[0].Name != "context" {
		t.Fatalf("prompts: %+v %v", prompts, err)
	}
	res, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "context", Arguments: map[string]string{"cwd": dir, "limit": "3"}})
	if err != nil {
		t.Fatal(err)
	}
	views, err := remcp.PickContext(ctx, node.Local{M: m}, remcp.ProjectQuery(dir), 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := remcp.ContextMarkdown(remcp.FitBudget(views, 2000))
	if len(res.Messages) != 1 || res.Messages[0].Role != "user" {
		t.Fatalf("prompt messages: %+v", res.Messages)
	}
	if got := res.Messages[0].Content.(*sdk.TextContent).Text; got != want || !strings.Contains(got, "Observed (candidate, 0 confirmations): ") {
		t.Errorf("context prompt:\n%s\nwant:\n%s", got, want)
	}
	for args, wantErr := range map[string]map[string]string{
		`"limit"`: {"cwd": dir, "limit": "many"},
		`"cwd"`:   {"cwd": "relative/dir"},
	} {
		if _, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "context", Arguments: wantErr}); err == nil || !strings.Contains(err.Error(), args) {
			t.Errorf("arguments %v: %v, want an error naming %s", wantErr, err, args)
		}
	}
}

// Without a version from the caller, the server reports the build's.
func TestServerReportsBuildVersion(t *testing.T) {
	cs := connect(t, remcp.NewServer(node.Local{M: openMemory(t)}, ""))
	if got := cs.InitializeResult().ServerInfo.Version; got != version.String() {
		t.Errorf("server version %q, want %q", got, version.String())
	}
}
