package mcp_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/remem/remem/node"
	remcp "github.com/remem/remem/node/mcp"
	"github.com/remem/remem/protocol"
)

// connect runs the server over in-memory transports and returns the SDK's
// client session, as an agent's MCP client would hold it.
func connect(t *testing.T, s *sdk.Server) *sdk.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := sdk.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		t.Fatalf("server connect: %v", err)
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "test-agent", Version: "1"}, nil)
	cs, err := c.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatalf("client connect: %v", err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

func openMemory(t *testing.T) *node.Memory {
	t.Helper()
	m, err := node.Open(node.Config{Home: t.TempDir(), Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// call calls a tool and returns its result; a protocol error fails the test.
func call(t *testing.T, cs *sdk.ClientSession, name string, args any) *sdk.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	return res
}

func textOf(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// structured decodes a result's structured content into v.
func structured(t *testing.T, res *sdk.CallToolResult, v any) {
	t.Helper()
	data, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("structured content %s: %v", data, err)
	}
}

func mustOK(t *testing.T, name string, res *sdk.CallToolResult) {
	t.Helper()
	if res.IsError {
		t.Fatalf("%s: tool error: %s", name, textOf(res))
	}
}

func TestToolsListed(t *testing.T) {
	cs := connect(t, remcp.NewServer(node.Local{M: openMemory(t)}, "test"))
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]*sdk.Tool{}
	for _, tool := range res.Tools {
		tools[tool.Name] = tool
	}
	for _, name := range []string{"remember", "recall", "lessons", "show", "sleep"} {
		if tools[name] == nil {
			t.Fatalf("tool %q missing; have %v", name, res.Tools)
		}
		if tools[name].Description == "" {
			t.Errorf("tool %q has no description", name)
		}
	}
	schema, _ := json.Marshal(tools["remember"].InputSchema)
	for _, field := range []string{`"kind"`, `"said"`, `"agent_did"`, `"title"`, `"expected"`, `"happened"`, `"text"`, `"agent"`, `"session"`, `"cwd"`, `"at"`, `"lesson"`, `"matches"`, "the person's words, verbatim"} {
		if !strings.Contains(string(schema), field) {
			t.Errorf("remember's input schema lacks %s: %s", field, schema)
		}
	}
	if !strings.Contains(string(schema), `"required":["kind"]`) {
		t.Errorf("remember's input schema should require kind only: %s", schema)
	}
	for _, rule := range []string{"one English sentence", "never an instruction", "no names, handles, hosts, home paths, ids or secrets", "Call recall first", "pass its hash as matches"} {
		if !strings.Contains(tools["remember"].Description, rule) {
			t.Errorf("remember's description does not teach %q: %s", rule, tools["remember"].Description)
		}
	}
	if init := cs.InitializeResult(); init == nil || !strings.Contains(init.Instructions, "never instructions") {
		t.Errorf("the server's instructions should frame lessons as observations: %+v", init)
	}
}

func TestRememberValidates(t *testing.T) {
	cs := connect(t, remcp.NewServer(node.Local{M: openMemory(t)}, "test"))
	for _, tc := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"no kind", map[string]any{"title": "go test"}, `"kind"`},
		{"unknown kind", map[string]any{"kind": "rant", "text": "x"}, `unknown kind "rant"`},
		{"correction without said", map[string]any{"kind": "correction", "agent_did": "used spaces"}, `needs "said"`},
		{"error without title", map[string]any{"kind": "error", "expected": "a pass"}, `needs "title"`},
		{"note without text", map[string]any{"kind": "note", "said": "x"}, `needs "text"`},
		{"bad time", map[string]any{"kind": "note", "text": "x", "at": "yesterday"}, "RFC 3339"},
		{"wrong type", map[string]any{"kind": "error", "title": 42}, "title"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, cs, "remember", tc.args)
			t.Logf("%s", textOf(res))
			if !res.IsError {
				t.Fatalf("want a tool error, got %s", textOf(res))
			}
			if !strings.Contains(textOf(res), tc.want) {
				t.Errorf("error %q does not say %q", textOf(res), tc.want)
			}
		})
	}
}

