package proxy

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/facade-dev/facade/upstream/bambootest"
)

// Every read route of Bamboo's API the facade serves: allowed, refused
// (the same bytes whether the target exists or not, and no upstream call),
// filtered for the caller, paged, the .json form, and a link of its answer
// that, followed, is served.

const api = "/rest/api/latest"

// routeCase is one route seen by carol (PROJ through her team, plan
// WEB-NIGHTLY) and refused to dave (plan MOBILE-IOS only).
type routeCase struct {
	name string
	// allowed is carol's request; jsonForm the same with .json.
	allowed, jsonForm string
	// refused is a request for something that exists, missing the same
	// for something that does not: both refused to dave.
	refused, missing string
	// keys are the item keys carol's answer must list (in order), when
	// the route answers a list; single the key of a single object.
	list   []string
	keys   []string
	single string
}

var routeCases = []routeCase{
	{name: "project", allowed: api + "/project/WEB?expand=plans", jsonForm: api + "/project/WEB.json?expand=plans",
		refused: api + "/project/PROJ", missing: api + "/project/NOPE",
		list: []string{"plans", "plan"}, keys: []string{"WEB-NIGHTLY"}},
	{name: "plans", allowed: api + "/plan", jsonForm: api + "/plan.json",
		list: []string{"plans", "plan"}, keys: []string{"PROJ-CORE", "PROJ-LIB", "PROJ-RELEASE", "WEB-NIGHTLY"}},
	{name: "plan", allowed: api + "/plan/PROJ-CORE?expand=branches", jsonForm: api + "/plan/PROJ-CORE.json?expand=branches",
		refused: api + "/plan/PROJ-CORE", missing: api + "/plan/NOPE-NOPE",
		list: []string{"branches", "branch"}, keys: []string{"PROJ-CORE1", "PROJ-CORE2"}, single: "PROJ-CORE"},
	{name: "plan of another project's grant", allowed: api + "/plan/WEB-NIGHTLY?expand=branches",
		jsonForm: api + "/plan/WEB-NIGHTLY.json?expand=branches",
		list:     []string{"branches", "branch"}, keys: []string{}, single: "WEB-NIGHTLY"},
	{name: "branches", allowed: api + "/plan/PROJ-CORE/branch", jsonForm: api + "/plan/PROJ-CORE/branch.json",
		refused: api + "/plan/PROJ-CORE/branch", missing: api + "/plan/NOPE-NOPE/branch",
		list: []string{"branches", "branch"}, keys: []string{"PROJ-CORE1", "PROJ-CORE2"}},
	{name: "branches hidden by the grant", allowed: api + "/plan/WEB-NIGHTLY/branch", jsonForm: api + "/plan/WEB-NIGHTLY/branch.json",
		list: []string{"branches", "branch"}, keys: []string{}},
	{name: "branch results", allowed: api + "/result/PROJ-CORE1", jsonForm: api + "/result/PROJ-CORE1.json",
		refused: api + "/result/PROJ-CORE1", missing: api + "/result/PROJ-NOPE1",
		list: []string{"results", "result"}, keys: []string{"PROJ-CORE1-2", "PROJ-CORE1-1"}},
	{name: "latest results", allowed: api + "/result", jsonForm: api + "/result.json",
		list: []string{"results", "result"}, keys: []string{"PROJ-CORE-6", "PROJ-LIB-4", "PROJ-RELEASE-3", "WEB-NIGHTLY-5"}},
	{name: "project results", allowed: api + "/result/WEB", jsonForm: api + "/result/WEB.json",
		refused: api + "/result/PROJ", missing: api + "/result/NOPE",
		list: []string{"results", "result"}, keys: []string{"WEB-NIGHTLY-5"}},
	{name: "result", allowed: api + "/result/PROJ-CORE-5?expand=labels", jsonForm: api + "/result/PROJ-CORE-5.json?expand=labels",
		refused: api + "/result/PROJ-CORE-5", missing: api + "/result/NOPE-NOPE-5", single: "PROJ-CORE-5"},
	{name: "result by number", allowed: api + "/result/PROJ-CORE/5", jsonForm: api + "/result/PROJ-CORE/5.json",
		refused: api + "/result/PROJ-CORE/5", missing: api + "/result/NOPE-NOPE/5", single: "PROJ-CORE-5"},
	{name: "latest result", allowed: api + "/result/PROJ-CORE/latest", jsonForm: api + "/result/PROJ-CORE/latest.json",
		refused: api + "/result/PROJ-CORE/latest", missing: api + "/result/NOPE-NOPE/latest", single: "PROJ-CORE-6"},
	{name: "job result", allowed: api + "/result/PROJ-CORE-PKG-6?expand=artifacts,logEntries",
		jsonForm: api + "/result/PROJ-CORE-PKG-6.json?expand=artifacts,logEntries",
		refused:  api + "/result/PROJ-CORE-PKG-6", missing: api + "/result/NOPE-NOPE-PKG-6", single: "PROJ-CORE-PKG-6"},
	{name: "labels", allowed: api + "/result/PROJ-CORE-4/label", jsonForm: api + "/result/PROJ-CORE-4/label.json",
		refused: api + "/result/PROJ-CORE-4/label", missing: api + "/result/NOPE-NOPE-4/label"},
	{name: "comments", allowed: api + "/result/PROJ-CORE-6/comment", jsonForm: api + "/result/PROJ-CORE-6/comment.json",
		refused: api + "/result/PROJ-CORE-6/comment", missing: api + "/result/NOPE-NOPE-6/comment"},
}

