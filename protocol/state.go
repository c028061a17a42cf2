package protocol

import (
	"fmt"
	"slices"
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

// Admitted is the set of origins a memory counts as verifiers (SPEC §8):
// members of its private teams, its trust list, the publishers of a
// token-guarded commons it uses; or, on a closed network that reads the
// seed literally, every origin. Keys cost nothing, so an origin outside
// it is held and shown but never counted.
type Admitted struct {
	All     bool            // every origin counts
	Origins map[string]bool // the origins admitted one by one
}

// AdmitAll admits every origin: the seed's "counted, not weighted".
func AdmitAll() Admitted { return Admitted{All: true} }

// AdmitOrigins admits the origins given.
func AdmitOrigins(origins ...string) Admitted {
	a := Admitted{Origins: make(map[string]bool, len(origins))}
	for _, o := range origins {
		a.Origins[o] = true
	}
	return a
}

// Admits reports whether origin counts as a verifier.
func (a Admitted) Admits(origin string) bool { return a.All || a.Origins[origin] }

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
	// Admitted are the Verifiers the admitted set admits: only they count
	// toward N, and Last is the latest of their records.
	Admitted []string
	Revokers []string // origins whose revocation counts
	// Quorum counts the admitted confirmers who revoked it.
	Quorum int
	Last   time.Time
}

// ComputeState is the one state function: every holder of the same records
// that admits the same origins computes the same status at the same now.
// records are all records held for hash (others are ignored), at most one
// per set key. Only admitted verifiers count toward p.N (SPEC §8): for
// common, fading, removed and a quorum revocation; the zero Admitted
// admits none.
func ComputeState(hash string, records []*Record, now time.Time, p StateParams, admit Admitted) Status {
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
	// The author as counted: the earliest admitted publisher. A stranger
	// that publishes the same text dated earlier is the author shown, but
	// the count is what the admitted records alone give (SPEC §8: records
	// of other origins move nothing), so the first admitted publisher is
	// still not one of its own verifiers.
	counted := ""
	if author != nil && admit.Admits(author.Origin) {
		counted = author.Origin
	} else {
		var first *Record
		for origin, l := range lessons {
			if rv, ok := revokes[origin]; !admit.Admits(origin) || (ok && !rv.Time.Before(l.Time)) {
				continue // not admitted, or not a publisher: revoked its own
			}
			if first == nil || l.Time.Before(first.Time) || (l.Time.Equal(first.Time) && origin < first.Origin) {
				first = l
			}
		}
		if first != nil {
			counted = first.Origin
		}
	}

	// Quorum: admitted confirmers of the hash who signed a revocation of it.
	for origin := range confirms {
		if _, ok := revokes[origin]; ok && origin != counted && admit.Admits(origin) {
			st.Quorum++
			st.Revokers = append(st.Revokers, origin)
		}
	}
	quorum := st.Quorum

	// Verifiers: publishers and confirmers, the author aside, each once
	// with its latest record. Only admitted ones count, and give Last.
	verifier := func(origin string, t time.Time) {
		st.Verifiers = append(st.Verifiers, origin)
		if !admit.Admits(origin) || origin == counted {
			return
		}
		if !admit.All {
			st.Admitted = append(st.Admitted, origin)
		}
		if t.After(st.Last) {
			st.Last = t
		}
	}
	published := make(map[string]bool, len(st.Publishers))
	for _, origin := range st.Publishers {
		published[origin] = true
		if origin == st.Author {
			continue
		}
		t := lessons[origin].Time
		if c, ok := confirms[origin]; ok && c.Time.After(t) {
			t = c.Time
		}
		verifier(origin, t)
	}
	for origin, c := range confirms {
		if origin == st.Author {
			continue
		}
		st.Confirmers = append(st.Confirmers, origin)
		if !published[origin] {
			verifier(origin, c.Time)
		}
	}
	slices.Sort(st.Publishers)
	slices.Sort(st.Confirmers)
	slices.Sort(st.Verifiers)
	slices.Sort(st.Revokers)
	if admit.All {
		st.Admitted = st.Verifiers // the same origins, read only
	} else {
		slices.Sort(st.Admitted)
	}

	n := len(st.Admitted)
	others := len(st.Verifiers) - n
	age := now.Sub(st.Last)
	switch {
	case everPublished > 0 && revokedOwn == everPublished:
		st.State, st.Reason = StateRevoked, "every origin that published it has revoked it"
	case everPublished == 0 && len(revokes) > 0:
		st.State, st.Reason = StateRevoked, "only revocations are held for it"
	case p.N > 0 && quorum >= p.N:
		st.State, st.Reason = StateRevoked, fmt.Sprintf("%d admitted confirmers revoked it (quorum %d)", quorum, p.N)
	case n < p.N && others > 0:
		st.State, st.Reason = StateCandidate, fmt.Sprintf("%d of %d admitted verifiers (%d more not admitted)", n, p.N, others)
	case n < p.N:
		st.State, st.Reason = StateCandidate, fmt.Sprintf("%d of %d admitted verifiers", n, p.N)
	case age <= p.W:
		st.State, st.Reason = StateCommon, fmt.Sprintf("%d admitted verifiers, last %s", n, FormatTime(st.Last))
	case age <= 2*p.W:
		st.State, st.Reason = StateFading, fmt.Sprintf("%d admitted verifiers, none since %s", n, FormatTime(st.Last))
	default:
		st.State, st.Reason = StateRemoved, fmt.Sprintf("%d admitted verifiers, none since %s (over 2W)", n, FormatTime(st.Last))
	}
	return st
}
