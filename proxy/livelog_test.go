package proxy

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// A running job's log grows as Bamboo appends to it, read upstream at most
// once per live interval; once the job finished it is kept, and ranges of
// it are answered from the same copy.
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
	// A page tailing it reads on from its last byte (Range): the same
	// cached log answers, as Bamboo would, at no upstream cost.
	for _, tc := range []struct {
		rng, body, contentRange string
		status                  int
	}{
		{"bytes=0-3", "line", "bytes 0-3/19", http.StatusPartialContent},
		{"bytes=13-", "\ndone\n", "bytes 13-18/19", http.StatusPartialContent},
		{"bytes=-5", "done\n", "bytes 14-18/19", http.StatusPartialContent},
		{"bytes=19-", "", "bytes */19", http.StatusRequestedRangeNotSatisfiable},
		{"bytes=0-1,4-5", "line 1\nline 2\ndone\n", "", http.StatusOK}, // several ranges: the whole file
	} {
		req := httptest.NewRequest(http.MethodGet, log, nil)
		req.Header.Set("X-Test-Sub", "carol")
		req.Header.Set("Range", tc.rng)
		rec := httptest.NewRecorder()
		f.e.ServeHTTP(rec, req)
		body := rec.Body.String()
		if tc.status == http.StatusRequestedRangeNotSatisfiable {
			body = ""
		}
		if rec.Code != tc.status || body != tc.body || rec.Header().Get("Content-Range") != tc.contentRange {
			t.Errorf("Range %s: %d %q Content-Range %q, want %d %q %q", tc.rng, rec.Code, body, rec.Header().Get("Content-Range"), tc.status, tc.body, tc.contentRange)
		}
	}
	if n := len(f.bamboo.Calls()); n != 0 {
		t.Errorf("ranges of a cached log cost %d upstream calls", n)
	}
	// Nobody may read a log of a plan they may not see, cached or not.
	if rec := f.get("dave", log); rec.Code != http.StatusForbidden {
		t.Fatalf("dave reads carol's log: %d", rec.Code)
	}
}
