package consolidate

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/remem/remem/protocol"
)

// pastedCase is a cluster of testdata/pasted_clusters.jsonl: events whose
// fields carry real tool output (multi-line, as agents paste it) from Go,
// npm, Node, pytest, pip, cargo, Maven, Gradle, Docker, kubectl, Helm,
// Terraform, GitHub Actions, GitLab CI, psql, MySQL, Redis, the AWS, gcloud
// and az CLIs, git, Vercel, Jest, ESLint, webpack, tsc, yarn, dotnet,
// composer, alembic, curl, nginx and Ansible; "fresh" adds make and gcc,
// Bundler, pnpm, golangci-lint, journalctl, Jenkins, CloudFormation,
// xcodebuild, mongosh, docker push, Argo CD, mix, sqlite3 and Deno.
//
// Part "tune" (28 clusters) is what the default writer's reading of tool
// output (Essential) was fitted to. Part "check" (14) was written with it,
// before the writer was changed, but its lessons were in the same log
// while the writer was fitted, and some rules came from it (kubectl's
// event rows, Ansible's msg, a warning line dropped): it is not blind.
// Part "fresh" (14) was written after that fitting and measured once: no
// drafts, facts kept 81%, and 2 of its 14 lessons still carried output
// that Pasted does not flag (a script path with a line number,
// "script.sh: 1:", and Argo CD's "Sync Status:" field); journalctl's lines
// gave "journalctl fails" alone. The writer was then fitted to it too
// (syslog prefixes, sh's "file: N:", status fields, a table's MESSAGE
// column, "key:value" fields after a message, the episode that says most),
// so it is no longer blind either. Part "blind" (12: go mod, Bazel,
// Poetry, kubectl apply, Podman, Rails, Flutter, gh, Celery, CMake, Swift,
// knex) was written after that and measured once: no drafts, facts kept
// 83%, 1 lesson holding a must_not piece (Celery's "ERROR/MainProcess]"),
// and by a reading by hand 4 of 12 read badly without Pasted flagging
// them: a clause cut off after "may", CMake's wrapped advice stitched,
// gh's "fails with Alternatively", Celery's log prefix. The writer and
// Pasted were then fitted to it as well (wrapped lines joined, advice and
// CMake's "-- " status lines left out, a modal at the end is a cut-off,
// an environment variable is no error code): facts kept 83%, none holds
// output; gh's lesson is now the bare "gh pr create --fill fails".
//
// Part "blind2" (10: npm and kubectl output pasted on one line, pytest,
// ruff, a go test timeout, az aks, docker's exec format error, a GitLab
// runner, a Java ClassNotFoundException, terraform init) was written
// last and measured once, with nothing changed after: 1 draft (kubectl's
// table on one line, "table columns"), facts kept 95%, 1 lesson that is
// no draft holds a must_not piece (the path in "exec
// /usr/local/bin/docker-entrypoint.sh: exec format error", a quoted
// message), and by hand 1 of the 9 others reads badly: "npm install
// @acme/ui fails with code E404; npm ERR.", which Pasted lets through (one
// semicolon, one prefix). Facts are what the lesson must keep;
// must_not are pieces of the output that a lesson which is not a draft
// must not carry.
type pastedCase struct {
	qualityCase
	Part string `json:"part"`
}

