package protocol

import (
	"crypto/ed25519"
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
// load, and reports their ratio (target: at most 1.15).
func BenchmarkVerifyOverBare(b *testing.B) {
	rec := typicalLesson(b)
	id := testIdentity(b, "alice")
	msg := rec.Raw[:len(rec.Raw)-len(`,"sig":""`)-128]
	sig := ed25519.Sign(id.Private, msg)
	var full, bare time.Duration
	for b.Loop() {
		t0 := time.Now()
		if _, err := Verify(rec.Raw, conformanceNow); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if !ed25519.Verify(id.Public, msg, sig) {
			b.Fatal("bad signature")
		}
		t2 := time.Now()
		full += t1.Sub(t0)
		bare += t2.Sub(t1)
	}
	b.ReportMetric(float64(full)/float64(bare), "full/bare")
	b.ReportMetric(float64(full)/float64(b.N), "full-ns/op")
	b.ReportMetric(float64(bare)/float64(b.N), "bare-ns/op")
}
