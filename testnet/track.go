package testnet

import (
	"crypto/sha256"
	"sync"
	"time"

	"github.com/remem/remem/protocol"
)

// recID names one record line: the first 16 bytes of SHA-256 over its bytes.
type recID [16]byte

func idOf(raw []byte) recID {
	sum := sha256.Sum256(raw)
	return recID(sum[:16])
}

// stateKey is one hash in one state.
type stateKey struct {
	hash  string
	state protocol.State
}

// nodeTrack is what one node accepted, as node.Config.OnAccept told it.
type nodeTrack struct {
	arrived map[recID]time.Time
	byHash  map[string]map[protocol.RecordKey]*protocol.Record
	stateAt map[stateKey]time.Time // when the node first computed a watched hash's state
	admit   protocol.Admitted      // the node's admitted set (Memory.Admitted)
}

// tracker follows every node's arrivals and the states they imply. It is
// fed from the nodes' delivery paths, so it only takes a lock and a map
// write or two per record.
type tracker struct {
	params protocol.StateParams

	mu     sync.Mutex
	nodes  map[int]*nodeTrack
	watch  map[string]bool // hashes whose state is followed
	notify chan struct{}
}

func newTracker(p protocol.StateParams) *tracker {
	return &tracker{params: p, nodes: map[int]*nodeTrack{}, watch: map[string]bool{}, notify: make(chan struct{}, 1)}
}

func (t *tracker) node(i int) *nodeTrack {
	nt := t.nodes[i]
	if nt == nil {
		nt = &nodeTrack{arrived: map[recID]time.Time{}, byHash: map[string]map[protocol.RecordKey]*protocol.Record{}, stateAt: map[stateKey]time.Time{}}
		t.nodes[i] = nt
	}
	return nt
}

// admit sets the admitted set node i computes its states with.
func (t *tracker) admit(i int, a protocol.Admitted) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.node(i).admit = a
}

// accept notes that node i now holds rec (it arrived, or the node signed it).
func (t *tracker) accept(i int, rec *protocol.Record, at time.Time) {
	id := idOf(rec.Raw)
	t.mu.Lock()
	nt := t.node(i)
	if _, ok := nt.arrived[id]; !ok {
		nt.arrived[id] = at
	}
	recs := nt.byHash[rec.Hash]
	if recs == nil {
		recs = map[protocol.RecordKey]*protocol.Record{}
		nt.byHash[rec.Hash] = recs
	}
	k := rec.SetKey()
	if old := recs[k]; old == nil || protocol.Supersedes(rec, old) {
		recs[k] = rec
	}
	if t.watch[rec.Hash] {
		t.noteState(nt, rec.Hash, at)
	}
	t.mu.Unlock()
	select {
	case t.notify <- struct{}{}:
	default:
	}
}

func (t *tracker) noteState(nt *nodeTrack, hash string, at time.Time) {
	recs := make([]*protocol.Record, 0, len(nt.byHash[hash]))
	for _, r := range nt.byHash[hash] {
		recs = append(recs, r)
	}
	st := protocol.ComputeState(hash, recs, at, t.params, nt.admit)
	k := stateKey{hash, st.State}
	if _, ok := nt.stateAt[k]; !ok {
		nt.stateAt[k] = at
	}
}

// watchHash starts following the state of hash at every node.
func (t *tracker) watchHash(hash string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.watch[hash] {
		return
	}
	t.watch[hash] = true
	now := time.Now()
	for _, nt := range t.nodes {
		if len(nt.byHash[hash]) > 0 {
			t.noteState(nt, hash, now)
		}
	}
}

// arrival returns when node i got record id.
func (t *tracker) arrival(i int, id recID) (time.Time, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	nt := t.nodes[i]
	if nt == nil {
		return time.Time{}, false
	}
	at, ok := nt.arrived[id]
	return at, ok
}

// stateTime returns when node i first computed state for hash.
func (t *tracker) stateTime(i int, hash string, state protocol.State) (time.Time, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	nt := t.nodes[i]
	if nt == nil {
		return time.Time{}, false
	}
	at, ok := nt.stateAt[stateKey{hash, state}]
	return at, ok
}

// expectation is one thing one node must come to hold: a record, or a
// state of a hash. since is when it could first have it.
type expectation struct {
	node  int
	rec   recID
	hash  string
	state protocol.State // "" for a record
	since time.Time
	what  string // for error messages
}

// met returns when e was met.
func (t *tracker) met(e expectation) (time.Time, bool) {
	if e.state != "" {
		return t.stateTime(e.node, e.hash, e.state)
	}
	return t.arrival(e.node, e.rec)
}
