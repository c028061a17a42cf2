package node

import (
	"testing"

	"github.com/remem/remem/protocol"
)

// An error and a note or environment report that tell the same surprise
// become one lesson, of kind error; a correction with the same words stays
// a lesson of its own (corrections are shared only by their own opt-in).
func TestErrorsAndNotesClusterTogether(t *testing.T) {
	m, proj := openTest(t, nil)
	evs := []protocol.Event{
		{Kind: "error", Title: "docker build", Happened: "no space left on device while writing to /var/lib/docker because the build cache filled the disk", Agent: "a", Session: "s1", Cwd: proj},
		{Kind: "note", Text: "docker build ran out of space on /var/lib/docker: no space left on device, the build cache filled the disk", Agent: "a", Session: "s1", Cwd: proj},
		{Kind: "environment", Happened: "no space left on device under /var/lib/docker since the docker build cache filled the disk", Agent: "a", Session: "s2", Cwd: proj},
		{Kind: "correction", Said: "docker build ran out of space on /var/lib/docker: no space left on device, the build cache filled the disk", Agent: "a", Session: "s3", Cwd: proj},
	}
	if _, err := m.Remember(evs); err != nil {
		t.Fatal(err)
	}
	rep := sleep(t, m)
	lessons, err := m.store.Lessons()
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int64{}
	for _, l := range lessons {
		kinds[l.Kind] += l.Seen
	}
	if rep.NewLessons != 2 || kinds[protocol.KindError] != 3 || kinds[protocol.KindCorrection] != 1 || kinds[protocol.KindSurprise] != 0 {
		t.Fatalf("sleep %+v; seen by kind %v, want an error lesson of 3 and a correction of 1", rep, kinds)
	}
}
