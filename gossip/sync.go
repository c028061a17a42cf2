package gossip

// Catch-up sync, protocol /remem/sync/1.0.0.
//
// GossipSub does not replay history, so a node that joins late or comes back
// from an outage reconciles one team scope with a peer over a stream. A
// session moves records both ways and its bytes grow with the difference
// between the two sides, not with what they hold: the summary costs a few
// bytes per origin, the id lists are sent only for origins that differ, and
// only lines the other side lacks are sent.
//
// Wire format. I is the initiator, R the responder; one stream per session
// and team. Integers are unsigned LEB128 varints ("uvarint", as Go's
// encoding/binary writes them). Every message is a frame:
//
//	frame  = len:uvarint body:len bytes          (each frame kind has a hard limit on len)
//	id     = the first 12 bytes of SHA-256(raw record line)
//	origin = the 8 bytes of an origin (its 16 hex digits decoded)
//	digest = the first 12 bytes of SHA-256(id_1 || ... || id_k), the origin's ids sorted bytewise
//
//	whole  = the first 12 bytes of SHA-256 over every ( origin count:uvarint digest ) of the
//	         scope, origins increasing: equal wholes mean equal record sets
//
//	1. I→R SUMMARY  tlen:uvarint team:tlen mode:byte whole, then for mode 1 only:
//	                n:uvarint n×( origin count:uvarint digest )
//	                tlen ≤ 128, n ≤ 16384, origins strictly increasing; frame ≤ 512 KiB.
//	                I sends mode 0 (the whole digest alone) first. When R's whole
//	                digest is the same, R answers a DIFF with status 0 and no origin:
//	                the two sides are in sync and the session costs a few dozen
//	                bytes. Otherwise R answers status 5 and I sends the SUMMARY
//	                again in mode 1.
//	2. R→I DIFF     status:byte, then for status 0 only:
//	                n:uvarint n×( origin k:uvarint k×id )
//	                status 0 ok, 1 R is not in the team, 2 refused (I is not a member of
//	                this private team), 3 busy (R answers one session per peer at a
//	                time, and works out differences for Params.SyncMaxInbound sessions
//	                at once: try later or another peer), 4 R failed to read
//	                what it holds, 5 the whole digests differ: send the full summary.
//	                The list holds every
//	                origin whose (count, digest) differs between the two sides, whichever
//	                side holds it, with R's ids for it (k = 0 when R holds none).
//	                Origins strictly increasing, ids strictly increasing within an
//	                origin, k ≤ 4096, n ≤ 16384, Σk ≤ 65536; frame ≤ 1.25 MiB.
//	3. I→R REQUEST  w:uvarint w×id  o:uvarint o×id
//	                want: ids of the DIFF that I lacks (less those another session of
//	                I is already fetching); offer: ids I holds under the DIFF's origins
//	                that the DIFF does not list. w, o ≤ 65536, every wanted id was in
//	                the DIFF, none twice; frame ≤ 2 MiB.
//	4. R→I ACCEPT   a:uvarint a×id    the offered ids R lacks (less those R is already
//	                fetching), a subset of the offer; frame ≤ 1 MiB.
//	5. I→R RECORDS  one frame per accepted id, in any order, body = the raw record line
//	                (≤ 8 KiB); I may send fewer (lines it no longer holds). Then one
//	                empty frame: the end.
//	6. R→I RECORDS  the same for I's want. Then both sides close the stream.
//
// The two sides take turns, so neither blocks on a full window while the
// other writes. The whole session has one deadline (Params.SyncTimeout).
//
// R's capacity is what throwaway identities would go for, so R spends it
// only on peers that keep the exchange moving. The SUMMARY frames must come
// within Params.SyncOpenTimeout each, and R holds no slot while it waits
// for them. Only a full SUMMARY (a difference to work out) takes one of
// the Params.SyncMaxInbound slots, waiting up to Params.SyncStepTimeout for
// a free one; sessions of private teams have Params.SyncMemberInbound slots
// of their own. From then on each frame R waits for, or waits to send, has
// Params.SyncStepTimeout, and R sends at most Params.SyncServeBytes (fewer
// records: the initiator asks again next time). R answers one session per
// peer at a time.
//
// Nothing the peer says is trusted: every limit above is checked before
// anything is allocated, a record whose id was not asked for or comes twice
// ends the session, and every received line goes through protocol.Verify,
// the team's members check and an origin check (the record must be under the
// origin it was listed for) before Holder.Deliver with the team's scope.
// Only Holder.Held(scope) of that same team is ever offered, so records
// received in one scope are never sent into another.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	lp2pproto "github.com/libp2p/go-libp2p/core/protocol"

	"github.com/remem/remem/protocol"
)

// SyncProtocol is the stream protocol of catch-up sync.
const SyncProtocol = lp2pproto.ID("/remem/sync/1.0.0")

