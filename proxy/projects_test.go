package proxy

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// visibleView summarises a project list: project key -> its plans' keys
// (nil when collapsed) and the recounted plans.size.
type visibleView struct {
	keys      []string
	plans     map[string][]string
	planSizes map[string]int
}

func summarise(t *testing.T, doc map[string]any) visibleView {
	t.Helper()
	v := visibleView{plans: map[string][]string{}, planSizes: map[string]int{}}
	for _, item := range list(path(doc, "projects", "project")) {
		key, _ := path(item, "key").(string)
		v.keys = append(v.keys, key)
		v.planSizes[key] = num(path(item, "plans", "size"))
		if max := num(path(item, "plans", "max-result")); max != v.planSizes[key] {
			t.Errorf("project %s: plans max-result %d, size %d", key, max, v.planSizes[key])
		}
		for _, plan := range list(path(item, "plans", "plan")) {
			pk, _ := path(plan, "key").(string)
			v.plans[key] = append(v.plans[key], pk)
		}
	}
	return v
}

func TestProjectListIsFilteredPerPrincipal(t *testing.T) {
	f := newFixture(t, options{})
	cases := []struct {
		name, sub string
		projects  []string
		plans     map[string][]string // with expand
	}{
		{"project grant shows every plan", "erin", []string{"INFRA"},
			map[string][]string{"INFRA": {"INFRA-TERRAFORM", "INFRA-IMAGES"}}},
		{"plan grant alone shows its project with that plan only", "dave", []string{"MOBILE"},
			map[string][]string{"MOBILE": {"MOBILE-IOS"}}},
		{"team grant reaches members", "frank", []string{"PROJ"},
			map[string][]string{"PROJ": {"PROJ-CORE", "PROJ-LIB", "PROJ-RELEASE"}}},
		{"team grant plus a plan elsewhere", "carol", []string{"PROJ", "WEB"},
			map[string][]string{"PROJ": {"PROJ-CORE", "PROJ-LIB", "PROJ-RELEASE"}, "WEB": {"WEB-NIGHTLY"}}},
		{"no grant sees an empty list", "nobody", nil, map[string][]string{}},
		{"anonymous sees an empty list", "", nil, map[string][]string{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, target := range []string{"/rest/api/latest/project?expand=projects.project.plans", "/rest/api/latest/project.json?expand=projects.project.plans.plan"} {
				doc, rec := f.getOK(tc.sub, target)
				if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type %q", ct)
				}
				got := summarise(t, doc)
				if !slices.Equal(got.keys, tc.projects) {
					t.Fatalf("projects %v, want %v", got.keys, tc.projects)
				}
				if n := num(path(doc, "projects", "size")); n != len(tc.projects) {
					t.Errorf("projects.size %d, want %d", n, len(tc.projects))
				}
				for key, want := range tc.plans {
					if !slices.Equal(got.plans[key], want) {
						t.Errorf("%s plans %v, want %v", key, got.plans[key], want)
					}
					if got.planSizes[key] != len(want) {
						t.Errorf("%s plans.size %d, want %d (recounted)", key, got.planSizes[key], len(want))
					}
				}
			}

			// Without the expansion: the same projects, plans collapsed
			// to their recounted paging numbers, as Bamboo sends them.
			doc, _ := f.getOK(tc.sub, "/rest/api/latest/project?showEmpty&os_authType=basic")
			got := summarise(t, doc)
			if !slices.Equal(got.keys, tc.projects) {
				t.Fatalf("collapsed: projects %v, want %v", got.keys, tc.projects)
			}
			for key, want := range tc.plans {
				if len(got.plans[key]) != 0 || got.planSizes[key] != len(want) {
					t.Errorf("collapsed %s: plans %v size %d, want none listed and size %d", key, got.plans[key], got.planSizes[key], len(want))
				}
			}
		})
	}
	// One upstream collection served every principal and both shapes.
	if n := f.calls("/rest/api/latest/project"); n != 1 {
		t.Errorf("upstream project calls: %d, want 1 shared document", n)
	}
}

