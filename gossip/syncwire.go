package gossip

// The wire format of catch-up sync, protocol /remem/sync/1.0.0: frames and
// the encoding of each message. Pure: no libp2p, no Node, no clock. The
// snapshot a summary is made from is in syncsnapshot.go, the sessions that
// send these messages in syncinit.go (initiator) and syncanswer.go
// (responder), and when sessions run in syncrounds.go.
//
// GossipSub does not replay history, so a node that joins late or comes back
// from an outage reconciles one team scope with a peer over a stream. A
// session moves records both ways and its bytes grow with the difference
// between the two sides, not with what they hold: the summary costs a few
// bytes per origin, the id lists are sent only for origins that differ, and
// only lines the other side lacks are sent.
//
// I is the initiator, R the responder; one stream per session and team.
// Integers are unsigned LEB128 varints ("uvarint", as Go's encoding/binary
// writes them). Every message is a frame:
//
//	frame  = len:uvarint body:len bytes          (each frame kind has a hard limit on len)
//	id     = the first 12 bytes of SHA-256(raw record line)
//	origin = the 8 bytes of an origin (its 16 hex digits decoded)
//	digest = the first 12 bytes of SHA-256(id_1 || ... || id_k), the origin's ids sorted bytewise
//
//	whole  = the first 12 bytes of SHA-256 over every ( origin count:uvarint digest ) of the
//	         scope, every origin held, origins increasing: equal wholes mean equal record sets
//
//	bucket = an origin's first byte divided by 4: 64 buckets
//	bdigest = the first 8 bytes of SHA-256 over every ( origin count:uvarint digest ) of
//	         the bucket, every origin held, origins increasing
//
//	1. I→R SUMMARY  tlen:uvarint team:tlen mode:byte whole, then
//	                for mode 1: n:uvarint n×( origin count:uvarint digest )
//	                for mode 2: 64×bdigest, buckets increasing
//	                for mode 3: lo:origin hi:origin, then as mode 1: a mode 1 summary
//	                            of the origins from lo to hi (both included) alone
//	                tlen ≤ 128, n ≤ 16384, origins strictly increasing (and from lo
//	                to hi, lo ≤ hi); frame ≤ 512 KiB.
//	                I sends mode 0 (the whole digest alone) first. When R's whole
//	                digest is the same, R answers a DIFF with status 0 and no origin:
//	                the two sides are in sync and the session costs a few dozen
//	                bytes. Otherwise R answers status 5 and I sends the SUMMARY
//	                again in mode 2: the digest of each bucket of origins. R answers
//	                status 6 with the buckets whose digests differ, and I sends the
//	                SUMMARY a third time in mode 1, listing the origins of those
//	                buckets only: a node that lacks a few records of a few origins
//	                sends a few entries, not one per origin it knows. (I may also
//	                answer status 5 with mode 1 and every origin, as before the
//	                buckets; R then compares every origin.) When the origins to list
//	                are more than 16384, I sends mode 3 instead: a window of 16384 of
//	                them, and R compares the origins from lo to hi alone. I's next
//	                session with R lists the window after it (after the last one,
//	                the first again), so each origin is compared in turn: whatever
//	                origins sort first, none is left out for good.
//	2. R→I DIFF     status:byte, then for status 0 only:
//	                n:uvarint n×( origin k:uvarint k×id )
//	                status 0 ok, 1 R is not in the team, 2 refused (I is not a member of
//	                this private team), 3 busy (R answers one session per peer at a
//	                time, and works out differences for Params.SyncMaxInbound sessions
//	                at once: try later or another peer), 4 R failed to read
//	                what it holds, 5 the whole digests differ: send the bucket
//	                digests (or the full summary), 6 followed by flags:8 bytes, bit
//	                b (byte b/8, bit b%8) set when bucket b differs: send the
//	                summary of those buckets' origins.
//	                The list holds every
//	                origin whose (count, digest) differs between the two sides, whichever
//	                side holds it (within the buckets of status 6, when it was sent),
//	                with R's ids for it (k = 0 when R holds none); past the limits
//	                below R lists the rest next time, origins it admits first.
//	                Origins strictly increasing, ids strictly increasing within an
//	                origin, k ≤ 4096, n ≤ 16384, Σk ≤ 65536; frame ≤ 1.25 MiB.
//	3. I→R REQUEST  w:uvarint w×id  o:uvarint o×id
//	                want: ids of the DIFF that I lacks (less those another session of
//	                I is already fetching, and past what I takes: synctake.go); offer: ids I holds under the DIFF's origins
//	                that the DIFF does not list. w, o ≤ 65536, every wanted id was in
//	                the DIFF, none twice; frame ≤ 2 MiB.
//	4. R→I ACCEPT   a:uvarint a×id    the offered ids R lacks (less those R is already
//	                fetching, and past what R takes), a subset of the offer; frame ≤ 1 MiB.
//	5. I→R RECORDS  one frame per accepted id, in any order, body = the raw record line
//	                (≤ 8 KiB); I may send fewer (lines it no longer holds). Then one
//	                empty frame: the end.
//	6. R→I RECORDS  the same for I's want. Then both sides close the stream.
//
// The two sides take turns, so neither blocks on a full window while the
// other writes. The whole session has one deadline (Params.SyncTimeout).
//
// Nothing the peer says is trusted: every limit above is checked here
// before anything is allocated; what the sessions check on top (ids asked
// for, origins listed, protocol.Verify) is in syncsession.go.

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
)

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
)

