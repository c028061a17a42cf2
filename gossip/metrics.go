package gossip

import (
	"errors"
	"maps"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Reasons this package adds to protocol.Reason when it counts refusals.
const (
	ReasonMessageTooLarge = "message too large"    // a gossip message over protocol.MaxGossipMsg
	ReasonNonMember       = "non-member"           // a record or sender outside a private team
	ReasonWrongOrigin     = "wrong origin"         // a sync record not under the origin it was listed for
	ReasonNewOrigins      = "too many new origins" // a peer's messages of new strangers past Params.NewOriginsPerPeer
)

// Stats are counters since New. Maps are copies.
type Stats struct {
	Received         int            // gossip messages accepted from peers
	Ignored          int            // gossip messages ignored (duplicates, non-members, nothing new)
	RejectedMessages int            // gossip messages rejected (their sender is penalised)
	Rejected         map[string]int // refused record lines by reason (gossip and sync)
	Skipped          int            // lines skipped as an unknown version
	Published        int            // messages this node published
	Dropped          int            // accepted messages dropped before delivery (the holder fell behind; sync brings them)
	Undelivered      int            // records of accepted messages the holder failed to keep (Holder.Deliver's error; sync brings them)

	SyncSessions   int // sync sessions completed (either side)
	SyncFailures   int // sync sessions that failed
	SyncRecordsIn  int // records received by sync and handed to the holder
	SyncRecordsOut int // records sent by sync
	SyncBytesIn    int64
	SyncBytesOut   int64
	// SyncRecordBytesOut are the record frames among SyncBytesOut: what
	// this node served its peers' catch-up, as against the bytes of its
	// own (the records it received, and control both ways).
	SyncRecordBytesOut int64
	// SyncRecordsOverBudget are strangers' records a session received
	// past what it takes (Params.SyncTakeBytes, SyncPeerTakeBytes), and
	// dropped: a later session asks for them again.
	SyncRecordsOverBudget int
}

// metrics are the Prometheus counters and the Stats behind them.
type metrics struct {
	messages  *prometheus.CounterVec
	rejected  *prometheus.CounterVec
	syncBytes *prometheus.CounterVec

	mu sync.Mutex
	s  Stats
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		messages: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "remem_gossip_messages_total",
			Help: "Gossip messages received from peers, by validator verdict (accept, reject, ignore).",
		}, []string{"verdict"}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "remem_gossip_rejected_lines_total",
			Help: "Record lines refused by gossip (validator and catch-up sync), by reason.",
		}, []string{"reason"}),
		syncBytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "remem_gossip_sync_bytes_total",
			Help: "Bytes moved by the catch-up sync protocol, by direction (in, out).",
		}, []string{"direction"}),
		s: Stats{Rejected: map[string]int{}},
	}
	if reg == nil {
		return m, nil
	}
	var err error
	m.messages, err = register(reg, m.messages)
	if err != nil {
		return nil, err
	}
	m.rejected, err = register(reg, m.rejected)
	if err != nil {
		return nil, err
	}
	m.syncBytes, err = register(reg, m.syncBytes)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// register registers c, or reuses the collector already registered under
// its name (several nodes in one process share the counters then).
func register(reg prometheus.Registerer, c *prometheus.CounterVec) (*prometheus.CounterVec, error) {
	err := reg.Register(c)
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if old, ok := are.ExistingCollector.(*prometheus.CounterVec); ok {
			return old, nil
		}
	}
	return c, err
}

func (m *metrics) message(verdict string) {
	m.messages.WithLabelValues(verdict).Inc()
	m.mu.Lock()
	switch verdict {
	case "accept":
		m.s.Received++
	case "reject":
		m.s.RejectedMessages++
	case "ignore":
		m.s.Ignored++
	}
	m.mu.Unlock()
}

func (m *metrics) rejectLine(reason string) {
	m.rejected.WithLabelValues(reason).Inc()
	m.mu.Lock()
	m.s.Rejected[reason]++
	m.mu.Unlock()
}

func (m *metrics) update(f func(s *Stats)) {
	m.mu.Lock()
	f(&m.s)
	m.mu.Unlock()
}

func (m *metrics) syncIn(n int) {
	if n <= 0 {
		return
	}
	m.syncBytes.WithLabelValues("in").Add(float64(n))
	m.update(func(s *Stats) { s.SyncBytesIn += int64(n) })
}

func (m *metrics) syncOut(n int) {
	if n <= 0 {
		return
	}
	m.syncBytes.WithLabelValues("out").Add(float64(n))
	m.update(func(s *Stats) { s.SyncBytesOut += int64(n) })
}

func (m *metrics) stats() Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.s
	s.Rejected = maps.Clone(m.s.Rejected)
	return s
}
