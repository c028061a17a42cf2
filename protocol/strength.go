package protocol

import (
	"math"
	"time"
)

// Strength (SPEC §7) lives here, in one place: where a lesson starts
// (InitialStrength, CandidateStrength), how a confirmation, corroboration
// or absorbed surprise raises it (Rise), and what is shown of it as time
// passes (EffectiveStrength, ShownStrength).

// CandidateStrength is the strength a received lesson starts with (SPEC §7).
const CandidateStrength = 0.5

// Rise moves a strength half way to 1: one confirmation, corroboration or
// absorbed surprise.
func Rise(s float64) float64 { return clamp01(s + (1-s)/2) }

// InitialStrength is the strength of a new own lesson that absorbed seen
// surprises: 1 - 0.5^seen.
func InitialStrength(seen int64) float64 {
	if seen <= 0 {
		return 0
	}
	return clamp01(1 - math.Pow(0.5, float64(seen)))
}

// EffectiveStrength applies decay: with no rise, strength halves every W/2
// since updated. now before updated counts as no time passed.
func EffectiveStrength(s float64, updated, now time.Time, w time.Duration) float64 {
	s = clamp01(s)
	age := now.Sub(updated)
	if age <= 0 || w <= 0 {
		return s
	}
	halfLife := float64(w) / 2
	return clamp01(s * math.Pow(0.5, float64(age)/halfLife))
}

// ShownStrength is the strength every view shows for a lesson whose
// stored strength is s, last raised locally at updated, whose hash has the
// computed status st: decayed from the later of updated and the last
// verification (st.Last, SPEC §8), so that a lesson verified again shows
// its strength again and a fading one visibly loses it. A lesson out of
// the active view (removed or revoked) shows 0.
func ShownStrength(s float64, updated time.Time, st Status, now time.Time, w time.Duration) float64 {
	if !st.State.Active() {
		return 0
	}
	from := updated
	if st.Last.After(from) {
		from = st.Last
	}
	return EffectiveStrength(s, from, now, w)
}

func clamp01(s float64) float64 {
	switch {
	case math.IsNaN(s) || s < 0:
		return 0
	case s > 1:
		return 1
	}
	return s
}
