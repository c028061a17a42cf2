package commons

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/remem/remem/protocol"
)

// peerRefreshEvery is how often a replica on a shared store reads the
// peer directory's keys again (one listing, and the entries that
// changed): a registration made at another replica is listed here within
// it.
const peerRefreshEvery = 2 * time.Second

func peerObject(origin string) string { return peersDir + "/" + origin + ".json" }

// peerStore keeps every entry in memory with an index by topic, so a
// listing reads no object and costs the sort of one topic's entries. The
// memory is about the envelope (usually 200–600 bytes, at most 8 KiB),
// 64 bytes per topic twice (entry and index) and ~200 bytes of maps per
// entry: under 1 KiB for a usual node, ~11 KiB at the limits. The entries
// are stored as peers/<origin>.json (on a directory, DataDir/peers); on a
// shared store the memory is refreshed every peerRefreshEvery and a PUT
// is a write conditional on the version it checked.
type peerStore struct {
	b      Blobs
	shared bool
	now    func() time.Time
	log    *slog.Logger

	locks [256]sync.Mutex // per-origin (striped): one writer of an origin at a time in this process

	mu        sync.Mutex // guards entries, vers, byTopic, lastSweep
	entries   map[string]*peerEntry
	vers      map[string]string // origin → the stored object's version
	byTopic   map[string]map[string]*peerEntry
	lastSweep time.Time

	refreshMu sync.Mutex
	refreshed time.Time
}

// openPeerStore loads the entries from b, removing those that expired
// while no server ran. Each entry's envelope is verified again (a damaged
// one is skipped, never served), which costs one signature check per
// entry at start.
func openPeerStore(ctx context.Context, b Blobs, now func() time.Time, log *slog.Logger) (*peerStore, error) {
	ps := &peerStore{b: b, shared: b.Shared(), now: now, log: log, entries: map[string]*peerEntry{},
		vers: map[string]string{}, byTopic: map[string]map[string]*peerEntry{}}
	if err := ps.load(ctx, true); err != nil {
		return nil, fmt.Errorf("commons peer directory: %w", err)
	}
	ps.lastSweep, ps.refreshed = now(), now()
	return ps, nil
}

