package proxy

import (
	"net/http"
	"testing"
	"time"
)

// The new build routes share the response cache's rules: MISS then HIT
// without another upstream call, STALE while upstream fails, and a policy
// reload seen at once in the per-principal views.
func TestBuildRoutesAreCachedLikeTheOthers(t *testing.T) {
	// Fresh for a minute: the second read is a hit whatever the machine's load.
	warm := newFixture(t, options{cacheTTL: time.Minute})
	// Fresh for a minute, then stale for ten.
	stale := newFixture(t, options{cacheTTL: time.Minute, stale: 10 * time.Minute})
	for _, target := range []string{api + "/plan/PROJ-CORE?expand=branches", api + "/result", api + "/result/PROJ-CORE-6", api + "/plan/PROJ-CORE/branch"} {
		warm.bamboo.ResetCalls()
		_, first := warm.getOK("carol", target)
		_, second := warm.getOK("carol", target)
		if first.Header().Get("X-Cache") != "MISS" || second.Header().Get("X-Cache") != "HIT" || first.Body.String() != second.Body.String() {
			t.Errorf("%s: X-Cache %s then %s", target, first.Header().Get("X-Cache"), second.Header().Get("X-Cache"))
		}
		if n := len(warm.bamboo.Calls()); n != 1 {
			t.Errorf("%s: %d upstream calls, want 1", target, n)
		}

		_, fresh := stale.getOK("carol", target)
		life := time.Minute // the TTL
		if target == api+"/result/PROJ-CORE-6" {
			life = DefaultFinishedTTL // a finished result is kept longer (freshness.go)
		}
		stale.clock.Advance(life + time.Second) // past its lifetime
		stale.bamboo.SetFailing(http.StatusInternalServerError)
		_, old := stale.getOK("carol", target)
		stale.bamboo.SetFailing(0)
		if old.Header().Get("X-Cache") != "STALE" || old.Body.String() != fresh.Body.String() {
			t.Errorf("%s: X-Cache %s while upstream fails", target, old.Header().Get("X-Cache"))
		}
	}
}

func TestPrunedViewsFollowAPolicyReload(t *testing.T) {
	f := newFixture(t, options{})
	doc, _ := f.getOK("carol", api+"/result/WEB")
	if got := itemKeys(path(doc, "results", "result")); len(got) != 1 {
		t.Fatalf("before: %v", got)
	}
	writeFile(t, f.policyPath, testPolicy+"p, carol, plan:WEB-PR, view\n")
	if err := f.az.Reload(); err != nil {
		t.Fatal(err)
	}
	doc, _ = f.getOK("carol", api+"/result/WEB")
	if got := itemKeys(path(doc, "results", "result")); len(got) != 2 {
		t.Errorf("after the reload: %v", got)
	}
}