// DIFF status bytes.
const (
	statusOK       = 0
	statusNoTeam   = 1
	statusRefused  = 2
	statusBusy     = 3
	statusInternal = 4
	statusNeedFull = 5 // send the bucket digests, or the full summary
	statusBuckets  = 6 // followed by the buckets that differ: send their origins
)

// SUMMARY modes.
const (
	summaryWhole   = 0 // the whole-scope digest alone
	summaryFull    = 1 // the digest and every origin's (of some buckets) count and digest
	summaryBuckets = 2 // the digest and each bucket's digest
	summaryRange   = 3 // summaryFull of the origins from lo to hi alone
)

// Buckets of origins: an origin's first byte divided by 4.
const (
	numBuckets     = 64
	bucketDigestLn = 8
)

type bucketDigests [numBuckets][bucketDigestLn]byte

// bucketSet holds a flag per bucket, as the 8 bytes of status 6 carry it.
type bucketSet [numBuckets / 8]byte

func bucketOf(o originID) int                 { return int(o[0]) / (256 / numBuckets) }
func (b *bucketSet) add(k int)                { b[k/8] |= 1 << (k % 8) }
func (b bucketSet) has(k int) bool            { return b[k/8]&(1<<(k%8)) != 0 }
func (b bucketSet) hasOrigin(o originID) bool { return b.has(bucketOf(o)) }