// load reads the entries whose stored version is not the one in memory,
// and drops from memory those no longer stored. At start (removeExpired)
// it deletes the expired ones too.
func (ps *peerStore) load(ctx context.Context, removeExpired bool) error {
	t := ps.now()
	seen := map[string]bool{}
	err := ps.b.List(ctx, peersDir+"/", "", func(key, ver string) error {
		origin, ok := strings.CutSuffix(strings.TrimPrefix(key, peersDir+"/"), ".json")
		if !ok || !protocol.ValidOrigin(origin) {
			return nil
		}
		seen[origin] = true
		ps.mu.Lock()
		known := ps.vers[origin] == ver && ver != ""
		ps.mu.Unlock()
		if known {
			return nil
		}
		data, ver, err := ps.b.Get(ctx, key)
		if errors.Is(err, ErrNotExist) {
			delete(seen, origin)
			return nil
		}
		if err != nil {
			return err
		}
		e, err := decodePeerEntry(data, origin)
		switch {
		case err != nil:
			ps.log.Warn("commons peer entry skipped", "key", key, "err", err)
			ps.mu.Lock()
			ps.vers[origin] = ver // a PUT replaces it
			ps.mu.Unlock()
		case removeExpired && e.expired(t):
			if err := ps.b.Delete(ctx, key); err != nil {
				ps.log.Warn("commons peer entry expired but not removed", "key", key, "err", err)
			}
		default:
			ps.mu.Lock()
			ps.setLocked(e, ver)
			ps.mu.Unlock()
		}
		return nil
	})
	if err != nil {
		return err
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for o := range ps.entries {
		if !seen[o] {
			ps.dropLocked(o)
		}
	}
	return nil
}

// refresh reloads what other replicas changed, at most every
// peerRefreshEvery (never on a store of this process's own).
func (ps *peerStore) refresh(ctx context.Context) {
	if !ps.shared {
		return
	}
	ps.refreshMu.Lock()
	defer ps.refreshMu.Unlock()
	if ps.now().Sub(ps.refreshed) < peerRefreshEvery {
		return
	}
	if err := ps.load(ctx, false); err != nil {
		ps.log.Error("commons peer directory not refreshed from the store", "store", ps.b.String(), "err", err)
		return
	}
	ps.refreshed = ps.now()
}

// decodePeerEntry reads a stored entry of origin and verifies it as a PUT
// would have been.
func decodePeerEntry(data []byte, origin string) (*peerEntry, error) {
	var e peerEntry
	if err := json.Unmarshal(data, &e); err != nil {
		return nil, err
	}
	signer, pr, err := openPeerEnvelope(e.Envelope)
	switch {
	case err != nil:
		return nil, err
	case e.Origin != origin || signer != origin:
		return nil, fmt.Errorf("the entry is of origin %q, signed by %s", e.Origin, signer)
	case pr.Seq != e.Seq:
		return nil, fmt.Errorf("the entry says seq %d, its record %d", e.Seq, pr.Seq)
	}
	if err := checkTopics(e.Topics); err != nil {
		return nil, err
	}
	return &e, nil
}

// setLocked indexes e (stored as version ver) in place of its origin's
// entry. Call with mu held.
func (ps *peerStore) setLocked(e *peerEntry, ver string) {
	ps.dropLocked(e.Origin)
	ps.entries[e.Origin] = e
	ps.vers[e.Origin] = ver
	for _, t := range e.Topics {
		m := ps.byTopic[t]
		if m == nil {
			m = map[string]*peerEntry{}
			ps.byTopic[t] = m
		}
		m[e.Origin] = e
	}
}

// dropLocked removes origin's entry from the maps. Call with mu held.
func (ps *peerStore) dropLocked(origin string) {
	old := ps.entries[origin]
	delete(ps.vers, origin)
	if old == nil {
		return
	}
	delete(ps.entries, origin)
	for _, t := range old.Topics {
		delete(ps.byTopic[t], origin)
		if len(ps.byTopic[t]) == 0 {
			delete(ps.byTopic, t)
		}
	}
}

// errPeerConflict: the stored record of the origin is newer, or as new
// and different (the caller answers 409).
type errPeerConflict struct{ msg string }

func (e *errPeerConflict) Error() string { return e.msg }

// stored returns origin's stored entry and its version: from the store
// itself when it is shared (another replica may have written it), else
// from memory. A stored entry that does not decode counts as none, to be
// replaced.
func (ps *peerStore) stored(ctx context.Context, origin string) (*peerEntry, string, error) {
	if !ps.shared {
		ps.mu.Lock()
		defer ps.mu.Unlock()
		return ps.entries[origin], ps.vers[origin], nil
	}
	data, ver, err := ps.b.Get(ctx, peerObject(origin))
	if errors.Is(err, ErrNotExist) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	e, err := decodePeerEntry(data, origin)
	if err != nil {
		ps.log.Warn("commons peer entry damaged; a PUT replaces it", "origin", origin, "err", err)
		return nil, ver, nil
	}
	return e, ver, nil
}

// put stores origin's entry unless the stored one has a higher Seq, or the
// same Seq with another envelope or other topics: a token holder who
// replays an older record of a node cannot roll its entry back, and only
// a newly sealed record changes it. A PUT of exactly what is stored
// changes nothing, not even `updated` (as a file PUT): to stay listed past
// PeerTTL a node seals a fresh record (an expired one sent again is 409).
// The write is conditional on the version checked, so the rule holds
// across replicas.
func (ps *peerStore) put(ctx context.Context, origin string, seq uint64, env []byte, topics []string) (e *peerEntry, created, changed bool, err error) {
	l := &ps.locks[stripe(origin)]
	l.Lock()
	defer l.Unlock()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
	defer cancel()
	for range putTries {
		old, ver, err := ps.stored(ctx, origin)
		if err != nil {
			return nil, false, false, fmt.Errorf("reading the peer entry of %s: %w", origin, err)
		}
		if old != nil {
			switch {
			case seq < old.Seq:
				return nil, false, false, &errPeerConflict{fmt.Sprintf("the directory holds a newer record of %s (seq %d > %d); an older one is never taken back", origin, old.Seq, seq)}
			case seq == old.Seq && bytes.Equal(env, old.Envelope) && slices.Equal(topics, old.Topics):
				if old.expired(ps.now()) { // not yet deleted; a 200 would say it is listed
					return nil, false, false, &errPeerConflict{fmt.Sprintf("this record of %s expired at %s; seal a new one (a higher seq) to be listed again", origin, old.Updated.Add(PeerTTL).Format(time.RFC3339))}
				}
				return old, false, false, nil
			case seq == old.Seq:
				return nil, false, false, &errPeerConflict{fmt.Sprintf("the directory holds another record (or other topics) of %s with the same seq %d; seal a new record to replace it", origin, seq)}
			}
		}
		now := ps.now().UTC()
		e = &peerEntry{Origin: origin, Seq: seq, Envelope: env, Topics: topics, Updated: now, First: renewedFrom(old, now)}
		data, err := json.Marshal(e)
		if err != nil {
			return nil, false, false, err
		}
		nv, err := ps.b.Put(ctx, peerObject(origin), data, Cond{IfMatch: ver, IfAbsent: ver == ""})
		if errors.Is(err, ErrConflict) {
			continue // another replica stored an entry since: check against it
		}
		if err != nil {
			return nil, false, false, fmt.Errorf("storing the peer entry of %s: %w", origin, err)
		}
		ps.mu.Lock()
		ps.setLocked(e, nv)
		ps.mu.Unlock()
		return e, old == nil, true, nil
	}
	return nil, false, false, fmt.Errorf("storing the peer entry of %s: %w", origin, errBusy)
}

// list returns PeerListMax unexpired entries of topic in listingOrder,
// then deletes the expired ones it met, and once per peerSweepEvery every
// expired entry (so entries of topics nobody asks for go too).
func (ps *peerStore) list(ctx context.Context, topic string) []*peerEntry {
	ps.refresh(ctx)
	now := ps.now()
	var out []*peerEntry
	var expired []string
	ps.mu.Lock()
	for _, e := range ps.byTopic[topic] {
		if e.expired(now) {
			expired = append(expired, e.Origin)
		} else {
			out = append(out, e)
		}
	}
	ps.mu.Unlock()
	slices.SortFunc(out, listingOrder(now))
	for _, o := range expired {
		ps.expire(ctx, o, now)
	}
	ps.maybeSweep(ctx, now)
	return out[:min(len(out), PeerListMax)]
}

// listingOrder is the order of a listing, which keeps its first
// PeerListMax: the entries renewed within PeerAliveGap first, those that
// have stayed alive longest first; then the silent ones. Ties (entries
// registered once, say) go freshest first, then by origin. A flood of
// entries registered once cannot push out a member that has renewed even
// once since it registered; to outrank members, sybils must have stayed
// alive longer than they have, renewing all along.
func listingOrder(now time.Time) func(a, b *peerEntry) int {
	return func(a, b *peerEntry) int {
		if aa, ba := a.alive(now), b.alive(now); aa != ba {
			if aa {
				return -1
			}
			return 1
		}
		if a.alive(now) {
			if c := cmp.Compare(b.aliveFor(), a.aliveFor()); c != 0 {
				return c
			}
		}
		if c := b.Updated.Compare(a.Updated); c != 0 {
			return c
		}
		return strings.Compare(a.Origin, b.Origin)
	}
}

// maybeSweep deletes every expired entry if the last sweep is
// peerSweepEvery old: one pass over the entries in memory per hour.
func (ps *peerStore) maybeSweep(ctx context.Context, now time.Time) {
	ps.mu.Lock()
	if now.Sub(ps.lastSweep) < peerSweepEvery {
		ps.mu.Unlock()
		return
	}
	ps.lastSweep = now
	var expired []string
	for o, e := range ps.entries {
		if e.expired(now) {
			expired = append(expired, o)
		}
	}
	ps.mu.Unlock()
	for _, o := range expired {
		ps.expire(ctx, o, now)
	}
}

// expire deletes origin's entry if it is still expired at now (a PUT may
// have renewed it since it was seen expired). On a shared store the
// stored entry is read again first; a renewal at another replica between
// that read and the delete is lost (S3 has no conditional delete that
// every store offers), and the node's next renewal lists it again.
func (ps *peerStore) expire(ctx context.Context, origin string, now time.Time) {
	l := &ps.locks[stripe(origin)]
	l.Lock()
	defer l.Unlock()
	e, ver, err := ps.stored(ctx, origin)
	if err != nil {
		ps.log.Warn("commons peer entry expired but not removed", "origin", origin, "err", err)
		return
	}
	if e != nil && !e.expired(now) {
		ps.mu.Lock()
		ps.setLocked(e, ver)
		ps.mu.Unlock()
		return
	}
	ps.mu.Lock()
	ps.dropLocked(origin)
	ps.mu.Unlock()
	if err := ps.b.Delete(ctx, peerObject(origin)); err != nil {
		ps.log.Warn("commons peer entry expired but not removed; the next start removes it", "origin", origin, "err", err)
	}
}
