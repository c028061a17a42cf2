package gossip

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"slices"
	"sync"

	"github.com/remem/remem/protocol"
)

// snapshot is what this node holds in one team scope, as sync sees it:
// the id and set key of every held line, the ids of each origin and their
// summaries. It keeps no line: what a session sends is read from the
// holder by key (heldLines), so a snapshot costs about a tenth of the
// lines it stands for. A snapshot is never modified once built, so
// sessions share it.
type snapshot struct {
	keys    map[recID]heldKey
	byOrig  map[originID][]recID // sorted ids
	origins []originID           // sorted
	sums    map[originID]originSummary
	whole   [idLen]byte // digest of every origin's summary: equal wholes, equal sets
	buckets bucketDigests
}

// heldKey is a held record's set key as a snapshot keeps it, its hex
// decoded: 25 bytes and nothing to allocate, where a protocol.RecordKey
// with its strings costs about 100.
type heldKey struct {
	typ    protocol.Type
	origin originID
	hash   [16]byte
}

// keyOf is k as a snapshot keeps it; false when its origin or hash is not
// the lowercase hex of 8 and 16 bytes that every verified record has.
func keyOf(k protocol.RecordKey) (heldKey, bool) {
	o, ok := parseOrigin(k.Origin)
	hk := heldKey{typ: k.Type, origin: o}
	if !ok || o.String() != k.Origin || len(k.Hash) != 2*len(hk.hash) {
		return heldKey{}, false
	}
	if _, err := hex.Decode(hk.hash[:], []byte(k.Hash)); err != nil || hex.EncodeToString(hk.hash[:]) != k.Hash {
		return heldKey{}, false
	}
	return hk, true
}

// recordKey is the set key the holder knows.
func (k heldKey) recordKey() protocol.RecordKey {
	return protocol.RecordKey{Type: k.typ, Origin: k.origin.String(), Hash: hex.EncodeToString(k.hash[:])}
}

// has reports whether the snapshot holds the line of id.
func (s *snapshot) has(id recID) bool {
	_, ok := s.keys[id]
	return ok
}

// summary is what a summary says of o (a count of 0 when o is not held).
func (s *snapshot) summary(o originID) originSummary {
	if sum, ok := s.sums[o]; ok {
		return sum
	}
	return summaryOf(nil)
}

// summaryMsg is the SUMMARY of this snapshot for team: the whole digest
// alone, or full with every origin (the first window of them, when there
// are more than maxOrigins).
func (s *snapshot) summaryMsg(team string, full bool) summaryMsg {
	if full {
		return s.summaryWithin(team, allBuckets())
	}
	return summaryMsg{team: team, whole: s.whole}
}

// summaryWithin is the full SUMMARY of the origins in the buckets of
// within (their first window, when there are more than maxOrigins).
func (s *snapshot) summaryWithin(team string, within bucketSet) summaryMsg {
	m, _ := s.summaryFrom(team, within, originID{})
	return m
}

// summaryFrom is the full SUMMARY of the origins in the buckets of within.
// When they are more than one frame takes, it lists the window of
// maxOrigins of them from the first at or after from (from the first
// origin, when none is), and says the range of origins it covers; next
// is where the window after it starts. The windows of successive calls
// tile every origin, so none is left out for good, whatever sorts first.
func (s *snapshot) summaryFrom(team string, within bucketSet, from originID) (m summaryMsg, next originID) {
	m = summaryMsg{team: team, full: true, whole: s.whole}
	for _, e := range s.entries() {
		if within.hasOrigin(e.origin) {
			m.entries = append(m.entries, e)
		}
	}
	if len(m.entries) <= maxOrigins {
		return m, originID{}
	}
	start, _ := slices.BinarySearchFunc(m.entries, from, func(e summaryEntry, o originID) int { return cmpOrigin(e.origin, o) })
	m.ranged, m.lo, m.hi = true, from, lastOrigin
	if start == len(m.entries) {
		start, m.lo = 0, originID{}
	}
	if start == 0 {
		m.lo = originID{}
	}
	end := min(start+maxOrigins, len(m.entries))
	if end < len(m.entries) {
		m.hi = m.entries[end-1].origin
		next = successor(m.hi)
	}
	m.entries = m.entries[start:end]
	return m, next
}

// bucketsMsg is the SUMMARY of this snapshot's bucket digests.
func (s *snapshot) bucketsMsg(team string) summaryMsg {
	return summaryMsg{team: team, whole: s.whole, buckets: &s.buckets}
}

// entries are the summary entries of every origin held, as the whole and
// bucket digests cover them.
func (s *snapshot) entries() []summaryEntry {
	out := make([]summaryEntry, len(s.origins))
	for i, o := range s.origins {
		out[i] = summaryEntry{origin: o, originSummary: s.sums[o]}
	}
	return out
}

