// Package metrics defines every Prometheus collector the service exposes on
// /metrics (docs/contract.md §7), in one struct, so a reader sees the whole
// list here. There is no global registry: the binary creates one set with
// New, registers it on its own registry, and hands it to each part; a part
// given nil records into a private set nobody reads (tests that do not look
// at metrics), so tests never share counters and can run in parallel.
package metrics

import (
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Metrics are the service's collectors.
type Metrics struct {
	// Requests counts HTTP requests by route template, method and status.
	Requests *prometheus.CounterVec
	// Latency is the request duration by route template and method: the
	// latency SLO counts reads (GET and HEAD) only, and its threshold,
	// 300 ms, is one of the buckets (docs/operations.md, "Service level
	// objectives").
	Latency *prometheus.HistogramVec
	// Decisions counts authorization outcomes ("allow" or "deny") by operation.
	Decisions *prometheus.CounterVec
	// PolicyReloads counts policy reload attempts by result ("ok" or "error").
	PolicyReloads *prometheus.CounterVec
	// PolicyLastReloadOK is 1 when the last reload attempt succeeded, 0 when
	// a broken file was refused and the previous policy is still in force.
	PolicyLastReloadOK prometheus.Gauge
	// PolicyInfo is 1 for the policy in force, labelled with its content
	// hash (the same files give the same hash on every instance) and the
	// decider ("index" for a recognized model, "casbin" otherwise).
	PolicyInfo *prometheus.GaugeVec
	// PolicyLoadedTimestamp is when the policy in force was loaded (Unix seconds).
	PolicyLoadedTimestamp prometheus.Gauge
	// PolicyHashes is how many different policies (content hashes) the
	// instances sharing this Redis run, as this instance last saw them:
	// more than 1 outside a rollout means a file did not reach every
	// instance (authz/shared.go).
	PolicyHashes prometheus.Gauge
	// PolicyUsageFlushes counts writes of policy usage to Redis by result
	// ("ok" or "error"): a failing one keeps its counts for the next, and
	// an alert on errors tells ops that `policy usage` is falling behind.
	PolicyUsageFlushes *prometheus.CounterVec
	// ListEntries counts list entries (projects, plans) shown or hidden by
	// the policy: filtering a list is not a refusal, so it is kept apart
	// from Decisions and an alert on denials means something.
	ListEntries *prometheus.CounterVec
	// Transfers counts transfer attempts by outcome: "created", "replayed",
	// or the refusal's error code ("insufficient_funds", ...).
	Transfers *prometheus.CounterVec
	// UpstreamCalls counts calls to Bamboo by operation and result
	// ("ok", "not_found", "error", "timeout", "canceled", "open").
	UpstreamCalls *prometheus.CounterVec
	// UpstreamLatency is the duration of upstream calls.
	UpstreamLatency *prometheus.HistogramVec
	// BreakerState is 0 closed, 1 half-open, 2 open.
	BreakerState prometheus.Gauge
	// Cache counts response-cache lookups by result ("hit", "miss", "stale").
	Cache *prometheus.CounterVec
	// SignInProvider counts the calls made to the sign-in provider (the code
	// exchange at /auth/callback and a session's refresh) by result: "ok",
	// "refused" (the provider answered that the code or refresh token is
	// not valid: a person's or client's doing) or "error" (it could not be
	// reached, failed, or gave an ID token that does not verify): the
	// errors are the provider's failures an alert watches.
	SignInProvider *prometheus.CounterVec
	// RedisUp is 1 when Redis answered a PING when /metrics was scraped, 0
	// when it did not (see ProbeRedis); absent until ProbeRedis is called.
	RedisUp *Probe
	// BuildInfo is 1 for the version, commit and Go version answering
	// (SetBuild), so a dashboard can tell which build runs where.
	BuildInfo *prometheus.GaugeVec

	requestSeries sync.Map // requestKey → requestSeries, see Request
}

type requestKey struct {
	route, method string
	status        int
}

type requestSeries struct {
	count    prometheus.Counter
	duration prometheus.Observer
}

// Request records one answered request in Requests and Latency. A route's
// series are looked up by label once and kept: the label lookup would
// hash the strings under a lock on every request.
// The keys are bounded as the labels are (route templates, a bounded set
// of methods, status codes).
func (m *Metrics) Request(route, method string, status int, elapsed time.Duration) {
	key := requestKey{route, method, status}
	v, ok := m.requestSeries.Load(key)
	if !ok {
		v, _ = m.requestSeries.LoadOrStore(key, requestSeries{
			count:    m.Requests.WithLabelValues(route, method, strconv.Itoa(status)),
			duration: m.Latency.WithLabelValues(route, method),
		})
	}
	series := v.(requestSeries)
	series.count.Inc()
	series.duration.Observe(elapsed.Seconds())
}

// New returns a fresh, unregistered set of collectors. It takes nothing:
// the set is what components' Config.Metrics receive, not a component
// (README, after the Layout table).
func New() *Metrics {
	m := newCollectors()
	// The results the alerts watch exist from the start, at 0: rate() and
	// increase() see a series' first increment only once the series has
	// a sample before it (docs/operations.md, "Alerts").
	for _, result := range []string{"ok", "error"} {
		m.PolicyReloads.WithLabelValues(result)
		m.PolicyUsageFlushes.WithLabelValues(result)
	}
	for _, step := range []string{"exchange", "refresh"} {
		for _, result := range []string{"ok", "refused", "error"} {
			m.SignInProvider.WithLabelValues(step, result)
		}
	}
	return m
}

func newCollectors() *Metrics {
	return &Metrics{
		Requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "facade_http_requests_total", Help: "HTTP requests by route, method and status.",
		}, []string{"route", "method", "status"}),
		Latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "facade_http_request_duration_seconds", Help: "HTTP request latency by route and method.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .3, .5, 1, 2.5, 10},
		}, []string{"route", "method"}),
		Decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "facade_authz_decisions_total", Help: "Authorization decisions by operation and outcome.",
		}, []string{"op", "outcome"}),
		PolicyReloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "facade_policy_reloads_total", Help: "Policy reloads by result.",
		}, []string{"result"}),
		PolicyLastReloadOK: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "facade_policy_last_reload_ok", Help: "1 if the last policy reload succeeded.",
		}),
		PolicyInfo: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "facade_policy_info", Help: "The policy in force: content hash and decider.",
		}, []string{"hash", "decider"}),
		PolicyHashes: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "facade_policy_hashes", Help: "Different policy content hashes run by the instances sharing this Redis.",
		}),
		PolicyLoadedTimestamp: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "facade_policy_loaded_timestamp_seconds", Help: "When the policy in force was loaded.",
		}),
		PolicyUsageFlushes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "facade_policy_usage_flushes_total", Help: "Writes of policy usage counts to Redis by result.",
		}, []string{"result"}),
		ListEntries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "facade_authz_list_entries_total", Help: "List entries shown or hidden by the policy.",
		}, []string{"result"}),
		Transfers: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "facade_transfers_total", Help: "Transfers by outcome.",
		}, []string{"outcome"}),
		UpstreamCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "facade_upstream_calls_total", Help: "Upstream Bamboo calls by operation and result.",
		}, []string{"op", "result"}),
		UpstreamLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "facade_upstream_request_duration_seconds", Help: "Upstream call latency.",
		}, []string{"op"}),
		BreakerState: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "facade_upstream_breaker_state", Help: "Upstream circuit breaker: 0 closed, 1 half-open, 2 open.",
		}),
		Cache: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "facade_cache_lookups_total", Help: "Response cache lookups by result.",
		}, []string{"result"}),
		SignInProvider: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "facade_signin_provider_calls_total", Help: "Calls to the sign-in provider by step and result.",
		}, []string{"step", "result"}),
		RedisUp: newProbe(prometheus.NewDesc("facade_redis_up", "1 if Redis answered a PING at this scrape.", nil, nil)),
		BuildInfo: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "facade_build_info", Help: "Always 1: the version, commit and Go version of this build.",
		}, []string{"version", "commit", "goversion"}),
	}
}

// SetBuild records which build this is (facade_build_info).
func (m *Metrics) SetBuild(version, commit, goVersion string) {
	m.BuildInfo.Reset()
	m.BuildInfo.WithLabelValues(version, commit, goVersion).Set(1)
}

// Or returns m, or a private set when m is nil.
func Or(m *Metrics) *Metrics {
	if m == nil {
		return New()
	}
	return m
}

// Registry returns a new registry holding m's collectors and the Go and
// process collectors: what /metrics serves.
func (m *Metrics) Registry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.Requests, m.Latency, m.Decisions, m.PolicyReloads, m.PolicyLastReloadOK,
		m.PolicyInfo, m.PolicyLoadedTimestamp, m.PolicyHashes, m.PolicyUsageFlushes, m.ListEntries,
		m.Transfers, m.UpstreamCalls, m.UpstreamLatency, m.BreakerState, m.Cache,
		m.SignInProvider, m.RedisUp, m.BuildInfo,
	)
	return reg
}
