package server_test

import (
	"strings"
	"testing"
	"time"
)

// A page watching a running build polls with If-None-Match: while the
// build runs and nothing changed the answer is 304 at no upstream cost;
// once Bamboo finishes it, the next polls show the final state within the
// live interval (2 s) plus one poll, well inside the 5 s a person may wait.
func TestWatchedBuildShowsItsEndWithinSeconds(t *testing.T) {
	e := newEnv(t, withBuilds())
	carol := token(t, "carol", "developer")
	key := e.bamboo.StartBuild("PROJ-CORE")
	path := "/rest/api/latest/result/" + key
	first := e.do(req{method: "GET", path: path, token: carol})
	if first.status != 200 || !strings.Contains(first.body, `"lifeCycleState":"InProgress"`) {
		t.Fatalf("running build: %d %s", first.status, first.body)
	}
	tag := first.header.Get("ETag")
	e.bamboo.ResetCalls()
	poll := func() resp {
		return e.do(req{method: "GET", path: path, token: carol, header: map[string]string{"If-None-Match": tag}})
	}
	if r := poll(); r.status != 304 || e.bamboo.CallCount("/rest/") != 0 {
		t.Fatalf("an immediate poll: %d after %d upstream calls, want 304 from the cache", r.status, e.bamboo.CallCount("/rest/"))
	}
	e.bamboo.Finish(key, "Failed")
	finished := time.Now()
	for {
		r := poll()
		if r.status == 200 {
			if !strings.Contains(r.body, `"buildState":"Failed"`) || r.header.Get("ETag") == tag {
				t.Fatalf("after the finish: %s", r.body)
			}
			t.Logf("the API showed the finish %v after Bamboo's (polling every 250 ms)", time.Since(finished).Round(10*time.Millisecond))
			break
		}
		if time.Since(finished) > 5*time.Second {
			t.Fatalf("5 s after Bamboo finished the build the API still answers %d", r.status)
		}
		time.Sleep(250 * time.Millisecond)
	}
	if n := e.bamboo.CallCount("/rest/"); n > 3 {
		t.Errorf("%d upstream calls while polling every 250 ms for at most 2 s; want one per interval", n)
	}
}

// A page tailing a running job's log polls it with If-None-Match: an
// unchanged log is a 304 from the shared cache, with X-Cache saying so.
func TestTailedLogIsConditional(t *testing.T) {
	e := newEnv(t, withBuilds())
	carol := token(t, "carol", "developer")
	key := e.bamboo.StartBuild("PROJ-CORE")
	e.bamboo.AppendLog(key, "JOB1", "compiling\n")
	path := "/download/PROJ-CORE-JOB1/build_logs/PROJ-CORE-JOB1-7.log"
	first := e.do(req{method: "GET", path: path, token: carol})
	if first.status != 200 || first.body != "compiling\n" || first.header.Get("X-Cache") != "MISS" || first.header.Get("ETag") == "" {
		t.Fatalf("log: %d %q X-Cache %q ETag %q", first.status, first.body, first.header.Get("X-Cache"), first.header.Get("ETag"))
	}
	e.bamboo.ResetCalls()
	again := e.do(req{method: "GET", path: path, token: carol, header: map[string]string{"If-None-Match": first.header.Get("ETag")}})
	if again.status != 304 || again.body != "" || again.header.Get("X-Cache") != "HIT" || len(e.bamboo.Calls()) != 0 {
		t.Fatalf("unchanged log polled: %d %q X-Cache %q, %d upstream calls", again.status, again.body, again.header.Get("X-Cache"), len(e.bamboo.Calls()))
	}
	// The page reads on from the last byte it has (Range): the same copy.
	part := e.do(req{method: "GET", path: path, token: carol, header: map[string]string{"Range": "bytes=8-"}})
	if part.status != 206 || part.body != "g\n" || part.header.Get("Content-Range") != "bytes 8-9/10" || len(e.bamboo.Calls()) != 0 {
		t.Fatalf("a range of the log: %d %q %q, %d upstream calls", part.status, part.body, part.header.Get("Content-Range"), len(e.bamboo.Calls()))
	}
}
