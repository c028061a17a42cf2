package textcheck

import (
	"path/filepath"
	"testing"
)

// BenchmarkChecks runs both checks over the corpus sentences, one sentence
// per operation; BenchmarkTextCheckOverBare in package protocol puts the
// cost beside an Ed25519 verification.
func BenchmarkChecks(b *testing.B) {
	set := readLabelled(b, filepath.Join("testdata", "corpus.jsonl"))
	for _, bc := range []struct {
		name string
		fn   func(string)
	}{
		{"observation", func(s string) { _ = CheckObservation(s) }},
		{"rawdata", func(s string) { _ = FindRawData(s) }},
		{"both", func(s string) { _ = CheckText(s) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				bc.fn(set[i%len(set)].Text)
				i++
			}
		})
	}
}
