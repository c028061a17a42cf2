package gossip

import (
	"context"
	"encoding/binary"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/remem/remem/protocol"
)

// groundPair starts a and b, connected and syncing only when asked. Both
// hold a lesson of each of maxOrigins origins that sort before an honest
// one (the keys an attacker would grind to sort first), and a holds the
// honest origin's lesson too; b, back online, lacks it.
func groundPair(t *testing.T) (a, b *tnode, honest *protocol.Record) {
	t.Helper()
	ids := make([]protocol.Identity, maxOrigins+1)
	for i := range ids {
		var seed [32]byte
		binary.BigEndian.PutUint64(seed[:], uint64(i)+1)
		id, err := protocol.NewIdentity(seed[:])
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = id
	}
	slices.SortFunc(ids, func(x, y protocol.Identity) int { return strings.Compare(x.Origin(), y.Origin()) })
	ground := make([]*protocol.Record, maxOrigins)
	for i := range ground {
		ground[i] = lesson(t, ids[i], i)
	}
	honest = lesson(t, ids[maxOrigins], 0)
	noAuto := withParams(func(p *Params) { p.SyncInterval, p.SyncOnConnect = 0, false })
	a = startNode(t, noAuto)
	b = startNode(t, noAuto, withBootstrap(a))
	a.holder.add(Scope("t"), append(slices.Clone(ground), honest)...)
	b.holder.add(Scope("t"), ground...)
	eventually(t, 20*time.Second, "a sync partner", func() bool { return b.speaksSync(a.PeerID()) })
	return a, b, honest
}

// TestCatchUpPastGroundOrigins: maxOrigins origins that sort first do not
// hide an honest origin's lesson from a node back online, whichever side
// starts the session, and the session moves a bucket's worth of summary,
// not one entry per origin.
func TestCatchUpPastGroundOrigins(t *testing.T) {
	a, b, honest := groundPair(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := b.syncWith(ctx, b.teams["t"], a.PeerID()); err != nil {
		t.Fatal(err)
	}
	if !b.holder.has(Scope("t"), honest) {
		t.Fatalf("b holds %d records and not the honest lesson", b.holder.count(Scope("t")))
	}
	s := b.Stats()
	t.Logf("the session moved %d bytes (%d in, %d out) of %d held origins", s.SyncBytesIn+s.SyncBytesOut, s.SyncBytesIn, s.SyncBytesOut, maxOrigins+1)
	if moved := s.SyncBytesIn + s.SyncBytesOut; moved > 64<<10 {
		t.Errorf("moved %d bytes for one lacked lesson", moved)
	}

	// The other way: a offers it to a node that lacks it.
	c := startNode(t, withParams(func(p *Params) { p.SyncInterval, p.SyncOnConnect = 0, false }), withBootstrap(a))
	for _, l := range a.holder.scopes[Scope("t")] {
		if l != honest {
			c.holder.add(Scope("t"), l)
		}
	}
	eventually(t, 20*time.Second, "c a sync partner", func() bool { return a.speaksSync(c.PeerID()) })
	if err := a.syncWith(ctx, a.teams["t"], c.PeerID()); err != nil {
		t.Fatal(err)
	}
	if !c.holder.has(Scope("t"), honest) {
		t.Fatalf("c holds %d records and not the honest lesson", c.holder.count(Scope("t")))
	}
}
