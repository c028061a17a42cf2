package node

import (
	"context"
	"testing"

	"github.com/remem/remem/internal/hostile"
	"github.com/remem/remem/internal/testutil"
	"github.com/remem/remem/protocol"
)

// Receive, the path of imports and of every transport that hands lines to
// the memory, meets every hostile batch of the transport suite.
func TestHostileInputs(t *testing.T) {
	m, _ := openTest(t, nil)
	hostile.Run(t, hostile.Transport{
		Unbound: true, // an import takes another memory's export whole
		Deliver: func(t *testing.T, owner protocol.Identity, lines [][]byte) hostile.Outcome {
			rep, err := m.Receive(context.Background(), "import:hostile", protocol.SplitLines(testutil.JoinLines(lines...)))
			if err != nil {
				t.Fatal(err)
			}
			return hostile.Outcome{Taken: rep.Accepted + rep.Duplicate, Refused: rep.ByReason, Skipped: rep.Skipped}
		},
	})
}
