package protocol

import (
	"fmt"
	"sort"
	"time"
)

// State of a lesson hash in the commons (SPEC §8). Computed, never sent.
type State string

const (
	StateCandidate State = "candidate"
	StateCommon    State = "common"
	StateFading    State = "fading"
	StateRemoved   State = "removed"
	StateRevoked   State = "revoked"
)

// States lists every state, for flags and validation.
var States = []State{StateCandidate, StateCommon, StateFading, StateRemoved, StateRevoked}

// Active reports whether a lesson in this state belongs in the active view.
func (s State) Active() bool { return s != StateRemoved && s != StateRevoked }

// StateParams are N (verifiers needed) and W (the freshness window).
type StateParams struct {
	N int
	W time.Duration
}

// DefaultStateParams are the protocol defaults: N = 3, W = 90 days.
func DefaultStateParams() StateParams { return StateParams{N: 3, W: 90 * 24 * time.Hour} }

// Status is the computed state of one hash and how it was reached.
type Status struct {
	Hash       string
	State      State
	Reason     string
	Author     string   // origin of the earliest unrevoked lesson record
	Publishers []string // origins with an unrevoked lesson record
	Confirmers []string // origins with a confirmation, the author excluded
	Verifiers  []string // publishers and confirmers, the author excluded
	Revokers   []string // origins whose revocation counts
	Last       time.Time
}

// ComputeState is the one state function: every holder of the same records
// computes the same status at the same now. records are all records held for
// hash (others are ignored), at most one per set key.
func ComputeState(hash string, records []*Record, now time.Time, p StateParams) Status {
	st := Status{Hash: hash}
	lessons := map[string]*Record{}
	confirms := map[string]*Record{}
	revokes := map[string]*Record{}
	for _, r := range records {
		if r.Hash != hash {
			continue
		}
		var m map[string]*Record
		switch r.Type {
		case TypeLesson:
			m = lessons
		case TypeConfirmation:
			m = confirms
		case TypeRevocation:
			m = revokes
		default:
			continue
		}
		if old, ok := m[r.Origin]; !ok || Supersedes(r, old) {
			m[r.Origin] = r
		}
	}

	// Publishers: origins whose lesson no revocation of theirs withdrew.
	var author *Record
	everPublished, revokedOwn := 0, 0
	for origin, l := range lessons {
		everPublished++
		if rv, ok := revokes[origin]; ok && !rv.Time.Before(l.Time) {
			revokedOwn++
			st.Revokers = append(st.Revokers, origin)
			continue
		}
		st.Publishers = append(st.Publishers, origin)
		if author == nil || l.Time.Before(author.Time) || (l.Time.Equal(author.Time) && origin < author.Origin) {
			author = l
		}
	}
	if author != nil {
		st.Author = author.Origin
	}

	// Quorum: confirmers of the hash who signed a revocation of it.
	quorum := 0
	for origin := range confirms {
		if _, ok := revokes[origin]; ok && origin != st.Author {
			quorum++
			st.Revokers = append(st.Revokers, origin)
		}
	}

	verifiers := map[string]time.Time{}
	note := func(origin string, t time.Time) {
		if origin == st.Author {
			return
		}
		if last, ok := verifiers[origin]; !ok || t.After(last) {
			verifiers[origin] = t
		}
	}
	for _, origin := range st.Publishers {
		note(origin, lessons[origin].Time)
	}
	for origin, c := range confirms {
		if origin != st.Author {
			st.Confirmers = append(st.Confirmers, origin)
		}
		note(origin, c.Time)
	}
	for origin, t := range verifiers {
		st.Verifiers = append(st.Verifiers, origin)
		if t.After(st.Last) {
			st.Last = t
		}
	}
	sort.Strings(st.Publishers)
	sort.Strings(st.Confirmers)
	sort.Strings(st.Verifiers)
	sort.Strings(st.Revokers)

	n := len(st.Verifiers)
	age := now.Sub(st.Last)
	switch {
	case everPublished > 0 && revokedOwn == everPublished:
		st.State, st.Reason = StateRevoked, "every origin that published it has revoked it"
	case everPublished == 0 && len(revokes) > 0:
		st.State, st.Reason = StateRevoked, "only revocations are held for it"
	case p.N > 0 && quorum >= p.N:
		st.State, st.Reason = StateRevoked, fmt.Sprintf("%d confirmers revoked it (quorum %d)", quorum, p.N)
	case n < p.N:
		st.State, st.Reason = StateCandidate, fmt.Sprintf("%d of %d verifiers", n, p.N)
	case age <= p.W:
		st.State, st.Reason = StateCommon, fmt.Sprintf("%d verifiers, last %s", n, FormatTime(st.Last))
	case age <= 2*p.W:
		st.State, st.Reason = StateFading, fmt.Sprintf("%d verifiers, none since %s", n, FormatTime(st.Last))
	default:
		st.State, st.Reason = StateRemoved, fmt.Sprintf("%d verifiers, none since %s (over 2W)", n, FormatTime(st.Last))
	}
	return st
}
