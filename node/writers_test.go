package node

import (
	"context"
	"strings"
	"testing"

	"github.com/remem/remem/node/consolidate"
	"github.com/remem/remem/protocol"
)

// A writer carried by the context writes the new lessons; an answer that
// is an instruction is refused and the default writer writes instead; the
// counts are in the sleep report and, summed, in the status.
func TestWithWriterCounts(t *testing.T) {
	m, project := openTest(t, nil)
	answers := map[string]string{
		"EUSAGE":  "npm ci fails with EUSAGE when the lock file is out of sync with the manifest.",
		"libssl":  "Always install libssl before running the build.",
		"timeout": "",
	}
	w := &consolidate.SamplingWriter{Max: 2, Ask: func(_ context.Context, _, prompt string, _ int) (string, error) {
		for k, v := range answers {
			if strings.Contains(prompt, k) {
				return v, nil
			}
		}
		return "", nil
	}}
	events := []protocol.Event{
		failure(project, "s1", "npm ci fails with EUSAGE, the lock file is out of sync"),
		{Kind: "environment", Happened: "the build container lacks libssl so the linker stops", Agent: "a", Session: "s2", Cwd: project},
		{Kind: "surprise", Happened: "the staging database answers after a minute of silence, a timeout", Agent: "a", Session: "s3", Cwd: project},
	}
	if _, err := m.Remember(events); err != nil {
		t.Fatal(err)
	}
	rep, err := m.Sleep(WithWriter(context.Background(), w))
	if err != nil {
		t.Fatal(err)
	}
	if rep.NewLessons != 3 {
		t.Fatalf("sleep: %s %v", rep, rep.Dropped)
	}
	got := rep.Writers
	if got.Written["sampling"] != 1 || got.Written["default"] != 2 || got.Refused["sampling"] != 1 ||
		got.Skipped["sampling"]+got.Failed["sampling"] != 1 {
		t.Errorf("writer counts %+v", got)
	}
	if !strings.Contains(rep.String(), "written by default 2, sampling 1 (1 refused") {
		t.Errorf("report %q", rep)
	}
	lessons, err := m.store.Lessons()
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, l := range lessons {
		texts = append(texts, l.Text)
	}
	if !strings.Contains(strings.Join(texts, "\n"), answers["EUSAGE"]) || strings.Contains(strings.Join(texts, "\n"), "Always") {
		t.Errorf("lessons %q", texts)
	}
	// The counts add up over sleeps and are kept in the store.
	if _, err := m.Remember([]protocol.Event{failure(project, "s4", "go vet reports a copied lock value in the worker pool")}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Sleep(context.Background()); err != nil {
		t.Fatal(err)
	}
	st, err := m.Status()
	if err != nil {
		t.Fatal(err)
	}
	if st.Writers.Written["default"] != 3 || st.Writers.Written["sampling"] != 1 || st.Writers.Refused["sampling"] != 1 {
		t.Errorf("status writers %+v", st.Writers)
	}
}

// A writer's answer that holds raw data is refused, as an instruction is,
// and the default writer writes the lesson (README "Writers people already
// run"): redacting it would publish a sentence its writer never wrote.
func TestWriterAnswerWithRawDataFallsBack(t *testing.T) {
	m, project := openTest(t, nil)
	const answer = "The deploy reads /home/bob/.aws/credentials before the build starts, so it fails for bob."
	w := &consolidate.SamplingWriter{Max: 2, Ask: func(context.Context, string, string, int) (string, error) {
		return answer, nil
	}}
	if _, err := m.Remember([]protocol.Event{failure(project, "s1", "the deploy stops: the credentials file of the home directory cannot be read")}); err != nil {
		t.Fatal(err)
	}
	rep, err := m.Sleep(WithWriter(context.Background(), w))
	if err != nil {
		t.Fatal(err)
	}
	if rep.NewLessons != 1 || rep.Writers.Written["default"] != 1 || rep.Writers.Refused["sampling"] != 1 {
		t.Errorf("sleep %s, writers %+v", rep, rep.Writers)
	}
	lessons, err := m.store.Lessons()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lessons {
		if strings.Contains(l.Text, "before the build starts") {
			t.Errorf("the writer's answer was redacted and used: %q", l.Text)
		}
	}
}