func TestProjectListShapeMatchesBamboo(t *testing.T) {
	f := newFixture(t, options{publicURL: "https://builds.example.com/"})
	doc, _ := f.getOK("erin", "/rest/api/latest/project?expand=projects.project.plans")
	if path(doc, "expand") != "projects" || path(doc, "projects", "expand") != "project" {
		t.Errorf("list envelope: %v", doc)
	}
	if href := path(doc, "link", "href"); href != "https://builds.example.com/rest/api/latest/project" {
		t.Errorf("self link %v", href)
	}
	proj := list(path(doc, "projects", "project"))[0]
	for _, member := range []string{"key", "name", "description", "link", "plans"} {
		if path(proj, member) == nil {
			t.Errorf("project lacks %q: %v", member, proj)
		}
	}
	if href := path(proj, "link", "href"); href != "https://builds.example.com/rest/api/latest/project/INFRA" {
		t.Errorf("project link %v", href)
	}
	plan := list(path(proj, "plans", "plan"))[0]
	for _, member := range []string{"key", "shortKey", "shortName", "name", "enabled", "type", "link", "planKey"} {
		if path(plan, member) == nil {
			t.Errorf("plan lacks %q: %v", member, plan)
		}
	}
	if path(proj, "plans", "expand") != "plan" {
		t.Errorf("expanded plans list lacks expand: %v", path(proj, "plans"))
	}

	collapsed, _ := f.getOK("erin", "/rest/api/latest/project")
	plans := path(list(path(collapsed, "projects", "project"))[0], "plans").(map[string]any)
	if len(plans) != 3 || num(plans["size"]) != 2 || num(plans["start-index"]) != 0 || num(plans["max-result"]) != 2 {
		t.Errorf("collapsed plans %v, want {size 2, start-index 0, max-result 2}", plans)
	}
}

func TestProjectListPagesTheFilteredList(t *testing.T) {
	f := newFixture(t, options{})
	// ivy sees PROJ, WEB, MOBILE (one plan) and INFRA, in upstream order.
	cases := []struct {
		query       string
		keys        []string
		start, size int
	}{
		{"", []string{"PROJ", "WEB", "MOBILE", "INFRA"}, 0, 4},
		{"?max-results=2", []string{"PROJ", "WEB"}, 0, 4},
		{"?max-result=2&start-index=1", []string{"WEB", "MOBILE"}, 1, 4},
		{"?start-index=3&max-results=25", []string{"INFRA"}, 3, 4},
		{"?start-index=9", nil, 4, 4},
	}
	for _, tc := range cases {
		doc, _ := f.getOK("ivy", "/rest/api/latest/project"+tc.query)
		got := summarise(t, doc)
		if !slices.Equal(got.keys, tc.keys) {
			t.Errorf("%s: projects %v, want %v", tc.query, got.keys, tc.keys)
		}
		if s := num(path(doc, "projects", "size")); s != tc.size {
			t.Errorf("%s: size %d, want total visible %d", tc.query, s, tc.size)
		}
		if s := num(path(doc, "projects", "start-index")); s != tc.start {
			t.Errorf("%s: start-index %d, want %d", tc.query, s, tc.start)
		}
		if m := num(path(doc, "projects", "max-result")); m != len(tc.keys) {
			t.Errorf("%s: max-result %d, want %d (the page's count, as Bamboo)", tc.query, m, len(tc.keys))
		}
	}
	if got := summarise(t, mustDoc(f, "ivy", "/rest/api/latest/project")); got.planSizes["MOBILE"] != 1 {
		t.Errorf("MOBILE plans.size for a one-plan grant: %d", got.planSizes["MOBILE"])
	}
}

