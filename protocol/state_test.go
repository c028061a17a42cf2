package protocol

import (
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"
	"time"
)

// memories returns n deterministic identities.
func memories(t testing.TB, n int) []Identity {
	t.Helper()
	out := make([]Identity, n)
	for i := range out {
		seed := sha256.Sum256([]byte(fmt.Sprintf("memory-%d", i)))
		id, err := NewIdentity(seed[:])
		if err != nil {
			t.Fatal(err)
		}
		out[i] = id
	}
	return out
}

const stateText = "The staging database is reset every night at midnight"

func TestComputeState(t *testing.T) {
	ids := memories(t, 6)
	day := 24 * time.Hour
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	hash := LessonHash(KindSurprise, stateText)
	p := StateParams{N: 3, W: 90 * day}

	lesson := func(i int, at time.Time) *Record {
		r, err := SignLesson(ids[i], LessonDraft{Kind: KindSurprise, Text: stateText, Seen: 1, Strength: 0.5, Updated: at})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	confirm := func(i int, at time.Time) *Record {
		r, err := SignConfirmation(ids[i], hash, at)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	revoke := func(i int, at time.Time) *Record {
		r, err := SignRevocation(ids[i], hash, at, "")
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	three := func(at time.Time) []*Record {
		return []*Record{lesson(0, t0), confirm(1, at), confirm(2, at), confirm(3, at)}
	}

	cases := []struct {
		name      string
		records   []*Record
		now       time.Time
		want      State
		verifiers int
	}{
		{"one publisher is a candidate", []*Record{lesson(0, t0)}, t0, StateCandidate, 0},
		{"two confirmers are not enough", []*Record{lesson(0, t0), confirm(1, t0), confirm(2, t0)}, t0, StateCandidate, 2},
		{"three confirmers make it common", three(t0.Add(day)), t0.Add(2 * day), StateCommon, 3},
		{"a second publisher is a verifier", []*Record{lesson(0, t0), lesson(1, t0.Add(day)), confirm(2, t0), confirm(3, t0)}, t0.Add(day), StateCommon, 3},
		{"confirmations from the author do not count", []*Record{lesson(0, t0), confirm(0, t0), confirm(1, t0), confirm(2, t0)}, t0, StateCandidate, 2},
		{"a confirmer counts once", []*Record{lesson(0, t0), confirm(1, t0), lesson(1, t0), confirm(2, t0)}, t0, StateCandidate, 2},
		{"common until W", three(t0), t0.Add(90 * day), StateCommon, 3},
		{"fading after W", three(t0), t0.Add(90*day + time.Second), StateFading, 3},
		{"fading until 2W", three(t0), t0.Add(180 * day), StateFading, 3},
		{"removed after 2W", three(t0), t0.Add(180*day + time.Second), StateRemoved, 3},
		{"fading back to common on a new verification", append(three(t0), confirm(4, t0.Add(100*day))), t0.Add(120 * day), StateCommon, 4},
		{"revoked by its only origin", append(three(t0), revoke(0, t0.Add(day))), t0.Add(day), StateRevoked, 3},
		{"a revocation older than the lesson does not count", []*Record{lesson(0, t0.Add(2*day)), revoke(0, t0.Add(day))}, t0.Add(3 * day), StateCandidate, 0},
		{"a revocation at the same time counts", []*Record{lesson(0, t0), revoke(0, t0)}, t0, StateRevoked, 0},
		{"one of two publishers revoking leaves it", []*Record{lesson(0, t0), lesson(1, t0.Add(day)), revoke(0, t0.Add(2*day))}, t0.Add(2 * day), StateCandidate, 0},
		{"both publishers revoking revokes it", []*Record{lesson(0, t0), lesson(1, t0), revoke(0, t0.Add(day)), revoke(1, t0.Add(day))}, t0.Add(day), StateRevoked, 0},
		{"quorum of confirmers revokes", append(three(t0), revoke(1, t0.Add(day)), revoke(2, t0.Add(day)), revoke(3, t0.Add(day))), t0.Add(day), StateRevoked, 3},
		{"two confirmers are no quorum", append(three(t0), revoke(1, t0.Add(day)), revoke(2, t0.Add(day))), t0.Add(day), StateCommon, 3},
		{"revocations from strangers are no quorum", append(three(t0), revoke(4, t0), revoke(5, t0)), t0, StateCommon, 3},
		{"records of other hashes are ignored", []*Record{lesson(0, t0), mustConfirm(t, ids[1], LessonHash("error", "x"), t0)}, t0, StateCandidate, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := ComputeState(hash, c.records, c.now, p, AdmitAll()) // every origin counts, as the seed reads
			if st.State != c.want || len(st.Verifiers) != c.verifiers {
				t.Errorf("state %s with %d verifiers (%s), want %s with %d", st.State, len(st.Verifiers), st.Reason, c.want, c.verifiers)
			}
			if st.Reason == "" {
				t.Error("no reason given")
			}
		})
	}
}

func mustConfirm(t *testing.T, id Identity, hash string, at time.Time) *Record {
	r, err := SignConfirmation(id, hash, at)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestStrength(t *testing.T) {
	if got := Rise(0.5); got != 0.75 {
		t.Errorf("Rise(0.5) = %v", got)
	}
	if got := Rise(1); got != 1 {
		t.Errorf("Rise(1) = %v", got)
	}
	for seen, want := range map[int64]float64{0: 0, 1: 0.5, 2: 0.75, 3: 0.875} {
		if got := InitialStrength(seen); got != want {
			t.Errorf("InitialStrength(%d) = %v, want %v", seen, got, want)
		}
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	w := 90 * 24 * time.Hour
	if got := EffectiveStrength(0.8, t0, t0.Add(w/2), w); got < 0.3999 || got > 0.4001 {
		t.Errorf("half life: %v", got)
	}
	if got := EffectiveStrength(0.8, t0, t0.Add(-time.Hour), w); got != 0.8 {
		t.Errorf("clock behind: %v", got)
	}
	if got := EffectiveStrength(7, t0, t0, w); got != 1 {
		t.Errorf("clamp: %v", got)
	}
}

// The strength shown follows the state: it decays from the last
// verification when the records hold a later one than the local update,
// and a lesson out of the active view shows none.
func TestShownStrength(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	w := 90 * 24 * time.Hour
	now := t0.Add(w)
	st := Status{State: StateCommon, Last: t0.Add(w / 2)}
	if got, want := ShownStrength(0.8, t0, st, now, w), EffectiveStrength(0.8, st.Last, now, w); got != want {
		t.Errorf("verified after the local update: %v, want %v (decay from the verification)", got, want)
	}
	st.Last = t0.Add(-w)
	if got, want := ShownStrength(0.8, t0, st, now, w), EffectiveStrength(0.8, t0, now, w); got != want {
		t.Errorf("updated after the last verification: %v, want %v (decay from the update)", got, want)
	}
	if got := ShownStrength(0.8, t0, Status{State: StateCandidate}, t0, w); got != 0.8 {
		t.Errorf("an unverified candidate: %v", got)
	}
	for _, s := range []State{StateRemoved, StateRevoked} {
		if got := ShownStrength(0.8, now, Status{State: s, Last: now}, now, w); got != 0 {
			t.Errorf("%s: %v, want 0", s, got)
		}
	}
}

// TestComputeStateCountsAdmittedOnly: only admitted origins count toward
// N (SPEC §8): three, thirty or three thousand fresh keys confirming make
// no lesson common, a quorum of them revokes nothing, and a stranger's
// recent confirmation keeps nothing fresh; admitted ones count as before.
func TestComputeStateCountsAdmittedOnly(t *testing.T) {
	ids := memories(t, 8)
	day := 24 * time.Hour
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	hash := LessonHash(KindSurprise, stateText)
	lesson, err := SignLesson(ids[0], LessonDraft{Kind: KindSurprise, Text: stateText, Seen: 1, Strength: 0.5, Updated: t0})
	if err != nil {
		t.Fatal(err)
	}
	admitted := AdmitOrigins(ids[1].Origin(), ids[2].Origin(), ids[3].Origin())
	p := StateParams{N: 3, W: 90 * day}
	for _, n := range []int{3, 30, 3000} {
		recs := []*Record{lesson}
		for i := range n {
			seed := sha256.Sum256([]byte(fmt.Sprintf("sybil-%d", i)))
			id, err := NewIdentity(seed[:])
			if err != nil {
				t.Fatal(err)
			}
			recs = append(recs, mustConfirm(t, id, hash, t0), mustRevoke(t, id, hash, t0.Add(day)))
		}
		st := ComputeState(hash, recs, t0.Add(day), p, admitted)
		if st.State != StateCandidate || len(st.Verifiers) != n || len(st.Admitted) != 0 || st.Quorum != 0 {
			t.Errorf("%d fresh keys: %s (%s), %d verifiers, %d admitted, quorum %d", n, st.State, st.Reason, len(st.Verifiers), len(st.Admitted), st.Quorum)
		}
		if !strings.Contains(st.Reason, "not admitted") {
			t.Errorf("the reason does not say why: %q", st.Reason)
		}
	}
	// Admitted confirmers count exactly as before, strangers beside them
	// change nothing, and freshness is the admitted ones' alone.
	recs := []*Record{lesson, mustConfirm(t, ids[1], hash, t0), mustConfirm(t, ids[2], hash, t0), mustConfirm(t, ids[3], hash, t0),
		mustConfirm(t, ids[6], hash, t0.Add(100*day)), mustConfirm(t, ids[7], hash, t0.Add(100*day))}
	if st := ComputeState(hash, recs, t0.Add(day), p, admitted); st.State != StateCommon || len(st.Admitted) != 3 || !st.Last.Equal(t0) {
		t.Errorf("three admitted confirmers: %s (%s), admitted %v, last %s", st.State, st.Reason, st.Admitted, st.Last)
	}
	if st := ComputeState(hash, recs, t0.Add(101*day), p, admitted); st.State != StateFading {
		t.Errorf("strangers' fresh confirmations kept it %s (%s)", st.State, st.Reason)
	}
	quorum := append(recs, mustRevoke(t, ids[1], hash, t0.Add(day)), mustRevoke(t, ids[2], hash, t0.Add(day)), mustRevoke(t, ids[6], hash, t0.Add(day)), mustRevoke(t, ids[7], hash, t0.Add(day)))
	if st := ComputeState(hash, quorum, t0.Add(day), p, admitted); st.State == StateRevoked || st.Quorum != 2 {
		t.Errorf("two admitted and two strangers' revocations: %s, quorum %d", st.State, st.Quorum)
	}
	quorum = append(quorum, mustRevoke(t, ids[3], hash, t0.Add(day)))
	if st := ComputeState(hash, quorum, t0.Add(day), p, admitted); st.State != StateRevoked || st.Quorum != 3 {
		t.Errorf("three admitted confirmers' revocations: %s, quorum %d", st.State, st.Quorum)
	}
	// The author's own withdrawal needs no admission.
	withdrawn := []*Record{lesson, mustRevoke(t, ids[0], hash, t0.Add(day))}
	if st := ComputeState(hash, withdrawn, t0.Add(day), p, Admitted{}); st.State != StateRevoked {
		t.Errorf("the author's revocation, nothing admitted: %s", st.State)
	}
}

func mustRevoke(t *testing.T, id Identity, hash string, at time.Time) *Record {
	r, err := SignRevocation(id, hash, at, "")
	if err != nil {
		t.Fatal(err)
	}
	return r
}
