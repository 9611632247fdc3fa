package bambootest_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/facade-dev/facade/upstream/bambootest"
)

// keysOf lists the "key" of every item of a list at path.
func keysOf(doc map[string]any, path ...any) []string {
	out := []string{}
	for _, item := range at(doc, path...).([]any) {
		out = append(out, item.(map[string]any)["key"].(string))
	}
	return out
}

func TestEveryReadRouteFromOneCatalogue(t *testing.T) {
	_, base := demo(t)
	api := base + "/rest/api/latest"
	cases := []struct {
		target string
		path   []any
		want   []string
	}{
		{"/project/WEB.json?expand=plans", []any{"plans", "plan"}, []string{"WEB-NIGHTLY", "WEB-PR"}},
		{"/plan.json?max-results=2&start-index=1", []any{"plans", "plan"}, []string{"PROJ-LIB", "PROJ-RELEASE"}},
		{"/plan/PROJ-CORE.json?expand=branches", []any{"branches", "branch"}, []string{"PROJ-CORE1", "PROJ-CORE2"}},
		{"/plan/PROJ-CORE/branch.json?max-result=1&start-index=1", []any{"branches", "branch"}, []string{"PROJ-CORE2"}},
		{"/result.json?max-results=2", []any{"results", "result"}, []string{"PROJ-CORE-6", "PROJ-LIB-4"}},
		{"/result/MOBILE.json", []any{"results", "result"}, []string{"MOBILE-ANDROID-4", "MOBILE-IOS-3"}},
		{"/result/PROJ-CORE1.json", []any{"results", "result"}, []string{"PROJ-CORE1-2", "PROJ-CORE1-1"}},
		{"/result/PROJ-CORE-6.json?expand=stages.stage.results", []any{"stages", "stage", 0, "results", "result"}, []string{"PROJ-CORE-JOB1-6", "PROJ-CORE-PKG-6"}},
	}
	for _, tc := range cases {
		resp, body := get(t, api+tc.target)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", tc.target, resp.StatusCode, body)
		}
		if got := keysOf(decode(t, body), tc.path...); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.target, got, tc.want)
		}
	}
	for target, key := range map[string]string{
		"/result/PROJ-CORE/4.json": "PROJ-CORE-4", "/result/PROJ-CORE/latest.json": "PROJ-CORE-6",
		"/result/PROJ-CORE-latest.json": "PROJ-CORE-6", "/result/PROJ-CORE-PKG-6.json": "PROJ-CORE-PKG-6",
	} {
		if _, body := get(t, api+target); decode(t, body)["key"] != key {
			t.Errorf("%s: %s", target, body)
		}
	}
	_, body := get(t, api+"/result/PROJ-CORE-4/label.json")
	if got := at(decode(t, body), "labels", "label", 1, "name"); got != "hotfix" {
		t.Errorf("labels: %s", body)
	}
}

func TestResultFiltersAsBambooDoes(t *testing.T) {
	s, base := demo(t)
	s.AddResult("PROJ-CORE", 7, "Successful")
	s.SetInProgress("PROJ-CORE-7")
	api := base + "/rest/api/latest"
	cases := map[string][]string{
		"/result/PROJ-CORE.json":                       {"PROJ-CORE-6", "PROJ-CORE-5", "PROJ-CORE-4", "PROJ-CORE-3", "PROJ-CORE-2", "PROJ-CORE-1"},
		"/result/PROJ-CORE.json?includeAllStates=true": {"PROJ-CORE-7", "PROJ-CORE-6", "PROJ-CORE-5", "PROJ-CORE-4", "PROJ-CORE-3", "PROJ-CORE-2", "PROJ-CORE-1"},
		"/result/PROJ-CORE.json?label=release":         {"PROJ-CORE-6", "PROJ-CORE-4"},
		"/result/PROJ-CORE.json?issueKey=CORE-101":     {"PROJ-CORE-5"},
		"/result/PROJ-CORE.json?buildstate=Failed":     {"PROJ-CORE-3"},
		"/result/PROJ-RELEASE.json?continuable=true":   {"PROJ-RELEASE-2"},
		"/result.json?cloverEnabled=true":              {"PROJ-LIB-4"},
		"/result.json?favourite=true":                  {"WEB-NIGHTLY-5"},
		"/result.json?label=release":                   {"PROJ-CORE-6", "WEB-NIGHTLY-5"},
	}
	for target, want := range cases {
		_, body := get(t, api+target)
		if got := keysOf(decode(t, body), "results", "result"); !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", target, got, want)
		}
	}
}

