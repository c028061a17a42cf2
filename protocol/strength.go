package protocol

import (
	"math"
	"time"
)

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

func clamp01(s float64) float64 {
	switch {
	case math.IsNaN(s) || s < 0:
		return 0
	case s > 1:
		return 1
	}
	return s
}
