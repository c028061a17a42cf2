package gossip

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/remem/remem/internal/forge"
	"github.com/remem/remem/internal/testutil"
	"github.com/remem/remem/protocol"
)

// memHolder is an in-memory Holder: per scope, a set of records by set key,
// merged with protocol.Supersedes.
type memHolder struct {
	NoLimits  // but for Admits, Room and HoldsHash below
	mu        sync.Mutex
	scopes    map[string]map[protocol.RecordKey]*protocol.Record
	delivered int
	viaSync   int             // of them, records Deliver was told came by sync
	full      map[string]bool // origins past the cap (Room 0)
	admitted  map[string]bool // origins Admits says yes to
	fail      error           // Deliver's error, when set: a store that fails
}

// Admits admits the origins
// admit named, and no other.
func (h *memHolder) Admits(origin string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.admitted[origin]
}

func (h *memHolder) admit(origins ...string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.admitted == nil {
		h.admitted = map[string]bool{}
	}
	for _, o := range origins {
		h.admitted[o] = true
	}
}

// Room: every origin has room unless full.
func (h *memHolder) Room(scope, origin string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.full[origin] {
		return 0
	}
	return protocol.MaxOriginRecs
}

// HoldsHash makes memHolder a HashHolder: a lesson or confirmation of
// hash is held in some scope.
func (h *memHolder) HoldsHash(hash string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, recs := range h.scopes {
		for k := range recs {
			if k.Hash == hash && k.Type != protocol.TypeRevocation {
				return true
			}
		}
	}
	return false
}

func newMemHolder() *memHolder {
	return &memHolder{scopes: map[string]map[protocol.RecordKey]*protocol.Record{}}
}

func (h *memHolder) Deliver(_ context.Context, d Delivery) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.fail != nil {
		return h.fail
	}
	h.delivered += len(d.Records)
	if d.BySync {
		h.viaSync += len(d.Records)
	}
	h.put(d.Scope, d.Records...)
	return nil
}

func (h *memHolder) put(scope string, recs ...*protocol.Record) {
	m := h.scopes[scope]
	if m == nil {
		m = map[protocol.RecordKey]*protocol.Record{}
		h.scopes[scope] = m
	}
	for _, r := range recs {
		k := r.SetKey()
		if cur := m[k]; cur == nil || protocol.Supersedes(r, cur) {
			m[k] = r
		}
	}
}

// add stores own records (as the node does before it publishes them).
func (h *memHolder) add(scope string, recs ...*protocol.Record) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.put(scope, recs...)
}

func (h *memHolder) Held(scope string) ([][]byte, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out [][]byte
	for _, r := range h.scopes[scope] {
		out = append(out, r.Raw)
	}
	return out, nil
}

func (h *memHolder) HeldLines(scope string, keys []protocol.RecordKey) ([][]byte, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([][]byte, len(keys))
	for i, k := range keys {
		if r := h.scopes[scope][k]; r != nil {
			out[i] = r.Raw
		}
	}
	return out, nil
}

func (h *memHolder) Known(rec *protocol.Record) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, m := range h.scopes {
		if cur := m[rec.SetKey()]; cur != nil && bytes.Equal(cur.Raw, rec.Raw) {
			return true
		}
	}
	return false
}

func (h *memHolder) count(scope string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.scopes[scope])
}

func (h *memHolder) has(scope string, rec *protocol.Record) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	cur := h.scopes[scope][rec.SetKey()]
	return cur != nil && bytes.Equal(cur.Raw, rec.Raw)
}

func (h *memHolder) deliveredCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.delivered
}

func (h *memHolder) syncCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.viaSync
}

// tnode is a running node in a test.
type tnode struct {
	*Node
	id     protocol.Identity
	holder *memHolder
	stop   func()
}

type nodeOpt func(*Config)

func withTeams(teams ...string) nodeOpt { return func(c *Config) { c.Teams = teams } }
func withBootstrap(ns ...*tnode) nodeOpt {
	return func(c *Config) {
		for _, n := range ns {
			c.Bootstrap = append(c.Bootstrap, n.Addrs()[0].String())
		}
	}
}
func withParams(f func(p *Params)) nodeOpt {
	return func(c *Config) { f(&c.Params) }
}

