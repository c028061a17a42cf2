package gossip

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/remem/remem/protocol"
)

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
