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

// StrengthRank orders lessons by the strength a view shows them with while
// no admitted verification has moved them (Status.Last zero, as for every
// stranger's candidate): ShownStrength never exceeds RankBound of the rank,
// and RankBound keeps the ranks' order at every now, so an index sorted by
// rank yields lessons from the strongest shown down and a reader can stop
// once the bound falls below what it already has. Decay from updated is
// folded in as half-lives since the epoch (none when w <= 0).
func StrengthRank(s float64, updated time.Time, w time.Duration) float64 {
	r := math.Log2(clamp01(s)) // -Inf for 0
	if w <= 0 {
		return r
	}
	return r + float64(updated.UnixNano())/(float64(w)/2)
}

// RankBound is the most a lesson of rank can show at now (see
// StrengthRank), with room for the rounding of both computations.
func RankBound(rank float64, now time.Time, w time.Duration) float64 {
	slack := 1e-9 + 1e-15*math.Abs(rank) // a few ulps of the rank
	if w > 0 {
		rank -= float64(now.UnixNano()) / (float64(w) / 2)
	}
	// Below 2^-990 the floats are denormal; no shown strength there is
	// worth ordering.
	return math.Min(1, math.Max(math.Exp2(rank+slack), 0x1p-990))
}
