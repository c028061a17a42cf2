package gossip

import (
	"context"
	"testing"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/record"
)

// SignedPeerRecord seals a fresh record of the node's own addresses each
// time, with a strictly increasing Seq, that opens in the peer-record
// domain as this node's.
func TestSignedPeerRecordIsFreshAndIncreasing(t *testing.T) {
	n := newNode(t)
	var last uint64
	for i := range 3 {
		env, err := n.SignedPeerRecord()
		if err != nil {
			t.Fatal(err)
		}
		data, err := env.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		_, r, err := record.ConsumeEnvelope(data, peer.PeerRecordEnvelopeDomain)
		if err != nil {
			t.Fatal(err)
		}
		rec := r.(*peer.PeerRecord)
		if rec.PeerID != n.PeerID() || len(rec.Addrs) == 0 {
			t.Fatalf("record %d names %s with %v", i, rec.PeerID, rec.Addrs)
		}
		if rec.Seq <= last {
			t.Fatalf("record %d has seq %d after %d", i, rec.Seq, last)
		}
		last = rec.Seq
	}
	// Dialing itself is a no-op, not an error.
	if err := n.Connect(context.Background(), peer.AddrInfo{ID: n.PeerID()}); err != nil {
		t.Fatalf("connect to self: %v", err)
	}
}