// lastOrigin is the greatest origin.
var lastOrigin = originID{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

// successor is the origin after o (the first origin after the last).
func successor(o originID) originID {
	for i := len(o) - 1; i >= 0; i-- {
		o[i]++
		if o[i] != 0 {
			break
		}
	}
	return o
}

// span is the origins a summary lists: those of some buckets, from lo to
// hi (both included).
type span struct {
	buckets bucketSet
	lo, hi  originID
}

// everything spans every origin.
func everything() span { return span{buckets: allBuckets(), hi: lastOrigin} }

func (s span) has(o originID) bool {
	return s.buckets.hasOrigin(o) && cmpOrigin(s.lo, o) <= 0 && cmpOrigin(o, s.hi) <= 0
}

// allBuckets flags every bucket: a full summary of every origin.
func allBuckets() bucketSet {
	var b bucketSet
	for i := range b {
		b[i] = 0xff
	}
	return b
}

// bucketDigestsOf digests the entries (origins increasing) by bucket.
func bucketDigestsOf(entries []summaryEntry) bucketDigests {
	var out bucketDigests
	var b []byte
	k := 0
	for bk := range numBuckets {
		h := sha256.New()
		for ; k < len(entries) && bucketOf(entries[k].origin) == bk; k++ {
			b = appendSummaryEntry(b[:0], entries[k])
			h.Write(b)
		}
		copy(out[bk][:], h.Sum(nil))
	}
	return out
}

// differing flags the buckets whose digests differ.
func (a *bucketDigests) differing(b *bucketDigests) bucketSet {
	var out bucketSet
	for k := range a {
		if a[k] != b[k] {
			out.add(k)
		}
	}
	return out
}

type recID [idLen]byte
type originID [originLen]byte

func lineID(line []byte) recID {
	sum := sha256.Sum256(line)
	return recID(sum[:idLen])
}

func cmpID(a, b recID) int        { return bytes.Compare(a[:], b[:]) }
func cmpOrigin(a, b originID) int { return bytes.Compare(a[:], b[:]) }
func (o originID) String() string { return hex.EncodeToString(o[:]) }

// parseOrigin reads an origin's 16 hex digits.
func parseOrigin(s string) (originID, bool) {
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != originLen {
		return originID{}, false
	}
	return originID(b), true
}

// originSummary is what a summary says of one origin.
type originSummary struct {
	count  int
	digest [idLen]byte
}

// summaryOf is the summary of an origin's ids, sorted.
func summaryOf(ids []recID) originSummary {
	h := sha256.New()
	for _, id := range ids {
		h.Write(id[:])
	}
	sum := originSummary{count: len(ids)}
	copy(sum.digest[:], h.Sum(nil))
	return sum
}

type summaryEntry struct {
	origin originID
	originSummary
}

// wholeDigest is the digest of a scope's summary entries, origins
// increasing: equal wholes, equal record sets.
func wholeDigest(entries []summaryEntry) [idLen]byte {
	h := sha256.New()
	var b []byte
	for _, e := range entries {
		b = appendSummaryEntry(b[:0], e)
		h.Write(b)
	}
	var whole [idLen]byte
	copy(whole[:], h.Sum(nil))
	return whole
}

func appendSummaryEntry(b []byte, e summaryEntry) []byte {
	b = append(b, e.origin[:]...)
	b = binary.AppendUvarint(b, uint64(e.count))
	return append(b, e.digest[:]...)
}

// ---- frames ----

var errProtocol = errors.New("sync protocol violation")

func violation(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errProtocol, fmt.Sprintf(format, args...))
}

type byteReader interface {
	io.Reader
	io.ByteReader
}

// readFrame reads one frame of at most limit bytes, refusing a longer one
// before reading its body. The body aliases *buf, which is grown as needed
// and reused by the next call.
func readFrame(r byteReader, limit int, buf *[]byte) ([]byte, error) {
	l, err := binary.ReadUvarint(r)
	if err != nil {
		return nil, err
	}
	if l > uint64(limit) {
		return nil, violation("frame of %d bytes, the limit is %d", l, limit)
	}
	if cap(*buf) < int(l) {
		*buf = make([]byte, l)
	}
	b := (*buf)[:l]
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, err
	}
	return b, nil
}

