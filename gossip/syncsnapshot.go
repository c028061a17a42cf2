package gossip

import (
	"bytes"
	"fmt"
	"slices"
	"sync"

	"github.com/remem/remem/protocol"
)

// snapshot is what this node holds in one team scope, as sync sees it:
// every held line by id, the ids of each origin and their summaries. A
// snapshot is never modified once built, so sessions share it.
type snapshot struct {
	lines   map[recID][]byte
	byOrig  map[originID][]recID // sorted ids
	origins []originID           // sorted
	sums    map[originID]originSummary
	whole   [idLen]byte // digest of every origin's summary: equal wholes, equal sets
	buckets bucketDigests
}

// summary is what a summary says of o (a count of 0 when o is not held).
func (s *snapshot) summary(o originID) originSummary {
	if sum, ok := s.sums[o]; ok {
		return sum
	}
	return summaryOf(nil)
}

// summaryMsg is the SUMMARY of this snapshot for team: the whole digest
// alone, or full with the first maxOrigins origins.
func (s *snapshot) summaryMsg(team string, full bool) summaryMsg {
	if full {
		return s.summaryWithin(team, allBuckets())
	}
	return summaryMsg{team: team, whole: s.whole}
}

// summaryWithin is the full SUMMARY of the origins in the buckets of within.
func (s *snapshot) summaryWithin(team string, within bucketSet) summaryMsg {
	m := summaryMsg{team: team, full: true, whole: s.whole}
	for _, e := range s.entries() {
		if within.hasOrigin(e.origin) {
			m.entries = append(m.entries, e)
		}
	}
	return m
}

// bucketsMsg is the SUMMARY of this snapshot's bucket digests.
func (s *snapshot) bucketsMsg(team string) summaryMsg {
	return summaryMsg{team: team, whole: s.whole, buckets: &s.buckets}
}

// entries are the summary entries a full summary lists, and the whole
// digest covers: the first maxOrigins origins.
func (s *snapshot) entries() []summaryEntry {
	origins := s.origins
	if len(origins) > maxOrigins {
		origins = origins[:maxOrigins]
	}
	out := make([]summaryEntry, len(origins))
	for i, o := range origins {
		out[i] = summaryEntry{origin: o, originSummary: s.sums[o]}
	}
	return out
}

// newSnapshot builds the snapshot of held lines. known gives the origins
// of lines parsed before (it may be nil), so a line is decoded once across
// snapshots; origins is the same for the lines of this one. Lines that are
// not records, or come twice, are left out: they are never offered.
func newSnapshot(held [][]byte, known map[recID]originID) (s *snapshot, origins map[recID]originID) {
	s = &snapshot{lines: make(map[recID][]byte, len(held)), byOrig: map[originID][]recID{}}
	origins = make(map[recID]originID, len(held))
	for _, line := range held {
		line = bytes.TrimRight(line, "\r\n")
		id := lineID(line)
		if _, dup := s.lines[id]; dup {
			continue
		}
		o, ok := known[id]
		if !ok {
			rec, err := protocol.Decode(line)
			if err != nil {
				continue // not a record: never offer it
			}
			if o, ok = parseOrigin(rec.Origin); !ok {
				continue
			}
		}
		origins[id] = o
		s.lines[id] = line
		s.byOrig[o] = append(s.byOrig[o], id)
	}
	s.sums = make(map[originID]originSummary, len(s.byOrig))
	for o, ids := range s.byOrig {
		slices.SortFunc(ids, cmpID)
		s.origins = append(s.origins, o)
		s.sums[o] = summaryOf(ids)
	}
	slices.SortFunc(s.origins, cmpOrigin)
	entries := s.entries()
	s.whole = wholeDigest(entries)
	s.buckets = bucketDigestsOf(entries)
	return s, origins
}

// diffAgainst lists the origins where snap and the peer's summary differ,
// with this side's ids for them, within the frame limits.
func diffAgainst(snap *snapshot, theirs []summaryEntry) []diffEntry {
	return diffWithin(snap, theirs, allBuckets())
}

// diffWithin is diffAgainst for the origins in the buckets of within: the
// peer's summary lists those alone.
func diffWithin(snap *snapshot, theirs []summaryEntry, within bucketSet) []diffEntry {
	their := make(map[originID]originSummary, len(theirs))
	var all []originID
	for _, o := range snap.origins {
		if within.hasOrigin(o) {
			all = append(all, o)
		}
	}
	for _, e := range theirs {
		if !within.hasOrigin(e.origin) {
			continue
		}
		their[e.origin] = e.originSummary
		if _, mine := snap.byOrig[e.origin]; !mine {
			all = append(all, e.origin)
		}
	}
	slices.SortFunc(all, cmpOrigin)
	var out []diffEntry
	total := 0
	for _, o := range all {
		ids := snap.byOrig[o]
		if t, ok := their[o]; ok && len(ids) > 0 && t == snap.summary(o) {
			continue
		}
		if len(ids) > maxOriginIDs {
			ids = ids[:maxOriginIDs]
		}
		if total+len(ids) > maxIDs || len(out) == maxOrigins {
			break // the rest next time
		}
		total += len(ids)
		out = append(out, diffEntry{origin: o, ids: ids})
	}
	return out
}

// snapshotCache is one team's last snapshot and the origins of the lines
// it parsed.
type snapshotCache struct {
	originsMu sync.Mutex
	origins   map[recID]originID // origin of each held line, so Held lines are parsed once

	mu      sync.Mutex
	snap    *snapshot // the last snapshot, reused while the holder's version stays
	version uint64
}

// snapshot returns what this node holds in the team's scope. With a
// Versioned holder the snapshot is built once per version: every session
// needs it, and most find nothing changed since the last. This is the one
// cache of what a memory holds for sync: the holder need not keep one.
func (n *Node) snapshot(t *team) (*snapshot, error) {
	vh, versioned := n.holder.(Versioned)
	if !versioned {
		return n.buildSnapshot(t)
	}
	v := vh.HeldVersion()
	c := &t.sync.snaps
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.snap != nil && c.version == v {
		return c.snap, nil
	}
	s, err := n.buildSnapshot(t)
	if err != nil {
		return nil, err
	}
	c.snap, c.version = s, v
	return s, nil
}

func (n *Node) buildSnapshot(t *team) (*snapshot, error) {
	held, err := n.holder.Held(t.scope)
	if err != nil {
		return nil, fmt.Errorf("reading records held in %s: %w", t.scope, err)
	}
	// A cache map is never written once stored, so builds may run at once.
	c := &t.sync.snaps
	c.originsMu.Lock()
	known := c.origins
	c.originsMu.Unlock()
	s, origins := newSnapshot(held, known)
	c.originsMu.Lock()
	c.origins = origins
	c.originsMu.Unlock()
	return s, nil
}
