package proxy

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// Who may read the build routes: the plans Bamboo hides from its service
// account, outsiders refused before any upstream call, and collapsed lists
// that count only what the caller may see.

// TestPlanHiddenFromTheServiceAccountIsAbsent: Bamboo answers 403 for a
// plan its service account may not see. To a caller the facade authorized
// that is a 404 (nothing to show), never a 502, and the plan is in no list.
func TestPlanHiddenFromTheServiceAccountIsAbsent(t *testing.T) {
	f := newFixture(t, options{})
	f.bamboo.HidePlan("PROJ-LIB")
	for _, target := range []string{api + "/result/PROJ-LIB", api + "/plan/PROJ-LIB", api + "/result/PROJ-LIB-4"} {
		if rec := f.get("carol", target); rec.Code != http.StatusNotFound {
			t.Errorf("%s: %d %s", target, rec.Code, rec.Body)
		}
	}
	for _, target := range []string{api + "/result", api + "/plan", api + "/project/PROJ?expand=plans"} {
		if rec := f.get("carol", target); rec.Code != 200 || strings.Contains(rec.Body.String(), "PROJ-LIB") {
			t.Errorf("%s lists the hidden plan: %d", target, rec.Code)
		}
	}
}

// TestEveryBuildRouteRefusesOutsiders: a principal without any grant, and
// one the policy never names, get a 403 on every keyed route and empty
// lists on the filtered ones; a branch's master plan is not shown to a
// caller granted the branch alone.
func TestEveryBuildRouteRefusesOutsiders(t *testing.T) {
	f := newFixture(t, options{policy: testPolicy + "p, bea, plan:PROJ-CORE1, view\n"})
	for _, sub := range []string{"nobody", ""} {
		for _, tc := range routeCases {
			rec := f.get(sub, tc.allowed)
			// A list of everything visible (/plan, /result) is an empty
			// list; every keyed route is a 403. Anything else fails.
			open := !strings.Contains(strings.TrimPrefix(tc.allowed, api+"/"), "/")
			switch {
			case open && rec.Code == http.StatusOK:
				if len(itemKeys(path(decodeBody(t, rec.Body.String()), tc.list...))) != 0 {
					t.Errorf("%q GET %s lists items: %s", sub, tc.allowed, rec.Body)
				}
			case !open && rec.Code == http.StatusForbidden:
			default:
				t.Errorf("%q GET %s: %d, want 403 on a keyed route, 200 with no items on a list of everything visible", sub, tc.allowed, rec.Code)
			}
		}
	}
	doc, rec := f.getOK("bea", api+"/plan/PROJ-CORE1")
	if _, shown := doc["master"]; shown || strings.Contains(rec.Body.String(), `"PROJ-CORE"`) {
		t.Errorf("the master plan is shown to a caller granted the branch alone: %s", rec.Body)
	}
	if doc, _ := f.getOK("carol", api+"/plan/PROJ-CORE1"); path(doc, "master", "key") != "PROJ-CORE" {
		t.Errorf("the master plan is hidden from a caller who may see it: %v", doc["master"])
	}
}

func decodeBody(t *testing.T, body string) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatalf("not JSON: %s", body)
	}
	return doc
}

// TestCollapsedBranchesCountOnlyVisibleOnes: a plan's branches, collapsed
// or listed, count only the branches the caller may see; carol's grant on
// WEB-NIGHTLY does not cover its branch WEB-NIGHTLY1.
func TestCollapsedBranchesCountOnlyVisibleOnes(t *testing.T) {
	f := newFixture(t, options{})
	for target, want := range map[string]int{
		api + "/plan/WEB-NIGHTLY":                  0,
		api + "/plan/WEB-NIGHTLY?expand=branches":  0,
		api + "/plan/PROJ-CORE":                    2,
		api + "/plan/PROJ-CORE.json?expand=stages": 2,
		api + "/plan/PROJ-CORE?expand=branches":    2,
	} {
		doc, _ := f.getOK("carol", target)
		branches := path(doc, "branches").(map[string]any)
		_, listed := branches["branch"]
		if num(branches["size"]) != want || listed != strings.Contains(target, "branches") {
			t.Errorf("%s: branches %v, want size %d", target, branches, want)
		}
	}
}
