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
