package node

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/remem/remem/internal/atomicfile"
	"github.com/remem/remem/protocol"
)

// RejectsInfo says where the rejected event lines of a home are and how
// many the bound on their files dropped, so none is lost silently (SPEC
// §2): every rejected line is either in Files or counted in Dropped.
type RejectsInfo struct {
	// Files are the rejects files that exist: rejects.jsonl (the newest
	// lines) and rejects.jsonl.1 (the ones before).
	Files []string `json:"files"`
	// Kept counts the lines in Files (status only: it reads them).
	Kept int64 `json:"kept,omitempty"`
	// Dropped counts the oldest lines dropped past the bound, ever, on
	// this home (kept in DroppedFile).
	Dropped int64 `json:"dropped"`
	// LimitBytes is the bound on Files together.
	LimitBytes int64 `json:"limit_bytes"`
	// Error says why Dropped could not be read, if so.
	Error string `json:"error,omitempty"`
}

func (r RejectsInfo) String() string {
	s := "rejected lines kept in " + strings.Join(r.Files, ", ")
	if len(r.Files) == 0 {
		s = "no rejected line kept"
	}
	if r.Dropped > 0 {
		s += fmt.Sprintf("; %d older ones dropped past the %d MiB bound", r.Dropped, r.LimitBytes>>20)
	}
	if r.Error != "" {
		s += "; " + r.Error
	}
	return s
}

// rejectLine is one line of the rejects file. The raw line is cut at
// protocol.MaxEventBytes (no longer line can be an event), noting its
// length, so one enormous line cannot fill the rejects file on its own.
func rejectLine(source string, n int, err error, line []byte) []byte {
	rec := map[string]any{"source": source, "line": n, "reason": err.Error()}
	if len(line) > protocol.MaxEventBytes {
		rec["raw_bytes"] = len(line)
		line = line[:protocol.MaxEventBytes]
	}
	rec["raw"] = string(bytes.ToValidUTF8(line, []byte("\uFFFD")))
	out, _ := json.Marshal(rec)
	return out
}

// keepRejects appends refused event lines to the rejects file, so nothing
// an agent sent is silently lost. The file is rotated when it would pass
// MaxRejectsBytes, so garbage sent for ever (a hostile local process)
// cannot fill the disk; the newest rejects are always in rejects.jsonl, and
// the lines of the older copy a rotation replaces are counted in
// DroppedFile. It returns how many lines this call dropped so.
func (m *Memory) keepRejects(lines [][]byte) (int64, error) {
	if len(lines) == 0 {
		return 0, nil
	}
	path := filepath.Join(m.cfg.Home, RejectsFile)
	f, size, err := lockAppend(path)
	if err != nil {
		return 0, fmt.Errorf("keeping rejected events: %w", err)
	}
	var buf []byte
	var dropped int64
	for _, l := range lines {
		if full := size + int64(len(buf)); full > 0 && full+int64(len(l))+1 > MaxRejectsBytes {
			var n int64
			if f, size, n, err = rotateRejects(f, path, buf); err != nil {
				return dropped, fmt.Errorf("keeping rejected events: %w", err)
			}
			dropped += n
			buf = buf[:0]
		}
		buf = append(append(buf, l...), '\n')
	}
	_, err = f.Write(buf)
	if err = errors.Join(err, f.Sync(), f.Close()); err != nil {
		return dropped, fmt.Errorf("keeping rejected events: %w", err)
	}
	return dropped, nil
}

// rotateRejects finishes the full rejects file f with buf, syncs it and
// renames it to rejects.jsonl.1 while still holding its lock, then opens
// and locks the new rejects file. Appenders waiting on the old file see it
// was renamed and move to the new one. The lines of the rejects.jsonl.1 it
// replaces are added to DroppedFile first, under the same lock (every
// rotation holds the lock of the file then named rejects.jsonl), so a crash
// between the two can count lines that are still there, never lose a count.
func rotateRejects(f *os.File, path string, buf []byte) (_ *os.File, size, dropped int64, _ error) {
	_, err := f.Write(buf)
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		dropped, err = countLines(path + ".1")
	}
	if err == nil && dropped > 0 {
		err = addDropped(filepath.Join(filepath.Dir(path), RejectsDroppedFile), dropped)
	}
	if err == nil {
		err = os.Rename(path, path+".1")
	}
	if err = errors.Join(err, f.Close()); err != nil {
		return nil, 0, 0, fmt.Errorf("rotating %s: %w", path, err)
	}
	f, size, err = lockAppend(path)
	return f, size, dropped, err
}

// countLines counts the lines of path, a last one without '\n' included;
// a missing file has none.
func countLines(path string) (int64, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer func() { _ = f.Close() }() // read only
	var n int64
	buf := make([]byte, 64<<10)
	last := byte('\n')
	for {
		k, err := f.Read(buf)
		if k > 0 {
			n += int64(bytes.Count(buf[:k], []byte{'\n'}))
			last = buf[k-1]
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return n, err
		}
	}
	if last != '\n' {
		n++
	}
	return n, nil
}

// readDropped reads the count of DroppedFile (0 when missing). A file that
// holds anything but a count is an error that names it, never a reset.
func readDropped(path string) (int64, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s does not hold a count of dropped rejected lines (%.40q): write the number it should hold, or 0", path, data)
	}
	return n, nil
}

// addDropped adds n to the count in path, replacing the file atomically.
func addDropped(path string, n int64) error {
	old, err := readDropped(path)
	if err != nil {
		return err
	}
	return atomicfile.Write(path, "", []byte(strconv.FormatInt(old+n, 10)+"\n"), 0o600)
}

// Rejects says where this home's rejected event lines are kept and how
// many were dropped past the bound; count also counts the kept lines.
func (m *Memory) Rejects(count bool) RejectsInfo {
	return rejectsInfo(m.cfg.Home, count)
}

func rejectsInfo(home string, count bool) RejectsInfo {
	info := RejectsInfo{Files: []string{}, LimitBytes: 2 * MaxRejectsBytes}
	for _, name := range []string{RejectsFile, RejectsFile + ".1"} {
		path := filepath.Join(home, name)
		if _, err := os.Stat(path); err != nil {
			continue
		}
		info.Files = append(info.Files, path)
		if count {
			n, err := countLines(path)
			if err != nil && info.Error == "" {
				info.Error = "counting " + path + ": " + err.Error()
			}
			info.Kept += n
		}
	}
	n, err := readDropped(filepath.Join(home, RejectsDroppedFile))
	if err != nil {
		info.Error = err.Error()
	}
	info.Dropped = n
	return info
}
