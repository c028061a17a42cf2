package calibrate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/remem/remem/internal/testutil"
	"github.com/remem/remem/node"
	"github.com/remem/remem/protocol"
	"github.com/remem/remem/store"
)

// blindSets are sets of event clusters written for the lessons issue by
// authors who never saw the code (testdata/README.md): b29 (52 rows, 119
// events, 67 groups across 30 tools) and b29d (61 rows, 141 events, 74
// groups). The first read of each with the default writer is in that
// issue's closing notes; since then they are training data. The scripted
// agent and model run on both.
var blindSets = []string{"testdata/clusters_b29.jsonl", "testdata/clusters_b29d.jsonl", "testdata/clusters_b29e.jsonl", "testdata/clusters_b29f.jsonl", "testdata/clusters_b29g.jsonl", "testdata/clusters_b29h.jsonl", "testdata/clusters_b29i.jsonl", "testdata/clusters_b29j.jsonl", "testdata/clusters_b29k.jsonl", "testdata/clusters_b29l.jsonl", "testdata/clusters_b29m.jsonl", "testdata/clusters_b29n.jsonl"}

// eachBlindSet runs f on the rows of every blind set, a subtest each.
func eachBlindSet(t *testing.T, f func(t *testing.T, rows []Row)) {
	for _, name := range blindSets {
		t.Run(filepath.Base(name), func(t *testing.T) { f(t, readRows(t, name)) })
	}
}

func readRows(t *testing.T, name string) []Row {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, bad, err := ReadRows(f)
	if err != nil || len(bad) > 0 {
		t.Fatalf("reading %s: %v %v", name, bad, err)
	}
	return rows
}

// keyAcrossGroups is a dedupe key (SPEC §2) two events of different
// groups of row share, "" when there is none.
func keyAcrossGroups(row Row) string {
	group := map[string]int{}
	for gi, g := range row.Groups {
		for _, i := range g.Events {
			k := row.events[i].DedupeKey()
			if other, ok := group[k]; ok && other != gi {
				return k
			}
			group[k] = gi
		}
	}
	return ""
}

// distinctKeys counts the dedupe keys of g's events: two events of one
// surprise with one key are one event to the store.
func distinctKeys(row Row, g Group) int {
	keys := map[string]bool{}
	for _, i := range g.Events {
		keys[row.events[i].DedupeKey()] = true
	}
	return len(keys)
}