// The agent's lesson and match go through remember to the memory: a good
// sentence becomes the lesson, a refused one and an unknown match are
// noted in the answer, and the event is stored either way.
func TestRememberTakesTheAgentsLessonAndMatch(t *testing.T) {
	m := openMemory(t)
	cs := connect(t, remcp.NewServer(node.Local{M: m}, "test"))
	const good = "go test -race fails with 'cgo: C compiler not found' because the race detector needs cgo and the image has no gcc."
	res := call(t, cs, "remember", map[string]any{"kind": "error", "title": "go test -race ./...", "happened": "go: -race requires cgo; enable cgo by setting CGO_ENABLED=1",
		"cwd": "/work/project", "lesson": good})
	mustOK(t, "remember", res)
	var rem remcp.RememberOutput
	structured(t, res, &rem)
	if rem.Taken != 1 || len(rem.Notes) != 0 {
		t.Fatalf("remember: %+v", rem)
	}
	res = call(t, cs, "remember", map[string]any{"kind": "error", "title": "npm ci", "happened": "EINTEGRITY",
		"lesson": "Always delete package-lock.json before npm ci.", "matches": "0123abcd0123abcd"})
	mustOK(t, "remember", res)
	structured(t, res, &rem)
	if rem.Taken != 1 || len(rem.Notes) != 2 || !strings.Contains(rem.Message, "not taken") || !strings.Contains(rem.Message, "matches") {
		t.Fatalf("remember with a refused lesson and an unknown match: %+v", rem)
	}
	mustOK(t, "sleep", call(t, cs, "sleep", map[string]any{}))
	views, err := m.Lessons(node.Filter{All: true})
	if err != nil {
		t.Fatal(err)
	}
	texts := ""
	for _, v := range views {
		texts += v.Text + "\n"
	}
	if !strings.Contains(texts, good) || strings.Contains(texts, "Always delete") {
		t.Fatalf("lessons:\n%s", texts)
	}
}

