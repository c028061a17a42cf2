package node

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/remem/remem/internal/atomicfile"
	"github.com/remem/remem/protocol"
	"github.com/remem/remem/store"
)

// lessonLine is one line of lessons.jsonl: the seed's fields and what this
// node adds. Readers ignore unknown fields; writers never drop one (seed
// §1), so the members another tool added to a line are written again
// after these (lessonsFileExtras).
type lessonLine struct {
	ID       string         `json:"id"`
	Text     string         `json:"text"`
	Kind     string         `json:"kind"`
	Seen     int64          `json:"seen"`
	Strength float64        `json:"strength"`
	Updated  string         `json:"updated"`
	Hash     string         `json:"hash,omitempty"`
	State    protocol.State `json:"state,omitempty"`
	Origins  []string       `json:"origins,omitempty"`
}

// lessonLineFields are the members lessonLine writes.
var lessonLineFields = map[string]bool{"id": true, "text": true, "kind": true, "seen": true, "strength": true,
	"updated": true, "hash": true, "state": true, "origins": true}

// isLessonLineField reports whether name is a member lessonLine writes,
// in any case: encoding/json (ParseLayer, and any Go reader) matches
// member names without case (as strings.EqualFold does, "ſ" for "s"
// included) and keeps the last, so "Text" kept after the node's "text"
// would replace the lesson's text for every reader of the file.
func isLessonLineField(name string) bool {
	for f := range lessonLineFields {
		if strings.EqualFold(name, f) {
			return true
		}
	}
	return false
}

// lessonID is the local id of the lesson of hash, for own lessons and
// received ones alike (ResolveHash reads it back).
func lessonID(hash string) string {
	if len(hash) < 8 {
		return "l-" + hash
	}
	return "l-" + hash[:8]
}

// idOf is l's id; lessons received before every lesson got one get theirs.
func idOf(l store.Lesson) string {
	if l.ID != "" {
		return l.ID
	}
	return lessonID(l.Hash)
}

// maxLessonsFileRead bounds how much of lessons.jsonl is read back to keep
// what other tools added; past it, their members are not carried over and
// a warning says so.
const maxLessonsFileRead = 64 << 20

// writeLessonsFile writes $REMEM_HOME/lessons.jsonl atomically: a line per
// active lesson, with the members another tool added to its line kept.
func (m *Memory) writeLessonsFile(_ context.Context) error {
	now := m.Now()
	lessons, err := m.store.Lessons()
	if err != nil {
		return err
	}
	path := filepath.Join(m.cfg.Home, LessonsFile)
	extras, err := lessonsFileExtras(path)
	if err != nil {
		m.log.Warn("lessons.jsonl: members other tools added are not kept in this write", "err", err)
	}
	var buf bytes.Buffer
	for _, l := range lessons {
		v, err := m.view(l, now)
		if err != nil {
			return err
		}
		if !v.State.Active() {
			continue
		}
		line, err := json.Marshal(lessonLine{ID: v.ID, Text: l.Text, Kind: l.Kind, Seen: l.Seen, Strength: v.Strength,
			Updated: protocol.FormatTime(l.Updated), Hash: l.Hash, State: v.State, Origins: v.Origins})
		if err != nil {
			return err
		}
		if more := extras[l.Hash]; len(more) > 0 {
			line = append(line[:len(line)-1], more...)
			line = append(line, '}')
		}
		buf.Write(append(line, '\n'))
	}
	return atomicfile.Write(path, "", buf.Bytes(), 0o644)
}

// lessonsFileExtras reads lessons.jsonl as it is now and returns, by the
// hash of each line, the members it holds that lessonLine does not write,
// each as `,"name":value` in the order found. A line that is not a JSON
// object, or names no hash, is not a line this node wrote: it is left out.
func lessonsFileExtras(path string) (map[string][]byte, error) {
	// Only a regular file is read back: another tool may have put a FIFO
	// there, which an open to read waits on until a writer comes (never:
	// every sleep would stop there), or a device that never ends. The new
	// file replaces it either way.
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%v)", path, info.Mode().Type())
	}
	// O_NONBLOCK: should a FIFO replace the file after the check above,
	// opening it does not wait for a writer.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxLessonsFileRead+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxLessonsFileRead {
		return nil, errors.New("the file is over 64 MiB")
	}
	out := map[string][]byte{}
	for _, line := range protocol.SplitLines(data) {
		hash, more, ok := foreignMembers(line.Bytes)
		if ok && len(more) > 0 {
			out[hash] = more
		}
	}
	return out, nil
}

// foreignMembers walks the top-level members of one JSON object line and
// returns its "hash" and the members lessonLine does not write, as
// `,"name":value` each (the name re-encoded, the value as found).
func foreignMembers(line []byte) (hash string, more []byte, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(line))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return "", nil, false
	}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return "", nil, false
		}
		name, _ := t.(string)
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return "", nil, false
		}
		if seen[name] {
			continue // a duplicate member: the first one stands
		}
		seen[name] = true
		switch {
		case name == "hash":
			if err := json.Unmarshal(value, &hash); err != nil {
				return "", nil, false
			}
		case !isLessonLineField(name):
			key, _ := json.Marshal(name)
			more = append(more, ',')
			more = append(more, key...)
			more = append(more, ':')
			more = append(more, value...)
		}
	}
	return hash, more, hash != ""
}
