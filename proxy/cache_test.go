package proxy

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/facade-dev/facade/internal/testkit/testredis"
	"github.com/facade-dev/facade/upstream"
)

const coreResults = "/rest/api/latest/result/PROJ-CORE?expand=results.result.artifacts"

func TestSecondReadIsAHitWithoutUpstreamCall(t *testing.T) {
	f := newFixture(t, options{})
	_, first := f.getOK("carol", coreResults)
	_, second := f.getOK("carol", coreResults)
	if first.Header().Get("X-Cache") != "MISS" || second.Header().Get("X-Cache") != "HIT" {
		t.Errorf("X-Cache %q then %q, want MISS then HIT", first.Header().Get("X-Cache"), second.Header().Get("X-Cache"))
	}
	if first.Body.String() != second.Body.String() {
		t.Error("the hit differs from the miss")
	}
	if n := f.calls("/rest/"); n != 1 {
		t.Errorf("%d upstream calls, want 1", n)
	}

	// Another instance on the same Redis: a hit from the shared cache.
	other := New(nil, f.cache, f.az, Config{CacheTTL: 0, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	e := newTestServer(other)
	f2 := *f
	f2.e = e
	_, third := f2.getOK("carol", coreResults)
	if third.Header().Get("X-Cache") != "HIT" || third.Body.String() != first.Body.String() {
		t.Errorf("second instance: X-Cache %q", third.Header().Get("X-Cache"))
	}
	if n := f.calls("/rest/"); n != 1 {
		t.Errorf("%d upstream calls after a second instance read, want 1", n)
	}
}

func TestConcurrentColdReadsMakeOneUpstreamCall(t *testing.T) {
	f := newFixture(t, options{})
	f.bamboo.SetDelay(200 * time.Millisecond) // hold the first call open while the others arrive
	for _, target := range []string{coreResults, "/rest/api/latest/project?expand=projects.project.plans"} {
		f.bamboo.ResetCalls()
		var wg sync.WaitGroup
		bodies := make([]string, 40)
		for i := range bodies {
			wg.Go(func() {
				rec := f.get("carol", target)
				if rec.Code != http.StatusOK {
					t.Errorf("status %d", rec.Code)
				}
				bodies[i] = rec.Body.String()
			})
		}
		wg.Wait()
		if n := len(f.bamboo.Calls()); n != 1 {
			t.Errorf("%s: 40 concurrent cold reads made %d upstream calls, want 1", target, n)
		}
		for _, b := range bodies[1:] {
			if b != bodies[0] {
				t.Fatalf("%s: concurrent readers got different bodies", target)
			}
		}
	}
}

func TestUpstreamFailures(t *testing.T) {
	t.Run("stale copy served after expiry", func(t *testing.T) {
		f := newFixture(t, options{cacheTTL: time.Minute, stale: 10 * time.Minute})
		_, fresh := f.getOK("carol", coreResults)
		f.clock.Advance(time.Minute + time.Second)
		f.bamboo.SetFailing(http.StatusInternalServerError)
		_, stale := f.getOK("carol", coreResults)
		if stale.Header().Get("X-Cache") != "STALE" || stale.Body.String() != fresh.Body.String() {
			t.Errorf("after expiry with upstream failing: X-Cache %q", stale.Header().Get("X-Cache"))
		}
	})
	t.Run("nothing cached and upstream 500 is a 502 without upstream text", func(t *testing.T) {
		f := newFixture(t, options{})
		f.bamboo.SetFailing(http.StatusInternalServerError)
		for _, target := range []string{coreResults, "/rest/api/latest/project"} {
			rec := f.get("carol", target)
			if rec.Code != http.StatusBadGateway || problemDetail(t, rec) != "The build server returned an invalid response." {
				t.Errorf("%s: %d %s, want 502", target, rec.Code, rec.Body)
			}
			if strings.Contains(rec.Body.String(), "Injected") || rec.Header().Get("X-Cache") != "" {
				t.Errorf("%s: upstream text or X-Cache in an error: %s", target, rec.Body)
			}
		}
	})
	t.Run("garbage from upstream is a 502 and is not cached", func(t *testing.T) {
		f := newFixture(t, options{})
		f.bamboo.SetGarbage(true)
		if rec := f.get("carol", coreResults); rec.Code != http.StatusBadGateway || strings.Contains(rec.Body.String(), "html") {
			t.Errorf("garbage: %d %s", rec.Code, rec.Body)
		}
		f.bamboo.SetGarbage(false)
		if _, rec := f.getOK("carol", coreResults); rec.Header().Get("X-Cache") != "MISS" {
			t.Errorf("after garbage: X-Cache %q, want a fresh MISS", rec.Header().Get("X-Cache"))
		}
	})
	t.Run("hanging upstream is a 504 within the timeout", func(t *testing.T) {
		f := newFixture(t, options{upstream: upstream.Config{Timeout: 300 * time.Millisecond}})
		f.bamboo.SetHang(true)
		started := time.Now()
		rec := f.get("carol", coreResults)
		if rec.Code != http.StatusGatewayTimeout || problemDetail(t, rec) != "The build server did not answer in time." {
			t.Errorf("hang: %d %s, want 504", rec.Code, rec.Body)
		}
		// The configured 300 ms, not the default budget: bounded by the
		// default, so a loaded machine's delays cannot fail this.
		if took := time.Since(started); took >= upstream.DefaultTimeout {
			t.Errorf("504 after %v, want about the 300ms timeout", took)
		}
	})
	t.Run("open breaker is a 503 with Retry-After", func(t *testing.T) {
		f := newFixture(t, options{upstream: upstream.Config{BreakerFailures: 2, BreakerOpenFor: time.Minute}})
		f.bamboo.SetFailing(http.StatusInternalServerError)
		for range 2 {
			if rec := f.get("carol", coreResults); rec.Code != http.StatusBadGateway {
				t.Fatalf("failing upstream: %d, want 502", rec.Code)
			}
		}
		before := len(f.bamboo.Calls())
		rec := f.get("carol", coreResults)
		if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
			t.Errorf("open breaker: %d Retry-After %q, want 503 with Retry-After", rec.Code, rec.Header().Get("Retry-After"))
		}
		if problemDetail(t, rec) != "The build server is unavailable; retry later." {
			t.Errorf("detail %q", problemDetail(t, rec))
		}
		if len(f.bamboo.Calls()) != before {
			t.Error("the open breaker let a call through")
		}
	})
}

func TestUpstreamChangeIsSeenOnceTheCopyExpires(t *testing.T) {
	f := newFixture(t, options{cacheTTL: time.Minute})
	before := summarise(t, mustDoc(f, "ivy", "/rest/api/latest/project"))
	f.bamboo.AddPlan("WEB", "E2E", "End-to-end Tests")
	if _, rec := f.getOK("ivy", "/rest/api/latest/project?expand=projects.project.plans"); rec.Header().Get("X-Cache") != "HIT" {
		t.Fatalf("within the TTL: X-Cache %s, want the cached copy", rec.Header().Get("X-Cache"))
	}
	f.clock.Advance(time.Minute + time.Second)
	doc, rec := f.getOK("ivy", "/rest/api/latest/project?expand=projects.project.plans")
	after := summarise(t, doc)
	if rec.Header().Get("X-Cache") != "MISS" || after.planSizes["WEB"] != before.planSizes["WEB"]+1 {
		t.Errorf("WEB plans %d then %d (X-Cache %s), want the new plan counted", before.planSizes["WEB"], after.planSizes["WEB"], rec.Header().Get("X-Cache"))
	}
	if !strings.Contains(rec.Body.String(), `"key":"WEB-E2E"`) {
		t.Error("new plan not listed")
	}
}

func TestWarmReadsNeedNoRedisRoundTrip(t *testing.T) {
	srv := testredis.Start(t, testredis.Options{})
	f := newFixture(t, options{cacheTTL: time.Minute, redis: srv.Client(t)})
	_, miss := f.getOK("carol", coreResults)
	srv.Stop()
	// Redis is gone: the in-process copy, fresh until StoredAt+TTL,
	// still answers, with no upstream call either.
	_, hit := f.getOK("carol", coreResults)
	if hit.Header().Get("X-Cache") != "HIT" || hit.Body.String() != miss.Body.String() {
		t.Errorf("X-Cache %q with Redis stopped, want HIT from process memory", hit.Header().Get("X-Cache"))
	}
	if n := f.calls("/rest/"); n != 1 {
		t.Errorf("%d upstream calls, want 1", n)
	}
	// A document never cached still comes from upstream (the cache is
	// an optimisation, not a dependency).
	if _, rec := f.getOK("carol", "/rest/api/latest/result/PROJ-LIB"); rec.Header().Get("X-Cache") != "MISS" {
		t.Errorf("uncached with Redis down: X-Cache %q", rec.Header().Get("X-Cache"))
	}
}
