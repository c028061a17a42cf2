package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/remem/remem/node/consolidate"
	"github.com/remem/remem/protocol"
	"github.com/remem/remem/store"
)

// Params are the memory's tunables.
type Params struct {
	State protocol.StateParams
	// Threshold is the similarity at which an event joins a lesson.
	Threshold float64
	// ConfirmThreshold is the similarity at which an event confirms a
	// candidate (SPEC §7) by similarity alone: a confirmation makes a
	// lesson count toward common, so it is calibrated for precision, not
	// for grouping. A pair a judge said is the same scores 1, and an
	// event's "matches" confirms what it names. Zero means the larger of
	// Threshold and consolidate.DefaultConfirmThreshold.
	ConfirmThreshold float64
}

// confirmThreshold is ConfirmThreshold with its default.
func (p Params) confirmThreshold() float64 {
	if p.ConfirmThreshold > 0 {
		return p.ConfirmThreshold
	}
	return max(p.Threshold, consolidate.DefaultConfirmThreshold)
}

// DefaultParams are the protocol defaults (N = 3, W = 90 days).
func DefaultParams() Params {
	return Params{State: protocol.DefaultStateParams(), Threshold: consolidate.DefaultThreshold}
}

// TestnetParams keep N small and W short so a simulated network can show
// every state within a run.
func TestnetParams() Params {
	p := DefaultParams()
	p.State = protocol.StateParams{N: 3, W: 30 * time.Second}
	return p
}

// Config builds a Memory. A zero field takes the default its comment
// names; Open fills them in and calls Validate.
type Config struct {
	// Home is the memory's directory (zero: DefaultHome()).
	Home       string
	Params     Params                 // zero: DefaultParams()
	Similarity consolidate.Similarity // nil: lexical
	Writer     consolidate.Writer     // nil: the default writer
	// Model, when set, is the model the node's own sleeps ask (a CLI such
	// as claude -p, or a chat endpoint): it writes new lessons and
	// rewrites drafts through a consolidate.SamplingWriter and judges the
	// pairs in doubt (consolidate.JudgedSimilarity), within the budgets of
	// model.go; the default writer and the plain similarity stand when it
	// fails. A writer or judge carried by a sleep's context (the MCP
	// client's model) takes its place. ModelName names it in the writer
	// counts ("claude", "ollama:llama3.2").
	Model     consolidate.Sampler
	ModelName string
	Now       func() time.Time // nil: time.Now
	Logger    *slog.Logger     // nil: discard
	Store     store.Options
	// Create makes the home and its key when missing.
	Create bool
	// LockWait is how long Open waits for a home that another process
	// holds, unless that process is the home's running node (zero: fail
	// at once). A node starting while a short command holds its home
	// waits for it instead of exiting.
	LockWait time.Duration
	// Registry receives the remem_node_* metrics (nil: none are registered).
	Registry prometheus.Registerer
	// OnAccept, when set, is told of every record that was new to this
	// memory (added or replacing an older version), with the scope it came
	// by; the testnet measures arrival times with it.
	OnAccept func(scope string, rec *protocol.Record, at time.Time)
	// Layers are lessons.jsonl files composed over the lessons held for
	// every reader (SPEC §9), lowest first; each is read again when it
	// changes.
	Layers []LayerFile
	// Admission says which origins count as verifiers (SPEC §8); the zero
	// value admits this memory and the publishers of token-guarded commons
	// it pulls only.
	Admission Admission
	// Strangers bounds the records held of origins Admission does not
	// admit (zero fields: DefaultStrangerRecords, DefaultStrangerBytes).
	Strangers StrangerBudget
}

// Memory is one memory: its identity, its store and the rules that turn
// events into lessons and records into views. Safe for concurrent use.
type Memory struct {
	cfg   Config
	id    protocol.Identity
	store *store.Store
	log   *slog.Logger
	now   func() time.Time
	sim   consolidate.Similarity
	write consolidate.Writer
	// apiToken is what the local API takes (APITokenFile).
	apiToken string

	sleepMu   sync.Mutex // one sleep at a time
	mu        sync.Mutex // guards the counters below
	refused   map[protocol.Reason]int
	stats     Stats
	closed    bool
	metrics   *metrics
	origins   originCounts                // records held per scope and origin (the cap)
	strangers strangerTally               // what records of origins not admitted take
	layers    *layerFiles                 // the configured layers (SPEC §9)
	recent    recentCandidates            // the newest candidates, under sleepMu
	admit     atomic.Pointer[admittedSet] // the admitted set; nil: compute it again

	// changes counts changes to records and lessons; lessons.jsonl and the
	// lines sync offers are rebuilt only when it moved.
	changes     atomic.Uint64
	fileVersion atomic.Uint64
	fileWritten atomic.Int64 // unix nanoseconds of the last lessons.jsonl
	sleepSaved  atomic.Int64 // unix nanoseconds of the last persisted last_sleep
}

