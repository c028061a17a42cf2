package folder

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/remem/remem/internal/atomicfile"
	"github.com/remem/remem/internal/scopes"
	"github.com/remem/remem/protocol"
)

// Deliver receives the verified records of one file. scope is
// "folder:" + the absolute directory. The records are parsed and verified;
// their Raw bytes are owned by the callee (they are not reused).
type Deliver func(scope string, recs []*protocol.Record) error

// Refusal is one line (or, with Line 0, a whole file) that was not taken;
// its Source is the file's base name.
type Refusal = protocol.Refused

// Report says what Read did.
type Report struct {
	Files    int       `json:"files"`    // files of other origins read
	Accepted int       `json:"accepted"` // records verified and handed to Deliver
	Skipped  int       `json:"skipped"`  // lines of an unknown version (not an error)
	Refused  []Refusal `json:"refused"`  // lines refused, in file then line order
	Failed   int       `json:"failed"`   // files that could not be read or delivered; Read returns their errors
}

// ByReason counts the refusals by reason, e.g. for metrics.
func (r Report) ByReason() protocol.Tally { return protocol.TallyOf(r.Refused) }

// tempPrefix names the temp files of an origin. It starts with a dot and
// never ends in ".jsonl", so no reader ever takes a temp file for data.
func tempPrefix(origin string) string { return "." + origin + ".tmp-" }

// staleTemp is the age after which Write removes temp files its origin left
// behind (a writer killed between create and rename).
const staleTemp = 10 * time.Minute

// Write replaces DIR/<origin>.jsonl with lines, one record per line, each
// followed by "\n". The file is written to a temp file in DIR, synced,
// renamed over the old one and the directory synced, so a reader sees the
// old or the new content, never a mix. No other file is touched (except
// this origin's own stale temp files). When the file already holds exactly
// these bytes nothing is written and changed is false.
//
// Write refuses a file that readers would cut: more than
// protocol.MaxOriginRecs lines or more than protocol.MaxOriginFile bytes.
func Write(dir, origin string, lines [][]byte) (changed bool, err error) {
	if !protocol.ValidOrigin(origin) {
		return false, fmt.Errorf("writing folder file: origin %q is not 16 lowercase hex characters", origin)
	}
	if len(lines) > protocol.MaxOriginRecs {
		return false, fmt.Errorf("writing %s: %d records, a folder file holds at most %d", filepath.Join(dir, protocol.OriginFileName(origin)), len(lines), protocol.MaxOriginRecs)
	}
	size := 0
	for i, l := range lines {
		if len(l) == 0 || bytes.IndexByte(l, '\n') >= 0 {
			return false, fmt.Errorf("writing folder file: record %d is empty or holds a newline", i+1)
		}
		size += len(l) + 1
	}
	if size > protocol.MaxOriginFile {
		return false, fmt.Errorf("writing %s: %d bytes, a folder file holds at most %d (publish fewer records)", filepath.Join(dir, protocol.OriginFileName(origin)), size, protocol.MaxOriginFile)
	}
	data := make([]byte, 0, size)
	for _, l := range lines {
		data = append(data, l...)
		data = append(data, '\n')
	}
	path := filepath.Join(dir, protocol.OriginFileName(origin))
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return false, nil
	}
	removeStaleTemps(dir, origin)
	if err := atomicfile.Write(path, tempPrefix(origin), data, 0o644); err != nil {
		return false, fmt.Errorf("writing %s: %w", path, err)
	}
	return true, nil
}

func removeStaleTemps(dir, origin string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	prefix := tempPrefix(origin)
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), prefix) || !e.Type().IsRegular() {
			continue
		}
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > staleTemp {
			_ = os.Remove(filepath.Join(dir, e.Name())) // another writer's cleanup may win; the next write tries again
		}
	}
}

// Scope is the scope name of a folder: scopes.Folder of its absolute path.
func Scope(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("folder %s: %w", dir, err)
	}
	return scopes.Folder(abs), nil
}

