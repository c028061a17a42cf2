package gossip

// When sync sessions run, and what keeps them from piling up: rounds
// (SyncNow, every Params.SyncInterval and when a skipped peer's rest ends,
// on connect in discovery.go), the per-peer locks of this node's own
// sessions, the responder's per-peer marks and slots, and the ids sessions
// are fetching. What sessions take, and the rests, are in synctake.go.

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
)

// syncState is the per-team state shared by concurrent sessions.
type syncState struct {
	fetching claims        // ids sessions are fetching or fetched lately
	snaps    snapshotCache // the last snapshot of what this node holds
	windows  windows       // where the next summary to each peer starts
}

// maxWindows bounds the peers windows remembers: past it, it forgets them
// all, and their next summaries start from the first origin.
const maxWindows = 1024

// windows are, per peer, the origin the next summary of differing buckets
// starts from, when they hold more origins than one summary lists: each
// session lists the window after the last, so every origin is compared in
// turn.
type windows struct {
	mu   sync.Mutex
	next map[peer.ID]originID
}

func (w *windows) from(p peer.ID) originID {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.next[p]
}

// set records where the next summary to p starts (the first origin: none
// to remember).
func (w *windows) set(p peer.ID, next originID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if next == (originID{}) {
		delete(w.next, p)
		return
	}
	if w.next == nil || len(w.next) >= maxWindows {
		w.next = map[peer.ID]originID{}
	}
	w.next[p] = next
}

func newSyncState() *syncState {
	return &syncState{fetching: claims{pending: map[recID]struct{}{}, recent: map[recID]time.Time{}}}
}

// claims are the ids a session of this node is fetching, and those fetched
// lately, so two sessions do not fetch one record twice.
type claims struct {
	mu      sync.Mutex
	pending map[recID]struct{}  // ids a running session is fetching
	recent  map[recID]time.Time // ids fetched lately (a snapshot taken earlier may lack them)
}

// claim returns the ids of ids no other session is fetching or has just
// fetched, and marks them pending.
func (s *claims) claim(ids []recID, ttl time.Duration) []recID {
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
func (s *claims) release(ids []recID, got map[recID]bool) {
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

// SyncNow runs a catch-up round now: for each team, a session with up to
// Params.SyncPeers random peers of its topic (other connected remem peers
// when the topic has too few), one after the other, leaving out peers that
// gave records less than Params.SyncPeerRest ago. It returns when the
// round is over or ctx ends. The node calls it on every sleep, and when
// records arrive.
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

// pickSyncPeers picks up to Params.SyncPeers members of t that speak sync
// and are not resting, peers of its topic first.
func (n *Node) pickSyncPeers(t *team) []peer.ID {
	var topic, other []peer.ID
	inTopic := map[peer.ID]bool{}
	for _, p := range t.t.ListPeers() {
		if t.members.hasPeer(p) && n.speaksSync(p) {
			inTopic[p] = true
			if n.awake(p) {
				topic = append(topic, p)
			}
		}
	}
	rand.Shuffle(len(topic), func(i, j int) { topic[i], topic[j] = topic[j], topic[i] })
	if len(topic) < n.p.SyncPeers {
		for _, p := range n.host.Network().Peers() {
			if inTopic[p] || !t.members.hasPeer(p) {
				continue
			}
			if n.speaksSync(p) && n.awake(p) {
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

// awake reports whether a round may go to p: not while p rests after
// giving records (Params.SyncPeerRest), when the round loop is told to run
// again as the rest ends.
func (n *Node) awake(p peer.ID) bool {
	now := n.now()
	end, resting := n.takes.restsUntil(p, now)
	if resting {
		n.takes.skipped(time.Now().Add(end.Sub(now)))
	}
	return !resting
}

// syncLoop runs a round every Params.SyncInterval (±10%), and sooner when
// a round left out a resting peer: as soon as its rest ends.
func (n *Node) syncLoop(ctx context.Context) {
	if n.p.SyncInterval <= 0 {
		return
	}
	for {
		d := n.p.SyncInterval
		d += time.Duration(rand.Int64N(int64(d)/5+1)) - d/10
		if !n.waitRound(ctx, time.Now().Add(d)) {
			return
		}
		n.SyncNow(ctx)
	}
}

// waitRound waits until due, or the end of a rest a round skipped if that
// comes first; false when ctx ended.
func (n *Node) waitRound(ctx context.Context, due time.Time) bool {
	for {
		timer := time.NewTimer(time.Until(due))
		select {
		case <-ctx.Done():
			timer.Stop()
			return false
		case <-timer.C:
			return true
		case end := <-n.takes.restEnds:
			timer.Stop()
			due = minTime(due, end)
		}
	}
}
