package gossip

// What sync takes from a peer, and when a round goes back to it. Keys are
// free and an open team's topic is open to whoever knows its name, so a
// peer that always has more must not fill the memory: each session takes
// at most Params.SyncTakeRecords and SyncTakeBytes of records of origins
// this memory does not admit, and one peer gives at most
// SyncPeerTakeRecords and SyncPeerTakeBytes of them per hour. Past a budget
// a session asks for (and accepts) no more of them, and drops what comes
// over the bytes; the rest waits for a later session. Records of admitted
// origins are asked for first and outside the budgets: they are few (the
// admitted set, each origin held to the per-origin cap), and strangers'
// records must not starve them. Records taken start a round (records that
// came by sync reached this node alone), so a round skips a peer that gave
// records less than SyncPeerRest ago and runs again when the rest is over.

import (
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/remem/remem/protocol"
)

// takeWindow is what the per-peer budgets are counted over: a peer's
// window starts with the first record taken from it, and its budget is
// whole again when the window is over (so no hour takes more than twice
// the budget).
const takeWindow = time.Hour

// maxTakePeers bounds the peers the ledger remembers. Past it, peers whose
// window and rest are over are forgotten first (they are as new), then the
// one that gave records longest ago: a peer forgotten starts afresh, as
// any new key does.
const maxTakePeers = 4096

// takeLedger is, per peer, what sync took of strangers' records in the
// peer's window, and when records were last taken from it.
type takeLedger struct {
	mu       sync.Mutex
	records  int // the budget per window
	bytes    int
	rest     time.Duration
	peers    map[peer.ID]*peerTake
	restEnds chan time.Time // a round skipped a resting peer until then
}

type peerTake struct {
	records, bytes int       // taken in the window
	since          time.Time // the window's start
	took           time.Time // when records were last taken
}

func newTakeLedger(p Params) *takeLedger {
	return &takeLedger{
		records: p.SyncPeerTakeRecords, bytes: p.SyncPeerTakeBytes, rest: p.SyncPeerRest,
		peers: map[peer.ID]*peerTake{}, restEnds: make(chan time.Time, 1),
	}
}

// peer returns p's entry, its window begun afresh when the last is over;
// l.mu is held.
func (l *takeLedger) peer(p peer.ID, now time.Time) *peerTake {
	t := l.peers[p]
	if t == nil {
		if len(l.peers) >= maxTakePeers {
			l.forget(now)
		}
		t = &peerTake{since: now}
		l.peers[p] = t
	}
	if now.Sub(t.since) >= takeWindow {
		t.records, t.bytes, t.since = 0, 0, now
	}
	return t
}

// forget drops the peers whose window and rest are over, or else the one
// that gave records longest ago; l.mu is held.
func (l *takeLedger) forget(now time.Time) {
	var oldest peer.ID
	for p, t := range l.peers {
		if now.Sub(t.since) >= takeWindow && now.Sub(t.took) >= l.rest {
			delete(l.peers, p)
		} else if oldest == "" || t.took.Before(l.peers[oldest].took) {
			oldest = p
		}
	}
	if len(l.peers) >= maxTakePeers {
		delete(l.peers, oldest)
	}
}

// left is how many strangers' records p may still give in its window.
func (l *takeLedger) left(p peer.ID, now time.Time) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.peers[p]
	if t == nil || now.Sub(t.since) >= takeWindow {
		return l.records
	}
	return l.records - t.records
}

// take charges p one record of size bytes (a stranger's, or free when
// admitted), and reports false when p's budget has no room for it. Every
// record taken starts p's rest.
func (l *takeLedger) take(p peer.ID, now time.Time, size int, admitted bool) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.peer(p, now)
	if !admitted {
		if t.records >= l.records || t.bytes+size > l.bytes {
			return false
		}
		t.records++
		t.bytes += size
	}
	t.took = now
	return true
}

// refund gives back a stranger's record of size bytes that take charged p
// in its current window and the memory did not keep (Holder.Deliver
// failed): records not kept take nothing of the hour.
func (l *takeLedger) refund(p peer.ID, now time.Time, size int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.peers[p]
	if t == nil || now.Sub(t.since) >= takeWindow {
		return // a new window owes nothing
	}
	t.records = max(0, t.records-1)
	t.bytes = max(0, t.bytes-size)
}

// restsUntil is when p's rest ends, and whether it is still resting.
func (l *takeLedger) restsUntil(p peer.ID, now time.Time) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.peers[p]
	if t == nil || t.took.IsZero() {
		return time.Time{}, false
	}
	end := t.took.Add(l.rest)
	return end, now.Before(end)
}

// skipped tells the round loop that a round left out a resting peer until
// end, so that it runs again then; the earliest end waiting is kept.
func (l *takeLedger) skipped(end time.Time) {
	select {
	case l.restEnds <- end:
	case prev := <-l.restEnds:
		l.skipped(minTime(prev, end))
	}
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// intake is what one session may still take of strangers' records: its
// own budget, within what the peer's hour leaves (the ledger is charged
// record by record, so concurrent sessions with a peer share its hour).
type intake struct {
	n       *Node
	p       peer.ID
	records int // of the session's budget, left
	bytes   int
}

func (n *Node) newIntake(p peer.ID) *intake {
	return &intake{n: n, p: p, records: n.p.SyncTakeRecords, bytes: n.p.SyncTakeBytes}
}

// admits reports whether the holder admits origin.
func (n *Node) admits(origin string) bool {
	return n.holder.Admits(origin)
}

func (n *Node) admitsOrigin(o originID) bool { return n.admits(o.String()) }

// room is how many strangers' records the session may still ask for.
func (in *intake) room() int {
	return max(0, min(in.records, in.n.takes.left(in.p, in.n.now())))
}

// acceptRoom is how many offered ids a responder accepts. An offer's ids
// carry no origin, so besides the strangers' room it takes, for each
// admitted origin of the DIFF, as many as the initiator's summary says it
// holds (at most the per-origin cap): an honest initiator offers those
// first (planRequest). A stranger's record that comes in that room past
// the budget is dropped (take).
func (in *intake) acceptRoom(origins map[originID]bool, theirs []summaryEntry) int {
	room := in.room()
	for _, e := range theirs {
		if origins[e.origin] && in.n.admitsOrigin(e.origin) {
			room += min(e.count, protocol.MaxOriginRecs)
		}
	}
	return room
}

// take charges one record of origin and size, and reports whether it is
// taken; a stranger's record over a budget is not (it is dropped).
func (in *intake) take(origin string, size int) bool {
	admitted := in.n.admits(origin)
	if !admitted && (in.records < 1 || in.bytes < size) {
		return false
	}
	if !in.n.takes.take(in.p, in.n.now(), size, admitted) {
		return false
	}
	if !admitted {
		in.records--
		in.bytes -= size
	}
	return true
}

// refund undoes take for a record of origin and size the memory did not
// keep, so a later session may ask for it within the same budgets.
func (in *intake) refund(origin string, size int) {
	if in.n.admits(origin) {
		return // it took nothing
	}
	in.records++
	in.bytes += size
	in.n.takes.refund(in.p, in.n.now(), size)
}

// wantFirst orders the ids of admitted origins first (their order kept)
// and cuts the strangers' to room: what a session asks for.
func wantFirst(ids []recID, admitted func(recID) bool, room int) []recID {
	var mine, strangers []recID
	for _, id := range ids {
		if admitted(id) {
			mine = append(mine, id)
		} else if len(strangers) < room {
			strangers = append(strangers, id)
		}
	}
	return append(mine, strangers...)
}