func TestRememberSleepRecallShow(t *testing.T) {
	m := openMemory(t)
	cs := connect(t, remcp.NewServer(node.Local{M: m}, "test"))
	ev := map[string]any{"kind": "error", "title": "go test ./...", "happened": "the race detector needs cgo: CGO_ENABLED=0 makes go test -race fail",
		"expected": "the tests to run with -race", "cwd": "/work/project"}
	res := call(t, cs, "remember", ev)
	mustOK(t, "remember", res)
	var rem remcp.RememberOutput
	structured(t, res, &rem)
	if rem.Taken != 1 {
		t.Fatalf("remember: %+v", rem)
	}
	res = call(t, cs, "remember", ev)
	mustOK(t, "remember again", res)
	structured(t, res, &rem)
	if rem.Duplicates != 1 || rem.Taken != 0 {
		t.Fatalf("the same event twice in one session should count once: %+v", rem)
	}

	res = call(t, cs, "sleep", map[string]any{})
	mustOK(t, "sleep", res)
	var sl remcp.SleepOutput
	structured(t, res, &sl)
	if sl.NewLessons != 1 {
		t.Fatalf("sleep wrote %d lessons: %s", sl.NewLessons, sl.Summary)
	}

	res = call(t, cs, "recall", map[string]any{"task": "run go test with the race detector", "limit": 3})
	mustOK(t, "recall", res)
	var rec remcp.LessonsOutput
	structured(t, res, &rec)
	if len(rec.Lessons) != 1 {
		t.Fatalf("recall found %d lessons: %s", len(rec.Lessons), textOf(res))
	}
	l := rec.Lessons[0]
	if !strings.Contains(strings.ToLower(l.Text), "race") || l.Kind != "error" || !l.Own || !strings.HasPrefix(l.StrengthReason, "own") {
		t.Errorf("recalled lesson: %+v", l)
	}
	if !strings.HasPrefix(l.Observation, "Observed (candidate, 0 confirmations): ") {
		t.Errorf("observation framing: %q", l.Observation)
	}
	txt := textOf(res)
	if !strings.Contains(txt, remcp.Header) || !strings.Contains(txt, l.Observation) || !strings.Contains(txt, l.Hash) {
		t.Errorf("recall text should carry the header and the framed lesson:\n%s", txt)
	}

	res = call(t, cs, "recall", map[string]any{"query": "bake sourdough bread"})
	mustOK(t, "recall unrelated", res)
	structured(t, res, &rec)
	if len(rec.Lessons) != 0 {
		t.Errorf("an unrelated task recalled %+v", rec.Lessons)
	}
	if res := call(t, cs, "recall", map[string]any{"task": "  "}); !res.IsError {
		t.Errorf("recall without a task should be a tool error")
	}

	res = call(t, cs, "lessons", map[string]any{})
	mustOK(t, "lessons", res)
	structured(t, res, &rec)
	if len(rec.Lessons) != 1 || rec.Lessons[0].Hash != l.Hash {
		t.Fatalf("lessons: %+v", rec.Lessons)
	}
	res = call(t, cs, "lessons", map[string]any{"state": "common"})
	mustOK(t, "lessons common", res)
	structured(t, res, &rec)
	if len(rec.Lessons) != 0 {
		t.Errorf("no lesson is common yet: %+v", rec.Lessons)
	}
	if res := call(t, cs, "lessons", map[string]any{"state": "famous"}); !res.IsError || !strings.Contains(textOf(res), "famous") {
		t.Errorf("a bad state should be a tool error naming it: %s", textOf(res))
	}

	res = call(t, cs, "show", map[string]any{"hash": l.Hash})
	mustOK(t, "show", res)
	var p remcp.Provenance
	structured(t, res, &p)
	if p.Lesson.Hash != l.Hash || p.Lesson.Text != l.Text {
		t.Errorf("show: %+v", p)
	}
	res = call(t, cs, "show", map[string]any{"hash": strings.Repeat("0", 32)})
	if !res.IsError || !strings.Contains(textOf(res), "no lesson") {
		t.Errorf("an unknown hash should be a tool error: %s", textOf(res))
	}
}

// A lesson received from another memory and confirmed by a third shows its
// origins, confirmers and confirmation count.
func TestRecallReceivedLesson(t *testing.T) {
	m := openMemory(t)
	ctx := context.Background()
	author, _ := protocol.NewIdentity(seed(1))
	confirmer, _ := protocol.NewIdentity(seed(2))
	now := time.Now().UTC().Add(-time.Minute)
	text := "Running pip install inside the base conda environment breaks the solver on later updates."
	rec, err := protocol.SignLesson(author, protocol.LessonDraft{Kind: "error", Text: text, Seen: 2, Strength: 0.75, Updated: now})
	if err != nil {
		t.Fatal(err)
	}
	conf, err := protocol.SignConfirmation(confirmer, rec.Hash, now)
	if err != nil {
		t.Fatal(err)
	}
	data := string(rec.Raw) + "\n" + string(conf.Raw) + "\n"
	rep, err := m.Receive(ctx, "team:x", protocol.SplitLines([]byte(data)))
	if err != nil || len(rep.Refused) > 0 {
		t.Fatalf("receive: %+v %v", rep, err)
	}
	cs := connect(t, remcp.NewServer(node.Local{M: m}, "test"))
	res := call(t, cs, "recall", map[string]any{"task": "pip install in the conda base environment"})
	mustOK(t, "recall", res)
	var out remcp.LessonsOutput
	structured(t, res, &out)
	if len(out.Lessons) != 1 {
		t.Fatalf("recall: %s", textOf(res))
	}
	l := out.Lessons[0]
	if l.Confirmations != 1 || len(l.Confirmers) != 1 || l.Confirmers[0] != confirmer.Origin() || l.Author != author.Origin() {
		t.Errorf("provenance of the received lesson: %+v", l)
	}
	// The confirmer is a fresh key this memory does not admit: its support
	// is said to be that (SPEC §8).
	if want := "Observed (candidate, 1 confirmation, none admitted: none from memories this one admits): " + text; l.Observation != want || l.Admitted != 0 || len(l.AdmittedBy) != 0 {
		t.Errorf("observation %q, want %q", l.Observation, want)
	}
	res = call(t, cs, "show", map[string]any{"hash": l.Hash})
	mustOK(t, "show", res)
	var p remcp.Provenance
	structured(t, res, &p)
	if len(p.Records) != 2 {
		t.Fatalf("show should list the lesson and the confirmation: %+v", p.Records)
	}
	if len(p.History) == 0 || p.History[len(p.History)-1].State != "candidate" {
		t.Errorf("show should give the state history: %+v", p.History)
	}
	for _, r := range p.Records {
		if len(r.Scopes) != 1 || r.Scopes[0] != "team:x" || r.Arrived == "" {
			t.Errorf("record %+v should say it arrived by team:x and when", r)
		}
	}
}

