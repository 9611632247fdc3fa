package server_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// TestBuildEndpointsThroughThePipeline runs the build routes through the
// whole server: authentication, filtering per principal, refusals that
// look the same for plans that exist and plans that do not, and no
// upstream host or caller token crossing the facade.
func TestBuildEndpointsThroughThePipeline(t *testing.T) {
	e := newEnv(t, withBuilds())
	carol, alice := token(t, "carol", "developer"), token(t, "alice", "student")

	r := e.do(req{method: "GET", path: "/rest/api/latest/project?expand=projects.project.plans", token: carol})
	if r.status != 200 || r.header.Get("X-Cache") == "" {
		t.Fatalf("project list: %d %s", r.status, r.body)
	}
	keys := planKeys(t, r.body)
	for _, want := range []string{"PROJ-CORE", "PROJ-LIB", "WEB-NIGHTLY"} {
		if !keys[want] {
			t.Errorf("carol's list lacks %s: %v", want, keys)
		}
	}
	for _, hidden := range []string{"WEB-PR", "MOBILE-ANDROID", "INFRA-IMAGES"} {
		if keys[hidden] || strings.Contains(r.body, hidden) {
			t.Errorf("carol's list shows %s", hidden)
		}
	}
	r = e.do(req{method: "GET", path: "/rest/api/latest/project.json", token: alice})
	if r.status != 200 || !strings.Contains(r.body, `"size":0`) {
		t.Fatalf("alice's list: %d %s", r.status, r.body)
	}

	// Results: allowed, refused (existing or not: same bytes), malformed.
	for path, want := range map[string]int{
		"/rest/api/latest/result/PROJ-CORE?expand=results.result.artifacts": 200,
		"/rest/api/latest/result/WEB-NIGHTLY.json":                          200,
		"/rest/api/latest/result/PROJ-NOSUCH":                               404,
		"/rest/api/latest/result/proj-core":                                 400,
		"/rest/api/latest/result/PROJ-CORE%2F..":                            400,
		"/rest/api/latest/result/PROJ-CORE%3Fos_authType=basic":             400,
		"/rest/api/latest/result/PROJ-CORE?max-results=1001":                400,
	} {
		if r := e.do(req{method: "GET", path: path, token: carol}); r.status != want {
			t.Errorf("carol GET %s: %d, want %d (%s)", path, r.status, want, r.body)
		}
	}
	var refusals []string
	for _, path := range []string{"/rest/api/latest/result/WEB-PR", "/rest/api/latest/result/NOPE-NOPE", "/rest/api/latest/result/INFRA-IMAGES.json"} {
		r := e.do(req{method: "GET", path: path, token: carol, header: map[string]string{"X-Request-ID": "fixed"}})
		if r.status != 403 {
			t.Errorf("carol GET %s: %d, want 403", path, r.status)
		}
		refusals = append(refusals, r.body)
	}
	if refusals[0] != refusals[1] || refusals[1] != refusals[2] {
		t.Errorf("refusals differ:\n%s", strings.Join(refusals, "\n"))
	}
	if r := e.do(req{method: "GET", path: "/rest/api/latest/result/PROJ-CORE", token: carol, header: map[string]string{"Accept": "application/xml"}}); r.status != 406 {
		t.Errorf("XML-only Accept: %d", r.status)
	}

	// Artifacts: follow a link from the result list.
	r = e.do(req{method: "GET", path: "/rest/api/latest/result/PROJ-CORE?expand=results.result.artifacts", token: carol})
	link := regexp.MustCompile(`"href":"(` + regexp.QuoteMeta(e.url) + `/browse/[^"]+)"`).FindStringSubmatch(r.body)
	if link == nil {
		t.Fatalf("no facade artifact link in %s", r.body)
	}
	artifactPath := strings.TrimPrefix(link[1], e.url)
	if r := e.do(req{method: "GET", path: artifactPath, token: carol, header: map[string]string{"Accept": "application/octet-stream"}}); r.status != 200 || r.body == "" {
		t.Errorf("carol downloads %s: %d", artifactPath, r.status)
	}
	before := e.bamboo.CallCount("/browse/")
	if r := e.do(req{method: "GET", path: artifactPath, token: alice}); r.status != 403 {
		t.Errorf("alice downloads %s: %d", artifactPath, r.status)
	}
	if e.bamboo.CallCount("/browse/") != before {
		t.Error("a refused download reached upstream")
	}

	// Nothing of the upstream leaks, and the caller's token never went up.
	upstreamHost := strings.TrimPrefix(e.bambooURL, "http://")
	for _, c := range e.bamboo.Calls() {
		if got := c.Header.Get("Authorization"); got != "Bearer "+bambooToken {
			t.Errorf("upstream call %s carried Authorization %q", c.Path, got)
		}
		if strings.Contains(c.RawQuery, "os_authType") || strings.Contains(c.RawQuery, "max-results=1001") {
			t.Errorf("caller query reached upstream: %s", c.RawQuery)
		}
	}
	for _, path := range []string{"/rest/api/latest/project?expand=projects.project.plans", "/rest/api/latest/result/PROJ-CORE?expand=results.result.artifacts"} {
		if r := e.do(req{method: "GET", path: path, token: carol}); strings.Contains(r.body, upstreamHost) {
			t.Errorf("%s leaks the upstream host", path)
		}
	}
}

// planKeys collects the plan keys of a project list.
func planKeys(t *testing.T, body string) map[string]bool {
	t.Helper()
	var doc struct {
		Projects struct {
			Project []struct {
				Plans struct {
					Plan []struct {
						Key string `json:"key"`
					} `json:"plan"`
				} `json:"plans"`
			} `json:"project"`
		} `json:"projects"`
	}
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatalf("project list is not JSON: %v", err)
	}
	keys := map[string]bool{}
	for _, p := range doc.Projects.Project {
		for _, pl := range p.Plans.Plan {
			keys[pl.Key] = true
		}
	}
	return keys
}

func TestBuildsWithoutUpstreamAnswer503(t *testing.T) {
	e := newEnv(t)
	for _, path := range []string{"/rest/api/latest/project", "/builds/PROJ-CORE/tests", "/builds/PROJ-CORE/trend"} {
		r := e.do(req{method: "GET", path: path, token: token(t, "carol", "developer")})
		if r.status != http.StatusServiceUnavailable {
			t.Errorf("no upstream configured: GET %s %d", path, r.status)
		}
	}
}
