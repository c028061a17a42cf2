package node

import (
	"context"

	"github.com/remem/remem/protocol"
)

// Import verifies record lines a person hands in (remem import, the API's
// import) and merges the good ones by scope, as Receive does. The scope
// "local" holds this memory's own records and is exported as its file: a
// record of another origin imported there would go out under this
// memory's name and be refused by every reader, so Receive refuses such
// lines there; own records (a backup being restored) are taken.
func (m *Memory) Import(ctx context.Context, scope string, data []byte) (ReceiveReport, error) {
	return m.Receive(ctx, scope, protocol.SplitLines(data))
}
