package commons

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/remem/remem/protocol"
)

// legacyIndexName is the index file of versions before the index keys:
// DataDir/index.json. It is read once, for the `updated` of each file
// (so clients that pulled before do not fetch everything again), and
// left in place; it is no longer written.
const legacyIndexName = "index.json"

// readLegacyIndex returns the entries of DataDir/index.json, or none when
// it is absent or damaged.
func readLegacyIndex(dataDir string) map[string]entry {
	out := map[string]entry{}
	if dataDir == "" {
		return out
	}
	data, err := os.ReadFile(filepath.Join(dataDir, legacyIndexName))
	if err != nil {
		return out
	}
	return parseLegacyIndex(data)
}

// parseLegacyIndex reads an index.json; what does not decode, or names no
// valid origin or time, is left out.
func parseLegacyIndex(data []byte) map[string]entry {
	out := map[string]entry{}
	var idx struct {
		Version int `json:"version"`
		Entries []struct {
			Origin  string    `json:"origin"`
			Updated time.Time `json:"updated"`
			ETag    string    `json:"etag"`
		} `json:"entries"`
	}
	if json.Unmarshal(data, &idx) != nil || idx.Version != 1 {
		return out
	}
	for _, e := range idx.Entries {
		if protocol.ValidOrigin(e.Origin) && !e.Updated.IsZero() {
			out[e.Origin] = entry{Origin: e.Origin, Updated: e.Updated.UTC(), ETag: e.ETag}
		}
	}
	return out
}

// reconcile makes a directory's index name its files: a file whose
// content the index does not name (changed while the server was down,
// stored just before a crash, or of a data directory from before the
// index keys) is indexed, with the `updated` of the legacy index.json
// when that names the same content, else a fresh one later than any a
// client may have seen; an index key without its file goes. It reads
// every file once per start.
func (st *storage) reconcile(ctx context.Context, legacyDir string) error {
	legacy := readLegacyIndex(legacyDir)
	for _, e := range legacy {
		if e.Updated.After(st.last) {
			st.last = e.Updated
		}
	}
	have := map[string]bool{}
	var fresh []entry
	err := st.b.List(ctx, fileDir, "", func(key, _ string) error {
		origin, ok := protocol.OriginOfFileName(strings.TrimPrefix(key, fileDir))
		if !ok {
			return nil
		}
		data, _, err := st.b.Get(ctx, key)
		if errors.Is(err, ErrNotExist) || errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		have[origin] = true
		st.sizes[origin] = int64(len(data))
		st.bytes += int64(len(data))
		e := entry{Origin: origin, Records: countRecords(data), ETag: etagOf(data)}
		if cur, ok := st.entries[origin]; ok && cur.ETag == e.ETag {
			return nil
		}
		if l, ok := legacy[origin]; ok && l.ETag == e.ETag {
			e.Updated = l.Updated
			st.index(ctx, e)
			return nil
		}
		fresh = append(fresh, e)
		return nil
	})
	if err != nil {
		return fmt.Errorf("reading the files of %s: %w", st.b, err)
	}
	// Content the index did not know gets a fresh stamp, later than any
	// stamp a client may have seen, so `?since=` lists it.
	for _, e := range fresh {
		e.Updated = st.stamp(e.Origin)
		st.index(ctx, e)
	}
	for origin, e := range st.entries {
		if !have[origin] {
			delete(st.entries, origin)
			st.dropKey(ctx, indexKey(e))
		}
	}
	if n := len(fresh); n > 0 {
		st.log.Info("commons index: files indexed anew", "files", len(st.entries), "recomputed", n)
	}
	return nil
}

// index puts e in memory and writes its key, at a directory's start.
func (st *storage) index(ctx context.Context, e entry) {
	key := indexKey(e)
	_ = st.writeKey(ctx, key, st.apply(e, key)) // writeKey logs its own failure
}
