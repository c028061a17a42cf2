package folder

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/remem/remem/internal/hostile"
	"github.com/remem/remem/internal/testutil"
	"github.com/remem/remem/protocol"
)

// The folder reader meets every hostile batch of the transport suite as
// the file of its owner.
func TestHostileInputs(t *testing.T) {
	hostile.Run(t, hostile.Transport{
		SizeLimit: protocol.MaxOriginFile,
		Deliver: func(t *testing.T, owner protocol.Identity, lines [][]byte) hostile.Outcome {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, protocol.OriginFileName(owner.Origin())), testutil.JoinLines(lines...), 0o600); err != nil {
				t.Fatal(err)
			}
			taken := 0
			rep, err := Read(dir, "", time.Now(), func(_ string, recs []*protocol.Record) error {
				taken += len(recs)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			return hostile.Outcome{Taken: taken, Refused: rep.ByReason(), Skipped: rep.Skipped}
		},
	})
}