// Limits of the sync wire format.
const (
	idLen        = 12
	originLen    = 8
	maxTeamLen   = 128
	maxOrigins   = 16384
	maxOriginIDs = 4096
	maxIDs       = 65536

	maxSummaryFrame = 512 << 10
	maxDiffFrame    = 1<<20 + 256<<10
	maxRequestFrame = 2 << 20
	maxAcceptFrame  = 1 << 20

	deliverBatch = 256
)

// DIFF status bytes.
const (
	statusOK       = 0
	statusNoTeam   = 1
	statusRefused  = 2
	statusBusy     = 3
	statusInternal = 4
	statusNeedFull = 5
)

// SUMMARY modes.
const (
	summaryWhole = 0 // the whole-scope digest alone
	summaryFull  = 1 // the digest and every origin's count and digest
)

type recID [idLen]byte
type originID [originLen]byte

func lineID(line []byte) recID {
	sum := sha256.Sum256(line)
	return recID(sum[:idLen])
}

func cmpID(a, b recID) int        { return bytes.Compare(a[:], b[:]) }
func cmpOrigin(a, b originID) int { return bytes.Compare(a[:], b[:]) }
func (o originID) String() string { return hex.EncodeToString(o[:]) }

// syncState is the per-team state shared by concurrent sessions.
type syncState struct {
	mu      sync.Mutex
	pending map[recID]struct{}  // ids a running session is fetching
	recent  map[recID]time.Time // ids fetched lately (a snapshot taken earlier may lack them)

	cacheMu sync.Mutex
	cache   map[recID]originID // origin of each held line, so Held lines are parsed once

	snapMu      sync.Mutex
	snap        *snapshot // the last snapshot, reused while the holder's version stays
	snapVersion uint64
}

func newSyncState() *syncState {
	return &syncState{pending: map[recID]struct{}{}, recent: map[recID]time.Time{}, cache: map[recID]originID{}}
}

// claim returns the ids of ids no other session is fetching or has just
// fetched, and marks them pending.
func (s *syncState) claim(ids []recID, ttl time.Duration) []recID {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	for id, at := range s.recent {
		if now.Sub(at) > ttl {
			delete(s.recent, id)
		}
	}
	out := ids[:0:0]
	for _, id := range ids {
		if _, ok := s.pending[id]; ok {
			continue
		}
		if _, ok := s.recent[id]; ok {
			continue
		}
		s.pending[id] = struct{}{}
		out = append(out, id)
	}
	return out
}

// release ends a claim; ids that arrived are remembered as recent.
func (s *syncState) release(ids []recID, got map[recID]bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	for _, id := range ids {
		delete(s.pending, id)
		if got[id] {
			s.recent[id] = now
		}
	}
}

// snapshot is what this node holds in one team scope.
type snapshot struct {
	lines   map[recID][]byte
	byOrig  map[originID][]recID // sorted ids
	origins []originID           // sorted
	whole   [idLen]byte          // digest of every origin's summary: equal wholes, equal sets
}

type originSummary struct {
	count  int
	digest [idLen]byte
}

func (s *snapshot) summary(o originID) originSummary {
	ids := s.byOrig[o]
	h := sha256.New()
	for _, id := range ids {
		h.Write(id[:])
	}
	var sum originSummary
	sum.count = len(ids)
	copy(sum.digest[:], h.Sum(nil))
	return sum
}

// snapshot returns what this node holds in the team's scope. With a
// Versioned holder the snapshot is built once per version: every session
// needs it, and most find nothing changed since the last.
func (n *Node) snapshot(t *team) (*snapshot, error) {
	vh, versioned := n.holder.(Versioned)
	if !versioned {
		return n.buildSnapshot(t)
	}
	v := vh.HeldVersion()
	t.sync.snapMu.Lock()
	defer t.sync.snapMu.Unlock()
	if t.sync.snap != nil && t.sync.snapVersion == v {
		return t.sync.snap, nil
	}
	s, err := n.buildSnapshot(t)
	if err != nil {
		return nil, err
	}
	t.sync.snap, t.sync.snapVersion = s, v
	return s, nil
}