// changed notes that records or lessons changed.
func (m *Memory) changed() { m.changes.Add(1) }

// Version moves whenever the records or lessons held change.
func (m *Memory) Version() uint64 { return m.changes.Load() }

// Stats are the counters a running memory reports.
type Stats struct {
	Received  int       `json:"received"`
	Accepted  int       `json:"accepted"`
	Duplicate int       `json:"duplicate"`
	Skipped   int       `json:"skipped"`
	LastSleep time.Time `json:"last_sleep"`
}

// Open opens the memory at cfg.Home.
func Open(cfg Config) (*Memory, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("memory config: %w", err)
	}
	var (
		id  protocol.Identity
		err error
	)
	if cfg.Create {
		id, _, err = InitHome(cfg.Home)
	} else {
		id, err = LoadIdentity(cfg.Home)
	}
	if err != nil {
		return nil, err
	}
	met, err := newMetrics(cfg.Registry)
	if err != nil {
		return nil, fmt.Errorf("registering metrics: %w", err)
	}
	st, err := openStore(cfg)
	if err != nil {
		return nil, err
	}
	log := cfg.Logger.With("origin", id.Origin())
	// Under the store's lock: one process at a time replaces a token.
	token, err := openAPIToken(cfg.Home, log)
	if err != nil {
		return nil, errors.Join(err, st.Close())
	}
	m := &Memory{cfg: cfg, id: id, store: st, log: log, now: cfg.Now, apiToken: token,
		sim: cfg.Similarity, write: cfg.Writer, refused: map[protocol.Reason]int{}, metrics: met}
	m.layers = newLayerFiles(cfg.Layers, m.log)
	if err := m.noteAdmissionUpgrade(); err != nil {
		m.log.Warn("counting the lessons admitted verifiers made candidates: remem status will not say it", "err", err)
	}
	return m, nil
}

// Close closes the store. Idempotent.
func (m *Memory) Close() error {
	m.sleepMu.Lock()
	defer m.sleepMu.Unlock()
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	m.mu.Unlock()
	return m.store.Close()
}

// Identity is the memory's key pair.
func (m *Memory) Identity() protocol.Identity { return m.id }

// Origin is the memory's id.
func (m *Memory) Origin() string { return m.id.Origin() }

// Home is the memory's directory.
func (m *Memory) Home() string { return m.cfg.Home }

// APIToken is the bearer token its local API takes (APITokenFile), as read
// when the memory was opened.
func (m *Memory) APIToken() string { return m.apiToken }

// Stored is the store's read side: what the memory holds, for the code
// that looks without going through the memory (the calibrator, the
// testnet's measurements). Writes go through the memory's own methods.
func (m *Memory) Stored() store.Reader { return m.store.Reader() }

// Params are the memory's tunables.
func (m *Memory) Params() Params { return m.cfg.Params }

// Now is the memory's clock.
func (m *Memory) Now() time.Time { return m.now().UTC() }

// Stats returns the counters and refusals by reason.
func (m *Memory) Stats() (Stats, map[protocol.Reason]int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	refused := make(map[protocol.Reason]int, len(m.refused))
	for k, v := range m.refused {
		refused[k] = v
	}
	return m.stats, refused
}

func (m *Memory) similar(ctx context.Context, text string, g consolidate.Group) float64 {
	s, err := consolidate.Linkage(ctx, m.sim, text, g)
	if err != nil {
		m.log.Warn("similarity failed", "err", err)
		return 0
	}
	return s
}

func groupOf(l store.Lesson) consolidate.Group {
	return consolidate.Group{ID: l.Hash, Text: l.Text, Episodes: l.Episodes}
}
