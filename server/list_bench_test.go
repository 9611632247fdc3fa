package server_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// BenchmarkWarmListThroughServer serves the warm filtered project list
// through the whole server (every middleware, the rate limiter on, the
// access log at info to a file, as facade serve writes it) to principals
// in turn, as bench/run.sh's list
// workload does, so a profile shows what a list request costs here beside
// the proxy's own part (proxy's BenchmarkWarmProjectList):
//
//	go test -run '^$' -bench WarmListThroughServer -benchmem -cpuprofile /tmp/list.prof ./server
func BenchmarkWarmListThroughServer(b *testing.B) {
	e, reqs, size := warmListServer(b)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	w := &discard{header: http.Header{}}
	i := 0
	for b.Loop() {
		w.reset()
		e.srv.ServeHTTP(w, reqs[i%len(reqs)])
		i++
	}
	if w.status != http.StatusOK || w.n != size {
		b.Fatalf("status %d, %d bytes", w.status, w.n)
	}
}

// BenchmarkWarmListThroughServerParallel is the same with GOMAXPROCS
// callers at once, as wrk's connections are served: what the server's
// shared parts (the limiter, the caches, the log) cost when they are
// contended. Beside the serial figure, -cpu 1,2 shows it:
//
//	go test -run '^$' -bench 'WarmListThroughServer' -cpu 1,2 -mutexprofile /tmp/mutex.prof ./server
func BenchmarkWarmListThroughServerParallel(b *testing.B) {
	e, reqs, size := warmListServer(b)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	var next atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		w := &discard{header: http.Header{}}
		for pb.Next() {
			w.reset()
			e.srv.ServeHTTP(w, reqs[int(next.Add(1))%len(reqs)])
			if w.status != http.StatusOK || w.n != size {
				b.Errorf("status %d, %d bytes", w.status, w.n)
				return
			}
		}
	})
}

// warmListServer is the whole server with the bench/run.sh list workload's
// policy (600 principals of one team) and projects, every principal's view
// built and the limiter's buckets made; it returns one request per
// principal and the answer's length. opts come after the workload's own.
func warmListServer(b *testing.B, opts ...envOption) (*env, []*http.Request, int) {
	const principals = 600
	var policy strings.Builder
	policy.WriteString("p, team:bench, project:PROJ, view\np, team:bench, plan:WEB-NIGHTLY, view\n")
	for i := 2; i <= 100; i++ {
		switch {
		case i%10 == 0:
			fmt.Fprintf(&policy, "p, team:bench, project:B%03d, view\n", i)
		case i%7 == 0:
			fmt.Fprintf(&policy, "p, team:bench, plan:B%03d-TEST, view\n", i)
		}
	}
	for i := range principals {
		fmt.Fprintf(&policy, "g, bench%04d, team:bench\n", i)
	}
	e := newEnv(b, append([]envOption{withBuilds(), withRateLimit(1_000_000), withPolicyLines(policy.String()),
		withProductionLogFile(b)}, opts...)...)
	for i := 1; i <= 100; i++ {
		key := fmt.Sprintf("B%03d", i)
		e.bamboo.AddProject(key, "Bench "+key, "Benchmark project "+key+".")
		for _, plan := range []string{"BUILD", "TEST", "DEPLOY", "NIGHTLY", "RELEASE"} {
			e.bamboo.AddPlan(key, plan, plan+" of "+key)
		}
	}
	reqs := make([]*http.Request, principals)
	for i := range reqs {
		reqs[i] = httptest.NewRequest(http.MethodGet, "/rest/api/latest/project?expand=projects.project.plans&max-results=100", nil)
		reqs[i].Header.Set("Authorization", "Bearer "+token(b, fmt.Sprintf("bench%04d", i), "professor"))
	}
	w := &discard{header: http.Header{}}
	size := 0
	for _, r := range reqs {
		w.reset()
		e.srv.ServeHTTP(w, r)
		if w.status != http.StatusOK {
			b.Fatalf("status %d", w.status)
		}
		size = w.n
	}
	return e, reqs, size
}

// discard is a ResponseWriter that keeps nothing but the status and the
// length, so the benchmark measures the server, not a recorder.
type discard struct {
	header http.Header
	status int
	n      int
}

func (d *discard) Header() http.Header         { return d.header }
func (d *discard) WriteHeader(code int)        { d.status = code }
func (d *discard) Write(p []byte) (int, error) { d.n += len(p); return len(p), nil }

func (d *discard) reset() {
	clear(d.header)
	d.status, d.n = 0, 0
}
