package folder

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/remem/remem/internal/testutil"
	"github.com/remem/remem/protocol"
)

// FuzzRead puts arbitrary bytes in a record file: Read never panics, and
// whatever it delivers verified and belongs to the file's origin.
func FuzzRead(f *testing.F) {
	id := testutil.Identity(f, "alice")
	rec := lesson(f, id, "the cache server returns stale entries after a deploy", t0, 0.5)
	f.Add(testutil.JoinLines(rec.Raw))
	f.Add(testutil.JoinLines(rec.Raw)[:50])
	f.Add([]byte("\xff\x00\n\r\n{}\n"))
	f.Add(testutil.JoinLines(lesson(f, testutil.Identity(f, "bob"), "the proxy strips the trace header on retries", t0, 0.5).Raw))
	dir := f.TempDir()
	path := filepath.Join(dir, protocol.OriginFileName(id.Origin()))
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		rep, err := Read(dir, "", time.Now(), func(_ string, recs []*protocol.Record) error {
			for _, r := range recs {
				if r.Origin != id.Origin() {
					t.Fatalf("delivered a record of %s", r.Origin)
				}
			}
			return nil
		})
		if err != nil || rep.Files != 1 {
			t.Fatalf("%+v %v", rep, err)
		}
	})
}
