package proxy

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/facade-dev/facade/upstream/bambootest"
)

// A Bamboo at a real organization's size: 400 projects of 10 plans. dana
// may see 300 of the projects (3,000 plans); omar one plan of a project
// dana may not see.
const (
	orgProjects, orgPlans = 400, 10
	danaProjects          = 300
)

func orgPolicy() string {
	var b strings.Builder
	for i := range danaProjects {
		fmt.Fprintf(&b, "p, dana, project:%s, view\n", bambootest.OrgProjectKey(i))
	}
	b.WriteString("p, omar, plan:" + bambootest.OrgPlanKey(350, 4) + ", view\n")
	return b.String()
}

func orgFixture(t *testing.T, o options) *fixture {
	o.policy = orgPolicy()
	// Collecting 4,000 results takes seconds under -race on a busy
	// machine: the test is about what is asked, not how fast.
	o.upstream.Timeout, o.fetchTimeout = 2*time.Minute, 5*time.Minute
	o.fill = func(s *bambootest.Server) { bambootest.Organization(s, orgProjects, orgPlans) }
	return newFixture(t, o)
}

// overview reads what the builds page reads for dana, every page of it:
// the projects with their plans and the latest results, max-results=1000.
// It returns each visible plan's latest result key and state, and the
// number of plans listed.
func overview(t *testing.T, f *fixture, sub string) (latest map[string][2]string, plans int) {
	t.Helper()
	doc, _ := f.getOK(sub, api+"/project?expand=projects.project.plans&max-results=1000")
	if n := num(path(doc, "projects", "size")); n != len(list(path(doc, "projects", "project"))) {
		t.Fatalf("projects: size %d, %d listed on a page of 1,000", n, len(list(path(doc, "projects", "project"))))
	}
	for _, p := range list(path(doc, "projects", "project")) {
		plans += len(list(path(p, "plans", "plan")))
	}
	latest = map[string][2]string{}
	for start := 0; ; start += 1000 {
		doc, _ := f.getOK(sub, api+"/result?max-results=1000&start-index="+strconv.Itoa(start))
		items := list(path(doc, "results", "result"))
		for _, r := range items {
			key, _ := path(r, "key").(string)
			state, _ := path(r, "buildState").(string)
			plan := key[:strings.LastIndexByte(key, '-')]
			latest[plan] = [2]string{key, state}
		}
		if len(items) < 1000 {
			return latest, plans
		}
	}
}

// wantOverview checks that latest holds every plan of dana's first
// projects with its real latest result, and nothing else.
func wantOverview(t *testing.T, latest map[string][2]string, plans, projects int) {
	t.Helper()
	if plans != projects*orgPlans || len(latest) != projects*orgPlans {
		t.Fatalf("%d plans listed, %d latest results; want %d of each", plans, len(latest), projects*orgPlans)
	}
	for i := range projects {
		for j := range orgPlans {
			key := bambootest.OrgPlanKey(i, j)
			want := [2]string{key + "-" + strconv.Itoa(11+j), bambootest.OrgLatestState(i, j)}
			if latest[key] != want {
				t.Fatalf("%s: latest %v, want %v", key, latest[key], want)
			}
		}
	}
}

// The overview reaches every one of 3,000 visible plans with its real
// latest state, at a cost to Bamboo of one call per thousand items: one
// for the 400 projects and their plans, five for the 4,000 latest results
// (the last one empty), never one per plan.
func TestOverviewReachesEveryVisiblePlanAtOrganizationSize(t *testing.T) {
	f := orgFixture(t, options{})
	latest, plans := overview(t, f, "dana")
	wantOverview(t, latest, plans, danaProjects)
	projectCalls, resultCalls := f.calls(api+"/project"), f.calls(api+"/result")
	t.Logf("cold overview of 4,000 upstream plans: %d upstream calls (%d project list, %d result list)", len(f.bamboo.Calls()), projectCalls, resultCalls)
	if projectCalls != 1 || resultCalls != 5 || len(f.bamboo.Calls()) != 6 {
		t.Errorf("cold overview cost %d upstream calls (%d for projects, %d for results), want 6 (1 and 5)", len(f.bamboo.Calls()), projectCalls, resultCalls)
	}
	for _, c := range f.bamboo.Calls() {
		if !strings.Contains(c.RawQuery, "max-results=1000") {
			t.Errorf("upstream asked for a smaller page than Bamboo allows: %s?%s", c.Path, c.RawQuery)
		}
	}
	f.bamboo.ResetCalls()
	overview(t, f, "dana")
	if n := len(f.bamboo.Calls()); n != 0 {
		t.Errorf("a warm overview cost %d upstream calls", n)
	}
	// The plan of the last visible project is found where paging puts it.
	doc, _ := f.getOK("dana", api+"/plan?max-results=1000&start-index=2000")
	names := map[string]bool{}
	for _, p := range list(path(doc, "plans", "plan")) {
		names[path(p, "name").(string)] = true
	}
	if num(path(doc, "plans", "size")) != 3000 || !names["Services 299 - Service 299-9"] && !names["Service 299-9"] {
		t.Errorf("plans 2000-2999: size %v, Service 299-9 missing (%d names)", path(doc, "plans", "size"), len(names))
	}
}

