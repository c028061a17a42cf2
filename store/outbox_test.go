package store

import (
	"bytes"
	"testing"
	"time"

	"github.com/remem/remem/internal/scopes"
	"github.com/remem/remem/protocol"
)

// ownOutbox is a store whose outbox holds, in order, an own lesson l0, an
// own confirmation and l1 (a newer version of l0), and whose record set
// also holds a peer's lesson, which is not own.
type ownOutbox struct {
	s      *Store
	home   string
	me     protocol.Identity
	l0, l1 *protocol.Record
	c      *protocol.Record
}

func newOwnOutbox(t *testing.T) ownOutbox {
	t.Helper()
	s, home := openTest(t)
	me, peer := ident(t, 1), ident(t, 2)
	text := "The staging database is reset every night"
	o := ownOutbox{s: s, home: home, me: me,
		l0: signLesson(t, me, text, 1, t0),
		c:  signConfirm(t, me, protocol.LessonHash("error", "go test fails on a cold cache"), t0),
		l1: signLesson(t, me, text, 2, t0.Add(time.Hour)),
	}
	if last, err := s.AppendOutbox([]*protocol.Record{o.l0, o.c}); err != nil || last != 2 {
		t.Fatalf("AppendOutbox = %d, %v", last, err)
	}
	if last, err := s.AppendOutbox([]*protocol.Record{o.l1}); err != nil || last != 3 {
		t.Fatalf("AppendOutbox = %d, %v", last, err)
	}
	mustPut(t, s, []*protocol.Record{signLesson(t, peer, text, 1, t0)}, "team/a", t0)
	return o
}

// reopen closes the store and opens its home again; the test's cleanup
// closes the new one.
func reopen(t *testing.T, s *Store, home string) *Store {
	t.Helper()
	s.Close()
	s, err := Open(home, Options{Small: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestAppendOutboxNothingKeepsTheLastSeq(t *testing.T) {
	o := newOwnOutbox(t)
	if last, err := o.s.AppendOutbox(nil); err != nil || last != 3 {
		t.Fatalf("AppendOutbox(nil) = %d, %v", last, err)
	}
}

func TestOutboxReadsInSeqOrder(t *testing.T) {
	o := newOwnOutbox(t)
	all, err := o.s.Outbox(0, 0)
	if err != nil || len(all) != 3 {
		t.Fatalf("Outbox = %d, %v", len(all), err)
	}
	for i, want := range []*protocol.Record{o.l0, o.c, o.l1} {
		if all[i].Seq != uint64(i+1) || !bytes.Equal(all[i].Record.Raw, want.Raw) {
			t.Fatalf("entry %d = %d %s", i, all[i].Seq, all[i].Record.Raw)
		}
	}
	if got, _ := o.s.Outbox(1, 1); len(got) != 1 || got[0].Seq != 2 {
		t.Fatalf("Outbox(1, 1) = %+v", got)
	}
	if got, _ := o.s.Outbox(3, 10); len(got) != 0 {
		t.Fatalf("Outbox(3) = %+v", got)
	}
}

// TestOwnRecordsAreTheNewestLocalVersions: a peer's record is not own, and
// of an own lesson only the newest version is.
func TestOwnRecordsAreTheNewestLocalVersions(t *testing.T) {
	o := newOwnOutbox(t)
	own, err := o.s.OwnRecords()
	if err != nil || len(own) != 2 {
		t.Fatalf("OwnRecords = %d, %v", len(own), err)
	}
	for _, r := range own {
		if r.Origin != o.me.Origin() {
			t.Fatalf("OwnRecords has a record of %s", r.Origin)
		}
		if r.Type == protocol.TypeLesson && !bytes.Equal(r.Raw, o.l1.Raw) {
			t.Fatalf("OwnRecords holds an old version: %s", r.Raw)
		}
	}
	h, _, _ := o.s.Get(o.l1.SetKey())
	if len(h.Scopes) != 1 || h.Scopes[0] != scopes.Local {
		t.Fatalf("own record scopes %v", h.Scopes)
	}
}

func TestCursorsSurviveAReopen(t *testing.T) {
	s, home := openTest(t)
	if n, err := s.Cursor("gossip/team-a"); err != nil || n != 0 {
		t.Fatalf("fresh cursor = %d, %v", n, err)
	}
	if err := s.SetCursor("gossip/team-a", 2); err != nil {
		t.Fatal(err)
	}
	if err := s.SetCursor("folder", 3); err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s, home)
	if n, _ := s.Cursor("gossip/team-a"); n != 2 {
		t.Fatalf("cursor after reopen = %d", n)
	}
	if n, _ := s.Cursor("folder"); n != 3 {
		t.Fatalf("cursor after reopen = %d", n)
	}
}

func TestMetaSurvivesAReopenAndDeletes(t *testing.T) {
	s, home := openTest(t)
	type peers struct{ Addrs []string }
	if ok, err := s.GetMeta("peers", &peers{}); ok || err != nil {
		t.Fatalf("GetMeta of a missing key: %v %v", ok, err)
	}
	if err := s.SetMeta("peers", peers{Addrs: []string{"/ip4/127.0.0.1/tcp/4001"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetMeta("last-sleep", t0); err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s, home)
	var p peers
	if ok, err := s.GetMeta("peers", &p); !ok || err != nil || len(p.Addrs) != 1 {
		t.Fatalf("GetMeta = %v %v %+v", ok, err, p)
	}
	var last time.Time
	if ok, _ := s.GetMeta("last-sleep", &last); !ok || !last.Equal(t0) {
		t.Fatalf("last-sleep = %v", last)
	}
	if err := s.DeleteMeta("peers"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.GetMeta("peers", &p); ok {
		t.Fatal("deleted meta still there")
	}
}

func TestOutboxSeqsContinueAfterAReopen(t *testing.T) {
	o := newOwnOutbox(t)
	s := reopen(t, o.s, o.home)
	if last, _ := s.AppendOutbox([]*protocol.Record{signConfirm(t, o.me, o.l1.Hash, t0)}); last != 4 {
		t.Fatalf("seq after reopen = %d", last)
	}
	if own, _ := s.OwnRecords(); len(own) != 3 {
		t.Fatalf("OwnRecords after reopen = %d", len(own))
	}
}
