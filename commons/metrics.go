package commons

import (
	"errors"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

type metrics struct {
	puts     *prometheus.CounterVec
	refused  *prometheus.CounterVec
	skipped  prometheus.Counter
	gets     prometheus.Counter
	putTime  prometheus.Histogram
	endpoint http.Handler
}

// register registers c, or reuses the collector already registered under
// the same name (a server restarted on the same registry).
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if old, ok := are.ExistingCollector.(C); ok {
				return old, nil
			}
		}
		return c, err
	}
	return c, nil
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	var gather prometheus.Gatherer
	if reg == nil {
		r := prometheus.NewRegistry()
		reg, gather = r, r
	} else if g, ok := reg.(prometheus.Gatherer); ok {
		gather = g
	} else {
		gather = prometheus.DefaultGatherer
	}
	m := &metrics{}
	var err error
	if m.puts, err = register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "remem_commons_puts_total", Help: "PUTs of origin files, by HTTP status code.",
	}, []string{"code"})); err != nil {
		return nil, err
	}
	if m.refused, err = register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "remem_commons_refused_lines_total", Help: "Record lines refused in PUTs, by reason.",
	}, []string{"reason"})); err != nil {
		return nil, err
	}
	if m.skipped, err = register(reg, prometheus.NewCounter(prometheus.CounterOpts{
		Name: "remem_commons_skipped_lines_total", Help: "Lines of an unknown version in accepted PUTs, skipped and not stored.",
	})); err != nil {
		return nil, err
	}
	if m.gets, err = register(reg, prometheus.NewCounter(prometheus.CounterOpts{
		Name: "remem_commons_gets_total", Help: "GETs of origin files and of the index.",
	})); err != nil {
		return nil, err
	}
	if m.putTime, err = register(reg, prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "remem_commons_put_duration_seconds", Help: "Time to handle a PUT, from headers to answer.",
		Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14),
	})); err != nil {
		return nil, err
	}
	m.endpoint = promhttp.HandlerFor(gather, promhttp.HandlerOpts{})
	return m, nil
}
