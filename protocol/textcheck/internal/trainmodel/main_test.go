package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestModelIsTrainedFromTheSets: model.bin is what the trainer makes of
// the labelled sets as they are committed, byte for byte, so a set edited
// without go generate fails here (training is deterministic).
func TestModelIsTrainedFromTheSets(t *testing.T) {
	if testing.Short() {
		t.Skip("trains the model (a few seconds)")
	}
	root := filepath.Join("..", "..")
	model, report, err := train(options{
		dir:         filepath.Join(root, "testdata"),
		conformance: filepath.Join(root, "..", "testdata", "conformance", "imperative.jsonl"),
		maxFP:       0.025,
	})
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(root, "model.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(model, want) {
		t.Fatalf("model.bin is not what the labelled sets train: run go generate ./protocol/textcheck\n%s", report)
	}
	wantReport, err := os.ReadFile(filepath.Join(root, "testdata", "model_report.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if string(wantReport) != report {
		t.Fatalf("testdata/model_report.txt is stale: run go generate ./protocol/textcheck")
	}
}