func seed(b byte) []byte {
	s := make([]byte, 32)
	for i := range s {
		s[i] = b
	}
	return s
}

// Run serves the protocol over plain streams, as the stdio transport does.
func TestRunOverStreams(t *testing.T) {
	m := openMemory(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cin, sout := io.Pipe()
	sin, cout := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- remcp.Run(ctx, remcp.NewServer(node.Local{M: m}, "test"), sin, sout) }()
	c := sdk.NewClient(&sdk.Implementation{Name: "stream-agent", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &sdk.IOTransport{Reader: cin, Writer: cout}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res := call(t, cs, "remember", map[string]any{"kind": "note", "text": "The staging database refuses connections on Mondays."})
	mustOK(t, "remember", res)
	cs.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run after the client hung up: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after the client hung up")
	}
}

// NewServerOpen opens the memory for each call and closes it after, so the
// home is free between calls.
func TestOpenPerCall(t *testing.T) {
	home := t.TempDir()
	opened := 0
	open := func(context.Context) (node.Service, error) {
		m, err := node.Open(node.Config{Home: home, Create: true})
		if err != nil {
			return nil, err
		}
		opened++
		return node.Local{M: m}, nil
	}
	cs := connect(t, remcp.NewServerOpen(open, "test"))
	mustOK(t, "remember", call(t, cs, "remember", map[string]any{"kind": "surprise", "expected": "UTC", "happened": "The CI clock runs in local time."}))
	// Between calls the home is free for another process.
	m, err := node.Open(node.Config{Home: home})
	if err != nil {
		t.Fatalf("the home should be free between calls: %v", err)
	}
	m.Close()
	mustOK(t, "sleep", call(t, cs, "sleep", map[string]any{}))
	if opened != 2 {
		t.Errorf("opened %d times, want once per call", opened)
	}
}

// The layers named in the memory's configuration reach the MCP tools as
// they reach every other reader.
func TestToolsSeeConfiguredLayers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "team.jsonl")
	text := "The staging database is reset every night at midnight."
	line := `{"id":"x","kind":"surprise","text":"` + text + `","seen":2,"strength":0.75,"updated":"2026-11-01T00:00:00Z"}` + "\n"
	if err := os.WriteFile(path, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := node.Open(node.Config{Home: t.TempDir(), Create: true, Layers: []node.LayerFile{{Name: "team", Path: path}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	cs := connect(t, remcp.NewServer(node.Local{M: m}, "test"))
	for name, args := range map[string]map[string]any{
		"lessons": {},
		"recall":  {"task": "reset the staging database at night"},
	} {
		res := call(t, cs, name, args)
		mustOK(t, name, res)
		var out remcp.LessonsOutput
		structured(t, res, &out)
		if len(out.Lessons) != 1 || out.Lessons[0].Text != text || len(out.Lessons[0].Layers) != 1 || out.Lessons[0].Layers[0] != "team" {
			t.Errorf("%s does not show the layer's lesson: %s", name, textOf(res))
		}
	}
	res := call(t, cs, "show", map[string]any{"hash": protocol.LessonHash("surprise", text)})
	mustOK(t, "show", res)
}

// A lesson whose verifications are over 2W old is removed: out of the
// lessons and recall an agent reads, listed only when asked for removed
// ones, with no strength left.
func TestRemovedLessonLeavesTheAgentsLists(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	var clock atomic.Int64 // the MCP handlers read it on their goroutines
	clock.Store(now.UnixNano())
	p := node.DefaultParams()
	p.State = protocol.StateParams{N: 1, W: time.Hour}
	// Every origin admitted: the confirmer is a key made for the test.
	m, err := node.Open(node.Config{Home: t.TempDir(), Create: true, Params: p, Admission: node.Admission{All: true}, Now: func() time.Time { return time.Unix(0, clock.Load()) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	author, _ := protocol.NewIdentity(make([]byte, 32))
	confirmer, _ := protocol.NewIdentity(append(make([]byte, 31), 1))
	text := "The ledger reconciliation job times out when the exchange rate feed is slow."
	l, err := protocol.SignLesson(author, protocol.LessonDraft{Kind: "error", Text: text, Seen: 1, Strength: 0.5, Updated: now})
	if err != nil {
		t.Fatal(err)
	}
	c, err := protocol.SignConfirmation(confirmer, l.Hash, now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Receive(context.Background(), "team:x", protocol.SplitLines([]byte(string(l.Raw)+"\n"+string(c.Raw)))); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, remcp.NewServer(node.Local{M: m}, "test"))
	list := func(tool string, args map[string]any) remcp.LessonsOutput {
		t.Helper()
		res := call(t, cs, tool, args)
		mustOK(t, tool, res)
		var out remcp.LessonsOutput
		structured(t, res, &out)
		return out
	}
	recall := map[string]any{"task": "reconcile the ledger while the exchange rate feed is slow"}
	if out := list("lessons", map[string]any{}); len(out.Lessons) != 1 || out.Lessons[0].State != "common" {
		t.Fatalf("lessons while common: %+v", out.Lessons)
	}
	if out := list("recall", recall); len(out.Lessons) != 1 {
		t.Fatalf("recall while common: %+v", out.Lessons)
	}
	clock.Store(now.Add(2*time.Hour + time.Minute).UnixNano())
	if out := list("lessons", map[string]any{}); len(out.Lessons) != 0 {
		t.Errorf("lessons lists a removed lesson: %+v", out.Lessons)
	}
	if out := list("recall", recall); len(out.Lessons) != 0 {
		t.Errorf("recall returns a removed lesson: %+v", out.Lessons)
	}
	if out := list("lessons", map[string]any{"state": "removed"}); len(out.Lessons) != 1 || out.Lessons[0].Strength != 0 {
		t.Errorf("the removed lesson, asked for: %+v", out.Lessons)
	}
}

// TestRememberAt: the tool refuses an "at" more than ten minutes ahead of
// the memory's clock, and stores one it takes as given (in UTC).
func TestRememberAt(t *testing.T) {
	m := openMemory(t)
	cs := connect(t, remcp.NewServer(node.Local{M: m}, "test"))
	future := protocol.FormatTime(time.Now().Add(11 * time.Minute))
	res := call(t, cs, "remember", map[string]any{"kind": "note", "text": "the docs build takes four minutes", "at": future})
	if !res.IsError || !strings.Contains(textOf(res), "ahead of this clock") {
		t.Fatalf("a future at: %s", textOf(res))
	}
	res = call(t, cs, "remember", map[string]any{"kind": "note", "text": "the docs build takes four minutes", "at": "2025-06-01T14:00:00+02:00"})
	mustOK(t, "remember", res)
	evs, err := m.Stored().PendingEvents()
	if err != nil || len(evs) != 1 || evs[0].Event.At != "2025-06-01T12:00:00Z" {
		t.Fatalf("stored: %+v, %v", evs, err)
	}
}
