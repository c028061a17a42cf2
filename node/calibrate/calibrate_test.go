package calibrate

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/remem/remem/node"
)

func readTestdata(t *testing.T) []Row {
	t.Helper()
	f, err := os.Open("testdata/clusters.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	rows, bad, err := ReadRows(f)
	if err != nil || len(bad) > 0 {
		t.Fatalf("reading testdata: %v %v", err, bad)
	}
	return rows
}

func TestDump(t *testing.T) {
	rep, err := Clusters(context.Background(), node.Config{}, readTestdata(t))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.MarshalIndent(rep, "", "  ")
	t.Logf("%s", out)
}
