package gossip

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/remem/remem/protocol"
)

// FuzzSyncFrames feeds arbitrary bodies to the sync frame decoders: they
// never panic, and what they accept respects the wire format's limits and
// order.
func FuzzSyncFrames(f *testing.F) {
	id, _ := protocol.GenerateIdentity()
	n := newNode(f)
	n.holder.add(Scope("t"), lessons(f, id, 0, 3)...)
	snap, err := n.snapshot(n.teams["t"])
	if err != nil {
		f.Fatal(err)
	}
	f.Add(encodeSummary("t", snap, true))
	f.Add(encodeSummary("t", snap, false))
	f.Add(encodeDiff(diffAgainst(snap, nil)))
	f.Add([]byte{statusNeedFull})
	f.Fuzz(func(t *testing.T, body []byte) {
		if sum, err := decodeSummary(body); err == nil {
			if len(sum.team) > maxTeamLen || len(sum.entries) > maxOrigins || (!sum.full && sum.entries != nil) {
				t.Fatalf("accepted an out-of-limits summary: %+v", sum)
			}
			for i := 1; i < len(sum.entries); i++ {
				if cmpOrigin(sum.entries[i-1].origin, sum.entries[i].origin) >= 0 {
					t.Fatal("accepted origins out of order")
				}
			}
		}
		if status, diff, err := decodeDiff(body); err == nil && status == statusOK {
			total := 0
			for i, e := range diff {
				total += len(e.ids)
				if len(e.ids) > maxOriginIDs || (i > 0 && cmpOrigin(diff[i-1].origin, e.origin) >= 0) {
					t.Fatal("accepted a diff out of limits or order")
				}
			}
			if total > maxIDs || len(diff) > maxOrigins {
				t.Fatal("accepted too many ids")
			}
		}
	})
}

// FuzzValidator runs the gossip validator's decision on arbitrary message
// data: it never panics, and an accepted message hands on only records that
// verify on their own.
func FuzzValidator(f *testing.F) {
	id, _ := protocol.GenerateIdentity()
	n := newNode(f)
	t0 := n.teams["t"]
	f.Add(bytes.Join(raws(lessons(f, id, 0, 3)), []byte("\n")))
	f.Add([]byte("garbage\n{\"v\":2}\n"))
	f.Add([]byte{})
	now := time.Now()
	f.Fuzz(func(t *testing.T, data []byte) {
		v, recs := n.checkMessage(context.Background(), t0, data, false, n.PeerID(), n.PeerID())
		if v != vAccept {
			return
		}
		if len(recs) == 0 {
			t.Fatal("accepted a message with no record")
		}
		for _, r := range recs {
			if _, err := protocol.Verify(r.Raw, now.Add(time.Minute)); err != nil {
				t.Fatalf("accepted a line that does not verify: %v", err)
			}
		}
	})
}
