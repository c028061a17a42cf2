package protocol

import (
	"testing"
	"time"
)

// stateBenchRecords are the records of one hash a busy memory holds: a
// lesson, 20 confirmations (5 of admitted origins) and 3 revocations.
func stateBenchRecords(b *testing.B) (string, []*Record, Admitted) {
	ids := memories(b, 21)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	hash := LessonHash(KindSurprise, stateText)
	l, err := SignLesson(ids[0], LessonDraft{Kind: KindSurprise, Text: stateText, Seen: 1, Strength: 0.5, Updated: t0})
	if err != nil {
		b.Fatal(err)
	}
	recs := []*Record{l}
	var admitted []string
	for i, id := range ids[1:] {
		c, err := SignConfirmation(id, hash, t0.Add(time.Duration(i)*time.Minute))
		if err != nil {
			b.Fatal(err)
		}
		recs = append(recs, c)
		if i < 5 {
			admitted = append(admitted, id.Origin())
		}
		if i%7 == 0 {
			r, err := SignRevocation(id, hash, t0.Add(time.Hour), "")
			if err != nil {
				b.Fatal(err)
			}
			recs = append(recs, r)
		}
	}
	return hash, recs, AdmitOrigins(admitted...)
}

// BenchmarkComputeState is the state function over one hash's records,
// with every origin admitted (the seed's count) and with an admitted set of
// five: the admitted set must cost little beside the count (SPEC §8).
func BenchmarkComputeState(b *testing.B) {
	hash, recs, admitted := stateBenchRecords(b)
	now := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	p := DefaultStateParams()
	for _, c := range []struct {
		name  string
		admit Admitted
	}{{"all", AdmitAll()}, {"five", admitted}, {"none", Admitted{}}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				ComputeState(hash, recs, now, p, c.admit)
			}
		})
	}
}
