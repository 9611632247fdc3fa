// Package metrics defines every Prometheus collector the service exposes on
// /metrics (SPEC section 7), in one registry, so a reader sees the whole list
// here and packages record into them without owning any.
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Registry holds the collectors below plus the Go and process collectors.
var Registry = prometheus.NewRegistry()

var (
	// Requests counts HTTP requests by route template, method and status.
	Requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "facade_http_requests_total", Help: "HTTP requests by route, method and status.",
	}, []string{"route", "method", "status"})

	// Latency is the request duration by route template.
	Latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "facade_http_request_duration_seconds", Help: "HTTP request latency by route.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 10},
	}, []string{"route"})

	// Decisions counts authorization outcomes ("allow" or "deny") by operation.
	Decisions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "facade_authz_decisions_total", Help: "Authorization decisions by operation and outcome.",
	}, []string{"op", "outcome"})

	// PolicyReloads counts policy reload attempts by result ("ok" or "error").
	PolicyReloads = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "facade_policy_reloads_total", Help: "Policy reloads by result.",
	}, []string{"result"})

	// PolicyLastReloadOK is 1 when the last reload attempt succeeded, 0 when
	// a broken file was refused and the previous policy is still in force.
	PolicyLastReloadOK = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "facade_policy_last_reload_ok", Help: "1 if the last policy reload succeeded.",
	})

	// Transfers counts transfer attempts by outcome (created, replayed,
	// insufficient_funds, ...).
	Transfers = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "facade_transfers_total", Help: "Transfers by outcome.",
	}, []string{"outcome"})

	// UpstreamCalls counts calls to Bamboo by operation and result
	// ("ok", "not_found", "error", "timeout", "canceled", "open").
	UpstreamCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "facade_upstream_calls_total", Help: "Upstream Bamboo calls by operation and result.",
	}, []string{"op", "result"})

	// UpstreamLatency is the duration of upstream calls.
	UpstreamLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "facade_upstream_request_duration_seconds", Help: "Upstream call latency.",
	}, []string{"op"})

	// BreakerState is 0 closed, 1 half-open, 2 open.
	BreakerState = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "facade_upstream_breaker_state", Help: "Upstream circuit breaker: 0 closed, 1 half-open, 2 open.",
	})

	// Cache counts response-cache lookups by result ("hit", "miss", "stale").
	Cache = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "facade_cache_lookups_total", Help: "Response cache lookups by result.",
	}, []string{"result"})
)

func init() {
	Registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		Requests, Latency, Decisions, PolicyReloads, PolicyLastReloadOK,
		Transfers, UpstreamCalls, UpstreamLatency, BreakerState, Cache,
	)
}
