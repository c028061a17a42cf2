package commons

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/remem/remem/internal/testutil"
)

// TestPeerListFavoursTheLongLived reruns the flood: 50 fresh
// entries every 10 s kept two new members apart for 80 s because the
// listing was "the freshest 50". Ten members have renewed every 10
// minutes for an hour; then 150 one-shot entries arrive in three
// batches, and a new member registers amid them. The members stay listed
// throughout, first; the new member is listed from its first renewal
// on, above every one-shot entry.
func TestPeerListFavoursTheLongLived(t *testing.T) {
	clock := testutil.NewClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	ts := newTestServer(t, func(c *ServerConfig) { c.Now = clock.Now })
	seq := uint64(0)
	register := func(name string) string {
		t.Helper()
		o, priv := peerKey(t, name)
		seq++
		if code, body := ts.putPeer(t, o, testToken, peerBody(sealPeer(t, priv, seq, "/ip4/192.0.2.1/tcp/4001"), teamA)); code != 200 && code != 201 {
			t.Fatalf("%s: %d %s", name, code, body)
		}
		return o
	}
	var members []string
	for i := range 10 {
		members = append(members, register(fmt.Sprint("member", i)))
	}
	for range 6 { // an hour of renewals every 10 minutes
		clock.Add(10 * time.Minute)
		for i := range 10 {
			register(fmt.Sprint("member", i))
		}
	}
	origins := func() []string {
		var out []string
		for _, e := range ts.listPeers(t, teamA) {
			out = append(out, e.Origin)
		}
		return out
	}
	var newcomer string
	for batch := range 3 {
		for i := range 50 {
			register(fmt.Sprintf("flood%d-%d", batch, i))
		}
		if batch == 1 {
			newcomer = register("newcomer")
		}
		clock.Add(10 * time.Second)
		l := origins()
		if len(l) != PeerListMax {
			t.Fatalf("batch %d: %d listed", batch, len(l))
		}
		if top := slices.Sorted(slices.Values(l[:10])); !slices.Equal(top, slices.Sorted(slices.Values(members))) {
			t.Fatalf("batch %d: the members are not listed first: %v", batch, l[:10])
		}
	}
	clock.Add(10 * time.Minute) // the newcomer's next round
	register("newcomer")
	if l := origins(); l[10] != newcomer {
		t.Errorf("after its renewal the newcomer is listed at %d, want 10 (after the members, before the one-shot entries)", slices.Index(l, newcomer))
	}

	// A member that stops renewing for longer than PeerAliveGap ranks after
	// those that renew, and when it comes back its time alive starts again.
	for _, d := range []time.Duration{PeerAliveGap / 2, PeerAliveGap/2 + time.Second} {
		clock.Add(d)
		for i := 1; i < 10; i++ {
			register(fmt.Sprint("member", i))
		}
		register("newcomer")
	}
	if at := slices.Index(origins(), members[0]); at != -1 && at < 10 {
		t.Errorf("member0, silent for over %v, is listed at %d among the renewed", PeerAliveGap, at)
	}
	register("member0")
	if at := slices.Index(origins(), members[0]); at != 10 {
		t.Errorf("member0 back after a gap is listed at %d, want 10 (alive for no time yet, after the renewed)", at)
	}
}

// TestPeerEntrySince: an entry stored before First was kept, or one whose
// First lies after its Updated (a damaged store), counts as alive since
// its last renewal, never longer.
func TestPeerEntrySince(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, first := range []time.Time{{}, at.Add(time.Hour)} {
		e := &peerEntry{Updated: at, First: first}
		if !e.since().Equal(at) || e.aliveFor() != 0 {
			t.Errorf("first %v: since %v, alive for %v", first, e.since(), e.aliveFor())
		}
	}
	e := &peerEntry{Updated: at, First: at.Add(-time.Hour)}
	if e.aliveFor() != time.Hour {
		t.Errorf("alive for %v", e.aliveFor())
	}
	if renewedFrom(e, at.Add(PeerAliveGap)) != at.Add(PeerAliveGap) || !renewedFrom(e, at.Add(PeerAliveGap-time.Second)).Equal(e.First) || !renewedFrom(nil, at).Equal(at) {
		t.Error("renewedFrom")
	}
}
