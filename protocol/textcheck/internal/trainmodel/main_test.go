package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestModelIsTrainedFromTheSets: model.bin and rawmodel.bin are what the
// trainer makes of the labelled sets as they are committed, byte for byte,
// so a set edited without go generate fails here (training is
// deterministic).
func TestModelIsTrainedFromTheSets(t *testing.T) {
	if testing.Short() {
		t.Skip("trains the models (a few seconds)")
	}
	root := filepath.Join("..", "..")
	for _, c := range []struct {
		name, bin, report string
		o                 options
	}{
		{"observation", "model.bin", "model_report.txt", options{maxFP: 0.025}},
		{"raw data", "rawmodel.bin", "rawmodel_report.txt", options{maxFP: 0.005, raw: true}},
	} {
		c.o.dir = filepath.Join(root, "testdata")
		c.o.conformance = filepath.Join(root, "..", "testdata", "conformance", "imperative.jsonl")
		model, report, err := train(c.o)
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join(root, c.bin))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(model, want) {
			t.Errorf("%s: %s is not what the labelled sets train: run go generate ./protocol/textcheck\n%s", c.name, c.bin, report)
		}
		wantReport, err := os.ReadFile(filepath.Join(root, "testdata", c.report))
		if err != nil {
			t.Fatal(err)
		}
		if string(wantReport) != report {
			t.Errorf("%s: testdata/%s is stale: run go generate ./protocol/textcheck", c.name, c.report)
		}
	}
}
