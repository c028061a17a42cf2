package gossip

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/remem/remem/internal/scopes"
	"github.com/remem/remem/protocol"
)

// versionedHolder holds fixed lines at a version the test moves, and counts
// the calls of Held.
type versionedHolder struct {
	NoLimits // but for HeldVersion
	lines    [][]byte
	version  uint64
	calls    int
}

func (h *versionedHolder) Deliver(context.Context, Delivery) error { return nil }
func (h *versionedHolder) Known(*protocol.Record) bool             { return false }
func (h *versionedHolder) HeldVersion() (uint64, bool)             { return h.version, true }
func (h *versionedHolder) HeldLines(_ string, keys []protocol.RecordKey) ([][]byte, error) {
	return make([][]byte, len(keys)), nil
}
func (h *versionedHolder) Held(string) ([][]byte, error) {
	h.calls++
	return h.lines, nil
}

// unversioned keeps no version.
type unversioned struct{ *versionedHolder }

func (u unversioned) HeldVersion() (uint64, bool) { return 0, false }

// The snapshot is built once per holder version, and on every call from a
// holder that keeps none; no host is needed.
func TestSnapshotCachedByVersion(t *testing.T) {
	id, _ := protocol.GenerateIdentity()
	h := &versionedHolder{lines: raws(lessons(t, id, 0, 3)), version: 1}
	tm := &team{name: "t", scope: scopes.Team("t"), sync: newSyncState()}
	n := &Node{holder: h}
	s1, err := n.snapshot(tm)
	if err != nil {
		t.Fatal(err)
	}
	if s2, _ := n.snapshot(tm); s2 != s1 || h.calls != 1 {
		t.Fatalf("same version: a new snapshot (%v) or %d calls of Held, want the same and 1", s2 != s1, h.calls)
	}
	h.lines = append(h.lines, lesson(t, id, 3).Raw)
	h.version++
	s3, _ := n.snapshot(tm)
	if s3 == s1 || h.calls != 2 || len(s3.keys) != 4 || s3.whole == s1.whole {
		t.Fatalf("new version: %d calls of Held, %d lines", h.calls, len(s3.keys))
	}

	n.holder = unversioned{h}
	for range 2 {
		if _, err := n.snapshot(tm); err != nil {
			t.Fatal(err)
		}
	}
	if h.calls != 4 {
		t.Errorf("a holder that keeps no version: %d calls of Held, want 4", h.calls)
	}
}

// A snapshot leaves out lines that are not records and lines held twice,
// keeps each origin's ids sorted, and its whole digest does not depend on
// the order of the lines.
func TestSnapshotOfHeldLines(t *testing.T) {
	a, _ := protocol.GenerateIdentity()
	b, _ := protocol.GenerateIdentity()
	lines := raws(append(lessons(t, a, 0, 4), lessons(t, b, 10, 2)...))
	messy := append(slices.Clone(lines), []byte("not a record"), append(slices.Clone(lines[0]), '\r', '\n'), lines[1])
	s := newSnapshot(messy, nil)
	if len(s.keys) != 6 || len(s.origins) != 2 {
		t.Fatalf("%d lines, %d origins, want 6 and 2", len(s.keys), len(s.origins))
	}
	for _, o := range s.origins {
		if !slices.IsSortedFunc(s.byOrig[o], cmpID) || s.summary(o) != summaryOf(s.byOrig[o]) {
			t.Errorf("origin %s: ids unsorted or summary wrong", o)
		}
	}
	slices.Reverse(lines)
	again := newSnapshot(lines, s.keys)
	if again.whole != s.whole {
		t.Error("the order of the held lines changed the whole digest")
	}
	if s.summary(originID{}) != summaryOf(nil) {
		t.Error("an origin not held has a summary")
	}
}

// padHolder returns, past the lines asked for, one it was not asked for;
// or fails.
type padHolder struct {
	*memHolder
	extra []byte
	err   error
}

func (h padHolder) HeldLines(scope string, keys []protocol.RecordKey) ([][]byte, error) {
	if h.err != nil {
		return nil, h.err
	}
	lines, err := h.memHolder.HeldLines(scope, keys)
	return append(lines, h.extra), err
}

