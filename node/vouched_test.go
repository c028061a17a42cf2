package node_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/remem/remem/node"
	"github.com/remem/remem/protocol"
)

// TestStrangersRankBelowVouchedLessons: fresh keys that send many
// candidates saying what an own lesson and a trusted colleague's lesson
// say, in more words, never push those two out of what recall gives an
// agent: lessons this memory wrote or an admitted origin vouches for rank
// above strangers' candidates, whatever their relevance and strength.
func TestStrangersRankBelowVouchedLessons(t *testing.T) {
	clk := newSeedClock(t)
	colleague := mustID(t)
	m, err := node.Open(node.Config{Home: t.TempDir(), Create: true, Now: clk.Now, Admission: node.Admission{Trust: []string{colleague.Origin()}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	own, err := m.Publish(protocol.KindError, "The staging deploy fails when the release tag is missing")
	if err != nil {
		t.Fatal(err)
	}
	at := clk.Now().Add(-time.Minute)
	theirs, err := protocol.SignLesson(colleague, protocol.LessonDraft{Kind: protocol.KindError, Text: "The staging deploy stalls while the database migration holds its lock", Seen: 1, Strength: 0.5, Updated: at})
	if err != nil {
		t.Fatal(err)
	}
	deliverLines(t, m, theirs)
	for i, k := range sybils(t, 40) {
		text := fmt.Sprintf("The staging deploy of service %d fails when the release tag is missing and the staging deploy database migration holds its lock", i)
		l, err := protocol.SignLesson(k, protocol.LessonDraft{Kind: protocol.KindError, Text: text, Seen: 9, Strength: 1, Updated: at})
		if err != nil {
			t.Fatal(err)
		}
		deliverLines(t, m, l)
	}
	got, err := m.Recall(context.Background(), "staging deploy release tag database migration lock", 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) < 2 || !((got[0].Hash == own.Hash && got[1].Hash == theirs.Hash) || (got[0].Hash == theirs.Hash && got[1].Hash == own.Hash)) {
		var texts []string
		for _, v := range got {
			texts = append(texts, v.Text)
		}
		t.Errorf("recall's first two are not the own and the trusted lesson: %q", texts)
	}
	if v := viewOf(t, m, theirs.Hash); !v.Vouched {
		t.Errorf("a trusted colleague's lesson is not marked vouched: %+v", v)
	}
}