func (n *Node) buildSnapshot(t *team) (*snapshot, error) {
	held, err := n.holder.Held(t.scope)
	if err != nil {
		return nil, fmt.Errorf("reading records held in %s: %w", t.scope, err)
	}
	s := &snapshot{lines: make(map[recID][]byte, len(held)), byOrig: map[originID][]recID{}}
	t.sync.cacheMu.Lock()
	old := t.sync.cache
	cache := make(map[recID]originID, len(held))
	for _, line := range held {
		line = bytes.TrimRight(line, "\r\n")
		id := lineID(line)
		if _, dup := s.lines[id]; dup {
			continue
		}
		o, ok := old[id]
		if !ok {
			rec, err := protocol.Decode(line)
			if err != nil {
				continue // not a record: never offer it
			}
			b, err := hex.DecodeString(rec.Origin)
			if err != nil || len(b) != originLen {
				continue
			}
			o = originID(b)
		}
		cache[id] = o
		s.lines[id] = line
		s.byOrig[o] = append(s.byOrig[o], id)
	}
	t.sync.cache = cache
	t.sync.cacheMu.Unlock()
	for o, ids := range s.byOrig {
		slices.SortFunc(ids, cmpID)
		s.origins = append(s.origins, o)
	}
	slices.SortFunc(s.origins, cmpOrigin)
	h := sha256.New()
	for _, o := range summarized(s.origins) {
		h.Write(appendOriginSummary(nil, o, s.summary(o)))
	}
	copy(s.whole[:], h.Sum(nil))
	return s, nil
}

// summarized are the origins a summary lists (at most maxOrigins).
func summarized(origins []originID) []originID {
	if len(origins) > maxOrigins {
		return origins[:maxOrigins]
	}
	return origins
}

func appendOriginSummary(b []byte, o originID, s originSummary) []byte {
	b = append(b, o[:]...)
	b = binary.AppendUvarint(b, uint64(s.count))
	return append(b, s.digest[:]...)
}

// ---- framing ----

var errProtocol = errors.New("sync protocol violation")

func violation(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errProtocol, fmt.Sprintf(format, args...))
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	c.n += k
	return k, err
}

type countingWriter struct {
	w io.Writer
	n int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	k, err := c.w.Write(p)
	c.n += k
	return k, err
}

// conn is one side of a session.
type conn struct {
	s   network.Stream
	cr  *countingReader
	cw  *countingWriter
	br  *bufio.Reader
	bw  *bufio.Writer
	buf []byte

	step   time.Duration // each frame's deadline, from when it is awaited (0: end only)
	end    time.Time     // the session's deadline
	out    int           // bytes handed to writeFrame
	budget int           // sendRecords stops before out passes it (0: no limit)
}

// pace gives each frame read or written from now on step to go through,
// and never more than until end.
func (c *conn) pace(step time.Duration, end time.Time) {
	c.step, c.end = step, end
	_ = c.s.SetDeadline(end)
	c.tick()
}

// tick starts the deadline of the frame about to be awaited.
func (c *conn) tick() {
	if c.step <= 0 {
		return
	}
	d := time.Now().Add(c.step)
	if d.After(c.end) {
		d = c.end
	}
	_ = c.s.SetDeadline(d)
}

// status writes a DIFF frame that is a status byte alone.
func (c *conn) status(b byte) error {
	if err := c.writeFrame([]byte{b}); err != nil {
		return err
	}
	return c.flush()
}

func newConn(s network.Stream) *conn {
	c := &conn{s: s, cr: &countingReader{r: s}, cw: &countingWriter{w: s}}
	c.br = bufio.NewReaderSize(c.cr, 16<<10)
	c.bw = bufio.NewWriterSize(c.cw, 16<<10)
	return c
}

// readFrame reads one frame of at most limit bytes. The body aliases a
// buffer reused by the next call.
func (c *conn) readFrame(limit int) ([]byte, error) {
	c.tick()
	l, err := binary.ReadUvarint(c.br)
	if err != nil {
		return nil, err
	}
	if l > uint64(limit) {
		return nil, violation("frame of %d bytes, the limit is %d", l, limit)
	}
	if cap(c.buf) < int(l) {
		c.buf = make([]byte, l)
	}
	b := c.buf[:l]
	if _, err := io.ReadFull(c.br, b); err != nil {
		return nil, err
	}
	return b, nil
}

func (c *conn) writeFrame(body []byte) error {
	c.tick()
	var hdr [binary.MaxVarintLen64]byte
	k := binary.PutUvarint(hdr[:], uint64(len(body)))
	c.out += k + len(body)
	if _, err := c.bw.Write(hdr[:k]); err != nil {
		return err
	}
	_, err := c.bw.Write(body)
	return err
}

func (c *conn) flush() error {
	c.tick()
	return c.bw.Flush()
}

// dec reads the fields of a frame body; the first error sticks.
type dec struct {
	b   []byte
	err error
}

func (d *dec) uvarint(limit int) int {
	if d.err != nil {
		return 0
	}
	v, k := binary.Uvarint(d.b)
	if k <= 0 {
		d.err = violation("bad varint")
		return 0
	}
	d.b = d.b[k:]
	if v > uint64(limit) {
		d.err = violation("count %d over the limit %d", v, limit)
		return 0
	}
	return int(v)
}

func (d *dec) take(k int) []byte {
	if d.err != nil {
		return nil
	}
	if len(d.b) < k {
		d.err = violation("frame ends early")
		return nil
	}
	out := d.b[:k]
	d.b = d.b[k:]
	return out
}

