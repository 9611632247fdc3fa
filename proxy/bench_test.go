package proxy

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Benchmarks of the hot path: a warm project list (entry, parsed document
// and view all in process), the same with the view rebuilt every time
// (policy decisions plus assembly), and a raw baseline, a net/http handler
// that writes the same bytes: the floor any handler on this stack pays. Run with: go test -run '^$' -bench . -benchmem ./proxy/

// benchProjects adds 300 projects of 4 plans to the demo's 4; the
// principal sees PROJ (team), WEB-NIGHTLY (plan), every 10th bench project
// whole and one plan of every 7th.
func benchFixture(b *testing.B) (*fixture, string) {
	var policy strings.Builder
	policy.WriteString(testPolicy)
	f := newFixture(b, options{})
	for i := 1; i <= 300; i++ {
		key := fmt.Sprintf("B%03d", i)
		f.bamboo.AddProject(key, "Bench "+key, "Benchmark project "+key+".")
		for _, plan := range []string{"BUILD", "TEST", "DEPLOY", "NIGHTLY"} {
			f.bamboo.AddPlan(key, plan, plan+" of "+key)
		}
		switch {
		case i%10 == 0:
			fmt.Fprintf(&policy, "p, carol, project:%s, view\n", key)
		case i%7 == 0:
			fmt.Fprintf(&policy, "p, carol, plan:%s-TEST, view\n", key)
		}
	}
	writeFile(b, f.policyPath, policy.String())
	if err := f.az.Reload(); err != nil {
		b.Fatal(err)
	}
	return f, "/rest/api/latest/project?expand=projects.project.plans&max-results=100"
}

// sink is a ResponseWriter that keeps nothing, so the benchmark measures
// the handler, not a recorder's buffer.
type sink struct {
	header http.Header
	status int
	n      int
}

func (s *sink) Header() http.Header         { return s.header }
func (s *sink) WriteHeader(code int)        { s.status = code }
func (s *sink) Write(p []byte) (int, error) { s.n += len(p); return len(p), nil }

func (s *sink) reset() {
	clear(s.header)
	s.status, s.n = 0, 0
}

func serveLoop(b *testing.B, h http.Handler, req *http.Request, after func()) {
	w := &sink{header: http.Header{}}
	h.ServeHTTP(w, req)
	if w.status != http.StatusOK {
		b.Fatalf("status %d", w.status)
	}
	size := w.n
	b.ReportAllocs()
	b.SetBytes(int64(size))
	for b.Loop() {
		w.reset()
		h.ServeHTTP(w, req)
		if after != nil {
			after()
		}
	}
	if w.status != http.StatusOK || w.n != size {
		b.Fatalf("status %d, %d bytes", w.status, w.n)
	}
}

func benchRequest(target string) *http.Request {
	req := httptest.NewRequest(http.MethodGet, target, nil)
	req.Header.Set("X-Test-Sub", "carol")
	req.Header.Set("Authorization", callerToken)
	return req
}

func BenchmarkWarmProjectList(b *testing.B) {
	f, target := benchFixture(b)
	serveLoop(b, f.e, benchRequest(target), nil)
	if n := f.calls("/"); n != 1 {
		b.Errorf("%d upstream calls, want the one warming call", n)
	}
}

func BenchmarkWarmProjectListColdView(b *testing.B) {
	f, target := benchFixture(b)
	serveLoop(b, f.e, benchRequest(target), func() {
		// Forget every view and visibility: each request asks the policy
		// about all 1,229 plans and assembles its view again.
		f.h.docs.forgetViews()
	})
}

func BenchmarkWarmResults(b *testing.B) {
	f := newFixture(b, options{})
	serveLoop(b, f.e, benchRequest(coreResults), nil)
}

// BenchmarkRawBlobBaseline serves the warm project list's exact bytes from
// a handler that does nothing else, through the same test router.
func BenchmarkRawBlobBaseline(b *testing.B) {
	f, target := benchFixture(b)
	rec := httptest.NewRecorder()
	f.e.ServeHTTP(rec, benchRequest(target))
	body := rec.Body.Bytes()
	e := newTestServer(f.h)
	e.handle("/raw", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("X-Cache", "HIT")
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	serveLoop(b, e, benchRequest("/raw?expand=projects.project.plans&max-results=100"), nil)
}

// benchLatest is the latest results of the 300 bench projects' plans
// (1,200 plans with one result each, besides the demo's), filtered for
// carol: the collected list the /result route serves.
func benchLatest(b *testing.B) (*fixture, string) {
	f, _ := benchFixture(b)
	for i := 1; i <= 300; i++ {
		for _, plan := range []string{"BUILD", "TEST", "DEPLOY", "NIGHTLY"} {
			f.bamboo.AddResult(fmt.Sprintf("B%03d-%s", i, plan), 1, "Successful")
		}
	}
	return f, api + "/result?max-results=100"
}

// BenchmarkWarmLatestResults: /result, warm (document and carol's view in
// process). Compare with BenchmarkRawBlobBaseline.
func BenchmarkWarmLatestResults(b *testing.B) {
	f, target := benchLatest(b)
	serveLoop(b, f.e, benchRequest(target), nil)
}

// BenchmarkWarmLatestResultsColdView: the same with carol's view rebuilt
// every time (decode, rewrite, a policy decision per item, encode): what
// the first request of each principal after a new document or a policy
// reload pays.
func BenchmarkWarmLatestResultsColdView(b *testing.B) {
	f, target := benchLatest(b)
	serveLoop(b, f.e, benchRequest(target), func() {
		f.h.docs.forgetViews()
	})
}
