package store

import (
	"bytes"
	"testing"
	"time"

	"github.com/remem/remem/protocol"
)

func TestOutboxCursorsOwnRecords(t *testing.T) {
	s, home := openTest(t)
	me, peer := ident(t, 1), ident(t, 2)
	text := "The staging database is reset every night"
	l0 := signLesson(t, me, text, 1, t0)
	c := signConfirm(t, me, protocol.LessonHash("error", "go test fails on a cold cache"), t0)
	last, err := s.AppendOutbox([]*protocol.Record{l0, c})
	if err != nil || last != 2 {
		t.Fatalf("AppendOutbox = %d, %v", last, err)
	}
	l1 := signLesson(t, me, text, 2, t0.Add(time.Hour))
	if last, err = s.AppendOutbox([]*protocol.Record{l1}); err != nil || last != 3 {
		t.Fatalf("AppendOutbox = %d, %v", last, err)
	}
	if last, err = s.AppendOutbox(nil); err != nil || last != 3 {
		t.Fatalf("AppendOutbox(nil) = %d, %v", last, err)
	}
	// A peer's record is not own.
	mustPut(t, s, []*protocol.Record{signLesson(t, peer, text, 1, t0)}, "team/a", t0)

	all, err := s.Outbox(0, 0)
	if err != nil || len(all) != 3 {
		t.Fatalf("Outbox = %d, %v", len(all), err)
	}
	for i, want := range []*protocol.Record{l0, c, l1} {
		if all[i].Seq != uint64(i+1) || !bytes.Equal(all[i].Record.Raw, want.Raw) {
			t.Fatalf("entry %d = %d %s", i, all[i].Seq, all[i].Record.Raw)
		}
	}
	if got, _ := s.Outbox(1, 1); len(got) != 1 || got[0].Seq != 2 {
		t.Fatalf("Outbox(1, 1) = %+v", got)
	}
	if got, _ := s.Outbox(3, 10); len(got) != 0 {
		t.Fatalf("Outbox(3) = %+v", got)
	}

	own, err := s.OwnRecords()
	if err != nil || len(own) != 2 {
		t.Fatalf("OwnRecords = %d, %v", len(own), err)
	}
	for _, r := range own {
		if r.Origin != me.Origin() {
			t.Fatalf("OwnRecords has a record of %s", r.Origin)
		}
		if r.Type == protocol.TypeLesson && !bytes.Equal(r.Raw, l1.Raw) {
			t.Fatalf("OwnRecords holds an old version: %s", r.Raw)
		}
	}
	h, _, _ := s.Get(l1.SetKey())
	if len(h.Scopes) != 1 || h.Scopes[0] != ScopeLocal {
		t.Fatalf("own record scopes %v", h.Scopes)
	}

	if n, err := s.Cursor("gossip/team-a"); err != nil || n != 0 {
		t.Fatalf("fresh cursor = %d, %v", n, err)
	}
	if err := s.SetCursor("gossip/team-a", 2); err != nil {
		t.Fatal(err)
	}
	if err := s.SetCursor("folder", 3); err != nil {
		t.Fatal(err)
	}

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

	s.Close()
	s, err = Open(home, Options{Small: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n, _ := s.Cursor("gossip/team-a"); n != 2 {
		t.Fatalf("cursor after reopen = %d", n)
	}
	if n, _ := s.Cursor("folder"); n != 3 {
		t.Fatalf("cursor after reopen = %d", n)
	}
	var p peers
	if ok, err := s.GetMeta("peers", &p); !ok || err != nil || len(p.Addrs) != 1 {
		t.Fatalf("GetMeta = %v %v %+v", ok, err, p)
	}
	var last2 time.Time
	if ok, _ := s.GetMeta("last-sleep", &last2); !ok || !last2.Equal(t0) {
		t.Fatalf("last-sleep = %v", last2)
	}
	if err := s.DeleteMeta("peers"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.GetMeta("peers", &p); ok {
		t.Fatal("deleted meta still there")
	}
	// Seqs continue after a restart.
	if last, _ := s.AppendOutbox([]*protocol.Record{signConfirm(t, me, l1.Hash, t0)}); last != 4 {
		t.Fatalf("seq after reopen = %d", last)
	}
	if own, _ := s.OwnRecords(); len(own) != 3 {
		t.Fatalf("OwnRecords after reopen = %d", len(own))
	}
}
