package proxy

import (
	"net/http"
	"testing"
	"time"

	"github.com/facade-dev/facade/upstream/bambootest"
)

// A finished result never changes: read every three seconds for five
// minutes (the pace of a page that watches), it costs Bamboo one call.
func TestFinishedResultIsFetchedOnce(t *testing.T) {
	f := newFixture(t, options{cacheTTL: 30 * time.Second})
	target := api + "/result/PROJ-CORE-6?expand=artifacts"
	_, first := f.getOK("carol", target)
	for range 100 {
		f.clock.Advance(3 * time.Second)
		if _, rec := f.getOK("carol", target); rec.Header().Get("X-Cache") != "HIT" || rec.Body.String() != first.Body.String() {
			t.Fatalf("%v later: X-Cache %s", 3*time.Second, rec.Header().Get("X-Cache"))
		}
	}
	if n := f.calls(api + "/result"); n != 1 {
		t.Errorf("a finished result read for 5 minutes cost %d upstream calls, want 1", n)
	}
	// Job results too; the plan's latest result is not one build: the TTL.
	f.getOK("carol", api+"/result/PROJ-CORE-JOB1-6")
	f.getOK("carol", api+"/result/PROJ-CORE/latest")
	f.clock.Advance(time.Minute)
	f.bamboo.ResetCalls()
	f.getOK("carol", api+"/result/PROJ-CORE-JOB1-6")
	f.getOK("carol", api+"/result/PROJ-CORE/latest")
	if got := f.bamboo.Calls(); len(got) != 1 || f.calls(api+"/result/PROJ-CORE-JOB1") != 0 {
		t.Errorf("a minute later: %d calls (%d for the job result), want the latest result's only", len(got), f.calls(api+"/result/PROJ-CORE-JOB1"))
	}
}

// A running build is asked again once per live interval while it is read,
// so its end shows within the interval; once finished it is kept.
func TestRunningBuildIsSeenToFinishWithinTheInterval(t *testing.T) {
	f := newFixture(t, options{cacheTTL: 30 * time.Second})
	key := f.bamboo.StartBuild("PROJ-CORE")
	target := api + "/result/" + key
	lists := []string{api + "/result/PROJ-CORE?includeAllStates=true", api + "/result?includeAllStates=true"}
	if doc, _ := f.getOK("carol", target); path(doc, "lifeCycleState") != "InProgress" {
		t.Fatalf("started: %v", path(doc, "lifeCycleState"))
	}
	for _, l := range lists {
		f.getOK("carol", l)
	}
	f.clock.Advance(DefaultLiveInterval - time.Millisecond)
	f.bamboo.ResetCalls()
	f.getOK("carol", target)
	for _, l := range lists {
		f.getOK("carol", l)
	}
	if n := len(f.bamboo.Calls()); n != 0 {
		t.Fatalf("within the interval: %d upstream calls", n)
	}
	f.bamboo.Finish(key, "Failed")
	f.clock.Advance(time.Millisecond)
	doc, rec := f.getOK("carol", target)
	if path(doc, "lifeCycleState") != "Finished" || path(doc, "buildState") != "Failed" || rec.Header().Get("X-Cache") != "MISS" {
		t.Fatalf("one interval after it finished: %v %v %s", path(doc, "lifeCycleState"), path(doc, "buildState"), rec.Header().Get("X-Cache"))
	}
	for _, l := range lists {
		doc, _ := f.getOK("carol", l)
		if first := list(path(doc, "results", "result")); len(first) == 0 || path(first[0], "key") != key || path(first[0], "buildState") != "Failed" {
			t.Errorf("%s one interval after the finish: %v", l, itemKeys(path(doc, "results", "result")))
		}
	}
	// Finished, the result is kept; the lists (nothing running) live for the TTL.
	f.bamboo.ResetCalls()
	f.clock.Advance(29 * time.Second)
	f.getOK("carol", target)
	for _, l := range lists {
		f.getOK("carol", l)
	}
	if n := len(f.bamboo.Calls()); n != 0 {
		t.Errorf("29 s after the finish: %d upstream calls, want none", n)
	}
}

// However many watch a running build, on however many instances, Bamboo
// is asked once per interval: ten viewers on two instances cost what one
// costs.
func TestTenWatchersOnTwoInstancesCostWhatOneCosts(t *testing.T) {
	watch := func(viewers int) int {
		one := newFixture(t, options{})
		two := newFixture(t, options{upstreamHandler: one.bamboo, redis: one.rdb, clock: one.clock})
		key := one.bamboo.StartBuild("PROJ-CORE")
		one.bamboo.ResetCalls()
		for range 30 { // a minute of polls every 2 s, a millisecond apart per viewer
			for v := range viewers {
				inst := []*fixture{one, two}[v%2]
				if rec := inst.get("carol", api+"/result/"+key); rec.Code != http.StatusOK {
					t.Fatalf("viewer %d: %d", v, rec.Code)
				}
				one.clock.Advance(time.Millisecond)
			}
			one.clock.Advance(2*time.Second - time.Duration(viewers)*time.Millisecond)
		}
		return one.calls(api + "/result/")
	}
	alone, ten := watch(1), watch(10)
	t.Logf("a running build polled for a minute: %d upstream calls for 1 viewer, %d for 10 viewers on 2 instances", alone, ten)
	if alone != ten || alone > 31 {
		t.Errorf("upstream calls: %d for one viewer, %d for ten; want equal, at most one per interval", alone, ten)
	}
}

// A list whose running build belongs to a plan the caller may not see is
// live for everyone (it is one shared document), but shows nothing of it.
func TestLiveListRevealsNothingHidden(t *testing.T) {
	f := newFixture(t, options{fill: func(s *bambootest.Server) { bambootest.Organization(s, 2, 2) },
		policy: "p, omar, plan:S000-P0, view\n"})
	f.bamboo.StartBuild("S001-P1")
	doc, _ := f.getOK("omar", api+"/result?includeAllStates=true")
	if keys := itemKeys(path(doc, "results", "result")); len(keys) != 1 || keys[0] != "S000-P0-11" || num(path(doc, "results", "size")) != 1 {
		t.Errorf("omar sees %v (size %v)", keys, path(doc, "results", "size"))
	}
	if rec := f.get("omar", api+"/result/S001-P1-13"); rec.Code != http.StatusForbidden {
		t.Errorf("omar reads the running build of a plan he may not see: %d", rec.Code)
	}
}

func TestLifeCyclesReadEveryState(t *testing.T) {
	for _, tc := range []struct {
		body                 string
		finished, unfinished bool
	}{
		{`{"lifeCycleState":"Finished"}`, true, false},
		{`{"lifeCycleState" : "NotBuilt","x":1}`, true, false},
		{`{"lifeCycleState":"Finished","stages":{"stage":[{"results":{"result":[{"lifeCycleState":"InProgress"}]}}]}}`, true, true},
		{`{"lifeCycleState":"Queued"}`, false, true},
		{`{"lifeCycleState":"Pending"}`, false, true},
		{`{"lifeCycleState":"SomethingNew"}`, false, true},
		{`{"buildReason":"a \"lifeCycleState\":\"Finished\" text"}`, false, false},
		{`{"plans":{}}`, false, false},
	} {
		if f, u := lifeCycles([]byte(tc.body)); f != tc.finished || u != tc.unfinished {
			t.Errorf("%s: finished %v unfinished %v", tc.body, f, u)
		}
	}
}