func TestHiddenIs403MissingIs404(t *testing.T) {
	s, base := demo(t)
	s.HidePlan("WEB-PR")
	api := base + "/rest/api/latest"
	for target, want := range map[string]int{
		"/plan/WEB-PR.json": 403, "/result/WEB-PR.json": 403, "/result/WEB-PR-2.json": 403,
		"/plan/WEB-NOPE.json": 404, "/result/WEB-NOPE.json": 404, "/result/WEB-NIGHTLY-99.json": 404,
		"/project/NOPE.json": 404, "/result/NOPE.json": 404,
	} {
		if resp, body := get(t, api+target); resp.StatusCode != want || at(decode(t, body), "status-code") != float64(want) {
			t.Errorf("%s: %d %s, want %d", target, resp.StatusCode, body, want)
		}
	}
	_, body := get(t, api+"/project/WEB.json?expand=plans")
	if strings.Contains(string(body), "WEB-PR") {
		t.Error("a hidden plan is listed")
	}
}

// noRedirects is a client that reports redirects instead of following.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func TestRedirectsAsBambooDoes(t *testing.T) {
	s, base := demo(t)
	s.AddResult("PROJ-CORE", 99, "Successful", bambootest.Artifact{Name: "site", ProducerJobKey: "JOB1", Directory: true, Content: []byte("x")})
	do := func(path, token string) *http.Response {
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := noRedirects.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	// A directory link without its slash goes to the directory, whose
	// page is Bamboo's HTML listing.
	if r := do("/browse/PROJ-CORE-99/artifact/JOB1/site", bambootest.DefaultToken); r.StatusCode != 302 || r.Header.Get("Location") != "/browse/PROJ-CORE-99/artifact/JOB1/site/" {
		t.Errorf("no slash: %d %s", r.StatusCode, r.Header.Get("Location"))
	}
	resp, body := get(t, base+"/browse/PROJ-CORE-99/artifact/JOB1/site/")
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || !strings.Contains(string(body), bambootest.Version) {
		t.Errorf("listing: %s %s", resp.Header.Get("Content-Type"), body)
	}
	if _, body := get(t, base+"/browse/PROJ-CORE-99/artifact/JOB1/site/site"); string(body) != "x" {
		t.Errorf("file under the directory: %q", body)
	}
	// A bad token: artifacts go to the login page; the REST API says 401.
	if r := do("/browse/PROJ-CORE-6/artifact/shared/core-service.jar/", "wrong"); r.StatusCode != 302 || !strings.Contains(r.Header.Get("Location"), "/userlogin!doDefault.action?os_destination=") {
		t.Errorf("bad token on an artifact: %d %s", r.StatusCode, r.Header.Get("Location"))
	}
	if r := do("/rest/api/latest/plan.json", "wrong"); r.StatusCode != 401 {
		t.Errorf("bad token on the API: %d", r.StatusCode)
	}
	s.Redirect("/browse/PROJ-CORE-6/artifact/shared/core-service.jar/", "http://elsewhere.example/x")
	if r := do("/browse/PROJ-CORE-6/artifact/shared/core-service.jar/", bambootest.DefaultToken); r.StatusCode != 302 || r.Header.Get("Location") != "http://elsewhere.example/x" {
		t.Errorf("injected redirect: %d %s", r.StatusCode, r.Header.Get("Location"))
	}
}