// writeFrame writes body as one frame and returns the bytes it took.
func writeFrame(w io.Writer, body []byte) (int, error) {
	var hdr [binary.MaxVarintLen64]byte
	k := binary.PutUvarint(hdr[:], uint64(len(body)))
	if _, err := w.Write(hdr[:k]); err != nil {
		return k + len(body), err
	}
	_, err := w.Write(body)
	return k + len(body), err
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

// ---- 1. SUMMARY ----

// summaryMsg is a SUMMARY: the whole digest alone, with each bucket's
// digest (buckets), or (full) with the entries of some or every origin;
// a ranged one lists those from lo to hi alone.
type summaryMsg struct {
	team    string
	full    bool
	whole   [idLen]byte
	entries []summaryEntry
	buckets *bucketDigests
	ranged  bool
	lo, hi  originID
}

// span is what a full summary of the origins of within lists.
func (m summaryMsg) span(within bucketSet) span {
	if !m.ranged {
		return span{buckets: within, hi: lastOrigin}
	}
	return span{buckets: within, lo: m.lo, hi: m.hi}
}

// encodeSummary writes m; the entries of a summary that is not full are
// left out.
func encodeSummary(m summaryMsg) []byte {
	b := binary.AppendUvarint(nil, uint64(len(m.team)))
	b = append(b, m.team...)
	if m.buckets != nil {
		b = append(b, summaryBuckets)
		b = append(b, m.whole[:]...)
		for _, d := range m.buckets {
			b = append(b, d[:]...)
		}
		return b
	}
	if !m.full {
		b = append(b, summaryWhole)
		return append(b, m.whole[:]...)
	}
	if m.ranged {
		b = append(b, summaryRange)
		b = append(b, m.whole[:]...)
		b = append(b, m.lo[:]...)
		b = append(b, m.hi[:]...)
	} else {
		b = append(b, summaryFull)
		b = append(b, m.whole[:]...)
	}
	b = binary.AppendUvarint(b, uint64(len(m.entries)))
	for _, e := range m.entries {
		b = appendSummaryEntry(b, e)
	}
	return b
}

func decodeSummary(body []byte) (summaryMsg, error) {
	var m summaryMsg
	d := &dec{b: body}
	tl := d.uvarint(maxTeamLen)
	m.team = string(d.take(tl))
	mode := d.byte1()
	switch {
	case d.err != nil:
	case mode == summaryWhole || mode == summaryFull || mode == summaryBuckets || mode == summaryRange:
		m.full = mode == summaryFull || mode == summaryRange
		m.ranged = mode == summaryRange
	default:
		d.err = violation("unknown summary mode %d", mode)
	}
	copy(m.whole[:], d.take(idLen))
	if mode == summaryBuckets && d.err == nil {
		m.buckets = new(bucketDigests)
		for k := range m.buckets {
			copy(m.buckets[k][:], d.take(bucketDigestLn))
		}
	}
	if m.ranged {
		m.lo, m.hi = d.origin(), d.origin()
		if d.err == nil && cmpOrigin(m.lo, m.hi) > 0 {
			d.err = violation("summary range ends before it starts")
		}
	}
	if !m.full || d.err != nil {
		return m, d.end()
	}
	m.entries = d.summaryEntries()
	if m.ranged && d.err == nil && len(m.entries) > 0 {
		if cmpOrigin(m.entries[0].origin, m.lo) < 0 || cmpOrigin(m.entries[len(m.entries)-1].origin, m.hi) > 0 {
			d.err = violation("summary lists an origin out of its range")
		}
	}
	return m, d.end()
}

// summaryEntries reads n:uvarint n×( origin count:uvarint digest ).
func (d *dec) summaryEntries() []summaryEntry {
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
	return out
}

// ---- 2. DIFF ----

type diffEntry struct {
	origin originID
	ids    []recID
}

// encodeDiff writes a DIFF of status 0 (statusOK) listing entries. A DIFF
// of another status is that status byte alone.
func encodeDiff(entries []diffEntry) []byte {
	b := []byte{statusOK}
	b = binary.AppendUvarint(b, uint64(len(entries)))
	for _, e := range entries {
		b = append(b, e.origin[:]...)
		b = appendIDs(b, e.ids)
	}
	return b
}

// encodeBuckets writes a DIFF of status 6 flagging the buckets of b.
func encodeBuckets(b bucketSet) []byte { return append([]byte{statusBuckets}, b[:]...) }

// diffMsg is a DIFF: its status and, for statusOK its entries, for
// statusBuckets the buckets that differ.
type diffMsg struct {
	status  byte
	entries []diffEntry
	buckets bucketSet
}

// decodeDiff reads a DIFF.
func decodeDiff(body []byte) (diffMsg, error) {
	d := &dec{b: body}
	m := diffMsg{status: d.byte1()}
	if d.err == nil && m.status == statusBuckets {
		copy(m.buckets[:], d.take(len(m.buckets)))
		return m, d.end()
	}
	if d.err != nil || m.status != statusOK {
		return m, d.err
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
	m.entries = out
	return m, d.end()
}

// ---- 3. REQUEST ----

func encodeRequest(want, offer []recID) []byte {
	return appendIDs(appendIDs(nil, want), offer)
}

// decodeRequest checks the limits only: that every wanted id was listed,
// once, is the responder's to check.
func decodeRequest(body []byte) (want, offer []recID, err error) {
	d := &dec{b: body}
	want = d.ids(maxIDs, false)
	offer = d.ids(maxIDs, false)
	if err := d.end(); err != nil {
		return nil, nil, err
	}
	return want, offer, nil
}

// ---- 4. ACCEPT ----

func encodeAccept(ids []recID) []byte { return appendIDs(nil, ids) }

// decodeAccept checks the limits only: that every id was offered is the
// initiator's to check.
func decodeAccept(body []byte) ([]recID, error) {
	d := &dec{b: body}
	ids := d.ids(maxIDs, false)
	if err := d.end(); err != nil {
		return nil, err
	}
	return ids, nil
}