// A project list longer than the page Bamboo is asked for (1,000) is
// collected whole: a project on Bamboo's second page is shown to the one
// person granted it.
func TestProjectListLongerThanBamboosPageIsWhole(t *testing.T) {
	f := newFixture(t, options{policy: testPolicy + "p, zoe, project:P1099, view\n"})
	for i := range 1100 {
		f.bamboo.AddProject(fmt.Sprintf("P%04d", i), fmt.Sprintf("Project %d", i), "")
	}
	doc, _ := f.getOK("zoe", "/rest/api/latest/project")
	if got := summarise(t, doc); !slices.Equal(got.keys, []string{"P1099"}) {
		t.Fatalf("zoe's projects %v, want [P1099]", got.keys)
	}
	if n := f.calls("/rest/api/latest/project"); n != 2 {
		t.Errorf("Bamboo asked %d times for the projects, want 2 pages of 1,000", n)
	}
}

func mustDoc(f *fixture, sub, target string) map[string]any {
	doc, _ := f.getOK(sub, target)
	return doc
}

func TestProjectListFollowsPolicyReloadAtOnce(t *testing.T) {
	f := newFixture(t, options{})
	if got := summarise(t, mustDoc(f, "dave", "/rest/api/latest/project")); !slices.Equal(got.keys, []string{"MOBILE"}) {
		t.Fatalf("before reload: %v", got.keys)
	}
	writeFile(t, f.policyPath, testPolicy+"p, dave, project:WEB, view\n")
	if err := f.az.Reload(); err != nil {
		t.Fatal(err)
	}
	if got := summarise(t, mustDoc(f, "dave", "/rest/api/latest/project")); !slices.Equal(got.keys, []string{"WEB", "MOBILE"}) {
		t.Errorf("after granting WEB: %v, want [WEB MOBILE]", got.keys)
	}
	writeFile(t, f.policyPath, strings.Replace(testPolicy, "p, dave, plan:MOBILE-IOS, view\n", "", 1))
	if err := f.az.Reload(); err != nil {
		t.Fatal(err)
	}
	if got := summarise(t, mustDoc(f, "dave", "/rest/api/latest/project")); len(got.keys) != 0 {
		t.Errorf("after revoking everything: %v, want none", got.keys)
	}
}

func TestProjectListRejectsBadPaging(t *testing.T) {
	f := newFixture(t, options{})
	for _, q := range []string{"max-results=0", "max-results=1001", "max-results=-1", "max-results=1000000", "start-index=-1",
		"max-results=abc", "max-results=1&max-result=2", "start-index=1e3", "max-results=%zz"} {
		rec := f.get("ivy", "/rest/api/latest/project?"+q)
		var p struct {
			Code   string
			Errors []struct{ Parameter, Code string }
		}
		_ = json.Unmarshal(rec.Body.Bytes(), &p)
		if rec.Code != http.StatusBadRequest || p.Code != "bad-parameter" || len(p.Errors) != 1 ||
			!strings.HasPrefix(q, p.Errors[0].Parameter+"=") && !strings.Contains(q, "&"+p.Errors[0].Parameter+"=") {
			t.Errorf("%s: %d %s, want 400 bad-parameter naming the parameter", q, rec.Code, rec.Body)
		}
	}
	if n := f.calls("/"); n != 0 {
		t.Errorf("%d upstream calls for refused requests", n)
	}
}

func TestLinksUseTheRequestsOwnHostNotForwardedHeaders(t *testing.T) {
	f := newFixture(t, options{})
	req := httptest.NewRequest(http.MethodGet, "https://facade.test:8443/rest/api/latest/project", nil)
	req.Header.Set("X-Test-Sub", "erin")
	req.Header.Set("X-Forwarded-Host", "evil.example")
	req.Header.Set("X-Forwarded-Proto", "http")
	rec := httptest.NewRecorder()
	f.e.ServeHTTP(rec, req)
	body := rec.Body.String()
	if rec.Code != http.StatusOK || !strings.Contains(body, `"href":"https://facade.test:8443/rest/api/latest/project/INFRA"`) {
		t.Errorf("%d %s, want links under https://facade.test:8443", rec.Code, body)
	}
	if strings.Contains(body, "evil.example") {
		t.Error("X-Forwarded-Host was trusted")
	}
	f.assertNoUpstreamHost(body)
}
