package protocol

import (
	"crypto/ed25519"
	"encoding/json"
	"os"
	"testing"
	"time"
)

// typicalLesson is a lesson line of the usual size.
func typicalLesson(b *testing.B) *Record {
	id := testIdentity(b, "alice")
	rec, err := SignLesson(id, LessonDraft{Kind: KindError, Text: "go test fails on a clean checkout until go generate has run",
		Seen: 2, Strength: 0.75, Updated: conformanceNow.Add(-time.Hour)})
	if err != nil {
		b.Fatal(err)
	}
	return rec
}

// BenchmarkVerifyLesson is the full SPEC §5 verification of one line.
func BenchmarkVerifyLesson(b *testing.B) {
	rec := typicalLesson(b)
	b.SetBytes(int64(len(rec.Raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Verify(rec.Raw, conformanceNow); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBareEd25519Verify is the baseline: one ed25519.Verify over a
// message of the same size as the signed part of the lesson line.
func BenchmarkBareEd25519Verify(b *testing.B) {
	rec := typicalLesson(b)
	id := testIdentity(b, "alice")
	msg := rec.Raw[:len(rec.Raw)-len(`,"sig":""`)-128]
	sig := ed25519.Sign(id.Private, msg)
	b.SetBytes(int64(len(rec.Raw)))
	b.ReportAllocs()
	for b.Loop() {
		if !ed25519.Verify(id.Public, msg, sig) {
			b.Fatal("bad signature")
		}
	}
}

// BenchmarkVerifyOverBare alternates the full verification and a bare
// ed25519.Verify of the same line in one loop, so both see the same machine
// load, and reports their ratio (target: at most 1.10).
func BenchmarkVerifyOverBare(b *testing.B) {
	rec := typicalLesson(b)
	overBare(b, "full", func(int) {
		if _, err := Verify(rec.Raw, conformanceNow); err != nil {
			b.Fatal(err)
		}
	})
}

// overBare runs fn(i) and a bare ed25519.Verify of a lesson line one after
// the other in each iteration, and reports the ratio of their times as
// "<name>/bare".
func overBare(b *testing.B, name string, fn func(i int)) {
	rec := typicalLesson(b)
	id := testIdentity(b, "alice")
	msg := rec.Raw[:len(rec.Raw)-len(`,"sig":""`)-128]
	sig := ed25519.Sign(id.Private, msg)
	var took, bare time.Duration
	i := 0
	for b.Loop() {
		t0 := time.Now()
		fn(i)
		t1 := time.Now()
		if !ed25519.Verify(id.Public, msg, sig) {
			b.Fatal("bad signature")
		}
		t2 := time.Now()
		took += t1.Sub(t0)
		bare += t2.Sub(t1)
		i++
	}
	b.ReportMetric(float64(took)/float64(bare), name+"/bare")
	b.ReportMetric(float64(took)/float64(b.N), name+"-ns/op")
	b.ReportMetric(float64(bare)/float64(b.N), "bare-ns/op")
}

// benchTexts are the labelled sentences of the observation corpus and the
// conformance vectors: observations and instructions, plain and hidden.
func benchTexts(b *testing.B, observationsOnly bool) []string {
	var texts []string
	for _, path := range []string{"textcheck/testdata/corpus.jsonl", "testdata/conformance/imperative.jsonl"} {
		data, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		for _, l := range SplitLines(data) {
			var c struct {
				Text       string
				Imperative bool
			}
			if err := json.Unmarshal(l.Bytes, &c); err != nil {
				b.Fatal(err)
			}
			if !observationsOnly || !c.Imperative {
				texts = append(texts, c.Text)
			}
		}
	}
	return texts
}

// BenchmarkTextCheckOverBare alternates the whole text check of SPEC §6
// (observation and raw data, CheckAgentText) with a bare ed25519.Verify of
// a lesson line in one loop, and reports their ratio (target: at most
// 0.05). "corpus" cycles through every labelled sentence, half of them
// instructions that are refused; "observations" through those that pass,
// which is what most received lines are.
func BenchmarkTextCheckOverBare(b *testing.B) {
	b.Run("corpus", func(b *testing.B) { benchTextCheck(b, benchTexts(b, false)) })
	b.Run("observations", func(b *testing.B) { benchTextCheck(b, benchTexts(b, true)) })
}

func benchTextCheck(b *testing.B, texts []string) {
	overBare(b, "check", func(i int) { _ = CheckAgentText(texts[i%len(texts)]) })
}
