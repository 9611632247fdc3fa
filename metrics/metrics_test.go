package metrics_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/facade-dev/facade/internal/testkit/testredis"
	"github.com/facade-dev/facade/metrics"
)

// TestRedisUpIsAskedAtEveryScrape: facade_redis_up is absent until a
// ping is set, then 1 while Redis answers and 0 within the probe's
// timeout once it does not, and 1 again after it is back.
func TestRedisUpIsAskedAtEveryScrape(t *testing.T) {
	m := metrics.New()
	if n := len(gather(t, m.RedisUp)); n != 0 {
		t.Fatalf("facade_redis_up has %d series before a ping is set; want none", n)
	}
	srv := testredis.Start(t, testredis.Options{})
	rdb := srv.Client(t)
	m.ProbeRedis(func(ctx context.Context) error { return rdb.Ping(ctx).Err() })
	want := func(v float64) {
		t.Helper()
		start := time.Now()
		got := gather(t, m.RedisUp)
		if len(got) != 1 || got[0].GetGauge().GetValue() != v {
			t.Fatalf("facade_redis_up: %v, want %v", got, v)
		}
		if took := time.Since(start); took > time.Second {
			t.Fatalf("a scrape took %v; the probe must answer within its timeout", took)
		}
	}
	want(1)
	srv.Stop()
	want(0)
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	want(1)
}

// TestAlertedResultsExistAtZero: the results the alerts of
// deploy/prometheus watch are exported before the first event, so the
// first failure is an increase Prometheus can see.
func TestAlertedResultsExistAtZero(t *testing.T) {
	m := metrics.New()
	for name, got := range map[string]int{
		"facade_policy_reloads_total":        len(gather(t, m.PolicyReloads)),
		"facade_policy_usage_flushes_total":  len(gather(t, m.PolicyUsageFlushes)),
		"facade_signin_provider_calls_total": len(gather(t, m.SignInProvider)),
	} {
		want := 2
		if name == "facade_signin_provider_calls_total" {
			want = 6
		}
		if got != want {
			t.Errorf("%s: %d series at start, want %d", name, got, want)
		}
	}
}

// gather collects c alone, as a scrape would, and returns its series.
func gather(t *testing.T, c prometheus.Collector) []*dto.Metric {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []*dto.Metric
	for _, f := range families {
		out = append(out, f.Metric...)
	}
	return out
}
