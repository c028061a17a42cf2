package node

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/remem/remem/protocol"
)

// metrics are the memory's Prometheus counters (remem_node_*), served at
// the daemon's /metrics beside the gossip and Go runtime metrics.
type metrics struct {
	records  *prometheus.CounterVec // by outcome: accepted, duplicate, skipped, refused
	refused  *prometheus.CounterVec // by reason
	events   *prometheus.CounterVec // by outcome: taken, duplicate, rejected
	sleeps   prometheus.Counter
	signed   prometheus.Counter
	confirms prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		records: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "remem_node_records_total",
			Help: "Record lines received, by outcome."}, []string{"outcome"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "remem_node_refused_lines_total",
			Help: "Record lines refused, by reason."}, []string{"reason"}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "remem_node_events_total",
			Help: "Events reported by agents, by outcome."}, []string{"outcome"}),
		sleeps:   prometheus.NewCounter(prometheus.CounterOpts{Name: "remem_node_sleeps_total", Help: "Sleeps run."}),
		signed:   prometheus.NewCounter(prometheus.CounterOpts{Name: "remem_node_signed_records_total", Help: "Records this memory signed."}),
		confirms: prometheus.NewCounter(prometheus.CounterOpts{Name: "remem_node_confirmations_total", Help: "Confirmations this memory signed."}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []**prometheus.CounterVec{&m.records, &m.refused, &m.events} {
		if err := register(reg, c); err != nil {
			return nil, err
		}
	}
	for _, c := range []*prometheus.Counter{&m.sleeps, &m.signed, &m.confirms} {
		if err := register(reg, c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// register registers *c, or points *c at the collector already registered
// under its name: several memories in one process (the testnet) share the
// counters then.
func register[C prometheus.Collector](reg prometheus.Registerer, c *C) error {
	err := reg.Register(*c)
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if old, ok := are.ExistingCollector.(C); ok {
			*c = old
			return nil
		}
	}
	return err
}

func (m *metrics) received(accepted, duplicate, skipped int) {
	m.records.WithLabelValues("accepted").Add(float64(accepted))
	m.records.WithLabelValues("duplicate").Add(float64(duplicate))
	m.records.WithLabelValues("skipped").Add(float64(skipped))
}

// evicted counts strangers' records deleted past the budget.
func (m *metrics) evicted(n int) { m.records.WithLabelValues("evicted").Add(float64(n)) }

func (m *metrics) refusedLines(reasons map[protocol.Reason]int) {
	for r, n := range reasons {
		m.refused.WithLabelValues(string(r)).Add(float64(n))
		m.records.WithLabelValues("refused").Add(float64(n))
	}
}

func (m *metrics) ingested(rep IngestReport) {
	m.events.WithLabelValues("taken").Add(float64(rep.Taken))
	m.events.WithLabelValues("duplicate").Add(float64(rep.Duplicates))
	m.events.WithLabelValues("rejected").Add(float64(len(rep.Rejected)))
}

func (m *metrics) slept(rep SleepReport) {
	m.sleeps.Inc()
	m.signed.Add(float64(rep.Signed))
	m.confirms.Add(float64(rep.Confirmations))
}
