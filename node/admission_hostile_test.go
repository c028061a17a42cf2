package node_test

import (
	"slices"
	"testing"
	"time"

	"github.com/remem/remem/node"
	"github.com/remem/remem/protocol"
)

// TestStrangerAuthorAddsNoAdmittedVerifier (SPEC §8): a stranger that
// publishes the text of an own lesson, dated before it, becomes its author
// (the earliest publisher); this memory's own lesson must not then count
// as one more admitted verifier. Two trusted confirmers of an own lesson
// leave it a candidate, with or without the stranger.
func TestStrangerAuthorAddsNoAdmittedVerifier(t *testing.T) {
	clk := newSeedClock(t)
	mates := sybils(t, 2)
	m, err := node.Open(node.Config{Home: t.TempDir(), Create: true, Now: clk.Now,
		Admission: node.Admission{Trust: []string{mates[0].Origin(), mates[1].Origin()}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	const text = "The release build fails when the changelog lacks the version"
	own, err := m.Publish(protocol.KindError, text)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range mates {
		c, err := protocol.SignConfirmation(k, own.Hash, clk.Now())
		if err != nil {
			t.Fatal(err)
		}
		deliverLines(t, m, c)
	}
	before := viewOf(t, m, own.Hash)
	if before.State != protocol.StateCandidate {
		t.Fatalf("two trusted confirmers: %s (%s), want candidate", before.State, before.StateReason)
	}
	stranger := mustID(t)
	early, err := protocol.SignLesson(stranger, protocol.LessonDraft{Kind: protocol.KindError, Text: text, Seen: 1, Strength: 0.5, Updated: clk.Now().Add(-24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	deliverLines(t, m, early)
	if v := viewOf(t, m, own.Hash); v.State != before.State {
		t.Errorf("a stranger's backdated copy of the own lesson: %s (%s), want %s (%s)", v.State, v.StateReason, before.State, before.StateReason)
	}
}

// TestStrangerFirstRaisesNothing (SPEC §8): the origin that brings a
// candidate is counted without a rise; a stranger that publishes a
// teammate's lesson first must not turn the teammate's own copy into a
// rise. The candidate's stored strength is the same with or without the
// stranger.
func TestStrangerFirstRaisesNothing(t *testing.T) {
	strength := func(withStranger bool) float64 {
		clk := newSeedClock(t)
		mate := mustID(t)
		m, err := node.Open(node.Config{Home: t.TempDir(), Create: true, Now: clk.Now,
			Admission: node.Admission{Trust: []string{mate.Origin()}}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = m.Close() })
		draft := protocol.LessonDraft{Kind: protocol.KindError, Text: "The mirror drops uploads over two gigabytes", Seen: 1, Strength: 0.5, Updated: clk.Now().Add(-time.Minute)}
		if withStranger {
			s, err := protocol.SignLesson(mustID(t), draft)
			if err != nil {
				t.Fatal(err)
			}
			deliverLines(t, m, s)
		}
		l, err := protocol.SignLesson(mate, draft)
		if err != nil {
			t.Fatal(err)
		}
		deliverLines(t, m, l)
		return viewOf(t, m, l.Hash).Strength
	}
	if alone, with := strength(false), strength(true); alone != with {
		t.Errorf("a teammate's lesson: strength %.4f alone, %.4f after a stranger published it first", alone, with)
	}
}

// TestMembersOfNoTeamAdmitNoOne (SPEC §8): only the members of a private
// team the node is in are admitted; a members list of a team the node is
// not in, or a common list every team overrides, admits no one.
func TestMembersOfNoTeamAdmitNoOne(t *testing.T) {
	x, y, z := mustID(t).Origin(), mustID(t).Origin(), mustID(t).Origin()
	dc := node.DefaultDaemonConfig()
	dc.Gossip.Teams = []string{"pub", "ops"}
	dc.Gossip.Members = []string{x}                                                      // every team overrides it
	dc.Gossip.TeamMembers = map[string][]string{"pub": {}, "ops": {y}, "elsewhere": {z}} // pub open; the node is not in elsewhere
	got := dc.Admission().Members
	if !slices.Equal(got, []string{y}) {
		t.Errorf("admitted members %v, want only %s (ops)", got, y)
	}
	dc.Gossip.Teams = nil
	if got := dc.Admission().Members; len(got) != 0 {
		t.Errorf("no team: admitted members %v, want none", got)
	}
}