// A session reads the lines it sends from the holder, in batches, and
// sends only those the snapshot saw: not a line superseded since, not one
// gone, not one the holder returns unasked; a holder that fails fails it.
func TestHeldLinesAreTheSnapshots(t *testing.T) {
	id, _ := protocol.GenerateIdentity()
	recs := lessons(t, id, 0, readBatch+10)
	h := newMemHolder()
	h.add(scopes.Team("t"), recs...)
	lines, _ := h.Held(scopes.Team("t"))
	snap := newSnapshot(lines, nil)
	newer, err := protocol.SignLesson(id, protocol.LessonDraft{Kind: recs[3].Kind, Text: recs[3].Text, Seen: 2, Strength: 0.6, Updated: time.Now()})
	if err != nil || newer.SetKey() != recs[3].SetKey() {
		t.Fatalf("a newer version of a held lesson: %v", err)
	}
	h.add(scopes.Team("t"), newer)
	delete(h.scopes[scopes.Team("t")], recs[readBatch+1].SetKey())
	stranger := lesson(t, id, 9999)
	ids := make([]recID, 0, len(recs)+1)
	for _, r := range recs {
		ids = append(ids, lineID(r.Raw))
	}
	ids = append(ids, lineID(stranger.Raw)) // not in the snapshot
	n := &Node{holder: padHolder{memHolder: h, extra: stranger.Raw}}
	sent := map[recID]bool{}
	if err := n.heldLines(scopes.Team("t"), snap, ids, func(line []byte) (bool, error) {
		sent[lineID(line)] = true
		return true, nil
	}); err != nil {
		t.Fatal(err)
	}
	for i, r := range recs {
		want := i != 3 && i != readBatch+1
		if sent[lineID(r.Raw)] != want {
			t.Errorf("record %d: sent %v, want %v", i, !want, want)
		}
	}
	if sent[lineID(stranger.Raw)] || sent[lineID(newer.Raw)] || len(sent) != len(recs)-2 {
		t.Errorf("sent %d lines, a line unasked or newer than the snapshot among them", len(sent))
	}

	stop := 0
	_ = n.heldLines(scopes.Team("t"), snap, ids, func([]byte) (bool, error) { stop++; return stop < 5, nil })
	if stop != 5 {
		t.Errorf("read on after being told no more: %d lines", stop)
	}
	n.holder = padHolder{memHolder: h, err: errors.New("disk gone")}
	if err := n.heldLines(scopes.Team("t"), snap, ids, func([]byte) (bool, error) { return true, nil }); err == nil {
		t.Error("a holder that fails to read did not fail the send")
	}
}

// A snapshot keeps a set key decoded and gives it back as it was; a key
// whose origin or hash is not lowercase hex of the right length (which no
// verified record has) is not kept, so its line is never offered.
func TestHeldKeyRoundTrip(t *testing.T) {
	id, _ := protocol.GenerateIdentity()
	for _, r := range []*protocol.Record{lesson(t, id, 1), mustConfirm(t, id)} {
		k, ok := keyOf(r.SetKey())
		if !ok || k.recordKey() != r.SetKey() {
			t.Errorf("%v: kept %v, given back %+v", r.SetKey(), ok, k.recordKey())
		}
	}
	good := lesson(t, id, 2).SetKey()
	for name, mod := range map[string]func(*protocol.RecordKey){
		"uppercase origin": func(k *protocol.RecordKey) { k.Origin = strings.ToUpper(k.Origin) },
		"short origin":     func(k *protocol.RecordKey) { k.Origin = k.Origin[2:] },
		"uppercase hash":   func(k *protocol.RecordKey) { k.Hash = strings.ToUpper(k.Hash) },
		"long hash":        func(k *protocol.RecordKey) { k.Hash += "00" },
		"not hex":          func(k *protocol.RecordKey) { k.Hash = "zz" + k.Hash[2:] },
	} {
		k := good
		mod(&k)
		if _, ok := keyOf(k); ok {
			t.Errorf("%s: kept", name)
		}
	}
}

func mustConfirm(t *testing.T, id protocol.Identity) *protocol.Record {
	t.Helper()
	c, err := protocol.SignConfirmation(id, lesson(t, id, 3).Hash, time.Now().Add(-time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	return c
}