// ScopeName is Scope for a name to show or to match: a path that does not
// resolve (the working directory gone) is named as given.
func ScopeName(dir string) string {
	if s, err := Scope(dir); err == nil {
		return s
	}
	return scopes.Folder(dir)
}

// Read reads every file DIR/<16 lowercase hex>.jsonl except self's, in name
// order, verifies each as one batch bound to its origin
// (protocol.VerifyBatch), and calls deliver once per file that has accepted
// records. Other names are ignored. A refused line is reported in the
// Report and the file's good lines are still delivered. A file that cannot
// be read or delivered does not stop the others: Read returns every such
// failure joined (errors.Join) with the report of what it did.
func Read(dir, self string, now time.Time, deliver Deliver) (Report, error) {
	var rep Report
	var errs []error
	scope, err := Scope(dir)
	if err != nil {
		return rep, err
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return rep, fmt.Errorf("reading folder %s: %w", dir, err)
	}
	for _, e := range ents { // ReadDir sorts by name
		origin, ok := protocol.OriginOfFileName(e.Name())
		if !ok || origin == self {
			continue
		}
		rep.Files++
		data, tooLarge, err := readFile(filepath.Join(dir, e.Name()), e.Type())
		if err != nil {
			errs = append(errs, err)
			rep.Failed++
			continue
		}
		if tooLarge {
			rep.Refused = append(rep.Refused, Refusal{Source: e.Name(), Reason: protocol.ReasonFileTooLarge,
				Detail: fmt.Sprintf("%s: the file is over %d bytes; only the complete lines within that limit are read", protocol.ReasonFileTooLarge, protocol.MaxOriginFile)})
		}
		recs := verifyFile(e.Name(), origin, data, now, &rep)
		if len(recs) == 0 {
			continue
		}
		if err := deliver(scope, recs); err != nil {
			errs = append(errs, fmt.Errorf("delivering %s: %w", e.Name(), err))
			rep.Failed++
			continue
		}
		rep.Accepted += len(recs)
	}
	return rep, errors.Join(errs...)
}

// readFile reads at most protocol.MaxOriginFile bytes of a regular file.
// When the file is larger, the bytes after the last newline within the
// limit are dropped and tooLarge is true.
func readFile(path string, typ fs.FileMode) (data []byte, tooLarge bool, err error) {
	if !typ.IsRegular() {
		// A symlink, FIFO or device under a record name is not a record
		// file; opening a FIFO would block.
		return nil, false, fmt.Errorf("reading %s: not a regular file (%v)", path, typ)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, false, fmt.Errorf("reading %s: %w", path, err)
	}
	defer func() { _ = f.Close() }() // read only
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		return nil, false, fmt.Errorf("reading %s: not a regular file", path)
	}
	data, err = io.ReadAll(io.LimitReader(f, protocol.MaxOriginFile+1))
	if err != nil {
		return nil, false, fmt.Errorf("reading %s: %w", path, err)
	}
	if len(data) > protocol.MaxOriginFile {
		data = data[:protocol.MaxOriginFile]
		if i := bytes.LastIndexByte(data, '\n'); i >= 0 {
			data = data[:i+1]
		} else {
			data = nil
		}
		return data, true, nil
	}
	return data, false, nil
}

// verifyFile verifies the lines of one file of origin and returns the
// accepted records; refusals and skips go to rep.
func verifyFile(name, origin string, data []byte, now time.Time, rep *Report) []*protocol.Record {
	b := protocol.VerifyBatch(protocol.SplitLines(data), protocol.Bound{Source: name, Origin: origin}, now)
	rep.Skipped += len(b.Skipped)
	rep.Refused = append(rep.Refused, b.Refused...)
	for _, rec := range b.Records {
		rec.Raw = slices.Clip(rec.Raw)
	}
	return b.Records
}