func (d *dec) id() recID        { var x recID; copy(x[:], d.take(idLen)); return x }
func (d *dec) origin() originID { var x originID; copy(x[:], d.take(originLen)); return x }
func (d *dec) byte1() byte {
	b := d.take(1)
	if b == nil {
		return 0
	}
	return b[0]
}

func (d *dec) end() error {
	if d.err == nil && len(d.b) != 0 {
		d.err = violation("%d extra bytes in frame", len(d.b))
	}
	return d.err
}

// ids reads count:uvarint count×id, strictly increasing if sorted is set.
func (d *dec) ids(limit int, sorted bool) []recID {
	k := d.uvarint(limit)
	if d.err != nil || len(d.b) < k*idLen {
		if d.err == nil {
			d.err = violation("frame ends early")
		}
		return nil
	}
	out := make([]recID, k)
	for i := range out {
		out[i] = d.id()
		if sorted && i > 0 && cmpID(out[i-1], out[i]) >= 0 {
			d.err = violation("ids not strictly increasing")
			return nil
		}
	}
	return out
}

func appendIDs(b []byte, ids []recID) []byte {
	b = binary.AppendUvarint(b, uint64(len(ids)))
	for _, id := range ids {
		b = append(b, id[:]...)
	}
	return b
}

// ---- messages ----

type summaryEntry struct {
	origin originID
	originSummary
}

func encodeSummary(teamName string, snap *snapshot, full bool) []byte {
	b := binary.AppendUvarint(nil, uint64(len(teamName)))
	b = append(b, teamName...)
	if !full {
		b = append(b, summaryWhole)
		return append(b, snap.whole[:]...)
	}
	b = append(b, summaryFull)
	b = append(b, snap.whole[:]...)
	origins := summarized(snap.origins)
	b = binary.AppendUvarint(b, uint64(len(origins)))
	for _, o := range origins {
		b = appendOriginSummary(b, o, snap.summary(o))
	}
	return b
}

// summaryMsg is a decoded SUMMARY.
type summaryMsg struct {
	team    string
	full    bool
	whole   [idLen]byte
	entries []summaryEntry
}

func decodeSummary(body []byte) (summaryMsg, error) {
	var m summaryMsg
	d := &dec{b: body}
	tl := d.uvarint(maxTeamLen)
	m.team = string(d.take(tl))
	switch mode := d.byte1(); {
	case d.err != nil:
	case mode == summaryWhole || mode == summaryFull:
		m.full = mode == summaryFull
	default:
		d.err = violation("unknown summary mode %d", mode)
	}
	copy(m.whole[:], d.take(idLen))
	if !m.full || d.err != nil {
		return m, d.end()
	}
	k := d.uvarint(maxOrigins)
	if d.err == nil && len(d.b) < k*(originLen+1+idLen) {
		d.err = violation("summary ends early")
	}
	var out []summaryEntry
	if d.err == nil {
		out = make([]summaryEntry, 0, k)
	}
	for i := 0; i < k && d.err == nil; i++ {
		var e summaryEntry
		e.origin = d.origin()
		e.count = d.uvarint(1 << 30)
		copy(e.digest[:], d.take(idLen))
		if i > 0 && cmpOrigin(out[i-1].origin, e.origin) >= 0 {
			d.err = violation("origins not strictly increasing")
		}
		out = append(out, e)
	}
	m.entries = out
	return m, d.end()
}

type diffEntry struct {
	origin originID
	ids    []recID
}

