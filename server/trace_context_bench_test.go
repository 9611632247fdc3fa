package server_test

import (
	"net/http"
	"testing"

	"go.opentelemetry.io/otel/propagation"
)

// BenchmarkTraceContext is BenchmarkWarmListThroughServer three ways in
// one run: no tracing at all ("off": what serve did without an exporter
// before it passed trace context on), the W3C propagator alone
// ("pass-on": what serve does now without an exporter) for requests
// without a traceparent, and the same for requests carrying one
// (docs/performance.md, "Trace context without export"). Beside ns/op it
// reports the process's CPU time a request (cpu-ns/op), which a loaded
// machine disturbs less:
//
//	go test -run '^$' -bench TraceContext -benchmem -benchtime 20000x ./server
func BenchmarkTraceContext(b *testing.B) {
	passOn := func(c *envConfig) { c.server.Propagator = propagation.TraceContext{} }
	for _, tc := range []struct {
		name        string
		opts        []envOption
		traceparent string
	}{
		{"off", nil, ""},
		{"pass-on", []envOption{passOn}, ""},
		{"pass-on-traceparent", []envOption{passOn}, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			e, reqs, size := warmListServer(b, tc.opts...)
			for _, r := range reqs {
				if tc.traceparent != "" {
					r.Header.Set("Traceparent", tc.traceparent)
				}
			}
			b.SetBytes(int64(size))
			b.ReportAllocs()
			w := &discard{header: http.Header{}}
			i := 0
			cpu := processCPU()
			for b.Loop() {
				w.reset()
				e.srv.ServeHTTP(w, reqs[i%len(reqs)])
				i++
			}
			// CPU time (user + system) a request: a loaded machine stretches
			// the wall time of a run far more than the work in it.
			b.ReportMetric(float64((processCPU()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
			if w.status != http.StatusOK || w.n != size {
				b.Fatalf("status %d, %d bytes", w.status, w.n)
			}
		})
	}
}
