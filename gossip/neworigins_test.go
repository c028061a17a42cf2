package gossip

import (
	"context"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/remem/remem/internal/testutil"
	"github.com/remem/remem/protocol"
)

// strangersHolder is a memHolder that admits nobody: every origin it holds
// no record of is a new stranger.
type strangersHolder struct{ *memHolder }

func (h strangersHolder) NewStranger(origin string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, recs := range h.scopes {
		for k := range recs {
			if k.Origin == origin {
				return false
			}
		}
	}
	return true
}

// One forwarding peer's messages bring at most NewOriginsPerPeer new
// strangers a minute; past it they are ignored (not relayed, no penalty),
// while the same peer's messages of origins already held, another peer's,
// and the next minute's pass.
func TestNewOriginsPerPeer(t *testing.T) {
	clk := testutil.NewClock(time.Now())
	var holder strangersHolder
	n := newNodeWith(t, func(h *memHolder) Holder { holder = strangersHolder{h}; return holder }, func(c *Config) {
		c.Params.NewOriginsPerPeer = 3
		c.Now = clk.Now
	})
	tm := n.teams["t"]
	forwarder, other := peer.ID("forwarder"), peer.ID("other")
	check := func(from peer.ID) (verdict, protocol.Identity) {
		t.Helper()
		id, err := protocol.GenerateIdentity()
		if err != nil {
			t.Fatal(err)
		}
		author, err := PeerIDOf(id)
		if err != nil {
			t.Fatal(err)
		}
		v, _ := n.checkMessage(context.Background(), tm, lesson(t, id, 1).Raw, false, author, from)
		return v, id
	}
	var first protocol.Identity
	for i := range 3 {
		v, id := check(forwarder)
		if v != vAccept {
			t.Fatalf("new stranger %d from one peer: %v, want accept", i+1, v)
		}
		if i == 0 {
			first = id
		}
	}
	before := n.Stats().Rejected[ReasonNewOrigins]
	if v, _ := check(forwarder); v != vIgnore {
		t.Fatalf("the 4th new stranger from one peer in a minute: %v, want ignore", v)
	}
	if got := n.Stats().Rejected[ReasonNewOrigins] - before; got != 1 {
		t.Errorf("%q counted %d times, want 1", ReasonNewOrigins, got)
	}
	// An origin held is not new.
	holder.put(tm.scope, lesson(t, first, 1))
	author, _ := PeerIDOf(first)
	if v, _ := n.checkMessage(context.Background(), tm, lesson(t, first, 2).Raw, false, author, forwarder); v != vAccept {
		t.Errorf("a held origin's new record from the capped peer: %v, want accept", v)
	}
	if v, _ := check(other); v != vAccept {
		t.Errorf("a new stranger from another peer: %v, want accept", v)
	}
	clk.Add(newOriginWindow)
	if v, _ := check(forwarder); v != vAccept {
		t.Errorf("a new stranger from the capped peer a minute later: %v, want accept", v)
	}
}
