package proxy

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/facade-dev/facade/upstream"
	"github.com/facade-dev/facade/upstream/bambootest"
)

// Big suites: a result of 20,000 tests, every one listed with its errors.
// However many people open it, the instance holds one copy of the
// document and of its answer (every viewer is sent the same bytes), and
// a finished result is asked of Bamboo once.

const (
	bigSuite  = 20000
	bigResult = "/rest/api/latest/result/PROJ-HUGE-JOB1-1?expand=testResults.allTests.testResult.errors"
)

func bigSuiteFixture(tb testing.TB) *fixture {
	// A 20,000-test document takes the test Bamboo seconds to write under
	// -race on a loaded machine: these tests judge calls and memory, so
	// the upstream is given a minute, not the production 10 s.
	return newFixture(tb, options{cacheTTL: time.Minute, upstream: upstream.Config{Timeout: time.Minute}, fill: func(s *bambootest.Server) {
		bambootest.DemoData(s)
		s.AddResult("PROJ-HUGE", 1, "Failed")
		failed := make([]int, 0, 200)
		for i := 0; i < bigSuite; i += 100 {
			failed = append(failed, i)
		}
		s.SetTests("PROJ-HUGE-1", bambootest.Tests{Count: bigSuite, Failed: failed, Skipped: []int{7, 8}})
	}})
}

// viewers has n people open target at once, each answer written to a
// sink (the bytes go out; nothing is kept), and reports the largest heap
// seen meanwhile above the heap before, and the bytes each was sent.
func viewers(tb testing.TB, f *fixture, n int, target string) (peak, retained uint64, sent int) {
	peak, retained, sent, _ = viewersSent(tb, f, n, target)
	return peak, retained, sent
}

// firstByteSink is a sink that remembers where the first bytes it was
// written live: viewers sent one shared answer were written one slice.
type firstByteSink struct {
	sink
	first *byte
}

func (s *firstByteSink) Write(p []byte) (int, error) {
	if s.first == nil && len(p) > 0 {
		s.first = &p[0]
	}
	return s.sink.Write(p)
}

// viewersSent is viewers, with whether every viewer was written the same
// bytes in memory (one answer shared, not a copy each).
func viewersSent(tb testing.TB, f *fixture, n int, target string) (peak, retained uint64, sent int, shared bool) {
	tb.Helper()
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var max atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() { // the heap, sampled while the viewers are served
		defer close(sampled)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > max.Load() {
				max.Store(m.HeapAlloc)
			}
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	var wg sync.WaitGroup
	sizes := make([]int, n)
	firsts := make([]*byte, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := httptest.NewRequest(http.MethodGet, target, nil)
			req.Header.Set("X-Test-Sub", "carol")
			req.Header.Set("X-Test-Role", "developer")
			w := &firstByteSink{sink: sink{header: http.Header{}}}
			f.e.ServeHTTP(w, req)
			if w.status != http.StatusOK {
				tb.Errorf("viewer %d: %d", i, w.status)
			}
			sizes[i], firsts[i] = w.n, w.first
		}()
	}
	wg.Wait()
	close(stop)
	<-sampled
	for _, s := range sizes[1:] {
		if s != sizes[0] {
			tb.Errorf("viewers were sent %d and %d bytes", sizes[0], s)
		}
	}
	if m := max.Load(); m > before.HeapAlloc {
		peak = m - before.HeapAlloc
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if after.HeapAlloc > before.HeapAlloc {
		retained = after.HeapAlloc - before.HeapAlloc
	}
	shared = true
	for _, p := range firsts[1:] {
		shared = shared && p == firsts[0]
	}
	return peak, retained, sizes[0], shared
}

// TestTenViewersOfABigResultCostOneCallAndOneCopy: ten people opening a
// 20,000-test result at once cause one upstream call, and ten more later
// none; the instance's heap grows by about what one viewer costs, not
// ten times that (no viewer's answer is a copy of its own).
func TestTenViewersOfABigResultCostOneCallAndOneCopy(t *testing.T) {
	one := bigSuiteFixture(t)
	peakOne, _, size := viewers(t, one, 1, bigResult)
	ten := bigSuiteFixture(t)
	peakTen, kept, _, shared := viewersSent(t, ten, 10, bigResult)
	if !shared {
		t.Error("the ten viewers were written different copies of the answer")
	}
	if n := ten.calls("/rest/api/latest/result/PROJ-HUGE-JOB1-1"); n != 1 {
		t.Errorf("ten viewers: %d upstream calls, want 1", n)
	}
	viewers(t, ten, 10, bigResult)
	if n := ten.calls("/rest/api/latest/result/PROJ-HUGE-JOB1-1"); n != 1 {
		t.Errorf("ten more viewers of the finished result: %d upstream calls in all, want 1", n)
	}
	t.Logf("document %d bytes; heap growth: one viewer %d bytes (%.1f× the document), ten viewers %d bytes (%.1f×), kept after them %d bytes (%.1f×)",
		size, peakOne, float64(peakOne)/float64(size), peakTen, float64(peakTen)/float64(size), kept, float64(kept)/float64(size))
	if kept > 5*uint64(size) {
		t.Errorf("the instance keeps %d bytes for a %d-byte answer: more than the bytes and the answer", kept, size)
	}
	// The heap is sampled, so one viewer's peak may be missed: the bound
	// is loose (a decode per viewer would be ten times one), the shared
	// answer above is the exact check.
	if peakTen > 3*max(peakOne, 10*uint64(size)) {
		t.Errorf("ten viewers grew the heap by %d bytes, one by %d: the document is decoded per viewer", peakTen, peakOne)
	}
}

// BenchmarkTenViewersOfABigResult reports what one instance holds while
// ten people open a 20,000-test result (docs/performance.md).
func BenchmarkTenViewersOfABigResult(b *testing.B) {
	for _, n := range []int{1, 10} {
		b.Run(fmt.Sprintf("viewers=%d", n), func(b *testing.B) {
			var peak, kept uint64
			var size int
			for range b.N {
				b.StopTimer()
				f := bigSuiteFixture(b)
				b.StartTimer()
				p, k, s := viewers(b, f, n, bigResult)
				peak, kept, size = max(peak, p), max(kept, k), s
			}
			b.ReportMetric(float64(size), "doc-bytes")
			b.ReportMetric(float64(peak)/float64(size), "peak-heap/doc")
			b.ReportMetric(float64(kept)/float64(size), "kept-heap/doc")
		})
	}
}