// openScratch opens a memory in a fresh home with every project of row
// opted in for every kind. The row's projects must be directories to be
// opted in: each cwd is moved under the test's own directory first (rows
// share the mapping through dirs).
func openScratch(t *testing.T, row Row, dirs map[string]string) *node.Memory {
	t.Helper()
	for i := range row.events {
		cwd := row.events[i].Cwd
		if cwd == "" {
			continue
		}
		if _, ok := dirs[cwd]; !ok {
			dirs[cwd] = t.TempDir()
		}
		row.events[i].Cwd = dirs[cwd]
	}
	m, err := node.Open(node.Config{Home: t.TempDir(), Create: true, Admission: node.Admission{All: true},
		Store: store.Options{InMemory: true, Small: true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	for _, ev := range row.events {
		if _, err := m.Share(node.ProjectShare{Project: ev.Cwd, Corrections: true, Surprises: true}); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

// absorbedBy is the lesson each event of evs went to.
func absorbedBy(t *testing.T, m *node.Memory, evs []protocol.Event) []string {
	t.Helper()
	held, err := m.Stored().Events(time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]string{}
	for _, e := range held {
		by[e.Event.DedupeKey()] = e.Lesson
	}
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = by[ev.DedupeKey()]
	}
	return out
}

// TestScriptedAgentOnBlindClusters: an agent that words each surprise as
// the set's reference sentence (SPEC §2 "lesson") and, once that lesson is
// held, names it for the other events of the same surprise ("matches")
// gets its sentences as the lessons written, one lesson a surprise; a
// second memory whose agent names the lessons received confirms each.
//
// First read: 64 of the 67 sentences written, each with every event of its
// surprise, all published and confirmed; the raw-data check refused the
// other 3 ("./gradlew" read as a path, twice; "@rules_python" as a
// handle), false positives of the text checks. With protocol.Pasted since:
// 63, the fourth a sentence that ends "permissions:." (cut off, a typo of
// the set's; since the default writer's sentence for it is a draft too,
// the agent's is kept, as a draft); Pasted read a quoted 'REMOTE HOST IDENTIFICATION HAS
// CHANGED' as table columns until a run of capitals that opens a quote
// counted as a message.
func TestScriptedAgentOnBlindClusters(t *testing.T) {
	eachBlindSet(t, scriptedAgentOn)
}

func scriptedAgentOn(t *testing.T, rows []Row) {
	ctx := context.Background()
	var groups, taken, exact, published, drafted, local, signed, confirmed int
	var refused []string
	dirs := map[string]string{}
	for _, row := range rows {
		if k := keyAcrossGroups(row); k != "" {
			// SPEC §2: an event with the dedupe key of an earlier one is
			// a duplicate, dropped, whatever its surprise.
			t.Logf("%s: two surprises share the dedupe key %q, so the store keeps one event of them; row left out", row.ID, k)
			continue
		}
		a := openScratch(t, row, dirs)
		// First the first event of each group, with the agent's sentence.
		hashOf := make([]string, len(row.Groups))
		var first []protocol.Event
		for _, g := range row.Groups {
			ev := row.events[g.Events[0]]
			ev.Lesson = g.Lesson
			first = append(first, ev)
		}
		if _, err := a.Remember(first); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Sleep(ctx); err != nil {
			t.Fatal(err)
		}
		for gi, h := range absorbedBy(t, a, first) {
			hashOf[gi] = h
		}
		// Then the others, each naming the lesson of its surprise.
		var rest []protocol.Event
		var restGroup []int
		for gi, g := range row.Groups {
			for _, i := range g.Events[1:] {
				ev := row.events[i]
				ev.Lesson, ev.Matches = g.Lesson, hashOf[gi]
				rest = append(rest, ev)
				restGroup = append(restGroup, gi)
			}
		}
		if _, err := a.Remember(rest); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Sleep(ctx); err != nil {
			t.Fatal(err)
		}
		lessons, err := a.Lessons(node.Filter{All: true})
		if err != nil {
			t.Fatal(err)
		}
		text := map[string]node.LessonView{}
		for _, l := range lessons {
			text[l.Hash] = l
			if l.Published {
				signed++
			}
		}
		for gi, h := range absorbedBy(t, a, rest) {
			if h != hashOf[restGroup[gi]] {
				t.Errorf("%s: an event that named %s went to %s", row.ID, hashOf[restGroup[gi]], h)
			}
		}
		for gi, g := range row.Groups {
			groups++
			l := text[hashOf[gi]]
			if l.Text != g.Lesson {
				refused = append(refused, row.ID+": "+g.Lesson+" (written: "+l.Text+")")
				continue
			}
			taken++
			if int(l.Seen) == distinctKeys(row, g) {
				exact++
			}
			switch {
			case l.Published:
				published++
			case l.Draft == "":
				local++ // its events name no project, so none is opted in to share it
			default:
				refused = append(refused, row.ID+": "+g.Lesson+" (written as it is, a draft: "+l.Draft+")")
				if protocol.Pasted(g.Lesson) == "" {
					t.Errorf("%s: the agent's sentence is a draft (%s), though it reads as written", row.ID, l.Draft)
				}
				drafted++
			}
		}
		if len(text) != len(row.Groups) {
			t.Errorf("%s: %d lessons for %d surprises", row.ID, len(text), len(row.Groups))
		}

		// B receives A's lessons, and its agent meets the same surprises.
		b := openScratch(t, row, dirs)
		lines, err := a.OwnLines("")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.Receive(ctx, "team:x", protocol.SplitLines(testutil.JoinLines(lines...))); err != nil {
			t.Fatal(err)
		}
		var met []protocol.Event
		for gi, g := range row.Groups {
			ev := row.events[g.Events[0]]
			ev.Session, ev.Matches, ev.At = "b-"+ev.Session, hashOf[gi], ""
			met = append(met, ev)
		}
		if _, err := b.Remember(met); err != nil {
			t.Fatal(err)
		}
		rep, err := b.Sleep(ctx)
		if err != nil {
			t.Fatal(err)
		}
		confirmed += rep.Confirmations
	}
	t.Logf("%d surprises: the agent's sentence written for %d (%d with every event of the surprise, %d published, %d kept as drafts, %d local: no project); of the %d lessons published, %d confirmed by a second memory's named matches",
		groups, taken, exact, published, drafted, local, signed, confirmed)
	if len(refused) > 0 {
		t.Logf("reference sentences the checks did not take:\n%s", strings.Join(refused, "\n"))
	}
	// The checks take the set's reference sentence for most surprises; the
	// rest advise ("… fixes it", "pytest has to be started from the
	// root"), which no lesson may: b29m's authors wrote that into 9 of 70.
	if exact != taken || published+drafted+local != taken || confirmed != signed || taken < groups*17/20 {
		t.Errorf("taken %d of %d, exact %d, published %d; %d lessons signed, %d confirmed", taken, groups, exact, published, signed, confirmed)
	}
}
