package protocol

import (
	"math/rand"
	"testing"
	"time"
)

// mergeAll merges records into a set the way every transport does.
func mergeAll(records []*Record) map[RecordKey]string {
	held := map[RecordKey]*Record{}
	for _, r := range records {
		if old, ok := held[r.SetKey()]; !ok || Supersedes(r, old) {
			held[r.SetKey()] = r
		}
	}
	out := map[RecordKey]string{}
	for k, r := range held {
		out[k] = string(r.Raw)
	}
	return out
}

// TestMergeOrderIndependent merges the same records in many random orders
// and expects the same set every time, equal times included.
func TestMergeOrderIndependent(t *testing.T) {
	ids := memories(t, 4)
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	var records []*Record
	texts := []string{"The cache warms in ten minutes", "Builds on the ARM runner take longer"}
	for i, id := range ids {
		for j, text := range texts {
			for k := 0; k < 3; k++ {
				// Same key, several versions; two share a timestamp.
				at := t0.Add(time.Duration(k/2) * time.Hour)
				r, err := SignLesson(id, LessonDraft{Kind: KindSurprise, Text: text, Seen: int64(k + i + j), Strength: 0.5, Updated: at})
				if err != nil {
					t.Fatal(err)
				}
				records = append(records, r)
			}
			c, _ := SignConfirmation(id, LessonHash(KindSurprise, texts[(j+1)%2]), t0.Add(time.Duration(i)*time.Minute))
			records = append(records, c)
		}
	}
	want := mergeAll(records)
	rng := rand.New(rand.NewSource(1))
	for round := 0; round < 200; round++ {
		rng.Shuffle(len(records), func(a, b int) { records[a], records[b] = records[b], records[a] })
		got := mergeAll(records)
		if len(got) != len(want) {
			t.Fatalf("round %d: %d records, want %d", round, len(got), len(want))
		}
		for k, v := range want {
			if got[k] != v {
				t.Fatalf("round %d: %v differs", round, k)
			}
		}
	}
}