// diffAgainst lists the origins where snap and the peer's summary differ,
// with this side's ids for them, within the frame limits.
func diffAgainst(snap *snapshot, theirs []summaryEntry) []diffEntry {
	their := make(map[originID]originSummary, len(theirs))
	all := slices.Clone(snap.origins)
	for _, e := range theirs {
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

func encodeDiff(entries []diffEntry) []byte {
	b := []byte{statusOK}
	b = binary.AppendUvarint(b, uint64(len(entries)))
	for _, e := range entries {
		b = append(b, e.origin[:]...)
		b = appendIDs(b, e.ids)
	}
	return b
}

func decodeDiff(body []byte) (byte, []diffEntry, error) {
	d := &dec{b: body}
	status := d.byte1()
	if d.err != nil || status != statusOK {
		return status, nil, d.err
	}
	k := d.uvarint(maxOrigins)
	if d.err == nil && len(d.b) < k*(originLen+1) {
		d.err = violation("diff ends early")
	}
	var out []diffEntry
	total := 0
	for i := 0; i < k && d.err == nil; i++ {
		var e diffEntry
		e.origin = d.origin()
		e.ids = d.ids(maxOriginIDs, true)
		total += len(e.ids)
		if total > maxIDs {
			d.err = violation("more than %d ids", maxIDs)
		}
		if i > 0 && cmpOrigin(out[i-1].origin, e.origin) >= 0 {
			d.err = violation("origins not strictly increasing")
		}
		out = append(out, e)
	}
	return status, out, d.end()
}

// ---- sessions ----

// session accounting common to both sides.
type sessionStats struct {
	recordsIn, recordsOut int
}

func (n *Node) finish(c *conn, st *sessionStats, err *error) {
	n.metrics.syncIn(c.cr.n)
	n.metrics.syncOut(c.cw.n)
	n.metrics.update(func(s *Stats) {
		s.SyncRecordsIn += st.recordsIn
		s.SyncRecordsOut += st.recordsOut
		if *err != nil {
			s.SyncFailures++
		} else {
			s.SyncSessions++
		}
	})
	if *err != nil {
		c.s.Reset()
	} else {
		c.s.Close()
	}
}

// sendRecords writes the lines of ids this side holds, then the end frame.
// With a budget it stops early, before the bytes sent would pass it (but
// after one record at least, so every session makes progress): the peer
// asks for the rest in its next session.
func (c *conn) sendRecords(snap *snapshot, ids []recID, st *sessionStats) error {
	sent := 0
	for _, id := range ids {
		line, ok := snap.lines[id]
		if !ok {
			continue
		}
		if c.budget > 0 && sent > 0 && c.out+len(line)+2*binary.MaxVarintLen64 > c.budget {
			break
		}
		sent++
		if err := c.writeFrame(line); err != nil {
			return err
		}
		st.recordsOut++
	}
	if err := c.writeFrame(nil); err != nil {
		return err
	}
	return c.flush()
}

// recvRecords reads record frames until the end frame. Each must be one of
// expect (by id, at most once) and passes protocol.VerifyBatch, the team's members
// check and check (which returns a refusal reason, or "") before it is
// delivered. got records the ids that arrived.
func (n *Node) recvRecords(c *conn, t *team, from peer.ID, expect map[recID]originID, check func(id recID, rec *protocol.Record) string, got map[recID]bool, st *sessionStats) error {
	var batch []*protocol.Record
	flush := func() {
		if len(batch) > 0 {
			n.holder.Deliver(t.scope, from, batch)
			batch = nil
		}
	}
	defer flush()
	for {
		body, err := c.readFrame(protocol.MaxLineBytes)
		if err != nil {
			return err
		}
		if len(body) == 0 {
			return nil
		}
		id := lineID(body)
		if _, ok := expect[id]; !ok {
			return violation("record %x was not asked for", id[:])
		}
		if got[id] {
			return violation("record %x sent twice", id[:])
		}
		got[id] = true
		line := bytes.Clone(body) // Raw must not alias the frame buffer
		// Records arrive one frame at a time, each a batch of its own; sync
		// carries records of every origin, so the batch is unbound.
		b := protocol.VerifyBatch([]protocol.Line{{N: 1, Bytes: line}}, protocol.Bound{Source: from.String()}, n.now())
		if r, refused := b.First(); refused {
			if r.Reason == protocol.ReasonUnknownVersion {
				n.metrics.update(func(s *Stats) { s.Skipped++ })
			} else {
				n.metrics.rejectLine(string(r.Reason))
			}
			continue
		}
		rec := b.Records[0]
		if !t.members.hasOrigin(rec.Origin) {
			n.metrics.rejectLine(ReasonNonMember)
			continue
		}
		if reason := check(id, rec); reason != "" {
			n.metrics.rejectLine(reason)
			continue
		}
		st.recordsIn++
		batch = append(batch, rec)
		if len(batch) >= deliverBatch {
			flush()
		}
	}
}

// summarize sends a SUMMARY (the whole digest alone, or full) and reads the
// DIFF that answers it.
func (c *conn) summarize(teamName string, snap *snapshot, full bool) (byte, []diffEntry, error) {
	err := c.writeFrame(encodeSummary(teamName, snap, full))
	if err == nil {
		err = c.flush()
	}
	if err != nil {
		return 0, nil, fmt.Errorf("sending summary: %w", err)
	}
	body, err := c.readFrame(maxDiffFrame)
	if err != nil {
		return 0, nil, fmt.Errorf("reading diff: %w", err)
	}
	status, diff, err := decodeDiff(body)
	if err != nil {
		return 0, nil, fmt.Errorf("reading diff: %w", err)
	}
	return status, diff, nil
}

// syncWith runs one session as initiator with p for team t.
func (n *Node) syncWith(ctx context.Context, t *team, p peer.ID) (err error) {
	if !t.members.hasPeer(p) {
		return fmt.Errorf("peer %s is not a member of team %s", p, t.name)
	}
	unlock, err := n.outgoing.lock(ctx, p)
	if err != nil {
		return fmt.Errorf("waiting for the last session with %s to end: %w", p, err)
	}
	defer unlock()
	ctx, cancel := context.WithTimeout(ctx, n.p.SyncTimeout)
	defer cancel()
	s, err := n.host.NewStream(ctx, p, SyncProtocol)
	if err != nil {
		return fmt.Errorf("opening sync stream to %s: %w", p, err)
	}
	stop := context.AfterFunc(ctx, func() { s.Reset() })
	defer stop()
	c := newConn(s)
	c.pace(0, time.Now().Add(n.p.SyncTimeout))
	var st sessionStats
	defer n.finish(c, &st, &err)

	snap, err := n.snapshot(t)
	if err != nil {
		return err
	}
	// 1. SUMMARY, the whole digest first; 2. DIFF
	status, diff, err := c.summarize(t.name, snap, false)
	if err == nil && status == statusNeedFull {
		status, diff, err = c.summarize(t.name, snap, true)
	}
	if err != nil {
		return err
	}
	switch status {
	case statusOK:
	case statusNoTeam:
		return fmt.Errorf("peer %s is not in team %s", p, t.name)
	case statusRefused:
		return fmt.Errorf("peer %s refused sync of team %s (not a member)", p, t.name)
	case statusBusy:
		return fmt.Errorf("peer %s is busy", p)
	default:
		return fmt.Errorf("peer %s failed (status %d)", p, status)
	}
	// 3. REQUEST
	wantOrigin := map[recID]originID{}
	var want, offer []recID
	for _, e := range diff {
		theirs := make(map[recID]struct{}, len(e.ids))
		for _, id := range e.ids {
			theirs[id] = struct{}{}
			if _, have := snap.lines[id]; !have {
				want = append(want, id)
				wantOrigin[id] = e.origin
			}
		}
		for _, id := range snap.byOrig[e.origin] {
			if _, ok := theirs[id]; !ok && len(offer) < maxIDs {
				offer = append(offer, id)
			}
		}
	}
	want = t.sync.claim(want, n.p.SyncRecentTTL)
	got := map[recID]bool{}
	defer t.sync.release(want, got)
	expect := make(map[recID]originID, len(want))
	for _, id := range want {
		expect[id] = wantOrigin[id]
	}
	req := appendIDs(nil, want)
	req = appendIDs(req, offer)
	if err = c.writeFrame(req); err == nil {
		err = c.flush()
	}
	if err != nil {
		return fmt.Errorf("sending request: %w", err)
	}
	// 4. ACCEPT
	body, err := c.readFrame(maxAcceptFrame)
	if err != nil {
		return fmt.Errorf("reading accept: %w", err)
	}
	d := &dec{b: body}
	accepted := d.ids(maxIDs, false)
	if err = d.end(); err != nil {
		return fmt.Errorf("reading accept: %w", err)
	}
	offered := make(map[recID]struct{}, len(offer))
	for _, id := range offer {
		offered[id] = struct{}{}
	}
	for _, id := range accepted {
		if _, ok := offered[id]; !ok {
			return violation("peer accepted id %x that was not offered", id[:])
		}
	}
	// 5. our records
	if err = c.sendRecords(snap, accepted, &st); err != nil {
		return fmt.Errorf("sending records: %w", err)
	}
	// 6. theirs
	underListed := func(id recID, rec *protocol.Record) string {
		if rec.Origin != expect[id].String() {
			return ReasonWrongOrigin
		}
		return ""
	}
	if err = n.recvRecords(c, t, p, expect, underListed, got, &st); err != nil {
		return fmt.Errorf("receiving records: %w", err)
	}
	n.log.Debug("sync done", "peer", p, "scope", t.scope, "in", st.recordsIn, "out", st.recordsOut, "bytes_in", c.cr.n, "bytes_out", c.cw.n)
	return nil
}

// handleSync answers one session as responder.
func (n *Node) handleSync(s network.Stream) {
	if !n.tasks.enter() {
		s.Reset()
		return
	}
	defer n.tasks.leave()
	p := s.Conn().RemotePeer()
	if err := n.answerSync(s, p); err != nil {
		n.log.Debug("sync session failed", "peer", p, "err", err)
	}
}

func (n *Node) answerSync(s network.Stream, p peer.ID) (err error) {
	c := newConn(s)
	c.pace(n.p.SyncOpenTimeout, time.Now().Add(n.p.SyncTimeout))
	stop := context.AfterFunc(n.ctx, func() { s.Reset() })
	defer stop()
	var st sessionStats
	defer n.finish(c, &st, &err)
	var held releases
	defer held.run()

	// 1. SUMMARY: the opening, each frame within SyncOpenTimeout, and no
	// slot held yet.
	body, err := c.readFrame(maxSummaryFrame)
	if err != nil {
		return fmt.Errorf("reading summary: %w", err)
	}
	sum, err := decodeSummary(body)
	if err != nil {
		return fmt.Errorf("reading summary: %w", err)
	}
	teamName := sum.team
	t := n.teams[teamName]
	switch {
	case t == nil:
		return c.status(statusNoTeam)
	case !t.members.hasPeer(p):
		return c.status(statusRefused)
	}
	done, ok := n.markBusy(p)
	if !ok {
		return c.status(statusBusy)
	}
	held.add(done)
	snap, err := n.snapshot(t)
	if err != nil {
		_ = c.status(statusInternal)
		return err
	}
	// The whole digest alone: in sync, or ask for the full summary.
	if !sum.full && sum.whole != snap.whole {
		if err := c.status(statusNeedFull); err != nil {
			return err
		}
		if body, err = c.readFrame(maxSummaryFrame); err == nil {
			sum, err = decodeSummary(body)
		}
		if err != nil {
			return fmt.Errorf("reading the full summary: %w", err)
		}
		if !sum.full || sum.team != teamName {
			return violation("the second summary is not the full summary of team %q", teamName)
		}
	}
	// A difference to work out takes a slot; in sync, the rest of the
	// session is a few empty frames.
	if sum.full {
		release := n.takeSlot(t)
		if release == nil {
			return c.status(statusBusy)
		}
		held.add(release)
	}
	c.pace(n.p.SyncStepTimeout, c.end)
	c.budget = n.p.SyncServeBytes
	// 2. DIFF
	var diff []diffEntry
	if sum.full {
		diff = diffAgainst(snap, sum.entries)
	}
	listed := map[recID]struct{}{}
	diffOrigins := map[originID]struct{}{}
	for _, e := range diff {
		diffOrigins[e.origin] = struct{}{}
		for _, id := range e.ids {
			listed[id] = struct{}{}
		}
	}
	if err = c.writeFrame(encodeDiff(diff)); err == nil {
		err = c.flush()
	}
	if err != nil {
		return fmt.Errorf("sending diff: %w", err)
	}
	// 3. REQUEST
	body, err = c.readFrame(maxRequestFrame)
	if err != nil {
		return fmt.Errorf("reading request: %w", err)
	}
	d := &dec{b: body}
	want := d.ids(maxIDs, false)
	offer := d.ids(maxIDs, false)
	if err = d.end(); err != nil {
		return fmt.Errorf("reading request: %w", err)
	}
	for _, id := range want {
		if _, ok := listed[id]; !ok {
			return violation("peer wants id %x that was not listed", id[:])
		}
		delete(listed, id) // each at most once
	}
	// 4. ACCEPT: offered records are taken under the diff's origins only,
	// so with no diff there is nothing to accept.
	var lack []recID
	seenOffer := map[recID]struct{}{}
	for _, id := range offer {
		if len(diffOrigins) == 0 {
			break
		}
		if _, have := snap.lines[id]; have {
			continue
		}
		if _, dup := seenOffer[id]; dup {
			continue
		}
		seenOffer[id] = struct{}{}
		lack = append(lack, id)
	}
	accept := t.sync.claim(lack, n.p.SyncRecentTTL)
	got := map[recID]bool{}
	defer t.sync.release(accept, got)
	if err = c.writeFrame(appendIDs(nil, accept)); err == nil {
		err = c.flush()
	}
	if err != nil {
		return fmt.Errorf("sending accept: %w", err)
	}
	// 5. their records: under the diff's origins only.
	expect := make(map[recID]originID, len(accept))
	for _, id := range accept {
		expect[id] = originID{}
	}
	underDiff := func(_ recID, rec *protocol.Record) string {
		b, err := hex.DecodeString(rec.Origin)
		if err != nil || len(b) != originLen {
			return ReasonWrongOrigin
		}
		if _, ok := diffOrigins[originID(b)]; !ok {
			return ReasonWrongOrigin
		}
		return ""
	}
	if err = n.recvRecords(c, t, p, expect, underDiff, got, &st); err != nil {
		return fmt.Errorf("receiving records: %w", err)
	}
	// 6. ours, within the budget
	if err = c.sendRecords(snap, want, &st); err != nil {
		return fmt.Errorf("sending records: %w", err)
	}
	if st.recordsOut < len(want) {
		n.log.Debug("sync session sent part of the records wanted", "peer", p, "scope", t.scope, "sent", st.recordsOut, "wanted", len(want), "budget", c.budget)
	}
	// Wait for the initiator to close, so our last frames are not cut by a
	// reset: reading returns EOF then. The slot and the peer's mark are
	// free already: the peer may start its next session at once.
	held.run()
	_, _ = c.br.ReadByte()
	return nil
}

// releases are the things a session holds, freed in reverse order; run
// frees them once.
type releases []func()

func (r *releases) add(f func()) { *r = append(*r, f) }

func (r *releases) run() {
	for i := len(*r) - 1; i >= 0; i-- {
		(*r)[i]()
	}
	*r = nil
}

// markBusy marks p as having a session answered: a peer gets one at a
// time, whatever the team, so one identity holds at most one slot. done
// clears the mark; ok is false when p already has one.
func (n *Node) markBusy(p peer.ID) (done func(), ok bool) {
	n.busyMu.Lock()
	defer n.busyMu.Unlock()
	if n.busy[p] {
		return nil, false
	}
	n.busy[p] = true
	return func() {
		n.busyMu.Lock()
		delete(n.busy, p)
		n.busyMu.Unlock()
	}, true
}

// takeSlot takes a slot for a session of team t, waiting up to
// SyncStepTimeout for one to free (waiters are served in turn, so a peer
// that asks again and again does not pass one that waits). A session of a
// private team tries the slots kept for members first. It returns the
// release, or nil when no slot freed in time.
func (n *Node) takeSlot(t *team) func() {
	var members chan struct{} // nil: never ready
	if !t.members.open() {
		members = n.memberSlots
	}
	select {
	case members <- struct{}{}:
		return func() { <-members }
	default:
	}
	select {
	case n.inbound <- struct{}{}:
		return func() { <-n.inbound }
	default:
	}
	timer := time.NewTimer(n.p.SyncStepTimeout)
	defer timer.Stop()
	select {
	case n.inbound <- struct{}{}:
		return func() { <-n.inbound }
	case members <- struct{}{}:
		return func() { <-members }
	case <-timer.C:
	case <-n.ctx.Done():
	}
	return nil
}

// peerLocks lets one goroutine at a time hold a peer: this node runs its
// own sessions with a peer one after the other, as the peer answers one
// at a time (the teams' rounds run in parallel, and sync on connect may
// meet a round).
type peerLocks struct {
	mu   sync.Mutex
	held map[peer.ID]chan struct{} // closed when the holder unlocks
}

// lock waits until p is free or ctx ends, and returns the unlock.
func (l *peerLocks) lock(ctx context.Context, p peer.ID) (func(), error) {
	for {
		l.mu.Lock()
		if l.held == nil {
			l.held = map[peer.ID]chan struct{}{}
		}
		ch, busy := l.held[p]
		if !busy {
			ch = make(chan struct{})
			l.held[p] = ch
			l.mu.Unlock()
			return func() {
				l.mu.Lock()
				delete(l.held, p)
				l.mu.Unlock()
				close(ch)
			}, nil
		}
		l.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// ---- rounds ----

// SyncNow runs a catch-up round now: for each team, a session with up to
// Params.SyncPeers random peers of its topic (other connected remem peers
// when the topic has too few), one after the other. It returns when the
// round is over or ctx ends. The node calls it on every sleep.
func (n *Node) SyncNow(ctx context.Context) {
	if n.ctx.Err() != nil {
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(n.ctx, cancel)
	defer stop()
	var wg sync.WaitGroup
	for _, t := range n.order {
		wg.Go(func() {
			for _, p := range n.pickSyncPeers(t) {
				if ctx.Err() != nil {
					return
				}
				if err := n.syncWith(ctx, t, p); err != nil {
					n.log.Debug("sync failed", "peer", p, "scope", t.scope, "err", err)
				}
			}
		})
	}
	wg.Wait()
}

func (n *Node) pickSyncPeers(t *team) []peer.ID {
	var topic, other []peer.ID
	inTopic := map[peer.ID]bool{}
	for _, p := range t.t.ListPeers() {
		if t.members.hasPeer(p) && n.speaksSync(p) {
			topic = append(topic, p)
			inTopic[p] = true
		}
	}
	rand.Shuffle(len(topic), func(i, j int) { topic[i], topic[j] = topic[j], topic[i] })
	if len(topic) < n.p.SyncPeers {
		for _, p := range n.host.Network().Peers() {
			if inTopic[p] || !t.members.hasPeer(p) {
				continue
			}
			if n.speaksSync(p) {
				other = append(other, p)
			}
		}
		rand.Shuffle(len(other), func(i, j int) { other[i], other[j] = other[j], other[i] })
	}
	return append(topic, other...)[:min(n.p.SyncPeers, len(topic)+len(other))]
}

// speaksSync reports whether identify said p serves the sync protocol (a
// plain GossipSub peer in the topic does not).
func (n *Node) speaksSync(p peer.ID) bool {
	ok, _ := n.host.Peerstore().SupportsProtocols(p, SyncProtocol)
	return len(ok) > 0
}

// syncLoop runs a round every Params.SyncInterval (±10%).
func (n *Node) syncLoop(ctx context.Context) {
	if n.p.SyncInterval <= 0 {
		return
	}
	for {
		d := n.p.SyncInterval
		d += time.Duration(rand.Int64N(int64(d)/5+1)) - d/10
		select {
		case <-ctx.Done():
			return
		case <-time.After(d):
		}
		n.SyncNow(ctx)
	}
}