func TestEveryBuildRouteAllowsFiltersAndRefuses(t *testing.T) {
	f := newFixture(t, options{})
	for _, tc := range routeCases {
		t.Run(tc.name, func(t *testing.T) {
			doc, rec := f.getOK("carol", tc.allowed)
			if rec.Header().Get("X-Cache") == "" {
				t.Error("no X-Cache header")
			}
			if tc.list != nil {
				if got := itemKeys(path(doc, tc.list...)); !slices.Equal(got, tc.keys) {
					t.Errorf("carol's %s: %v, want %v", tc.list[0], got, tc.keys)
				}
				if n := num(path(doc, tc.list[0], "size")); tc.list[0] != "results" && n != len(tc.keys) {
					t.Errorf("size %d, want %d (recounted)", n, len(tc.keys))
				}
			}
			if tc.single != "" && doc["key"] != tc.single {
				t.Errorf("key %v, want %s", doc["key"], tc.single)
			}
			if twin := f.get("carol", tc.jsonForm); twin.Code != 200 || twin.Body.String() != rec.Body.String() {
				t.Errorf(".json form: %d, differs from the plain form", twin.Code)
			}
			if tc.refused != "" {
				assertRefusedAlike(t, f, tc.refused, tc.missing)
			}
			followOneLink(t, f, rec.Body.String())
		})
	}
}

// assertRefusedAlike: dave is refused the existing and the missing target
// with the same bytes, and upstream is not asked about either.
func assertRefusedAlike(t *testing.T, f *fixture, existing, missing string) {
	t.Helper()
	f.getOK("dave", api+"/project") // the shared project list, warm
	before := len(f.bamboo.Calls())
	a, b := f.get("dave", existing), f.get("dave", missing)
	if a.Code != http.StatusForbidden || b.Code != http.StatusForbidden || a.Body.String() != b.Body.String() {
		t.Errorf("refusals: %d %s / %d %s", a.Code, a.Body, b.Code, b.Body)
	}
	if calls := f.bamboo.Calls()[before:]; len(calls) != 0 {
		t.Errorf("a refusal called upstream: %s", calls[0].Path)
	}
}

// followOneLink follows the last link.href of an answer that points at a
// facade API route, and expects it served.
func followOneLink(t *testing.T, f *fixture, body string) {
	t.Helper()
	var last string
	for _, href := range linkHrefs(t, body) {
		if u, err := url.Parse(href); err == nil && strings.HasPrefix(u.Path, api) {
			last = u.RequestURI()
		}
	}
	if last == "" {
		t.Fatalf("no API link in %s", body)
	}
	if rec := f.get("carol", last); rec.Code != http.StatusOK {
		t.Errorf("following %s: %d %s", last, rec.Code, rec.Body)
	}
}

func linkHrefs(t *testing.T, body string) []string {
	t.Helper()
	var doc any
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			if href, ok := path(x, "link", "href").(string); ok {
				out = append(out, href)
			}
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(doc)
	slices.Sort(out)
	return out
}

// itemKeys lists the "key" of every item of a list.
func itemKeys(v any) []string {
	out := []string{}
	for _, item := range list(v) {
		if k, ok := path(item, "key").(string); ok {
			out = append(out, k)
		}
	}
	return out
}

