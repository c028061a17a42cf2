package protocol

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestRankBound: the strength a view shows for a lesson with no admitted
// verification never exceeds the bound of its rank, and the bound is close
// to it when nothing was dated ahead of now, so an index walk in rank order
// may stop at the bound and still stop early.
func TestRankBound(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	windows := []time.Duration{0, time.Millisecond, 2 * time.Second, time.Hour, 90 * 24 * time.Hour}
	for i := range 200_000 {
		w := windows[i%len(windows)]
		s := r.Float64()
		switch i % 7 {
		case 0:
			s = 0.5
		case 1:
			s = 1
		case 2:
			s = 0
		}
		updated := base.Add(time.Duration(r.Int64N(int64(400 * 24 * time.Hour))))
		now := updated.Add(time.Duration(r.Int64N(int64(400*24*time.Hour))) - 10*24*time.Hour)
		shown := ShownStrength(s, updated, Status{State: StateCandidate}, now, w)
		bound := RankBound(StrengthRank(s, updated, w), now, w)
		if shown > bound {
			t.Fatalf("s=%v updated=%v now=%v w=%v: shown %v over the bound %v", s, updated, now, w, shown, bound)
		}
		if !now.Before(updated) && shown > 1e-290 && bound > shown*(1+1e-5) {
			t.Fatalf("s=%v updated=%v now=%v w=%v: bound %v far above shown %v", s, updated, now, w, bound, shown)
		}
	}
	// Order: a higher rank never gets a lower bound.
	a, b := StrengthRank(0.75, base, time.Hour), StrengthRank(0.5, base.Add(time.Minute), time.Hour)
	if (a > b) != (RankBound(a, base.Add(time.Hour), time.Hour) > RankBound(b, base.Add(time.Hour), time.Hour)) {
		t.Errorf("rank and bound disagree on order")
	}
}
