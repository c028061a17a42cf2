package node

import (
	"bytes"
	"testing"
	"time"

	"github.com/remem/remem/internal/testutil"
	"github.com/remem/remem/protocol"
)

// What sync reads by set key is what Held offered: the same line for an
// own lesson and a received one, nothing for a key never held, and the
// held version (which the session then does not send) once a newer one
// arrived.
func TestHeldLinesByKey(t *testing.T) {
	clk := newClock()
	m, _ := openTest(t, clk)
	h := holder{&Daemon{m: m}}
	if _, err := m.Publish(protocol.KindError, "The nightly export stalls when the reporting replica lags"); err != nil {
		t.Fatal(err)
	}
	id := testutil.Identity(t, "peer")
	old, err := protocol.SignLesson(id, protocol.LessonDraft{Kind: "error", Text: "The staging deploy fails when the migration lock is held", Seen: 1, Strength: 0.5, Updated: clk.Now().Add(-time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	receive(t, m, "team:x", [][]byte{old.Raw})
	lines := held(t, h.d.m, "team:x")
	if len(lines) != 2 {
		t.Fatalf("Held gives %d lines, want the own lesson and the received one", len(lines))
	}
	var keys []protocol.RecordKey
	for _, l := range lines {
		rec, err := protocol.Decode(l)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, rec.SetKey())
	}
	never := protocol.RecordKey{Type: protocol.TypeLesson, Origin: id.Origin(), Hash: protocol.LessonHash("error", "never held")}
	got, err := h.HeldLines("team:x", append(keys, never))
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range lines {
		if !bytes.Equal(got[i], l) {
			t.Errorf("key %d: HeldLines gives %q, Held gave %q", i, got[i], l)
		}
	}
	if len(got) != 3 || got[2] != nil {
		t.Fatalf("a key never held: %d lines, the last %q", len(got), got[len(got)-1])
	}

	newer, err := protocol.SignLesson(id, protocol.LessonDraft{Kind: "error", Text: old.Text, Seen: 2, Strength: 0.6, Updated: clk.Now()})
	if err != nil {
		t.Fatal(err)
	}
	receive(t, m, "team:x", [][]byte{newer.Raw})
	got, err = h.HeldLines("team:x", []protocol.RecordKey{old.SetKey()})
	if err != nil || !bytes.Equal(got[0], newer.Raw) {
		t.Errorf("after a newer version: %q, %v; want the newer line", got, err)
	}
}

// Sync's budgets see the memory's admitted set: this memory and its trust
// list, not a stranger.
func TestHolderAdmits(t *testing.T) {
	friend, stranger := testutil.Identity(t, "friend"), testutil.Identity(t, "stranger")
	m, err := Open(Config{Home: t.TempDir(), Create: true, Admission: Admission{Trust: []string{friend.Key()}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	h := holder{&Daemon{m: m}}
	if !h.Admits(m.Origin()) || !h.Admits(friend.Origin()) || h.Admits(stranger.Origin()) {
		t.Errorf("admits itself %v, its trust list %v, a stranger %v", h.Admits(m.Origin()), h.Admits(friend.Origin()), h.Admits(stranger.Origin()))
	}
}
