package node

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/remem/remem/internal/atomicfile"
	"github.com/remem/remem/node/consolidate"
	"github.com/remem/remem/protocol"
)

// IngestReport says what happened to event lines.
type IngestReport struct {
	Taken      int          `json:"taken"`
	Duplicates int          `json:"duplicates"`
	Rejected   []EventError `json:"rejected,omitempty"`
	// RejectsDropped counts the older rejected lines this ingest pushed
	// past the bound of the rejects files; Rejects, set when a line was
	// rejected, says where the kept ones are and how many were dropped in
	// all, so a caller is told at once that the bound lost something.
	RejectsDropped int64        `json:"rejects_dropped,omitempty"`
	Rejects        *RejectsInfo `json:"rejects,omitempty"`
	// Notes tell the reporting agent, for events taken, which of its
	// "lesson" and "matches" (SPEC §2) the memory will not use as given,
	// and why, so it can word the next one better. The event is taken
	// either way.
	Notes []EventError `json:"notes,omitempty"`
}

// EventError is one event line that was not taken.
type EventError struct {
	Source string `json:"source"`
	Line   int    `json:"line"`
	Reason string `json:"reason"`
}

func (e EventError) String() string { return fmt.Sprintf("%s:%d: %s", e.Source, e.Line, e.Reason) }

// Remember stores events (already validated or not: invalid ones are
// refused with their index as line number), with "at" in UTC. An "at" more
// than protocol.MaxClockSkew ahead of the memory's clock is refused.
func (m *Memory) Remember(evs []protocol.Event) (IngestReport, error) {
	var rep IngestReport
	good := evs[:0:0]
	now := m.Now()
	for i, ev := range evs {
		if err := ev.ValidateAt(now); err != nil {
			rep.Rejected = append(rep.Rejected, EventError{Source: "event", Line: i + 1, Reason: err.Error()})
			continue
		}
		good = append(good, ev.InUTC())
	}
	rep.Notes = m.proposalNotes("event", good, nil)
	added, dups, err := m.store.AddEvents(good, m.Now())
	rep.Taken, rep.Duplicates = added, dups
	m.metrics.ingested(rep)
	return rep, err
}

// proposalNotes reads each event's "lesson" as sleep will and resolves its
// "matches", and says what will not be used as given. lines are the
// events' line numbers (nil: their positions, from 1).
func (m *Memory) proposalNotes(source string, evs []protocol.Event, lines []int) []EventError {
	var notes []EventError
	for i, ev := range evs {
		line := i + 1
		if lines != nil {
			line = lines[i]
		}
		note := func(format string, args ...any) {
			notes = append(notes, EventError{Source: source, Line: line, Reason: fmt.Sprintf(format, args...)})
		}
		if ev.Lesson != "" {
			text, err := consolidate.Proposed(ev.Lesson).Write(context.Background(), consolidate.Cluster{})
			draft := ""
			if err == nil {
				_, draft, err = vetSentence(text, false, consolidate.Cluster{})
			}
			switch {
			case err != nil:
				note("the proposed lesson is not taken (%v); the memory writes its own", err)
			case draft != "":
				note("the proposed lesson would be a draft (%s): kept here, never shared until it is written again", draft)
			}
		}
		if ev.Matches != "" {
			if _, err := m.ResolveHash(ev.Matches); err != nil {
				note("matches: %v; the event is compared by meaning instead", err)
			}
		}
	}
	return notes
}

// Ingest reads JSONL events from r. Bad lines are reported with their number
// and reason and kept in the rejects file; the good ones are taken. As in
// Remember, an "at" too far ahead of the memory's clock makes a line bad.
func (m *Memory) Ingest(source string, r io.Reader) (IngestReport, error) {
	var (
		rep     IngestReport
		evs     []protocol.Event
		lines   []int
		rejects [][]byte
	)
	br := bufio.NewReader(r)
	n := 0
	now := m.Now()
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			n++
			trimmed := bytes.TrimSpace(line)
			if len(trimmed) > 0 {
				ev, derr := protocol.DecodeEvent(trimmed)
				if derr == nil {
					derr = ev.ValidateAt(now)
				}
				if derr != nil {
					rep.Rejected = append(rep.Rejected, EventError{Source: source, Line: n, Reason: derr.Error()})
					rejects = append(rejects, rejectLine(source, n, derr, trimmed))
				} else {
					evs = append(evs, ev)
					lines = append(lines, n)
				}
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return rep, fmt.Errorf("reading events from %s: %w", source, err)
		}
	}
	dropped, err := m.keepRejects(rejects)
	if len(rejects) > 0 {
		info := m.Rejects(false)
		rep.RejectsDropped, rep.Rejects = dropped, &info
	}
	if err != nil {
		return rep, err
	}
	rep.Notes = m.proposalNotes(source, evs, lines)
	added, dups, err := m.store.AddEvents(evs, m.Now())
	rep.Taken, rep.Duplicates = added, dups
	m.metrics.ingested(rep)
	return rep, err
}

