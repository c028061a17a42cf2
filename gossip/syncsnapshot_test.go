package gossip

import (
	"context"
	"slices"
	"testing"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/remem/remem/protocol"
)

// versionedHolder holds fixed lines at a version the test moves, and counts
// the calls of Held.
type versionedHolder struct {
	lines   [][]byte
	version uint64
	calls   int
}

func (h *versionedHolder) Deliver(context.Context, string, peer.ID, []*protocol.Record) {}
func (h *versionedHolder) Known(*protocol.Record) bool                                  { return false }
func (h *versionedHolder) HeldVersion() uint64                                          { return h.version }
func (h *versionedHolder) Held(string) ([][]byte, error) {
	h.calls++
	return h.lines, nil
}

// unversioned hides HeldVersion.
type unversioned struct{ *versionedHolder }

func (u unversioned) HeldVersion() {}

// The snapshot is built once per holder version, and on every call from a
// holder that is not Versioned; no host is needed.
func TestSnapshotCachedByVersion(t *testing.T) {
	id, _ := protocol.GenerateIdentity()
	h := &versionedHolder{lines: raws(lessons(t, id, 0, 3)), version: 1}
	tm := &team{name: "t", scope: Scope("t"), sync: newSyncState()}
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
	if s3 == s1 || h.calls != 2 || len(s3.lines) != 4 || s3.whole == s1.whole {
		t.Fatalf("new version: %d calls of Held, %d lines", h.calls, len(s3.lines))
	}

	n.holder = unversioned{h}
	for range 2 {
		if _, err := n.snapshot(tm); err != nil {
			t.Fatal(err)
		}
	}
	if h.calls != 4 {
		t.Errorf("a holder that is not Versioned: %d calls of Held, want 4", h.calls)
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
	s, origins := newSnapshot(messy, nil)
	if len(s.lines) != 6 || len(s.origins) != 2 || len(origins) != 6 {
		t.Fatalf("%d lines, %d origins (%d ids known), want 6, 2, 6", len(s.lines), len(s.origins), len(origins))
	}
	for _, o := range s.origins {
		if !slices.IsSortedFunc(s.byOrig[o], cmpID) || s.summary(o) != summaryOf(s.byOrig[o]) {
			t.Errorf("origin %s: ids unsorted or summary wrong", o)
		}
	}
	slices.Reverse(lines)
	again, _ := newSnapshot(lines, origins)
	if again.whole != s.whole {
		t.Error("the order of the held lines changed the whole digest")
	}
	if s.summary(originID{}) != summaryOf(nil) {
		t.Error("an origin not held has a summary")
	}
}