// newSnapshot builds the snapshot of held lines. known gives the set keys
// of lines parsed before (it may be nil), so a line is decoded once across
// snapshots; the snapshot's own keys serve the next build the same way.
// Lines that are not records, or come twice, are left out: they are never
// offered.
func newSnapshot(held [][]byte, known map[recID]heldKey) *snapshot {
	s := &snapshot{keys: make(map[recID]heldKey, len(held)), byOrig: map[originID][]recID{}}
	for _, line := range held {
		line = bytes.TrimRight(line, "\r\n")
		id := lineID(line)
		if _, dup := s.keys[id]; dup {
			continue
		}
		k, ok := known[id]
		if !ok {
			rec, err := protocol.Decode(line)
			if err != nil {
				continue // not a record: never offer it
			}
			if k, ok = keyOf(rec.SetKey()); !ok {
				continue
			}
		}
		s.keys[id] = k
		s.byOrig[k.origin] = append(s.byOrig[k.origin], id)
	}
	s.summarize()
	return s
}

// summarize sorts each origin's ids and computes, from byOrig, the
// origins in order, their summaries and the whole and bucket digests.
func (s *snapshot) summarize() {
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
}

// diffAgainst lists the origins where snap and the peer's summary differ,
// with this side's ids for them, within the frame limits.
func diffAgainst(snap *snapshot, theirs []summaryEntry) []diffEntry {
	return diffWithin(snap, theirs, everything(), nil)
}

// diffWithin is diffAgainst for the origins within sp: the peer's summary
// lists those alone. When they are more than a DIFF takes, the origins
// first says yes to (the admitted ones; first may be nil) are listed
// before the others, so strangers that differ do not crowd them out.
func diffWithin(snap *snapshot, theirs []summaryEntry, sp span, first func(originID) bool) []diffEntry {
	their := make(map[originID]originSummary, len(theirs))
	var all []originID
	for _, o := range snap.origins {
		if sp.has(o) {
			all = append(all, o)
		}
	}
	for _, e := range theirs {
		if !sp.has(e.origin) {
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
	for _, o := range firstOnes(all, first) {
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
	slices.SortFunc(out, func(a, b diffEntry) int { return cmpOrigin(a.origin, b.origin) })
	return out
}

// firstOnes orders the elements first says yes to before the others, each
// in their order (all of them as they are, when first is nil).
func firstOnes[T any](xs []T, first func(T) bool) []T {
	if first == nil {
		return xs
	}
	var yes, no []T
	for _, o := range xs {
		if first(o) {
			yes = append(yes, o)
		} else {
			no = append(no, o)
		}
	}
	return append(yes, no...)
}

// snapshotCache is one team's last snapshot and the set keys of the lines
// it parsed.
type snapshotCache struct {
	knownMu sync.Mutex
	known   map[recID]heldKey // the last build's keys, so Held lines are parsed once

	mu      sync.Mutex
	snap    *snapshot // the last snapshot, reused while the holder's version stays
	version uint64
}

// snapshot returns what this node holds in the team's scope. With a
// holder that keeps a version the snapshot is built once per version:
// every session needs it, and most find nothing changed since the last.
// This is the one cache of what a memory holds for sync: the holder need
// not keep one.
func (n *Node) snapshot(t *team) (*snapshot, error) {
	v, versioned := n.holder.HeldVersion()
	if !versioned {
		return n.buildSnapshot(t)
	}
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
	// A snapshot's keys are never written once built, so builds may run at
	// once.
	c := &t.sync.snaps
	c.knownMu.Lock()
	known := c.known
	c.knownMu.Unlock()
	s := newSnapshot(held, known)
	c.knownMu.Lock()
	c.known = s.keys
	c.knownMu.Unlock()
	return s, nil
}

// readBatch is how many lines a session reads from the holder at once, so
// it holds at most that many of the lines it sends (2 MiB at 8 KiB each).
const readBatch = 256

// heldLines reads from the holder the lines of the ids snap holds, in
// batches of readBatch, and hands each to each until it says no more or
// fails. A line that changed since the snapshot (a newer version, or gone)
// is left out: only lines the snapshot saw in scope are ever sent.
func (n *Node) heldLines(scope string, snap *snapshot, ids []recID, each func(line []byte) (more bool, err error)) error {
	asked := make([]recID, 0, min(readBatch, len(ids)))
	keys := make([]protocol.RecordKey, 0, cap(asked))
	for len(ids) > 0 {
		asked, keys = asked[:0], keys[:0]
		for len(ids) > 0 && len(asked) < readBatch {
			if k, ok := snap.keys[ids[0]]; ok {
				asked, keys = append(asked, ids[0]), append(keys, k.recordKey())
			}
			ids = ids[1:]
		}
		lines, err := n.holder.HeldLines(scope, keys)
		if err != nil {
			return fmt.Errorf("reading records held in %s: %w", scope, err)
		}
		for i, line := range lines[:min(len(lines), len(asked))] {
			line = bytes.TrimRight(line, "\r\n")
			if len(line) == 0 || lineID(line) != asked[i] {
				continue
			}
			if more, err := each(line); err != nil || !more {
				return err
			}
		}
	}
	return nil
}