// startNode makes a node on 127.0.0.1 with TestnetParams and runs it; the
// test's cleanup stops and closes it.
func startNode(t testing.TB, opts ...nodeOpt) *tnode {
	t.Helper()
	n := newNode(t, opts...)
	n.run(t)
	return n
}

func newNode(t testing.TB, opts ...nodeOpt) *tnode {
	t.Helper()
	return newNodeWith(t, nil, opts...)
}

// newNodeWith makes a node whose Holder is wrap(h) for the node's
// memHolder h (h itself when wrap is nil).
func newNodeWith(t testing.TB, wrap func(*memHolder) Holder, opts ...nodeOpt) *tnode {
	t.Helper()
	id, err := protocol.GenerateIdentity()
	if err != nil {
		t.Fatal(err)
	}
	p := TestnetParams()
	cfg := Config{
		Identity: id,
		Listen:   []string{"/ip4/127.0.0.1/tcp/0"},
		Teams:    []string{"t"},
		Params:   p,
	}
	for _, o := range opts {
		o(&cfg)
	}
	h := newMemHolder()
	var holder Holder = h
	if wrap != nil {
		holder = wrap(h)
	}
	n, err := New(cfg, holder)
	if err != nil {
		t.Fatal(err)
	}
	tn := &tnode{Node: n, id: cfg.Identity, holder: h}
	t.Cleanup(func() {
		if tn.stop != nil {
			tn.stop()
		}
		if err := n.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return tn
}

func (n *tnode) run(t testing.TB) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	n.stop = func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("run: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("Run did not return after its context ended")
		}
	}
}

// eventually is the shared testutil.Eventually (the same arguments),
// under the name every test of this package calls.
var eventually = testutil.Eventually

var subjects = []string{"the linker", "the test runner", "the cache", "the formatter", "the race detector",
	"the module proxy", "the build server", "the code generator", "the profiler", "the package index"}

// lesson signs a distinct, valid error lesson.
func lesson(t testing.TB, id protocol.Identity, i int) *protocol.Record {
	t.Helper()
	text := fmt.Sprintf("Running %s in batch %d of the nightly job times out after the dependency update when step %d runs twice",
		subjects[i%len(subjects)], i/len(subjects), i)
	rec, err := protocol.SignLesson(id, protocol.LessonDraft{
		Kind: "error", Text: text, Seen: 1, Strength: 0.5, Updated: time.Now().Add(-time.Hour),
	})
	if err != nil {
		t.Fatalf("signing %q: %v", text, err)
	}
	return rec
}

func lessons(t testing.TB, id protocol.Identity, from, count int) []*protocol.Record {
	out := make([]*protocol.Record, count)
	for i := range out {
		out[i] = lesson(t, id, from+i)
	}
	return out
}

func raws(recs []*protocol.Record) [][]byte {
	out := make([][]byte, len(recs))
	for i, r := range recs {
		out[i] = r.Raw
	}
	return out
}

// forgeLesson writes a lesson line signed by id whatever its text says (the
// protocol's signer refuses instructions), as an attacker would.
func forgeLesson(id protocol.Identity, text string) []byte {
	return forge.Lesson(id, text, protocol.FormatTime(time.Now().Add(-time.Minute)))
}

// badSignature returns a copy of a valid line with one hex digit of its
// signature changed.
func badSignature(line []byte) []byte { return forge.BadSignature(line) }

func rawBytes(recs []*protocol.Record) int {
	n := 0
	for _, r := range recs {
		n += len(r.Raw)
	}
	return n
}

func connectedTo(n *tnode, other *tnode) bool {
	return slices.Contains(n.host.Network().Peers(), other.PeerID())
}

func addrInfo(t testing.TB, n *tnode) peer.AddrInfo {
	t.Helper()
	return peer.AddrInfo{ID: n.PeerID(), Addrs: n.host.Addrs()}
}
