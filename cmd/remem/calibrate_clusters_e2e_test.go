package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	calib "github.com/remem/remem/node/calibrate"
)

const clustersTestdata = "../../node/calibrate/testdata/clusters.jsonl"

// TestCalibrateClusters runs node/calibrate's testdata through the built
// binary with the default writer: the table and totals are exact.
func TestCalibrateClusters(t *testing.T) {
	home := t.TempDir() // no memory in it: calibrate makes scratch ones
	out := runEnv(t, home, nil, "calibrate", "--clusters", clustersTestdata)
	want := `row              lessons  grouping  facts  raw  drafts
go-disk          2/2      ok        4/4    0    0
npm-eacces       1/1      ok        2/2    0    0
same-surprise    1/1      ok        2/2    0    0
private-host     1/1      ok        2/2    0    1
git-correction   1/1      ok        2/2    0    0
pip-two          2/2      ok        4/4    0    0
kubectl-context  2/1      differs   1/2    0    1
helm-internal    2/2      ok        4/4    0    2

facts kept: 21 of 22 (0.95)
exact grouping: 7 of 8 rows (7 with each group split by family of kinds: a correction never shares a lesson with an error)
lessons: 12 written, 11 expected; 8 would be signed, 4 drafts
raw data: 0 lessons that would be signed hold a private string (0 of them flagged by the raw-data check)
  private-host draft: ssh fails with connect to host an internal host port 22: Connection timed out. (cut from output: a placeholder where the events named something)
  kubectl-context draft: Running kubectl apply fails with error. (cut from output: an empty message)
  helm-internal draft: helm upgrade zephyr-ledger fails with UPGRADE FAILED: timed out waiting for the condition. (cut from output: a new sentence glued on)
  helm-internal draft: docker push is denied: requested access to the resource is denied for user an e-mail address a token. (a redaction placeholder would stand in a command)
`
	if out != want {
		t.Errorf("remem calibrate --clusters:\n%s\nwant:\n%s", out, want)
	}

	var rep calib.Report
	out = runEnv(t, home, nil, "calibrate", "--clusters", clustersTestdata, "--json")
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if tt := rep.Totals; len(rep.Rows) != 8 || tt.ExactGrouping != 7 || tt.FactsKept != 21 || tt.Facts != 22 || tt.LessonsWritten != 12 ||
		tt.LessonsExpected != 11 || tt.RawData != 0 || tt.Drafts != 4 || tt.Published != 8 || tt.BadRows != 0 {
		t.Errorf("--json totals %+v", tt)
	}
	if l := rep.Rows[2].Lessons; len(l) != 1 || !strings.HasPrefix(l[0].Text, "docker compose up rebuilt the image") {
		t.Errorf("--json lessons of same-surprise: %+v", l)
	}

	// The threshold of config.toml holds, as for remem sleep, and the flag
	// wins over it.
	strict := homeWith(t, "threshold = 0.99\n")
	out = runEnv(t, strict, nil, "calibrate", "--clusters", clustersTestdata)
	if !strings.Contains(out, "exact grouping: 6 of 8 rows") || !strings.Contains(out, "go-disk          3/2      differs") {
		t.Errorf("threshold 0.99 from config.toml:\n%s", out)
	}
	out = runEnv(t, strict, nil, "calibrate", "--clusters", clustersTestdata, "--threshold", "0.48")
	if !strings.Contains(out, "exact grouping: 7 of 8 rows") {
		t.Errorf("--threshold over config.toml:\n%s", out)
	}
	// So does the writer.
	out = runEnv(t, home, nil, "calibrate", "--clusters", clustersTestdata, "--json", "--writer", `echo "The job failed once the disk filled up."`)
	rep = calib.Report{}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if l := rep.Rows[0].Lessons; len(l) == 0 || l[0].Text != "The job failed once the disk filled up." {
		t.Errorf("--writer: %+v", l)
	}
}

// TestCalibrateClustersBadRows: a bad line is named with its number and
// reason on stderr, the other rows are still scored, and the exit code is 1.
func TestCalibrateClustersBadRows(t *testing.T) {
	home := t.TempDir()
	good, err := os.ReadFile(clustersTestdata)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(good)), "\n")
	bad := append([]string{lines[0], lines[1],
		`{"id":"oops","events":[{"kind":"note","text":"x"}],"groups":[{"events":[0]},{"events":[0]}]}`,
		`{"id":"half"`,
	}, lines[2:]...)
	file := filepath.Join(t.TempDir(), "rows.jsonl")
	if err := os.WriteFile(file, []byte(strings.Join(bad, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := run(t, home, nil, "calibrate", "--clusters", file)
	wantErr := file + `:3: row "oops": event 0 is in two groups, 0 and 1` + "\n" +
		file + `:4: bad JSON: unexpected end of JSON input` + "\n" +
		"remem: calibrate: 2 of 10 rows of " + file + " could not be scored (above)\n"
	if code != 1 || errOut != wantErr {
		t.Errorf("exit %d, stderr:\n%s\nwant:\n%s", code, errOut, wantErr)
	}
	if !strings.Contains(out, "helm-internal    2/2") || !strings.Contains(out, "oops             bad row") ||
		!strings.Contains(out, "exact grouping: 7 of 8 rows") || !strings.Contains(out, "bad rows: 2 (on stderr)") {
		t.Errorf("stdout:\n%s", out)
	}

	for _, args := range [][]string{
		{"calibrate"},
		{"calibrate", "--pairs", file, "--clusters", file},
		{"calibrate", "--pairs", file, "--threshold", "0.5"},
	} {
		if _, errOut, code := run(t, home, nil, args...); code != usageExit || !strings.Contains(errOut, "calibrate: ") {
			t.Errorf("remem %v: exit %d, %s", args, code, errOut)
		}
	}
	if _, errOut, code := run(t, home, nil, "calibrate", "--clusters", filepath.Join(home, "missing.jsonl")); code != 1 || !strings.Contains(errOut, "reading the clusters") {
		t.Errorf("a missing file: exit %d, %s", code, errOut)
	}
}
