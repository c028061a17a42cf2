package node_test

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/remem/remem/node"
	"github.com/remem/remem/protocol"
)

// sybils are n keys made a moment ago.
func sybils(t *testing.T, n int) []protocol.Identity {
	t.Helper()
	out := make([]protocol.Identity, n)
	for i := range out {
		out[i] = mustID(t)
	}
	return out
}

// deliverLines hands m records signed elsewhere, as a team topic would.
func deliverLines(t *testing.T, m *node.Memory, recs ...*protocol.Record) {
	t.Helper()
	var lines []byte
	for _, r := range recs {
		lines = append(append(lines, r.Raw...), '\n')
	}
	rep, err := m.Receive(context.Background(), "team:open", protocol.SplitLines(lines))
	if err != nil || len(rep.Refused) > 0 {
		t.Fatalf("receive: %+v %v", rep, err)
	}
}

// TestSeed3AdmittedVerifiers (SPEC §8, admitted verifiers): with the
// default admission, three, thirty or three thousand keys made a second
// ago, all confirming, make no received lesson common and raise neither it
// nor an own lesson, and their quorum of revocations takes no own lesson
// away; the same records from origins in the trust list count exactly as
// the seed counts them.
func TestSeed3AdmittedVerifiers(t *testing.T) {
	for _, n := range []int{3, 30, 3000} {
		t.Run(fmt.Sprintf("%d fresh keys", n), func(t *testing.T) {
			if n == 3000 && testing.Short() {
				t.Skip("3,000 keys in -short")
			}
			clk := newSeedClock(t)
			m, err := node.Open(node.Config{Home: t.TempDir(), Create: true, Now: clk.Now})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = m.Close() })
			author := mustID(t)
			received, err := protocol.SignLesson(author, protocol.LessonDraft{Kind: protocol.KindError, Text: "The mirror drops uploads over two gigabytes", Seen: 1, Strength: 0.5, Updated: clk.Now().Add(-time.Minute)})
			if err != nil {
				t.Fatal(err)
			}
			own, err := m.Publish(protocol.KindError, "The release build fails when the changelog lacks the version")
			if err != nil {
				t.Fatal(err)
			}
			deliverLines(t, m, received)
			before, ownBefore := viewOf(t, m, received.Hash), viewOf(t, m, own.Hash)
			keys := sybils(t, n)
			var recs []*protocol.Record
			at := clk.Now()
			for _, k := range keys {
				for _, h := range []string{received.Hash, own.Hash} {
					c, err := protocol.SignConfirmation(k, h, at)
					if err != nil {
						t.Fatal(err)
					}
					r, err := protocol.SignRevocation(k, h, at.Add(time.Second), "")
					if err != nil {
						t.Fatal(err)
					}
					recs = append(recs, c, r)
				}
			}
			for len(recs) > 0 { // in batches, as messages come
				k := min(len(recs), 500)
				deliverLines(t, m, recs[:k]...)
				recs = recs[k:]
			}
			clk.Add(2 * time.Second)
			got, ownGot := viewOf(t, m, received.Hash), viewOf(t, m, own.Hash)
			same := func(a, b float64) bool { return math.Abs(a-b) < 1e-6 } // two seconds of decay in W = 90 days
			if got.State != protocol.StateCandidate || !same(got.Strength, before.Strength) {
				t.Errorf("the received lesson after %d strangers' confirmations and revocations: %s at %.3f (%s), want candidate at %.3f", n, got.State, got.Strength, got.StateReason, before.Strength)
			}
			if ownGot.State != protocol.StateCandidate || !same(ownGot.Strength, ownBefore.Strength) {
				t.Errorf("the own lesson: %s at %.3f (%s), want candidate at %.3f", ownGot.State, ownGot.Strength, ownGot.StateReason, ownBefore.Strength)
			}
			if len(got.Confirmers) != n {
				t.Errorf("the strangers' confirmations are held and shown: %d of %d", len(got.Confirmers), n)
			}
		})
	}
	t.Run("origins in the trust list count as the seed counts them", func(t *testing.T) {
		clk := newSeedClock(t)
		keys := sybils(t, 3)
		var trust []string
		for _, k := range keys {
			trust = append(trust, k.Origin())
		}
		m, err := node.Open(node.Config{Home: t.TempDir(), Create: true, Now: clk.Now, Admission: node.Admission{Trust: trust}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = m.Close() })
		own, err := m.Publish(protocol.KindError, "The release build fails when the changelog lacks the version")
		if err != nil {
			t.Fatal(err)
		}
		before := viewOf(t, m, own.Hash)
		for _, k := range keys {
			c, err := protocol.SignConfirmation(k, own.Hash, clk.Now())
			if err != nil {
				t.Fatal(err)
			}
			deliverLines(t, m, c)
		}
		if v := viewOf(t, m, own.Hash); v.State != protocol.StateCommon || v.Strength <= before.Strength {
			t.Errorf("three trusted confirmers: %s at %.3f (%s), want common above %.3f", v.State, v.Strength, v.StateReason, before.Strength)
		}
		for _, k := range keys {
			r, err := protocol.SignRevocation(k, own.Hash, clk.Now().Add(time.Second), "")
			if err != nil {
				t.Fatal(err)
			}
			deliverLines(t, m, r)
		}
		clk.Add(2 * time.Second)
		if v := viewOf(t, m, own.Hash); v.State != protocol.StateRevoked {
			t.Errorf("three trusted confirmers' revocations: %s (%s), want revoked by quorum", v.State, v.StateReason)
		}
	})
}
