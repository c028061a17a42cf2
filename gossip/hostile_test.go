package gossip

import (
	"bytes"
	"context"
	"testing"

	"github.com/remem/remem/internal/hostile"
	"github.com/remem/remem/protocol"
)

// The gossip validator meets every hostile batch of the transport suite as
// a message its owner signed: one refused line rejects the message.
func TestHostileInputs(t *testing.T) {
	n := newNode(t)
	tm := n.teams["t"]
	hostile.Run(t, hostile.Transport{
		AllOrNothing: true,
		SizeLimit:    protocol.MaxGossipMsg,
		Deliver: func(t *testing.T, owner protocol.Identity, lines [][]byte) hostile.Outcome {
			author, err := PeerIDOf(owner)
			if err != nil {
				t.Fatal(err)
			}
			before := n.Stats()
			v, recs := n.checkMessage(context.Background(), tm, bytes.Join(lines, []byte("\n")), false, author, author)
			after := n.Stats()
			out := hostile.Outcome{Refused: protocol.Tally{}, Skipped: after.Skipped - before.Skipped}
			for r, c := range after.Rejected {
				out.Refused[protocol.Reason(r)] = c - before.Rejected[r]
			}
			if v == vAccept {
				out.Taken = len(recs)
			}
			return out
		},
	})
}
