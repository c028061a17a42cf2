package node

import (
	"context"
	"testing"

	"github.com/remem/remem/node/consolidate"
	"github.com/remem/remem/protocol"
)

// A lesson whose redaction leaves a placeholder standing in a command is a
// draft (SPEC §3): it is kept locally with the reason and never signed.
// The same when the default writer redacts the events before it writes, as
// the node's configured writer does: the placeholder is glued in by then,
// so the events' own redaction says the lesson is a draft.
func TestRedactionDraftIsKeptLocal(t *testing.T) {
	for _, c := range []struct {
		name   string
		writer *consolidate.DefaultWriter
	}{
		{"the sentence redacted", &consolidate.DefaultWriter{}},
		{"the events redacted first", &consolidate.DefaultWriter{Redact: protocol.RedactRawData}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, project := openTest(t, nil)
			if _, err := m.Remember([]protocol.Event{failure(project, "s1", "the migration job runs mysql -u app --password=hunter2 and fails once the secret rotates")}); err != nil {
				t.Fatal(err)
			}
			rep, err := m.Sleep(WithWriter(context.Background(), c.writer))
			if err != nil {
				t.Fatal(err)
			}
			if rep.NewLessons != 1 || rep.Signed != 0 || rep.KeptLocal != 1 {
				t.Fatalf("sleep: %+v %v", rep, rep.Dropped)
			}
			lessons, err := m.store.Lessons()
			if err != nil {
				t.Fatal(err)
			}
			if len(lessons) != 1 || lessons[0].Draft == "" || protocol.FindRawData(lessons[0].Text) != nil {
				t.Fatalf("lessons %+v", lessons)
			}
			if lines, _ := m.OwnLines(""); len(lines) != 0 {
				t.Fatalf("a draft was signed: %s", lines)
			}
		})
	}
}

// pastedWriter is a configured writer that answers with tool output.
type pastedWriter struct{ text string }

func (w pastedWriter) Write(context.Context, consolidate.Cluster) (string, error) { return w.text, nil }
func (pastedWriter) Name() string                                                 { return "pasted" }

// A sentence that reads like pasted tool output (protocol.Pasted) is a
// draft, whichever writer wrote it (SPEC §3): kept with the reason, never
// signed; the default writer's written sentence is taken over it.
func TestPastedSentenceIsDraft(t *testing.T) {
	const table = "kubectl get pods shows NAME READY STATUS RESTARTS AGE api-7d9f8 0/1 CrashLoopBackOff 5 3m."
	t.Run("the default writer writes it instead", func(t *testing.T) {
		m, project := openTest(t, nil)
		if _, err := m.Remember([]protocol.Event{failure(project, "s1", "the tests fail because the fixture database is not migrated")}); err != nil {
			t.Fatal(err)
		}
		rep, err := m.Sleep(WithWriter(context.Background(), pastedWriter{table}))
		if err != nil {
			t.Fatal(err)
		}
		lessons, err := m.store.Lessons()
		if err != nil {
			t.Fatal(err)
		}
		if rep.NewLessons != 1 || rep.Signed != 1 || len(lessons) != 1 || lessons[0].Draft != "" || lessons[0].Text == table {
			t.Fatalf("sleep %+v, lessons %+v", rep, lessons)
		}
	})
	t.Run("no writer writes it", func(t *testing.T) {
		m, project := openTest(t, nil)
		// The default writer gives no lesson for an order alone.
		ev := failure(project, "s1", "always run go generate first")
		ev.Title = ""
		if _, err := m.Remember([]protocol.Event{ev}); err != nil {
			t.Fatal(err)
		}
		rep, err := m.Sleep(WithWriter(context.Background(), pastedWriter{table}))
		if err != nil {
			t.Fatal(err)
		}
		lessons, err := m.store.Lessons()
		if err != nil {
			t.Fatal(err)
		}
		if rep.NewLessons != 1 || rep.Signed != 0 || rep.KeptLocal != 1 || len(lessons) != 1 ||
			lessons[0].Draft != "reads like pasted output: table columns" || lessons[0].Text != table {
			t.Fatalf("sleep %+v, lessons %+v", rep, lessons)
		}
		if lines, _ := m.OwnLines(""); len(lines) != 0 {
			t.Fatalf("a draft was signed: %s", lines)
		}
	})
}
