package metrics

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// probeTimeout bounds a probe's check, well within the shortest scrape
// timeout a Prometheus is likely to use (1 s with a 1 s interval), so a
// Redis that does not answer makes the gauge 0 instead of failing the
// whole scrape.
const probeTimeout = 500 * time.Millisecond

// Probe is a gauge measured when /metrics is scraped: 1 when its check
// passes within probeTimeout, 0 when it does not, nothing before a check
// is set. Asking at scrape time, rather than keeping what the requests
// last saw, makes the value as fresh as the scrape whether or not anyone
// is calling the service (docs/operations.md, "FacadeRedisUnreachable").
type Probe struct {
	desc  *prometheus.Desc
	check atomic.Pointer[func(context.Context) error]
}

func newProbe(desc *prometheus.Desc) *Probe { return &Probe{desc: desc} }

// Describe is prometheus.Collector's.
func (p *Probe) Describe(ch chan<- *prometheus.Desc) { ch <- p.desc }

// Collect is prometheus.Collector's: it runs the check.
func (p *Probe) Collect(ch chan<- prometheus.Metric) {
	check := p.check.Load()
	if check == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	up := 1.0
	if (*check)(ctx) != nil {
		up = 0
	}
	ch <- prometheus.MustNewConstMetric(p.desc, prometheus.GaugeValue, up)
}

// ProbeRedis makes RedisUp (facade_redis_up) ask ping at every scrape.
func (m *Metrics) ProbeRedis(ping func(context.Context) error) { m.RedisUp.check.Store(&ping) }
