package node_test

// The seed protocol document (../shared/seed/remem-protocol-draft0.txt),
// rule by rule, beside its proof through the public API: one table per
// section, each row a rule as the document states it and the check that it
// holds. The byte-level rules have their own vectors (protocol's
// conformance tests); here each rule is seen at work in a memory.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/remem/remem/commons/commonstest"
	"github.com/remem/remem/folder"
	"github.com/remem/remem/internal/forge"
	"github.com/remem/remem/internal/testutil"
	"github.com/remem/remem/node"
	"github.com/remem/remem/node/consolidate"
	"github.com/remem/remem/protocol"
)

// seedMemory opens a fresh memory on clk with project shared (errors only,
// the default opt-in of §4). It admits every origin as a verifier, as the
// seed counts them ("counted, not weighted"; SPEC §8 lets a closed network
// read it so); TestSeed3AdmittedVerifiers has the default, which does not.
func seedMemory(t *testing.T, clk *testutil.Clock) (*node.Memory, string) {
	t.Helper()
	home := t.TempDir()
	m, err := node.Open(node.Config{Home: home, Create: true, Now: clk.Now, Admission: node.Admission{All: true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	project := filepath.Join(home, "project")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Share(node.ProjectShare{Project: project}); err != nil {
		t.Fatal(err)
	}
	return m, project
}

func seedSleep(t *testing.T, m *node.Memory) node.SleepReport {
	t.Helper()
	rep, err := m.Sleep(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// failed is an error event of project.
func failed(project, session, happened string) protocol.Event {
	return protocol.Event{Kind: "error", Title: "go test ./...", Happened: happened, Agent: "claude", Session: session, Cwd: project}
}

func ownLines(t *testing.T, m *node.Memory) []byte {
	t.Helper()
	lines, err := m.OwnLines("")
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Join(lines, []byte("\n"))
}

// carry hands every own record of from to to, by scope.
func carry(t *testing.T, from, to *node.Memory, scope string) node.ReceiveReport {
	t.Helper()
	rep, err := to.Receive(context.Background(), scope, protocol.SplitLines(ownLines(t, from)))
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func activeLessons(t *testing.T, m *node.Memory) []node.LessonView {
	t.Helper()
	vs, err := m.Lessons(node.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

type seedRule struct {
	rule  string
	check func(t *testing.T)
}

func runRules(t *testing.T, rules []seedRule) {
	for _, r := range rules {
		t.Run(r.rule, r.check)
	}
}

const clockStart = "2026-11-01T12:00:00Z"

func newSeedClock(t *testing.T) *testutil.Clock {
	t0, err := time.Parse(time.RFC3339, clockStart)
	if err != nil {
		t.Fatal(err)
	}
	return testutil.NewClock(t0)
}

// §0 The event.
func TestSeed0Event(t *testing.T) {
	runRules(t, []seedRule{
		{"kind is one of correction, error, environment, surprise, note", func(t *testing.T) {
			m, _ := seedMemory(t, newSeedClock(t))
			for _, kind := range []string{"correction", "error", "environment", "surprise", "note"} {
				ev := protocol.Event{Kind: kind, Said: "we use tabs", AgentDid: "indented with spaces", Title: "make", Happened: "it failed", Text: "a note", Session: kind}
				if rep, err := m.Remember([]protocol.Event{ev}); err != nil || rep.Taken != 1 {
					t.Errorf("kind %s: taken %d, %v", kind, rep.Taken, err)
				}
			}
			if rep, _ := m.Remember([]protocol.Event{{Kind: "gossip", Text: "x"}}); rep.Taken != 0 || len(rep.Rejected) != 1 {
				t.Errorf("an unknown kind was taken: %+v", rep)
			}
		}},
		{"an event is stored once: the same agent, session, kind and title", func(t *testing.T) {
			m, p := seedMemory(t, newSeedClock(t))
			ev := failed(p, "s1", "the linker runs out of memory")
			rep, err := m.Remember([]protocol.Event{ev, ev})
			if err != nil || rep.Taken != 1 || rep.Duplicates != 1 {
				t.Fatalf("taken %d, duplicates %d, %v", rep.Taken, rep.Duplicates, err)
			}
		}},
		{"readers ignore unknown fields", func(t *testing.T) {
			m, _ := seedMemory(t, newSeedClock(t))
			line := `{"kind":"note","text":"the CI runners have no IPv6","mood":"tired","agent":"a","session":"s"}`
			if rep, err := m.Ingest("test", strings.NewReader(line)); err != nil || rep.Taken != 1 {
				t.Fatalf("taken %d, %v", rep.Taken, err)
			}
		}},
		{"agent_did: an offer to act is recognised in it", func(t *testing.T) {
			m, p := seedMemory(t, newSeedClock(t))
			ev := protocol.Event{Kind: "correction", Said: "No, leave the lock file alone", AgentDid: "Shall I delete the lock file and rerun?", Session: "s1", Cwd: p}
			if _, err := m.Remember([]protocol.Event{ev}); err != nil {
				t.Fatal(err)
			}
			seedSleep(t, m)
			vs := activeLessons(t, m)
			if len(vs) != 1 || !strings.Contains(vs[0].Text, "offered to delete the lock file") {
				t.Errorf("lessons %+v", vs)
			}
		}},
		{"at: when it happened, ISO 8601; a time ahead of the clock is refused", func(t *testing.T) {
			clk := newSeedClock(t)
			m, p := seedMemory(t, clk)
			ev := failed(p, "s1", "the linker runs out of memory")
			ev.At = "2026-10-31T14:00:00+02:00"
			if rep, err := m.Remember([]protocol.Event{ev}); err != nil || rep.Taken != 1 {
				t.Fatalf("a past at: %+v, %v", rep, err)
			}
			ev.Session, ev.At = "s2", protocol.FormatTime(clk.Now().Add(time.Hour))
			if rep, _ := m.Remember([]protocol.Event{ev}); rep.Taken != 0 {
				t.Errorf("an at an hour ahead was taken")
			}
		}},
		{"an event is raw stream: it stays on the machine", func(t *testing.T) {
			m, p := seedMemory(t, newSeedClock(t))
			ev := failed(p, "session-4711", "the integration suite times out when the VPN drops")
			ev.Agent = "agent-zebra"
			if _, err := m.Remember([]protocol.Event{ev}); err != nil {
				t.Fatal(err)
			}
			seedSleep(t, m)
			out := string(ownLines(t, m))
			if out == "" {
				t.Fatal("nothing was published: the test tests nothing")
			}
			for _, raw := range []string{"session-4711", "agent-zebra", p} {
				if strings.Contains(out, raw) {
					t.Errorf("the published records carry %q", raw)
				}
			}
		}},
	})
}

// §1 The lesson.
func TestSeed1Lesson(t *testing.T) {
	runRules(t, []seedRule{
		{"lessons.jsonl holds id, text, kind, seen, strength, updated", func(t *testing.T) {
			m, p := seedMemory(t, newSeedClock(t))
			if _, err := m.Remember([]protocol.Event{failed(p, "s1", "the staging database is wiped every Sunday night")}); err != nil {
				t.Fatal(err)
			}
			seedSleep(t, m)
			data, err := os.ReadFile(filepath.Join(m.Home(), node.LessonsFile))
			if err != nil {
				t.Fatal(err)
			}
			var l map[string]any
			if err := json.Unmarshal(protocol.SplitLines(data)[0].Bytes, &l); err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{"id", "text", "kind", "seen", "strength", "updated"} {
				if _, ok := l[f]; !ok {
					t.Errorf("lessons.jsonl lacks %q: %v", f, l)
				}
			}
		}},
		{"lessons.jsonl: a writer never drops a field another tool added; every lesson has an id", func(t *testing.T) {
			clk := newSeedClock(t)
			m, p := seedMemory(t, clk)
			other, _ := seedMemory(t, clk)
			if _, err := other.Publish(protocol.KindError, "The mirror drops uploads over two gigabytes"); err != nil {
				t.Fatal(err)
			}
			carry(t, other, m, "team:x")
			if _, err := m.Remember([]protocol.Event{failed(p, "s1", seedSurprise)}); err != nil {
				t.Fatal(err)
			}
			seedSleep(t, m)
			path := filepath.Join(m.Home(), node.LessonsFile)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			lines := protocol.SplitLines(data)
			if len(lines) != 2 {
				t.Fatalf("lessons.jsonl holds %d lines, want the own lesson and the candidate:\n%s", len(lines), data)
			}
			var edited bytes.Buffer
			for _, l := range lines {
				var fields map[string]any
				if err := json.Unmarshal(l.Bytes, &fields); err != nil {
					t.Fatal(err)
				}
				if id, _ := fields["id"].(string); id == "" {
					t.Errorf("a lesson without an id: %s", l.Bytes)
				}
				// Another tool notes who reviewed each lesson.
				edited.Write(bytes.TrimSuffix(l.Bytes, []byte("}")))
				edited.WriteString(`,"reviewed_by":{"name":"alice","ok":true}}` + "\n")
			}
			if err := os.WriteFile(path, edited.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			clk.Add(time.Minute)
			if _, err := m.Remember([]protocol.Event{failed(p, "s2", "the staging database is wiped every Sunday night")}); err != nil {
				t.Fatal(err)
			}
			seedSleep(t, m)
			data, err = os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := bytes.Count(data, []byte(`"reviewed_by":{"name":"alice","ok":true}`)); got != 2 {
				t.Errorf("the next write kept the other tool's field on %d of 2 lessons:\n%s", got, data)
			}
		}},
		{"the text is an observation, never an instruction", func(t *testing.T) {
			m, _ := seedMemory(t, newSeedClock(t))
			if _, err := m.Publish(protocol.KindError, "Always run make clean before release builds"); err == nil {
				t.Fatal("an instruction was published")
			}
		}},
		{"nothing from the raw stream appears: no paths, commands' outputs or names", func(t *testing.T) {
			m, p := seedMemory(t, newSeedClock(t))
			ev := failed(p, "s1", "open /home/alice/src/api/config.yaml: permission denied for alice@example.com")
			if _, err := m.Remember([]protocol.Event{ev}); err != nil {
				t.Fatal(err)
			}
			seedSleep(t, m)
			for _, v := range activeLessons(t, m) {
				if found := protocol.FindRawData(v.Text); len(found) > 0 {
					t.Errorf("lesson %q holds raw data %v", v.Text, found)
				}
			}
		}},
	})
}

// §2 Provenance.
func TestSeed2Provenance(t *testing.T) {
	id, err := protocol.GenerateIdentity()
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(-time.Minute)
	text := "The nightly build fails when two jobs share the module cache"
	runRules(t, []seedRule{
		{"hash: of kind and the lowercased, space-normalised text", func(t *testing.T) {
			if protocol.LessonHash("error", text) != protocol.LessonHash("error", "  the NIGHTLY build fails when two   jobs share the module cache ") {
				t.Error("case and spacing changed the hash")
			}
			if protocol.LessonHash("error", text) == protocol.LessonHash("surprise", text) {
				t.Error("the kind is not in the hash")
			}
		}},
		{"a receiver recomputes the hash and refuses a mismatch", func(t *testing.T) {
			line := forge.Sign(id, map[string]string{"v": "1", "hash": protocol.EncodeString(strings.Repeat("0", 32)),
				"origin": protocol.EncodeString(id.Origin()), "key": protocol.EncodeString(id.Key()), "kind": `"error"`,
				"text": protocol.EncodeString(text), "seen": "1", "strength": "0.5", "updated": protocol.EncodeString(protocol.FormatTime(at))})
			if _, err := protocol.Verify(line, time.Now()); protocol.ReasonOf(err) != protocol.ReasonHash {
				t.Errorf("verdict %v, want a hash refusal", err)
			}
		}},
		{"origin: the first 8 bytes of SHA-256 of the key, hex", func(t *testing.T) {
			if len(id.Origin()) != 16 || id.Origin() != protocol.Fingerprint(id.Public) {
				t.Errorf("origin %q", id.Origin())
			}
		}},
		{"sig: over the record without sig, cut out of the received bytes", func(t *testing.T) {
			line := forge.Lesson(id, text, protocol.FormatTime(at))
			if _, err := protocol.Verify(line, time.Now()); err != nil {
				t.Fatalf("a signed line: %v", err)
			}
			if _, err := protocol.Verify(forge.BadSignature(line), time.Now()); protocol.ReasonOf(err) != protocol.ReasonSignature {
				t.Errorf("a broken signature: %v", err)
			}
		}},
		{"the same sentence written by two memories is one lesson", func(t *testing.T) {
			clk := newSeedClock(t)
			a, _ := seedMemory(t, clk)
			b, _ := seedMemory(t, clk)
			ra, err := a.Publish(protocol.KindError, text)
			if err != nil {
				t.Fatal(err)
			}
			rb, err := b.Publish(protocol.KindError, text)
			if err != nil {
				t.Fatal(err)
			}
			if ra.Hash != rb.Hash {
				t.Fatal("two hashes for one sentence")
			}
			carry(t, a, b, "team:x")
			p, err := b.Show(ra.Hash)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Origins) != 2 {
				t.Errorf("origins %v, want both memories", p.Origins)
			}
		}},
	})
}

// §4 Safety rules.
func TestSeed4Safety(t *testing.T) {
	runRules(t, []seedRule{
		{"imperative lessons are rejected at write and at receive", func(t *testing.T) {
			m, _ := seedMemory(t, newSeedClock(t))
			const order = "Never push to main on Fridays"
			if _, err := m.Publish(protocol.KindError, order); err == nil {
				t.Error("written")
			}
			id, _ := protocol.GenerateIdentity()
			rep, err := m.Receive(context.Background(), "team:x", protocol.SplitLines(forge.Lesson(id, order, protocol.FormatTime(time.Now().Add(-time.Minute)))))
			if err != nil || rep.ByReason[protocol.ReasonInstruction] != 1 {
				t.Errorf("received: %+v, %v", rep, err)
			}
		}},
		{"lessons are published only by opt-in, per project", func(t *testing.T) {
			m, err := node.Open(node.Config{Home: t.TempDir(), Create: true})
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = m.Close() }()
			if _, err := m.Remember([]protocol.Event{failed(t.TempDir(), "s1", "the cache volume fills up after thirty builds")}); err != nil {
				t.Fatal(err)
			}
			seedSleep(t, m)
			if out := ownLines(t, m); len(out) != 0 {
				t.Errorf("published without opt-in: %s", out)
			}
		}},
		{"a lesson is published only when every event it was written from is of an opted-in project", func(t *testing.T) {
			for _, how := range []string{"the other project's lesson is joined later", "both projects' events in one sleep"} {
				t.Run(how, func(t *testing.T) {
					m, shared := seedMemory(t, newSeedClock(t))
					other := t.TempDir() // never opted in
					private := failed(other, "q1", seedSurprise+" in the payroll-export service of acme-internal")
					if how == "the other project's lesson is joined later" {
						if _, err := m.Remember([]protocol.Event{private}); err != nil {
							t.Fatal(err)
						}
						seedSleep(t, m)
						if out := ownLines(t, m); len(out) != 0 {
							t.Fatalf("published without opt-in: %s", out)
						}
					}
					evs := []protocol.Event{failed(shared, "p1", seedSameMeet)}
					if how != "the other project's lesson is joined later" {
						evs = append(evs, private)
					}
					if _, err := m.Remember(evs); err != nil {
						t.Fatal(err)
					}
					seedSleep(t, m)
					for _, l := range protocol.SplitLines(ownLines(t, m)) {
						if strings.Contains(string(l.Bytes), "payroll") {
							t.Errorf("a lesson written from a project that never opted in was published: %s", l.Bytes)
						}
					}
				})
			}
		}},
		{"a lesson kept local for another project's events is published once its sentence is written from opted-in events alone", func(t *testing.T) {
			m, shared := seedMemory(t, newSeedClock(t))
			// A writer that words every cluster the same: the opted-in
			// project's own, unrelated events write the very sentence again.
			const sentence = "The integration suite fails while the shared staging database is being restored."
			w := &consolidate.SamplingWriter{Max: 4, Ask: func(context.Context, string, string, int) (string, error) { return sentence, nil }}
			ctx := node.WithWriter(context.Background(), w)
			if _, err := m.Remember([]protocol.Event{failed(t.TempDir(), "q1", "the payroll-export integration tests hang on a locked table")}); err != nil {
				t.Fatal(err)
			}
			if _, err := m.Sleep(ctx); err != nil {
				t.Fatal(err)
			}
			if out := ownLines(t, m); len(out) != 0 {
				t.Fatalf("published without opt-in: %s", out)
			}
			if _, err := m.Remember([]protocol.Event{failed(shared, "p1", "kubectl rollout status never returns for the cache deployment")}); err != nil {
				t.Fatal(err)
			}
			if _, err := m.Sleep(ctx); err != nil {
				t.Fatal(err)
			}
			if out := ownLines(t, m); !strings.Contains(string(out), sentence) {
				t.Errorf("the sentence written again from the opted-in project's events alone was not published: %q", out)
			}
		}},
		{"a confirmation is signed only from an event of a project opted in for the lesson's kind", func(t *testing.T) {
			clk := newSeedClock(t)
			a, pa := seedMemory(t, clk)
			b, pb := seedMemory(t, clk)
			h := ownLesson(t, a, pa)
			private := t.TempDir() // b never opted it in
			if rep := confirmIn(t, clk, a, b, private, seedSameMeet); rep.Confirmations != 0 {
				t.Errorf("b signed %d confirmations of %s from a project it never opted in", rep.Confirmations, h)
			}
			if v := viewOf(t, b, h); v.Strength <= 0.5 || v.Seen != 1 {
				t.Errorf("b met it, though privately: its candidate should rise and count it, got %+v", v)
			}
			// Met again in the opted-in project: now it is confirmed.
			clk.Add(time.Minute)
			if _, err := b.Remember([]protocol.Event{failed(pb, "b-shared", seedSameMeet)}); err != nil {
				t.Fatal(err)
			}
			if rep := seedSleep(t, b); rep.Confirmations != 1 {
				t.Errorf("the opted-in project's event signed %d confirmations", rep.Confirmations)
			}
		}},
		{"a lesson written from an opted-in project alone stays published when another project meets it too", func(t *testing.T) {
			m, shared := seedMemory(t, newSeedClock(t))
			h := ownLesson(t, m, shared)
			if _, err := m.Remember([]protocol.Event{failed(t.TempDir(), "q1", seedSameMeet)}); err != nil {
				t.Fatal(err)
			}
			if rep := seedSleep(t, m); rep.Signed != 1 {
				t.Errorf("the raised lesson %s was not signed again: %+v", h, rep)
			}
		}},
		{"lessons written before a project opted in are published at the next sleep", func(t *testing.T) {
			m, _ := seedMemory(t, newSeedClock(t))
			later := t.TempDir()
			if _, err := m.Remember([]protocol.Event{failed(later, "q1", seedSurprise)}); err != nil {
				t.Fatal(err)
			}
			seedSleep(t, m)
			if out := ownLines(t, m); len(out) != 0 {
				t.Fatalf("published without opt-in: %s", out)
			}
			if _, err := m.Share(node.ProjectShare{Project: later}); err != nil {
				t.Fatal(err)
			}
			seedSleep(t, m)
			if out := ownLines(t, m); len(out) == 0 {
				t.Error("the lesson written before the opt-in was not published at the next sleep")
			}
		}},
		{"a lesson without a valid signature is dropped", func(t *testing.T) {
			m, _ := seedMemory(t, newSeedClock(t))
			id, _ := protocol.GenerateIdentity()
			line := forge.BadSignature(forge.Lesson(id, "The mirror drops uploads over two gigabytes", protocol.FormatTime(time.Now().Add(-time.Minute))))
			rep, err := m.Receive(context.Background(), "team:x", protocol.SplitLines(line))
			if err != nil || rep.Accepted != 0 || rep.ByReason[protocol.ReasonSignature] != 1 {
				t.Errorf("%+v, %v", rep, err)
			}
		}},
		{"corrections are never published by default; only error lessons are", func(t *testing.T) {
			m, p := seedMemory(t, newSeedClock(t))
			ev := protocol.Event{Kind: "correction", Said: "we indent Makefiles with tabs here", AgentDid: "indented the Makefile with spaces", Session: "s1", Cwd: p}
			if _, err := m.Remember([]protocol.Event{ev}); err != nil {
				t.Fatal(err)
			}
			seedSleep(t, m)
			if out := ownLines(t, m); len(out) != 0 {
				t.Errorf("a correction lesson was published by default: %s", out)
			}
		}},
		{"any holder shows every lesson it holds, where it came from and who confirmed it", func(t *testing.T) {
			clk := newSeedClock(t)
			a, _ := seedMemory(t, clk)
			b, _ := seedMemory(t, clk)
			rec, err := a.Publish(protocol.KindError, "The release build fails when the changelog lacks the version")
			if err != nil {
				t.Fatal(err)
			}
			carry(t, a, b, "team:x")
			p, err := b.Show(rec.Hash)
			if err != nil {
				t.Fatal(err)
			}
			if p.Author != a.Origin() || len(p.Records) == 0 || p.Records[0].Scopes == nil {
				t.Errorf("provenance %+v", p)
			}
		}},
	})
}

// §5 Transport.
func TestSeed5Transport(t *testing.T) {
	runRules(t, []seedRule{
		{"a folder carries DIR/<origin>.jsonl between memories", func(t *testing.T) {
			clk := newSeedClock(t)
			a, _ := seedMemory(t, clk)
			b, _ := seedMemory(t, clk)
			dir := t.TempDir()
			rec, err := a.Publish(protocol.KindError, "The staging mirror drops uploads over two gigabytes")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.SyncFolder(context.Background(), dir); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(dir, protocol.OriginFileName(a.Origin()))); err != nil {
				t.Fatal(err)
			}
			if _, err := b.SyncFolder(context.Background(), dir); err != nil {
				t.Fatal(err)
			}
			if _, err := b.Show(rec.Hash); err != nil {
				t.Errorf("b does not hold a's lesson: %v", err)
			}
		}},
		{"a file's lines must be signed by the key of its origin", func(t *testing.T) {
			id, other := mustID(t), mustID(t)
			dir := t.TempDir()
			line := forge.Lesson(other, "The mirror drops uploads over two gigabytes", protocol.FormatTime(time.Now().Add(-time.Minute)))
			if err := os.WriteFile(filepath.Join(dir, protocol.OriginFileName(id.Origin())), append(line, '\n'), 0o600); err != nil {
				t.Fatal(err)
			}
			rep, _ := folder.Read(dir, "", time.Now(), func(string, []*protocol.Record) error { return nil })
			if rep.Accepted != 0 || rep.ByReason()[protocol.ReasonOriginMismatch] != 1 {
				t.Errorf("%+v", rep)
			}
		}},
		{"the commons: PUT replaces a memory's file, GET and the index read it", func(t *testing.T) {
			clk := newSeedClock(t)
			a, _ := seedMemory(t, clk)
			b, _ := seedMemory(t, clk)
			url := commonstest.Start(t)
			rec, err := a.Publish(protocol.KindError, "The release job needs the signing key mounted")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.PushCommons(context.Background(), a.CommonsClient(url, "tok")); err != nil {
				t.Fatal(err)
			}
			rep, err := b.PullCommons(context.Background(), b.CommonsClient(url, ""))
			if err != nil || rep.Accepted != 1 {
				t.Fatalf("pull: %+v, %v", rep, err)
			}
			if _, err := b.Show(rec.Hash); err != nil {
				t.Error(err)
			}
		}},
		{"at most 1,000 records per memory", func(t *testing.T) {
			id := mustID(t)
			var lines []protocol.Line
			for i := range protocol.MaxOriginRecs + 1 {
				l := forge.Lesson(id, fmt.Sprintf("The mirror build %d fails after midnight", i), protocol.FormatTime(time.Now().Add(-time.Minute)))
				lines = append(lines, protocol.Line{N: i + 1, Bytes: l})
			}
			b := protocol.VerifyBatch(lines, protocol.Bound{Origin: id.Origin()}, time.Now())
			if len(b.Records) != protocol.MaxOriginRecs {
				t.Errorf("%d records taken of one origin", len(b.Records))
			}
		}},
	})
}

func mustID(t *testing.T) protocol.Identity {
	t.Helper()
	id, err := protocol.GenerateIdentity()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// confirmIn carries a's lessons to b by scope, lets time pass, has b meet
// the same surprise in its own session and sleep, and carries b's records
// back to a. It returns b's sleep report.
func confirmIn(t *testing.T, clk *testutil.Clock, a, b *node.Memory, project, happened string) node.SleepReport {
	t.Helper()
	carry(t, a, b, "team:x")
	clk.Add(time.Minute)
	if _, err := b.Remember([]protocol.Event{failed(project, "b-own", happened)}); err != nil {
		t.Fatal(err)
	}
	rep := seedSleep(t, b)
	carry(t, b, a, "team:x")
	return rep
}

func viewOf(t *testing.T, m *node.Memory, hash string) node.LessonView {
	t.Helper()
	vs, err := m.Lessons(node.Filter{All: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		if v.Hash == hash {
			return v
		}
	}
	t.Fatalf("lesson %s not held", hash)
	return node.LessonView{}
}

const (
	seedSurprise = "undefined: mocks.NewClient on a clean checkout until go generate has run"
	seedSameMeet = "undefined: mocks.NewClient on a clean checkout, go generate not run yet"
)

// ownLesson has m meet seedSurprise and sleep; it returns the lesson's hash.
func ownLesson(t *testing.T, m *node.Memory, project string) string {
	t.Helper()
	if _, err := m.Remember([]protocol.Event{failed(project, "a-own", seedSurprise)}); err != nil {
		t.Fatal(err)
	}
	seedSleep(t, m)
	vs := activeLessons(t, m)
	if len(vs) != 1 {
		t.Fatalf("%d lessons after one surprise", len(vs))
	}
	return vs[0].Hash
}

// §3 The merge rule.
func TestSeed3MergeRule(t *testing.T) {
	runRules(t, []seedRule{
		{"a received lesson is a local candidate at strength 0.5", func(t *testing.T) {
			clk := newSeedClock(t)
			a, pa := seedMemory(t, clk)
			b, _ := seedMemory(t, clk)
			h := ownLesson(t, a, pa)
			carry(t, a, b, "team:x")
			if v := viewOf(t, b, h); v.State != protocol.StateCandidate || v.Strength != 0.5 || v.Own {
				t.Errorf("b sees %+v", v)
			}
		}},
		{"its confirmation in the receiving memory's own sessions raises it and is sent back", func(t *testing.T) {
			clk := newSeedClock(t)
			a, pa := seedMemory(t, clk)
			b, pb := seedMemory(t, clk)
			h := ownLesson(t, a, pa)
			before := viewOf(t, a, h).Strength
			if rep := confirmIn(t, clk, a, b, pb, seedSameMeet); rep.Confirmations != 1 {
				t.Fatalf("b signed %d confirmations", rep.Confirmations)
			}
			if v := viewOf(t, b, h); v.Strength <= 0.5 {
				t.Errorf("b's candidate stayed at %.3f", v.Strength)
			}
			v := viewOf(t, a, h)
			if len(v.Confirmers) != 1 || v.Confirmers[0] != b.Origin() {
				t.Errorf("a's confirmers %v", v.Confirmers)
			}
			if v.Strength <= before {
				t.Errorf("the confirmation came back to a, and a's strength stayed at %.3f", v.Strength)
			}
		}},
		{"a corroboration from another origin raises the local lesson, a candidate too", func(t *testing.T) {
			clk := newSeedClock(t)
			a, _ := seedMemory(t, clk)
			b, _ := seedMemory(t, clk)
			c, _ := seedMemory(t, clk)
			const text = "The release build fails when the changelog lacks the version"
			rec, err := a.Publish(protocol.KindError, text)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := b.Publish(protocol.KindError, text); err != nil {
				t.Fatal(err)
			}
			carry(t, a, c, "team:x")
			carry(t, b, c, "team:x")
			if v := viewOf(t, c, rec.Hash); v.Strength <= 0.5 {
				t.Errorf("c's candidate, held from two origins, stayed at %.3f", v.Strength)
			}
		}},
		{"each other origin's lesson of the same meaning raises the local lesson, though its hash is held already", func(t *testing.T) {
			clk := newSeedClock(t)
			a, _ := seedMemory(t, clk)
			b, _ := seedMemory(t, clk)
			c, _ := seedMemory(t, clk)
			own, err := a.Publish(protocol.KindError, "The release build fails when the changelog lacks the version")
			if err != nil {
				t.Fatal(err)
			}
			const same = "The release build fails whenever the changelog lacks the version"
			if _, err := b.Publish(protocol.KindError, same); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Publish(protocol.KindError, same); err != nil {
				t.Fatal(err)
			}
			carry(t, b, a, "team:x")
			afterB := viewOf(t, a, own.Hash).Strength
			if afterB <= 0.5 {
				t.Fatalf("b's lesson of the same meaning did not raise a's own lesson (%.3f)", afterB)
			}
			carry(t, c, a, "team:x")
			if v := viewOf(t, a, own.Hash); v.Strength <= afterB {
				t.Errorf("c's copy of the same lesson did not raise a's own lesson: %.3f after b, %.3f after c", afterB, v.Strength)
			}
		}},
		{"a memory never confirms a lesson it published", func(t *testing.T) {
			clk := newSeedClock(t)
			a, pa := seedMemory(t, clk)
			h := ownLesson(t, a, pa)
			if _, err := a.Remember([]protocol.Event{failed(pa, "a-again", seedSameMeet)}); err != nil {
				t.Fatal(err)
			}
			if rep := seedSleep(t, a); rep.Confirmations != 0 {
				t.Errorf("a confirmed its own lesson %s", h)
			}
		}},
		{"no confirmation from a memory that had met the surprise before receiving it", func(t *testing.T) {
			clk := newSeedClock(t)
			a, pa := seedMemory(t, clk)
			b, pb := seedMemory(t, clk)
			if _, err := b.Remember([]protocol.Event{failed(pb, "b-early", seedSameMeet)}); err != nil {
				t.Fatal(err)
			}
			clk.Add(time.Minute)
			h := ownLesson(t, a, pa)
			if rep := confirmIn(t, clk, a, b, pb, seedSameMeet+" again"); rep.Confirmations != 0 {
				t.Errorf("b confirmed %s though it had met the surprise first", h)
			}
		}},
		{"candidate → common after N = 3 confirmations; fading after W without; removed after 2W; back to common on a new one", func(t *testing.T) {
			clk := newSeedClock(t)
			a, pa := seedMemory(t, clk)
			h := ownLesson(t, a, pa)
			for i := range 3 {
				b, pb := seedMemory(t, clk)
				if rep := confirmIn(t, clk, a, b, pb, seedSameMeet); rep.Confirmations != 1 {
					t.Fatalf("confirmer %d signed %d", i, rep.Confirmations)
				}
				want := protocol.StateCandidate
				if i == 2 {
					want = protocol.StateCommon
				}
				if v := viewOf(t, a, h); v.State != want {
					t.Fatalf("after %d confirmations: %s", i+1, v.State)
				}
			}
			w := a.Params().State.W
			clk.Add(w + time.Hour)
			if v := viewOf(t, a, h); v.State != protocol.StateFading {
				t.Errorf("after W: %s", v.State)
			}
			late, pl := seedMemory(t, clk)
			confirmIn(t, clk, a, late, pl, seedSameMeet)
			if v := viewOf(t, a, h); v.State != protocol.StateCommon {
				t.Errorf("after a new confirmation: %s", v.State)
			}
			clk.Add(2*w + time.Hour)
			if v := viewOf(t, a, h); v.State != protocol.StateRemoved {
				t.Errorf("after 2W: %s", v.State)
			}
			for _, v := range activeLessons(t, a) {
				if v.Hash == h {
					t.Error("a removed lesson is in the active view")
				}
			}
		}},
		{"revoked by its origin: every holder drops it", func(t *testing.T) {
			_, b, rec := revokedAtB(t)
			if v := viewOf(t, b, rec.Hash); v.State != protocol.StateRevoked {
				t.Errorf("b sees %s", v.State)
			}
			for _, v := range activeLessons(t, b) {
				if v.Hash == rec.Hash {
					t.Error("b still shows it")
				}
			}
		}},
	})
}

// revokedAtB has a publish a lesson that b receives, then revoke it, and
// carries the revocation to b.
func revokedAtB(t *testing.T) (a, b *node.Memory, rec *protocol.Record) {
	t.Helper()
	clk := newSeedClock(t)
	a, _ = seedMemory(t, clk)
	b, _ = seedMemory(t, clk)
	rec, err := a.Publish(protocol.KindError, "The mirror drops uploads over two gigabytes")
	if err != nil {
		t.Fatal(err)
	}
	carry(t, a, b, "team:x")
	clk.Add(time.Minute)
	if _, err := a.Revoke(rec.Hash, "it was the proxy"); err != nil {
		t.Fatal(err)
	}
	carry(t, a, b, "team:x")
	return a, b, rec
}

// §3 continued: what a revocation does to what is sent.
func TestSeed3Revoked(t *testing.T) {
	runRules(t, []seedRule{
		{"revoked: every holder drops it from what it sends, and keeps the revocation", func(t *testing.T) {
			a, b, rec := revokedAtB(t)
			for _, m := range []*node.Memory{a, b} {
				lines, err := m.OwnLines("")
				if err != nil {
					t.Fatal(err)
				}
				for _, l := range lines {
					r, err := protocol.Decode(l)
					if err != nil {
						t.Fatal(err)
					}
					if r.Hash == rec.Hash && r.Type != protocol.TypeRevocation {
						t.Errorf("%s still sends the %s of a revoked lesson", m.Origin(), r.Type)
					}
				}
			}
			p, err := b.Show(rec.Hash)
			if err != nil || len(p.Revokers) != 1 || p.Revokers[0] != a.Origin() {
				t.Errorf("b keeps the revocation: %+v, %v", p.Revokers, err)
			}
		}},
		{"a memory never signs a lesson it withdrew again, though another origin still publishes it", func(t *testing.T) {
			for _, when := range []string{"held before the revocation", "arriving after it", "and a new event of it"} {
				t.Run("the other origin's record "+when, func(t *testing.T) {
					clk := newSeedClock(t)
					a, pa := seedMemory(t, clk)
					b, _ := seedMemory(t, clk)
					c, _ := seedMemory(t, clk)
					h := ownLesson(t, a, pa)
					if _, err := b.Publish(protocol.KindError, viewOf(t, a, h).Text); err != nil {
						t.Fatal(err)
					}
					carry(t, a, c, "team:x")
					if when == "held before the revocation" {
						carry(t, b, a, "team:x")
					}
					clk.Add(time.Minute)
					if _, err := a.Revoke(h, "it was the proxy"); err != nil {
						t.Fatal(err)
					}
					if when != "held before the revocation" {
						carry(t, b, a, "team:x")
					}
					if when == "and a new event of it" {
						if _, err := a.Remember([]protocol.Event{failed(pa, "a-later", seedSameMeet)}); err != nil {
							t.Fatal(err)
						}
					}
					clk.Add(time.Minute)
					seedSleep(t, a)
					for _, l := range protocol.SplitLines(ownLines(t, a)) {
						r, err := protocol.Decode(l.Bytes)
						if err != nil {
							t.Fatal(err)
						}
						if r.Hash == h && r.Type == protocol.TypeLesson {
							t.Errorf("a signed its withdrawn lesson again: %s", l.Bytes)
						}
					}
					// c holds a's records only: the revocation must stand there.
					carry(t, a, c, "team:x")
					if v := viewOf(t, c, h); v.State != protocol.StateRevoked {
						t.Errorf("c, which holds a's records only, sees %s", v.State)
					}
				})
			}
		}},
	})
}

// §6 Composition.
func TestSeed6Composition(t *testing.T) {
	writeLayer := func(t *testing.T, text string, strength float64) string {
		t.Helper()
		path := filepath.Join(t.TempDir(), "team.jsonl")
		line := fmt.Sprintf(`{"id":"x","kind":"error","text":%q,"seen":2,"strength":%v,"updated":"2026-10-01T00:00:00Z"}`+"\n", text, strength)
		if err := os.WriteFile(path, []byte(line), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	open := func(t *testing.T, clk *testutil.Clock, path string) *node.Memory {
		t.Helper()
		m, err := node.Open(node.Config{Home: t.TempDir(), Create: true, Now: clk.Now, Layers: []node.LayerFile{{Name: "team", Path: path}}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = m.Close() })
		return m
	}
	const text = "The release build fails when the changelog lacks the version"
	runRules(t, []seedRule{
		{"an agent sees the union of its layers, the strongest instance of a duplicate", func(t *testing.T) {
			clk := newSeedClock(t)
			m := open(t, clk, writeLayer(t, text, 0.9))
			if _, err := m.Publish(protocol.KindError, text); err != nil {
				t.Fatal(err)
			}
			if _, err := m.Publish(protocol.KindError, "The staging mirror drops uploads over two gigabytes"); err != nil {
				t.Fatal(err)
			}
			vs := activeLessons(t, m)
			if len(vs) != 2 {
				t.Fatalf("%d lessons, want the union of 2", len(vs))
			}
			v := viewOf(t, m, protocol.LessonHash(protocol.KindError, text))
			if v.Strength != 0.9 || len(v.Layers) != 2 {
				t.Errorf("the duplicate shows strength %.2f in layers %v, want the layer's 0.9 in both", v.Strength, v.Layers)
			}
		}},
		{"a layer never brings back a revoked lesson, nor changes its state", func(t *testing.T) {
			clk := newSeedClock(t)
			m := open(t, clk, writeLayer(t, text, 0.9))
			rec, err := m.Publish(protocol.KindError, text)
			if err != nil {
				t.Fatal(err)
			}
			clk.Add(time.Minute)
			if _, err := m.Revoke(rec.Hash, "wrong"); err != nil {
				t.Fatal(err)
			}
			for _, v := range activeLessons(t, m) {
				if v.Hash == rec.Hash {
					t.Errorf("the layer brought it back as %s", v.State)
				}
			}
			if v := viewOf(t, m, rec.Hash); v.State != protocol.StateRevoked || v.Strength != 0 {
				t.Errorf("the revoked lesson shows %s at strength %.2f (%s), want revoked at 0", v.State, v.Strength, v.StrengthReason)
			}
			if p, err := m.Show(rec.Hash); err != nil || p.Strength != 0 {
				t.Errorf("show gives strength %.2f, %v", p.Strength, err)
			}
		}},
	})
}
