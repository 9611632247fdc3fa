package proxy

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// A running job's log grows as Bamboo appends to it, read upstream at most
// once per live interval; once the job finished it is kept. A Range
// request (a resumed download) is still Bamboo's own answer.
func TestRunningJobLogGrowsOncePerInterval(t *testing.T) {
	f := newFixture(t, options{cacheTTL: 30 * time.Second})
	key := f.bamboo.StartBuild("PROJ-CORE") // PROJ-CORE-7
	f.bamboo.AppendLog(key, "JOB1", "line 1\n")
	log := "/download/PROJ-CORE-JOB1/build_logs/PROJ-CORE-JOB1-7.log"
	read := func() string {
		t.Helper()
		rec := f.get("carol", log)
		if rec.Code != http.StatusOK {
			t.Fatalf("log: %d %s", rec.Code, rec.Body)
		}
		return rec.Body.String()
	}
	if got := read(); got != "line 1\n" {
		t.Fatalf("first read %q", got)
	}
	f.bamboo.AppendLog(key, "JOB1", "line 2\n")
	f.bamboo.ResetCalls()
	f.clock.Advance(DefaultLiveInterval - time.Millisecond)
	if got := read(); got != "line 1\n" || len(f.bamboo.Calls()) != 0 {
		t.Fatalf("within the interval: %q after %d upstream calls, want the first read's and none", got, len(f.bamboo.Calls()))
	}
	f.clock.Advance(time.Millisecond)
	if got := read(); got != "line 1\nline 2\n" || f.calls("/download/") != 1 {
		t.Fatalf("one interval on: %q after %d log reads upstream", got, f.calls("/download/"))
	}
	f.bamboo.AppendLog(key, "JOB1", "done\n")
	f.bamboo.Finish(key, "Successful")
	f.clock.Advance(DefaultLiveInterval)
	if got := read(); got != "line 1\nline 2\ndone\n" {
		t.Fatalf("after the finish: %q", got)
	}
	f.bamboo.ResetCalls()
	f.clock.Advance(time.Hour)
	if got := read(); got != "line 1\nline 2\ndone\n" || len(f.bamboo.Calls()) != 0 {
		t.Fatalf("an hour after the finish: %q, %d upstream calls", got, len(f.bamboo.Calls()))
	}
	req := httptest.NewRequest(http.MethodGet, log, nil)
	req.Header.Set("X-Test-Sub", "carol")
	req.Header.Set("Range", "bytes=0-3")
	rec := httptest.NewRecorder()
	f.e.ServeHTTP(rec, req)
	if rec.Code != http.StatusPartialContent || rec.Body.String() != "line" || f.calls("/download/") != 1 {
		t.Fatalf("a range: %d %q after %d upstream reads, want 206 \"line\" from Bamboo", rec.Code, rec.Body, f.calls("/download/"))
	}
	// Nobody may read a log of a plan they may not see, cached or not.
	if rec := f.get("dave", log); rec.Code != http.StatusForbidden {
		t.Fatalf("dave reads carol's log: %d", rec.Code)
	}
}
