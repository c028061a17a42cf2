//go:build unix

package calibrate

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/remem/remem/node"
	"github.com/remem/remem/node/consolidate"
	"github.com/remem/remem/protocol"
	"github.com/remem/remem/store"
)

// plainRun is a stretch of text no quoting changes (JSON and Go quote
// the prompt's data), long enough to name one event.
var plainRun = regexp.MustCompile(`[A-Za-z0-9][A-Za-z0-9 ]{18,}[A-Za-z0-9]`)

// keyOf is the longest plain run of text, "" when it has none.
func keyOf(text string) string {
	best := ""
	for _, r := range plainRun.FindAllString(text, -1) {
		if len(r) > len(best) {
			best = r
		}
	}
	return best
}

// scriptedClaude writes a fake claude (-p, JSON output) for one row: asked
// to write a lesson, it answers the reference sentence of the group whose
// event the prompt quotes; asked as a judge, yes when the reports it
// quotes belong to one group and no otherwise, as a model that reads them
// well would.
func scriptedClaude(t *testing.T, dir string, row Row) {
	t.Helper()
	var writes, judges strings.Builder
	for gi, g := range row.Groups {
		answer, _ := json.Marshal(map[string]any{"type": "result", "is_error": false, "result": g.Lesson})
		keys := []string{keyOf(g.Lesson)}
		for _, i := range g.Events {
			keys = append(keys, keyOf(consolidate.Episode{Kind: row.events[i].Kind, Title: row.events[i].Title,
				Happened: row.events[i].Happened, Expected: row.events[i].Expected, Said: row.events[i].Said,
				AgentDid: row.events[i].AgentDid, Text: row.events[i].Text}.Content()))
		}
		for _, k := range keys {
			if k == "" {
				continue
			}
			fmt.Fprintf(&writes, "case \"$prompt\" in *%s*) echo %s; exit 0;; esac\n", shellQuote(k), shellQuote(string(answer)))
			fmt.Fprintf(&judges, "case \"$prompt\" in *%s*) groups=\"$groups g%d\";; esac\n", shellQuote(k), gi)
		}
	}
	script := `#!/bin/sh
prompt=$(cat)
case "$*" in
*"You compare two reports"*)
groups=""
` + judges.String() + `set -- $groups
first=$1
for g in "$@"; do [ "$g" = "$first" ] || { echo '{"is_error":false,"result":"no"}'; exit 0; }; done
[ $# -ge 2 ] && echo '{"is_error":false,"result":"yes"}' || echo '{"is_error":false,"result":"no"}'
exit 0;;
esac
` + writes.String() + `echo '{"is_error":true,"result":"no such cluster"}'
exit 1
`
	if err := os.WriteFile(filepath.Join(dir, "claude"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// TestScriptedModelOnBlindClusters runs the blind cluster set with claude
// configured as the node's model, a fake on PATH that writes the set's
// reference sentence for a cluster it is shown and judges two reports the
// same when the set groups them. The first sleep writes with the default
// writer and judges with the model: drafts are left where the default
// writer pasted. The second sleep gives the drafts to the model, which
// writes them again. Grouping is measured against the groups split by
// family of lesson kinds (a correction never shares a lesson with an
// error).
func TestScriptedModelOnBlindClusters(t *testing.T) {
	eachBlindSet(t, scriptedModelOn)
}

func scriptedModelOn(t *testing.T, rows []Row) {
	ctx := context.Background()
	var lexical, judged Report
	drafts, rewritten := 0, 0
	for _, row := range rows {
		dir := t.TempDir()
		t.Setenv("PATH", dir+":/usr/bin:/bin")
		scriptedClaude(t, dir, row)
		base, err := Clusters(ctx, node.Config{}, []Row{row})
		if err != nil {
			t.Fatal(err)
		}
		lexical.Rows = append(lexical.Rows, base.Rows...)

		model := consolidate.CLIModel{Tool: "claude", Timeout: 20 * time.Second}
		m, err := node.Open(node.Config{Home: t.TempDir(), Create: true, Model: model.Ask, ModelName: model.Name(),
			Store: store.Options{InMemory: true, Small: true}})
		if err != nil {
			t.Fatal(err)
		}
		var in strings.Builder
		for _, raw := range row.Events {
			in.Write(raw)
			in.WriteByte('\n')
		}
		if _, err := m.Ingest("row", strings.NewReader(in.String())); err != nil {
			t.Fatal(err)
		}
		first, err := m.Sleep(node.WithWriter(ctx, &consolidate.DefaultWriter{Redact: protocol.RedactRawData}))
		if err != nil {
			t.Fatal(err)
		}
		lessons, err := m.Stored().Lessons()
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range lessons {
			if l.Draft != "" {
				drafts++
			}
		}
		second, err := m.Sleep(ctx)
		if err != nil {
			t.Fatal(err)
		}
		rewritten += second.Writers.Rewritten["claude"]
		lessons, err = m.Stored().Lessons()
		if err != nil {
			t.Fatal(err)
		}
		held, err := m.Stored().Events(time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		judged.Rows = append(judged.Rows, score(row, lessons, held, first.Dropped))
		m.Close()
	}
	lexical.sum()
	judged.sum()
	lt, jt := lexical.Totals, judged.Totals
	t.Logf("default writer, lexical: %d lessons for %d groups, exact grouping by family %d of %d rows, %d drafts",
		lt.LessonsWritten, lt.LessonsExpected, lt.ExactByFamily, lt.Rows, lt.Drafts)
	t.Logf("model judge, then model rewrites: %d lessons, exact grouping by family %d of %d rows; %d drafts after the first sleep, %d rewritten by the second, %d left",
		jt.LessonsWritten, jt.ExactByFamily, jt.Rows, drafts, rewritten, jt.Drafts)
	if jt.ExactByFamily <= lt.ExactByFamily || rewritten == 0 || jt.Drafts > drafts-rewritten {
		t.Errorf("the model's judge and rewrites did not help: lexical %+v, judged %+v, drafts %d, rewritten %d", lexical, judged, drafts, rewritten)
	}
}