func TestBuildListsPageAfterFiltering(t *testing.T) {
	f := newFixture(t, options{})
	cases := []struct {
		target string
		list   []string
		keys   []string
		size   int
	}{
		{api + "/plan?max-results=2&start-index=1", []string{"plans", "plan"}, []string{"PROJ-LIB", "PROJ-RELEASE"}, 4},
		{api + "/plan?max-result=3&start-index=3", []string{"plans", "plan"}, []string{"WEB-NIGHTLY"}, 4},
		{api + "/plan/PROJ-CORE/branch?max-results=1&start-index=1", []string{"branches", "branch"}, []string{"PROJ-CORE2"}, 2},
		// On collected result lists size is the number the caller may see,
		// so a client knows how far to page.
		{api + "/result?max-results=2&start-index=2", []string{"results", "result"}, []string{"PROJ-RELEASE-3", "WEB-NIGHTLY-5"}, 4},
		{api + "/result/PROJ?max-results=1&start-index=1", []string{"results", "result"}, []string{"PROJ-LIB-4"}, 3},
		// A plan's own results are Bamboo's page: size the count returned.
		{api + "/result/PROJ-CORE?max-results=2&start-index=1", []string{"results", "result"}, []string{"PROJ-CORE-5", "PROJ-CORE-4"}, 2},
	}
	for _, tc := range cases {
		doc, _ := f.getOK("carol", tc.target)
		if got := itemKeys(path(doc, tc.list...)); !slices.Equal(got, tc.keys) || num(path(doc, tc.list[0], "size")) != tc.size {
			t.Errorf("%s: %v size %v, want %v size %d", tc.target, got, path(doc, tc.list[0], "size"), tc.keys, tc.size)
		}
	}
	for _, bad := range []string{api + "/plan?max-results=1001", api + "/result?start-index=x", api + "/plan/PROJ-CORE/branch?max-results=0"} {
		if rec := f.get("carol", bad); rec.Code != http.StatusBadRequest {
			t.Errorf("%s: %d", bad, rec.Code)
		}
	}
}

// A list longer than the page Bamboo is asked for (1,000) is collected
// whole, and not called truncated: a plan with 1,052 branches shows its
// last 52 on the facade's page from 1,000, and counts 1,052.
func TestBranchListLongerThanBamboosPageIsWhole(t *testing.T) {
	f := newFixture(t, options{})
	for i := range 1050 {
		f.bamboo.AddBranch("PROJ-CORE", "B"+strconv.Itoa(100+i), "feature-"+strconv.Itoa(i))
	}
	doc, _ := f.getOK("carol", api+"/plan/PROJ-CORE/branch?max-results=100&start-index=1000")
	keys := itemKeys(path(doc, "branches", "branch"))
	if len(keys) != 52 || !slices.Contains(keys, "PROJ-B1149") || num(path(doc, "branches", "size")) != 1052 {
		t.Fatalf("page from 1,000: %d branches, size %v; want 52 with PROJ-B1149, size 1052", len(keys), path(doc, "branches", "size"))
	}
	if n := f.calls("/rest/api/latest/plan/PROJ-CORE/branch"); n != 2 {
		t.Errorf("Bamboo asked %d times for the branches, want 2 pages of 1,000", n)
	}
	// Ops are warned of a list cut at its bound (10,000), never of a whole one.
	f.getOK("carol", api+"/project")
	if strings.Contains(f.logs.String(), "truncated") {
		t.Errorf("a whole list logged as truncated:\n%s", f.logs)
	}
}

// TestResultFiltersAreHonouredAsBambooDoes compares each honoured filter
// with the test server's own answer to the same query, seen through the
// caller's grants.
func TestResultFiltersAreHonouredAsBambooDoes(t *testing.T) {
	f := newFixture(t, options{})
	f.bamboo.AddResult("PROJ-CORE", 7, "Successful")
	f.bamboo.SetInProgress("PROJ-CORE-7")
	queries := []string{
		"/result/PROJ-CORE?label=release",
		"/result/PROJ-CORE?label=hotfix,nosuch",
		"/result/PROJ-CORE?issueKey=CORE-101",
		"/result/PROJ-CORE?buildstate=Failed",
		"/result/PROJ-CORE?buildstate=successful",
		"/result/PROJ-CORE?includeAllStates=true",
		"/result/PROJ-CORE?includeAllStates=false",
		"/result/PROJ-RELEASE?continuable=true",
		"/result/PROJ-CORE?label=release&buildstate=Successful",
		"/result?label=release",
		"/result?cloverEnabled=true",
		"/result?buildstate=Failed",
		"/result/WEB?issueKey=WEB-7",
		"/result/PROJ?includeAllStates=true",
	}
	for _, q := range queries {
		doc, _ := f.getOK("carol", api+q)
		got := itemKeys(path(doc, "results", "result"))
		want := visibleToCarol(upstreamKeys(t, f, q))
		if !slices.Equal(got, want) {
			t.Errorf("%s: facade %v, Bamboo %v", q, got, want)
		}
		unfiltered, _ := f.getOK("carol", api+strings.SplitN(q, "?", 2)[0])
		if q != "/result/PROJ-CORE?includeAllStates=false" && slices.Equal(got, itemKeys(path(unfiltered, "results", "result"))) {
			t.Errorf("%s: the filter changed nothing: the case proves nothing", q)
		}
	}
}