// DrainInbox takes every event agents appended to $REMEM_HOME/inbox.jsonl.
// It renames the inbox aside first, so an agent appending meanwhile creates a
// new inbox and no line is lost or read twice; a crash after the rename is
// recovered on the next drain, which reads leftover drained files first.
func (m *Memory) DrainInbox() (IngestReport, error) {
	var total IngestReport
	inbox := filepath.Join(m.cfg.Home, InboxFile)
	leftovers, _ := filepath.Glob(inbox + ".draining-*")
	aside := inbox + ".draining-" + strconv.FormatInt(time.Now().UnixNano(), 10)
	if err := os.Rename(inbox, aside); err == nil {
		leftovers = append(leftovers, aside)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return total, fmt.Errorf("moving the inbox aside: %w", err)
	}
	for _, path := range leftovers {
		f, err := os.Open(path)
		if err != nil {
			return total, fmt.Errorf("reading inbox: %w", err)
		}
		// Wait for a locking writer that still holds the old inode, and give
		// plain `>>` appenders a moment to finish their line.
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			_ = f.Close()
			return total, fmt.Errorf("locking %s: %w", path, err)
		}
		waitQuiet(path)
		rep, err := m.Ingest(InboxFile, f)
		_ = f.Close() // read only: its close says nothing
		total.Taken += rep.Taken
		total.Duplicates += rep.Duplicates
		total.Rejected = append(total.Rejected, rep.Rejected...)
		total.RejectsDropped += rep.RejectsDropped
		if rep.Rejects != nil {
			total.Rejects = rep.Rejects
		}
		if err != nil {
			return total, err
		}
		if err := os.Remove(path); err != nil {
			return total, fmt.Errorf("removing drained inbox: %w", err)
		}
	}
	return total, nil
}

// waitQuiet waits until the file's size stops changing, briefly.
func waitQuiet(path string) {
	last := int64(-1)
	for i := 0; i < 20; i++ {
		info, err := os.Stat(path)
		if err != nil || info.Size() == last {
			return
		}
		last = info.Size()
		time.Sleep(5 * time.Millisecond)
	}
}

// AppendInbox appends events to the inbox as a well-behaved agent does: it
// locks the file, checks it is still the inbox (a drain may have renamed it
// aside), and writes whole lines. DrainInbox takes the same lock on the
// renamed file before reading, so no line is lost or read twice.
func AppendInbox(home string, evs ...protocol.Event) error {
	var buf bytes.Buffer
	for _, ev := range evs {
		line, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		buf.Write(append(line, '\n'))
	}
	f, _, err := lockAppend(filepath.Join(home, InboxFile))
	if err != nil {
		return fmt.Errorf("appending to the inbox: %w", err)
	}
	_, err = f.Write(buf.Bytes())
	return errors.Join(err, f.Close())
}

// AppendInboxWithin is AppendInbox for a caller that must not wait (a
// hook): when another process holds the inbox's lock past wait, the events
// go into a file of their own beside it, written whole and named as a
// drain's leftover, which the next drain takes like any other, so nothing
// is lost to a lock held forever. It says whether they were spilled so.
func AppendInboxWithin(home string, wait time.Duration, evs ...protocol.Event) (spilled bool, err error) {
	var buf bytes.Buffer
	for _, ev := range evs {
		line, err := json.Marshal(ev)
		if err != nil {
			return false, err
		}
		buf.Write(append(line, '\n'))
	}
	inbox := filepath.Join(home, InboxFile)
	f, err := lockAppendWithin(inbox, wait)
	if errors.Is(err, errInboxHeld) {
		spill := fmt.Sprintf("%s.draining-%d-%d", inbox, time.Now().UnixNano(), os.Getpid())
		return true, atomicfile.Write(spill, "", buf.Bytes(), 0o600)
	}
	if err != nil {
		return false, fmt.Errorf("appending to the inbox: %w", err)
	}
	_, err = f.Write(buf.Bytes())
	return false, errors.Join(err, f.Close())
}

var errInboxHeld = errors.New("the inbox's lock is held")

// lockAppendWithin is lockAppend that gives up with errInboxHeld when
// the lock is not free within wait.
func lockAppendWithin(path string, wait time.Duration) (*os.File, error) {
	deadline := time.Now().Add(wait)
	for {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return nil, err
		}
		for {
			err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
			if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if errors.Is(err, syscall.EWOULDBLOCK) {
			_ = f.Close()
			return nil, errInboxHeld
		}
		if err != nil {
			_ = f.Close()
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		if info, err := f.Stat(); err != nil || !sameFile(info, path) {
			_ = f.Close() // renamed aside meanwhile (nothing written): append to the new file
			if err != nil {
				return nil, err
			}
			continue
		}
		return f, nil
	}
}

// lockAppend opens path for appending under an exclusive flock and returns
// its size. After the lock it checks the file is still the one at path (a
// drain or a rotation may have renamed it aside meanwhile) and opens the
// new one if not, so whole lines always land in the current file.
func lockAppend(path string) (*os.File, int64, error) {
	for {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return nil, 0, err
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			_ = f.Close()
			return nil, 0, fmt.Errorf("locking %s: %w", path, err)
		}
		info, err := f.Stat()
		if err != nil {
			_ = f.Close()
			return nil, 0, err
		}
		if !sameFile(info, path) {
			_ = f.Close() // renamed aside meanwhile (nothing written): append to the new file
			continue
		}
		return f, info.Size(), nil
	}
}

func sameFile(a fs.FileInfo, path string) bool {
	b, err := os.Stat(path)
	return err == nil && os.SameFile(a, b)
}

func episodeOf(e protocol.Event) consolidate.Episode {
	return consolidate.Episode{Kind: e.Kind, Title: e.Title, Expected: e.Expected, Happened: e.Happened,
		Said: e.Said, AgentDid: e.AgentDid, Text: e.Text, Lesson: e.Lesson}
}
