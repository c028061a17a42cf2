package protocol

import (
	"bytes"
	"fmt"
	"testing"
	"time"
)

// batchLines signs n lessons of id, one second apart from t0, then a
// revocation of the first; returns them as lines.
func batchLines(t *testing.T, id Identity, n int, t0 time.Time) []Line {
	t.Helper()
	var buf bytes.Buffer
	var first string
	for i := 0; i < n; i++ {
		rec, err := SignLesson(id, LessonDraft{Kind: KindError, Text: fmt.Sprintf("The build number %d fails on the mirror.", i),
			Seen: 1, Strength: 0.6, Updated: t0.Add(time.Duration(i) * time.Second)})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = rec.Hash
		}
		buf.Write(rec.Raw)
		buf.WriteByte('\n')
	}
	rev, err := SignRevocation(id, first, t0, "wrong")
	if err != nil {
		t.Fatal(err)
	}
	buf.Write(rev.Raw)
	buf.WriteByte('\n')
	return SplitLines(buf.Bytes())
}

func TestVerifyBatchBindsOrigin(t *testing.T) {
	a, b := testIdentity(t, "alice"), testIdentity(t, "bob")
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	lines := append(batchLines(t, a, 2, now.Add(-time.Hour)), batchLines(t, b, 1, now.Add(-time.Hour))...)
	for i := range lines {
		lines[i].N = i + 1
	}
	lines = append(lines, Line{N: len(lines) + 1, Bytes: []byte(`{"v":2}`)}, Line{N: len(lines) + 2, Bytes: []byte(`not json`)})
	got := VerifyBatch(lines, Bound{Source: a.Origin() + ".jsonl", Origin: a.Origin()}, now)
	if len(got.Records) != 3 || len(got.Skipped) != 1 {
		t.Fatalf("%d records, %d skipped; want 3 of a's and 1 skipped", len(got.Records), got.Skipped)
	}
	tally := TallyOf(got.Refused)
	if tally[ReasonOriginMismatch] != 2 || tally[ReasonJSON] != 1 || len(got.Refused) != 3 {
		t.Fatalf("refused %v", got.Refused)
	}
	if got.Refused[0].Line != 4 || got.Refused[0].Source != a.Origin()+".jsonl" {
		t.Fatalf("first refusal %+v: want line 4 of the file", got.Refused[0])
	}
	// Unbound, b's lines are taken too.
	if got := VerifyBatch(lines, Bound{}, now); len(got.Records) != 5 {
		t.Fatalf("unbound: %d records, want 5", len(got.Records))
	}
}

// Past MaxOriginRecs an origin keeps its revocations and newest records.
func TestVerifyBatchCapsAnOrigin(t *testing.T) {
	a := testIdentity(t, "alice")
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	lines := batchLines(t, a, MaxOriginRecs+5, now.Add(-2*time.Hour))
	got := VerifyBatch(lines, Bound{Origin: a.Origin()}, now)
	if len(got.Records) != MaxOriginRecs || len(got.Refused) != 6 {
		t.Fatalf("%d records, %d refused; want %d and 6", len(got.Records), len(got.Refused), MaxOriginRecs)
	}
	for _, r := range got.Refused {
		if r.Reason != ReasonTooManyRecords || r.Line > 6 {
			t.Fatalf("refused %+v: want the 6 oldest lessons refused as too many", r)
		}
	}
	if last := got.Records[len(got.Records)-1]; last.Type != TypeRevocation {
		t.Fatalf("the revocation was not kept: last record is a %v", last.Type)
	}
}

// A caller that stops early leaves the lines it did not run out.
func TestVerifyBatchEachStopsEarly(t *testing.T) {
	a := testIdentity(t, "alice")
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	lines := batchLines(t, a, 9, now.Add(-time.Hour))
	half := func(n int, do func(int)) {
		for i := 0; i < n/2; i++ {
			do(i)
		}
	}
	got := VerifyBatch(lines, Bound{Each: half}, now)
	if len(got.Records) != 5 || len(got.Refused) != 0 {
		t.Fatalf("%d records, %d refused; want the 5 lines run", len(got.Records), len(got.Refused))
	}
}