// A Bamboo that answers smaller pages than asked is followed to the end:
// the overview is whole, and costs a call per page it gives (40 projects
// of 10 plans, pages of 100: one call for the projects, four full pages of
// latest results and an empty one).
func TestOverviewFollowsASmallerUpstreamPage(t *testing.T) {
	f := newFixture(t, options{policy: orgPolicy(), bambooOptions: []bambootest.Option{bambootest.WithPageCap(100)},
		fill: func(s *bambootest.Server) { bambootest.Organization(s, 40, orgPlans) }})
	latest, plans := overview(t, f, "dana")
	wantOverview(t, latest, plans, 40)
	if p, r := f.calls(api+"/project"), f.calls(api+"/result"); p != 1 || r != 5 {
		t.Errorf("pages of 100: %d project calls (want 1), %d result calls (want 5)", p, r)
	}
	for _, c := range f.bamboo.Calls() {
		if !strings.Contains(c.RawQuery, "max-results=1000") {
			t.Errorf("the facade asked for less than it may: %s?%s", c.Path, c.RawQuery)
		}
	}
}

// Paging never reveals a plan, or a total, the caller may not see: size
// counts visible items only, a page past the end is empty with the same
// size, and every bad page size is a 400 naming it before any upstream call.
func TestPagedListsRevealOnlyWhatTheCallerMaySee(t *testing.T) {
	f := orgFixture(t, options{})
	omarPlan := bambootest.OrgPlanKey(350, 4)
	for _, tc := range []struct {
		sub, target, list string
		size              int
		keyPrefix         string
	}{
		{"omar", api + "/project?expand=projects.project.plans&max-results=1000", "projects", 1, "S350"},
		{"omar", api + "/plan?max-results=1000", "plans", 1, omarPlan},
		{"omar", api + "/result?max-results=1000", "results", 1, omarPlan},
		{"omar", api + "/result/S350?max-results=1000", "results", 1, omarPlan},
		{"omar", api + "/result?max-results=1000&start-index=1", "results", 1, ""},
		{"omar", api + "/result?start-index=999999999", "results", 1, ""},
		{"dana", api + "/plan?max-results=1000&start-index=3000", "plans", 3000, ""},
		{"dana", api + "/result?max-results=1000&start-index=5000", "results", 3000, ""},
		{"dana", api + "/project?max-results=1&start-index=300", "projects", 300, ""},
		{"nobody", api + "/result?max-results=1000", "results", 0, ""},
		{"nobody", api + "/plan", "plans", 0, ""},
	} {
		doc, rec := f.getOK(tc.sub, tc.target)
		l := path(doc, tc.list)
		items := list(path(l, strings.TrimSuffix(tc.list, "s")))
		if num(path(l, "size")) != tc.size {
			t.Errorf("%s as %s: size %v, want %d", tc.target, tc.sub, path(l, "size"), tc.size)
		}
		if tc.keyPrefix == "" && len(items) != 0 {
			t.Errorf("%s as %s: %d items past the end", tc.target, tc.sub, len(items))
		}
		if tc.keyPrefix != "" && (len(items) != 1 || !strings.HasPrefix(path(items[0], "key").(string), tc.keyPrefix)) {
			t.Errorf("%s as %s: %s", tc.target, tc.sub, rec.Body.String()[:min(300, rec.Body.Len())])
		}
	}
	// dana's pages hold her projects' plans only.
	for start := 0; start < 3000; start += 1000 {
		doc, _ := f.getOK("dana", api+"/result?max-results=1000&start-index="+strconv.Itoa(start))
		for _, r := range list(path(doc, "results", "result")) {
			var i int
			if _, err := fmt.Sscanf(path(r, "key").(string), "S%03d-", &i); err != nil || i >= danaProjects {
				t.Fatalf("dana's results show %v", path(r, "key"))
			}
		}
	}
	f.bamboo.ResetCalls()
	for _, target := range []string{api + "/project", api + "/plan", api + "/result", api + "/result/S350", api + "/result/" + omarPlan} {
		for _, q := range []string{"max-results=1001", "max-results=0", "max-results=-1", "max-results=abc", "max-result=1001"} {
			rec := f.get("omar", target+"?"+q)
			var p struct {
				Code   string
				Errors []struct{ Parameter string }
			}
			_ = json.Unmarshal(rec.Body.Bytes(), &p)
			param, _, _ := strings.Cut(q, "=")
			if rec.Code != http.StatusBadRequest || p.Code != "bad-parameter" || len(p.Errors) != 1 || p.Errors[0].Parameter != param {
				t.Errorf("%s?%s: %d %s, want 400 bad-parameter naming %s", target, q, rec.Code, rec.Body, param)
			}
		}
		if rec := f.get("omar", target+"?max-results=1000"); rec.Code != http.StatusOK {
			t.Errorf("%s?max-results=1000: %d", target, rec.Code)
		}
	}
	for _, c := range f.bamboo.Calls() {
		if strings.Contains(c.RawQuery, "max-results=0") || strings.Contains(c.RawQuery, "1001") || strings.Contains(c.RawQuery, "abc") {
			t.Errorf("a refused page reached upstream: %s?%s", c.Path, c.RawQuery)
		}
	}
}