// TestPastedClusters writes every cluster with the default writer as the
// node runs it (the events redacted first) and holds each sentence to the
// node's draft rules: a redaction that leaves a placeholder standing, or
// protocol.Pasted. No lesson that is not a draft may read like a log or
// hold a must_not piece; it reports the share of drafts and of kept facts.
func TestPastedClusters(t *testing.T) {
	var cases []pastedCase
	for _, c := range readQualityCases(t, "testdata/pasted_clusters.jsonl") {
		cases = append(cases, pastedCase{qualityCase: c})
	}
	parts := readParts(t, "testdata/pasted_clusters.jsonl")
	tools := map[string]bool{}
	w := DefaultWriter{Redact: protocol.RedactRawData}
	type score struct {
		clusters, drafts, facts, kept, keptWritten, factsWritten int
		pastedMissed                                             int // lessons that are no draft and hold a must_not piece
	}
	scores := map[string]*score{"tune": {}, "check": {}, "fresh": {}, "blind": {}, "blind2": {}}
	for i, c := range cases {
		c.Part = parts[i]
		s := scores[c.Part]
		if s == nil {
			t.Fatalf("%s: part %q", c.Name, c.Part)
		}
		for _, e := range c.Episodes {
			if f := strings.Fields(e.Title); len(f) > 0 {
				tools[strings.TrimPrefix(f[0], "./")] = true
			}
		}
		s.clusters++
		got, err := w.Write(context.Background(), Cluster{Kind: c.Kind, Episodes: c.Episodes})
		if err != nil {
			t.Errorf("%s: no lesson: %v", c.Name, err)
			continue
		}
		why := draftReason(got, c.Episodes)
		low := strings.ToLower(got)
		kept := 0
		for _, alts := range c.Facts {
			for _, a := range alts {
				if strings.Contains(low, strings.ToLower(a)) {
					kept++
					break
				}
			}
		}
		s.facts += len(c.Facts)
		s.kept += kept
		if why != "" {
			s.drafts++
			t.Logf("%-6s %-22s DRAFT (%s): %s", c.Part, c.Name, why, got)
			continue
		}
		s.factsWritten += len(c.Facts)
		s.keptWritten += kept
		t.Logf("%-6s %-22s %s (facts %d/%d)", c.Part, c.Name, got, kept, len(c.Facts))
		if r := protocol.Pasted(got); r != "" {
			t.Errorf("%s: a lesson that is no draft reads like a log (%s): %s", c.Name, r, got)
		}
		for _, m := range c.MustNot {
			if !strings.Contains(got, m) {
				continue
			}
			if c.Part == "fresh" || c.Part == "blind" || c.Part == "blind2" {
				// Reported, not gated: a part measured as it came.
				s.pastedMissed++
				t.Logf("%s: a lesson that is no draft holds %q (Pasted does not see it)", c.Name, m)
				break
			}
			t.Errorf("%s: a lesson that is no draft holds %q: %s", c.Name, m, got)
		}
	}
	t.Logf("%d clusters, %d tools named first in a title", len(cases), len(tools))
	if len(tools) < 15 {
		t.Errorf("%d tools in the clusters, want at least 15", len(tools))
	}
	for _, part := range []string{"tune", "check", "fresh", "blind", "blind2"} {
		s := scores[part]
		t.Logf("%s: %d clusters, drafts %.0f%% (%d), facts kept %.0f%% of all, %.0f%% in the lessons that are no draft; %d lessons that are no draft hold output",
			part, s.clusters, pct(s.drafts, s.clusters), s.drafts, pct(s.kept, s.facts), pct(s.keptWritten, s.factsWritten), s.pastedMissed)
	}
}

// draftReason is why the node would keep the lesson as a draft
// (node.Memory.writeLesson): its redaction, the events' redaction (each
// field as the writer reads it, Episode.Written), or protocol.Pasted; "" when it
// may be published.
func draftReason(text string, es []Episode) string {
	if red := protocol.RedactRawDataReport(text); red.Draft {
		return red.Reason
	}
	for _, e := range es {
		for _, f := range e.Written() {
			if red := protocol.RedactRawDataReport(f); f != "" && red.Draft {
				return red.Reason
			}
		}
	}
	return protocol.Pasted(text)
}

// readParts reads the "part" of every line of a cluster file.
func readParts(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var p struct {
			Part string `json:"part"`
		}
		if err := json.Unmarshal([]byte(line), &p); err != nil {
			t.Fatal(err)
		}
		out = append(out, p.Part)
	}
	return out
}

// The lessons the default writer writes for the labelled quality sets are
// written sentences: Pasted flags none of them.
func TestQualityLessonsAreNotPasted(t *testing.T) {
	w := DefaultWriter{Redact: protocol.RedactRawData}
	for _, path := range []string{"testdata/lessons_quality.jsonl", "testdata/lessons_quality_blind.jsonl"} {
		for _, c := range readQualityCases(t, path) {
			got, err := w.Write(context.Background(), Cluster{Kind: c.Kind, Episodes: c.Episodes})
			if err != nil {
				continue // TestLessonQuality reports it
			}
			if r := protocol.Pasted(got); r != "" {
				t.Errorf("%s %s: %q reads like a log (%s)", path, c.Name, got, r)
			}
		}
	}
}

// Essential never panics, gives one line, and is deterministic.
func FuzzEssential(f *testing.F) {
	for _, s := range []string{"npm ERR! code ERESOLVE\nnpm ERR! ERESOLVE unable to resolve dependency tree",
		"╷\n│ Error: x\n╵", "#8 41.02 npm ERR! nospc ENOSPC: no space left", "[rejected] a -> b (fetch first)",
		"fatal: [web1]: UNREACHABLE! => {\"msg\": \"x\"}", "NAME READY\na 0/1", "\x1b[31merror\x1b[0m: x\ny",
		"ERROR 1045 (28000): Access denied for user 'a'@'b'", "a: b: c: d: e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Essential(s)
		if out != Essential(s) {
			t.Fatalf("not deterministic on %q", s)
		}
		if looksLikeOutput(s) && strings.ContainsAny(out, "\n\r") {
			t.Fatalf("Essential(%q) = %q: more than one line", s, out)
		}
	})
}

func BenchmarkEssential(b *testing.B) {
	var fields []string
	for _, c := range readQualityCases(b, "testdata/pasted_clusters.jsonl") {
		for _, e := range c.Episodes {
			fields = append(fields, e.Happened)
		}
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		_ = Essential(fields[i%len(fields)])
		i++
	}
}
