package node

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io/fs"
	"path/filepath"
	"testing"
	"time"

	"github.com/remem/remem/gossip"
	"github.com/remem/remem/internal/scopes"
	"github.com/remem/remem/internal/testutil"
	"github.com/remem/remem/protocol"
)

// The cap covers revocations too (SPEC §10, §12): a fresh key that sends
// 5,000 revocations of hashes this memory never held gets at most
// MaxOriginRecs records held, the rest refused as too many records; a
// revocation of a hash the memory holds a record of still comes in past
// the cap, since only it changes anything: an origin revoking its own
// lesson, a confirmer revoking (by quorum) the lesson it confirmed.
func TestCapCoversRevocationsOfHashesNeverHeld(t *testing.T) {
	clk := newClock()
	m, _ := openTest(t, clk)
	ctx := context.Background()
	const scope = "team:x"
	at := clk.Now().Add(-time.Hour)
	ids := make([]protocol.Identity, 3)
	for i := range ids {
		id, err := protocol.GenerateIdentity()
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = id
	}
	author, flood, confirmer := ids[0], ids[1], ids[2]
	lesson := func(id protocol.Identity, text string) *protocol.Record {
		rec, err := protocol.SignLesson(id, protocol.LessonDraft{Kind: protocol.KindError, Text: text, Seen: 1, Strength: 0.6, Updated: at})
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}
	receive := func(recs ...*protocol.Record) ReceiveReport {
		t.Helper()
		var lines [][]byte
		for _, r := range recs {
			lines = append(lines, r.Raw)
		}
		rep, err := m.Receive(ctx, scope, protocol.SplitLines(testutil.JoinLines(lines...)))
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Refused) > 0 {
			t.Fatalf("refused %+v", rep.Refused)
		}
		return rep
	}
	revoke := func(id protocol.Identity, hash string) *protocol.Record {
		rev, err := protocol.SignRevocation(id, hash, clk.Now(), "")
		if err != nil {
			t.Fatal(err)
		}
		return rev
	}
	// randomRevocations signs n revocations of hashes nobody published.
	randomRevocations := func(id protocol.Identity, n int) []*protocol.Record {
		out := make([]*protocol.Record, n)
		for i := range out {
			var b [16]byte
			rand.Read(b[:])
			out[i] = revoke(id, hex.EncodeToString(b[:]))
		}
		return out
	}
	held := func(origin string) (recs, bytes int) {
		t.Helper()
		in, err := m.store.InScope(scope)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range in {
			if h.Record.Origin == origin {
				recs++
				bytes += len(h.Record.Raw)
			}
		}
		return recs, bytes
	}

	authored := lesson(author, "The mirror build fails after midnight when the cache is cold.")
	own := lesson(flood, "The staging deploy needs the VPN before the smoke tests run.")
	confirm, err := protocol.SignConfirmation(confirmer, authored.Hash, at)
	if err != nil {
		t.Fatal(err)
	}
	receive(authored, own, confirm)

	// Five gossip-sized batches of revocations of hashes never held.
	const flooded = 5000
	revs := randomRevocations(flood, flooded)
	over := 0
	for i := 0; i < flooded; i += protocol.MaxOriginRecs {
		over += receive(revs[i : i+protocol.MaxOriginRecs]...).OverCap
	}
	n, size := held(flood.Origin())
	t.Logf("flood of %d revocations of hashes never held: %d records (%d bytes of lines) of the key held", flooded, n, size)
	if n > protocol.MaxOriginRecs {
		t.Fatalf("%d records of one key held in %s, want at most %d", n, scope, protocol.MaxOriginRecs)
	}
	if want := flooded + 1 - protocol.MaxOriginRecs; over != want {
		t.Errorf("%d revocations left out as over the cap, want %d", over, want)
	}
	if _, refused := m.Stats(); refused[protocol.ReasonTooManyRecords] != over {
		t.Errorf("%d refusals counted as %s, want %d", refused[protocol.ReasonTooManyRecords], protocol.ReasonTooManyRecords, over)
	}
	if m.Room(scope, flood.Origin()) != 0 {
		t.Errorf("room left: %d", m.Room(scope, flood.Origin()))
	}

	// Past the cap the key still revokes its own lesson, and a hash it did
	// not publish but the memory holds; one more random hash is left out.
	rep := receive(revoke(flood, own.Hash), revoke(flood, authored.Hash), randomRevocations(flood, 1)[0])
	if rep.Accepted != 2 || rep.OverCap != 1 {
		t.Fatalf("revocations of held hashes past the cap: %+v, want 2 accepted and 1 over the cap", rep)
	}
	if _, ok, err := m.store.Get(protocol.RecordKey{Type: protocol.TypeRevocation, Origin: flood.Origin(), Hash: own.Hash}); err != nil || !ok {
		t.Fatalf("own revocation past the cap not held (%v)", err)
	}

	// A confirmer past the cap still revokes the lesson it confirmed.
	revs = randomRevocations(confirmer, 2*protocol.MaxOriginRecs)
	receive(revs[:protocol.MaxOriginRecs]...)
	receive(revs[protocol.MaxOriginRecs:]...)
	if n, _ := held(confirmer.Origin()); n > protocol.MaxOriginRecs {
		t.Fatalf("%d records of the confirmer held", n)
	}
	rep = receive(revoke(confirmer, authored.Hash))
	if rep.Accepted != 1 || rep.OverCap != 0 {
		t.Fatalf("the confirmer's revocation of its lesson past the cap: %+v", rep)
	}
	// A batch that brings, at the edge of the cap, a lesson and its
	// revocation keeps both: the lesson makes the hash held.
	late := lesson(author, "The release tag push fails before the changelog commit lands.")
	receive(randomRevocations(author, protocol.MaxOriginRecs-2)...)
	rep = receive(revoke(author, late.Hash), late)
	if rep.Accepted != 2 || rep.OverCap != 0 {
		t.Fatalf("a lesson and its revocation at the edge of the cap: %+v, want both accepted", rep)
	}
	// Closed, Badger's files hold what it keeps.
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("home after %d revocations of hashes never held from 3 keys: %d bytes", flooded+3*protocol.MaxOriginRecs-1, dirBytes(t, m.Home()))
}