// upstreamKeys asks the test server directly (as Bamboo, with its token).
func upstreamKeys(t *testing.T, f *fixture, query string) []string {
	t.Helper()
	p, q, _ := strings.Cut(query, "?")
	req, _ := http.NewRequest(http.MethodGet, f.upstreamTS.URL+api+p+".json?"+q, nil)
	req.Header.Set("Authorization", "Bearer "+bambootest.DefaultToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("%s: %s", query, body)
	}
	return itemKeys(path(doc, "results", "result"))
}

// visibleToCarol keeps the results of plans in PROJ and of WEB-NIGHTLY.
func visibleToCarol(keys []string) []string {
	out := []string{}
	for _, k := range keys {
		if strings.HasPrefix(k, "PROJ-") || strings.HasPrefix(k, "WEB-NIGHTLY-") {
			out = append(out, k)
		}
	}
	return out
}

// TestUnsupportedFiltersAreRefusedByName: a Bamboo filter the facade
// cannot honour on a route, or a malformed value, is a 400 whose detail
// names the parameter; upstream is never asked.
func TestUnsupportedFiltersAreRefusedByName(t *testing.T) {
	f := newFixture(t, options{})
	cases := map[string]string{
		"/result/PROJ-CORE?favourite=maybe":        "favourite",
		"/result?favourite=1":                      "favourite",
		"/result/PROJ-CORE?cloverEnabled=true":     "cloverEnabled",
		"/result/PROJ-CORE?label=a%20b":            "label",
		"/result/PROJ-CORE?label=":                 "label",
		"/result/PROJ-CORE?issueKey=core-1":        "issueKey",
		"/result/PROJ-CORE?buildstate=Broken":      "buildstate",
		"/result/PROJ-CORE?includeAllStates=maybe": "includeAllStates",
		"/result/PROJ-CORE?continuable=1":          "continuable",
		"/result/PROJ-CORE-6?label=release":        "label",
		"/plan/PROJ-CORE?buildstate=Failed":        "buildstate",
		"/project?issueKey=WEB-7":                  "issueKey",
		"/plan?cloverEnabled=yes":                  "cloverEnabled",
		"/plan/PROJ-CORE?favourite":                "favourite",
	}
	for target, name := range cases {
		before := len(f.bamboo.Calls())
		rec := f.get("carol", api+target)
		if rec.Code != http.StatusBadRequest || !strings.Contains(problemDetail(t, rec), "The "+name+" parameter") {
			t.Errorf("%s: %d %s, want a 400 naming %s", target, rec.Code, rec.Body, name)
		}
		if len(f.bamboo.Calls()) != before {
			t.Errorf("%s: upstream was called", target)
		}
	}
}

// TestExpandIsPassedOnOnlyWhereSupported: supported expand values reach
// upstream (and change the answer); others are ignored.
func TestExpandIsPassedOnOnlyWhereSupported(t *testing.T) {
	f := newFixture(t, options{})
	doc, _ := f.getOK("carol", api+"/result/PROJ-CORE-4?expand=labels,jiraIssues,secrets,stages.stage.results.result.artifacts")
	if got := list(path(doc, "labels", "label")); len(got) != 2 {
		t.Errorf("labels not expanded: %v", path(doc, "labels"))
	}
	if jobs := itemKeys(path(list(path(doc, "stages", "stage"))[0], "results", "result")); !slices.Contains(jobs, "PROJ-CORE-PKG-4") {
		t.Errorf("stage jobs not expanded: %v", jobs)
	}
	job, _ := f.getOK("carol", api+"/result/PROJ-CORE-JOB1-4?expand=logEntries")
	if n := len(list(path(job, "logEntries", "logEntry"))); n == 0 {
		t.Error("log entries not expanded")
	}
	for _, call := range f.bamboo.Calls() {
		if strings.Contains(call.RawQuery, "secrets") || strings.Contains(call.RawQuery, "artifacts") {
			t.Errorf("unsupported expand reached upstream: %s", call.RawQuery)
		}
	}
	plain, _ := f.getOK("carol", api+"/result/PROJ-CORE-4")
	if _, listed := path(plain, "labels").(map[string]any)["label"]; listed {
		t.Error("labels listed without expand")
	}
}
