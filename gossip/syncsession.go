package gossip

// What both sides of a sync session share: the stream with its deadlines
// and byte counts, sending and receiving records, and the accounting at
// the end. The initiator's steps are in syncinit.go, the responder's in
// syncanswer.go.
//
// Nothing the peer says is trusted: a record whose id was not asked for or
// comes twice ends the session, and every received line goes through
// protocol.VerifyBatch, the team's members check and an origin check (the
// record must be under the origin it was listed for) before Holder.Deliver
// with the team's scope. Only Holder.Held(scope) of that same team is ever
// offered, so records received in one scope are never sent into another.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	lp2pproto "github.com/libp2p/go-libp2p/core/protocol"

	"github.com/remem/remem/protocol"
)

// SyncProtocol is the stream protocol of catch-up sync.
const SyncProtocol = lp2pproto.ID("/remem/sync/1.0.0")

// deliverBatch is how many received records are handed to the holder at
// once.
const deliverBatch = 256

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

func newConn(s network.Stream) *conn {
	c := &conn{s: s, cr: &countingReader{r: s}, cw: &countingWriter{w: s}}
	c.br = bufio.NewReaderSize(c.cr, 16<<10)
	c.bw = bufio.NewWriterSize(c.cw, 16<<10)
	return c
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

// readFrame reads one frame of at most limit bytes. The body aliases a
// buffer reused by the next call.
func (c *conn) readFrame(limit int) ([]byte, error) {
	c.tick()
	return readFrame(c.br, limit, &c.buf)
}

func (c *conn) writeFrame(body []byte) error {
	c.tick()
	k, err := writeFrame(c.bw, body)
	c.out += k
	return err
}

func (c *conn) flush() error {
	c.tick()
	return c.bw.Flush()
}

// send writes one frame and flushes it: the other side's turn.
func (c *conn) send(body []byte) error {
	if err := c.writeFrame(body); err != nil {
		return err
	}
	return c.flush()
}

// status writes a DIFF frame that is a status byte alone.
func (c *conn) status(b byte) error { return c.send([]byte{b}) }

// sessionStats is the accounting common to both sides.
type sessionStats struct {
	recordsIn, recordsOut int
	overBudget            int   // records received and dropped over the take budget
	recordBytesOut        int64 // the record frames sent
}

// finish counts the session and closes its stream (a reset when it failed).
func (n *Node) finish(c *conn, st *sessionStats, err *error) {
	n.metrics.syncIn(c.cr.n)
	n.metrics.syncOut(c.cw.n)
	n.metrics.update(func(s *Stats) {
		s.SyncRecordsIn += st.recordsIn
		s.SyncRecordsOut += st.recordsOut
		s.SyncRecordsOverBudget += st.overBudget
		s.SyncRecordBytesOut += st.recordBytesOut
		if *err != nil {
			s.SyncFailures++
		} else {
			s.SyncSessions++
		}
	})
	// The session's own error is what counts; ending the stream after it
	// tells the peer nothing more.
	if *err != nil {
		_ = c.s.Reset()
	} else {
		_ = c.s.Close()
	}
}

// sendRecords writes the lines of ids this side holds in scope (read from
// the holder as it goes), then the end frame. With a budget it stops
// early, before the bytes sent would pass it (but after one record at
// least, so every session makes progress): the peer asks for the rest in
// its next session.
func (n *Node) sendRecords(c *conn, scope string, snap *snapshot, ids []recID, st *sessionStats) error {
	err := n.heldLines(scope, snap, ids, func(line []byte) (bool, error) {
		if c.budget > 0 && st.recordsOut > 0 && c.out+len(line)+2*binary.MaxVarintLen64 > c.budget {
			return false, nil
		}
		before := c.out
		if err := c.writeFrame(line); err != nil {
			return false, err
		}
		st.recordsOut++
		st.recordBytesOut += int64(c.out - before)
		return true, nil
	})
	if err != nil {
		return err
	}
	return c.send(nil)
}

// incoming is what a session expects of the records it receives.
type incoming struct {
	t      *team
	from   peer.ID
	expect map[recID]originID // the ids asked for (at most once each)
	// check returns a refusal reason for a verified record, or "".
	check func(id recID, rec *protocol.Record) string
	got   map[recID]bool // the ids that arrived (false: dropped over the budget)
	take  *intake        // what the session may still take
}

// recvRecords reads record frames until the end frame. Each must be one of
// in.expect (by id, at most once), passes admit and fits in.take before it
// is delivered, in batches, with ctx: records that arrived are delivered
// even when the session's deadline passed meanwhile, and ctx ends when the
// node closes. A record past the take budget is read and dropped, not a
// violation: the peer sends what was asked for.
func (n *Node) recvRecords(ctx context.Context, c *conn, in incoming, st *sessionStats) (ended error) {
	var batch []*protocol.Record
	var batchIDs []recID
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := n.holder.Deliver(ctx, Delivery{Scope: in.t.scope, From: in.from, BySync: true, Records: batch})
		if err != nil {
			for i, id := range batchIDs {
				in.got[id] = false                                 // not kept: a later session asks again,
				in.take.refund(batch[i].Origin, len(batch[i].Raw)) // within the budgets it took nothing of
			}
		}
		batch, batchIDs = nil, batchIDs[:0]
		if err != nil {
			return fmt.Errorf("keeping the records received: %w", err)
		}
		return nil
	}
	// What arrived is kept however the session ends; a failure to keep it
	// ends the session too.
	defer func() { ended = errors.Join(ended, flush()) }()
	for {
		body, err := c.readFrame(protocol.MaxLineBytes)
		if err != nil {
			return err
		}
		if len(body) == 0 {
			return nil
		}
		id := lineID(body)
		if _, ok := in.expect[id]; !ok {
			return violation("record %x was not asked for", id[:])
		}
		if _, twice := in.got[id]; twice {
			return violation("record %x sent twice", id[:])
		}
		in.got[id] = true
		rec := n.admit(in, id, bytes.Clone(body)) // Raw must not alias the frame buffer
		if rec == nil {
			continue
		}
		if !in.take.take(rec.Origin, len(body)) {
			in.got[id] = false // not fetched: a later session asks again
			st.overBudget++
			continue
		}
		st.recordsIn++
		batch, batchIDs = append(batch, rec), append(batchIDs, id)
		if len(batch) >= deliverBatch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
}

// admit verifies one received line and checks it is a member's and passes
// in.check; it returns the record, or nil after counting the refusal.
func (n *Node) admit(in incoming, id recID, line []byte) *protocol.Record {
	// Records arrive one frame at a time, each a batch of its own; sync
	// carries records of every origin, so the batch is unbound.
	b := protocol.VerifyBatch([]protocol.Line{{N: 1, Bytes: line}}, protocol.Bound{Source: in.from.String()}, n.now())
	if r, refused := b.First(); refused {
		if r.Reason == protocol.ReasonUnknownVersion {
			n.metrics.update(func(s *Stats) { s.Skipped++ })
		} else {
			n.metrics.rejectLine(string(r.Reason))
		}
		return nil
	}
	rec := b.Records[0]
	if !in.t.members.hasOrigin(rec.Origin) {
		n.metrics.rejectLine(ReasonNonMember)
		return nil
	}
	if reason := in.check(id, rec); reason != "" {
		n.metrics.rejectLine(reason)
		return nil
	}
	return rec
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