// dirBytes is the size of the files under dir.
func dirBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var total int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		total += info.Size()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return total
}

// nothingHeld is the Holder of a gossip node that only floods.
type nothingHeld struct{ gossip.NoLimits }

func (nothingHeld) Deliver(context.Context, gossip.Delivery) error { return nil }
func (nothingHeld) Held(string) ([][]byte, error)                  { return nil, nil }
func (nothingHeld) Known(*protocol.Record) bool                    { return false }
func (nothingHeld) HeldLines(_ string, keys []protocol.RecordKey) ([][]byte, error) {
	return make([][]byte, len(keys)), nil
}

// The same flood over gossip, between real libp2p hosts on loopback: a
// fresh key publishes five messages of 1,000 revocations of hashes never
// held; the daemon keeps at most the cap of them.
func TestGossipFloodOfRevocationsIsCapped(t *testing.T) {
	victim := startDaemon(t, t.TempDir(), nil)
	defer victim.stop(t)
	flood, err := protocol.GenerateIdentity()
	if err != nil {
		t.Fatal(err)
	}
	g, err := gossip.New(gossip.Config{Identity: flood, Teams: []string{"t"}, Listen: []string{"/ip4/127.0.0.1/tcp/0"},
		Bootstrap: []string{victim.addr()}, Params: gossip.TestnetParams()}, nothingHeld{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx) }()
	defer func() {
		cancel()
		g.Close()
		<-done
	}()
	vid := victim.d.Gossip().PeerID()
	testutil.Eventually(t, 30*time.Second, "the daemon subscribed, seen by the flooder", func() bool {
		for _, p := range g.Peers() {
			if p.ID == vid && len(p.Topics) > 0 {
				return true
			}
		}
		return false
	})
	const msgs = 5
	for range msgs {
		lines := make([][]byte, protocol.MaxOriginRecs)
		for i := range lines {
			var b [16]byte
			rand.Read(b[:])
			rev, err := protocol.SignRevocation(flood, hex.EncodeToString(b[:]), time.Now(), "")
			if err != nil {
				t.Fatal(err)
			}
			lines[i] = rev.Raw
		}
		if err := g.Publish(ctx, "t", lines); err != nil {
			t.Fatal(err)
		}
	}
	m := victim.d.Memory()
	scope := scopes.Team("t")
	held := func() int {
		in, err := m.store.InScope(scope)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, h := range in {
			if h.Record.Origin == flood.Origin() {
				n++
			}
		}
		return n
	}
	// Every message judged, and every record of the accepted ones handed
	// to the memory (held, or left out as over the cap).
	testutil.Eventually(t, 60*time.Second, "the flood judged and delivered", func() bool {
		s := victim.d.Gossip().Stats()
		_, refused := m.Stats()
		return s.Received+s.Ignored >= msgs && held()+refused[protocol.ReasonTooManyRecords] >= s.Received*protocol.MaxOriginRecs
	})
	s := victim.d.Gossip().Stats()
	n := held()
	t.Logf("gossip flood of %d revocations: %d held; messages accepted %d, ignored %d", msgs*protocol.MaxOriginRecs, n, s.Received, s.Ignored)
	if n > protocol.MaxOriginRecs {
		t.Fatalf("%d records of one key held, want at most %d", n, protocol.MaxOriginRecs)
	}
}
