package proxy

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestResultsWithAndWithoutArtifacts(t *testing.T) {
	f := newFixture(t, options{})
	doc, rec := f.getOK("carol", "/rest/api/latest/result/PROJ-CORE?expand=results.result.artifacts")
	if rec.Header().Get("X-Cache") != "MISS" {
		t.Errorf("first read X-Cache %q, want MISS", rec.Header().Get("X-Cache"))
	}
	results := list(path(doc, "results", "result"))
	if len(results) != 6 || num(path(doc, "results", "size")) != 6 {
		t.Fatalf("PROJ-CORE has 6 builds; got %d results, size %v", len(results), path(doc, "results", "size"))
	}
	first := results[0]
	for _, member := range []string{"key", "buildNumber", "buildState", "lifeCycleState", "planResultKey", "link"} {
		if path(first, member) == nil {
			t.Errorf("result lacks %q", member)
		}
	}
	artifacts := list(path(first, "artifacts", "artifact"))
	if len(artifacts) != 3 {
		t.Fatalf("newest PROJ-CORE build: %d artifacts, want 3 (log, report, jar)", len(artifacts))
	}
	wantLinks := map[string]string{
		"Build log":        "http://example.com/download/PROJ-CORE-JOB1/build_logs/PROJ-CORE-JOB1-6.log",
		"test-report.xml":  "http://example.com/browse/PROJ-CORE-6/artifact/JOB1/test-report.xml/",
		"core-service.jar": "http://example.com/browse/PROJ-CORE-6/artifact/shared/core-service.jar/",
	}
	for _, a := range artifacts {
		name, _ := path(a, "name").(string)
		if href := path(a, "link", "href"); href != wantLinks[name] {
			t.Errorf("artifact %q links to %v, want the facade route %s", name, href, wantLinks[name])
		}
		if path(a, "producerJobKey") == nil || path(a, "shared") == nil {
			t.Errorf("artifact %q lacks producerJobKey/shared: %v", name, a)
		}
	}
	// Bamboo's link to its user page (which the facade does not serve)
	// is left as its text.
	if reason, _ := path(first, "buildReason").(string); reason != "Changes by Developer" {
		t.Errorf("buildReason %q, want the user link as text", reason)
	}

	doc, _ = f.getOK("carol", "/rest/api/latest/result/PROJ-CORE.json?max-results=2&start-index=1")
	results = list(path(doc, "results", "result"))
	if len(results) != 2 || num(path(results[0], "buildNumber")) != 5 {
		t.Fatalf("page 2 of 1: %d results starting at %v", len(results), path(results[0], "buildNumber"))
	}
	if arts := path(results[0], "artifacts"); path(arts, "artifact") != nil || num(path(arts, "size")) != 3 {
		t.Errorf("without the expand, artifacts stay collapsed: %v", arts)
	}
}

func TestResultsRefusalIsIdenticalWhetherThePlanExists(t *testing.T) {
	f := newFixture(t, options{})
	existing := f.get("dave", "/rest/api/latest/result/PROJ-CORE?expand=results.result.artifacts")
	missing := f.get("dave", "/rest/api/latest/result/PROJ-NOSUCHPLAN?expand=results.result.artifacts")
	if existing.Code != http.StatusForbidden || missing.Code != http.StatusForbidden {
		t.Fatalf("statuses %d and %d, want 403", existing.Code, missing.Code)
	}
	if existing.Body.String() != missing.Body.String() {
		t.Errorf("refusals differ:\n%s\n%s", existing.Body, missing.Body)
	}
	if problemDetail(t, existing) != "You are not permitted to perform this operation." {
		t.Errorf("detail %q", problemDetail(t, existing))
	}
	if n := f.calls("/"); n != 0 {
		t.Errorf("%d upstream calls for refused requests, want none", n)
	}
	for _, target := range []string{"plan:PROJ-CORE", "plan:PROJ-NOSUCHPLAN"} {
		audit := "audit=true principal=dave role=developer op=view_results target=" + target
		if !strings.Contains(f.logs.String(), audit) {
			t.Errorf("no audit line %q in:\n%s", audit, f.logs)
		}
	}

	// Allowed and absent: a 404, after authorization.
	rec := f.get("ivy", "/rest/api/latest/result/PROJ-NOSUCHPLAN")
	if rec.Code != http.StatusNotFound || strings.Contains(rec.Body.String(), "not found.") {
		t.Errorf("allowed, absent plan: %d %s, want 404 without upstream text", rec.Code, rec.Body)
	}
}

func TestCallerTextNeverReachesUpstream(t *testing.T) {
	f := newFixture(t, options{})
	const plan = "/rest/api/latest/result/"
	cases := []struct {
		target string
		status int
	}{
		// Malformed and encoded keys: 400 before anything else.
		{plan + "proj-core", 400},
		{plan + "PROJ-CORE%2F..%2FWEB-NIGHTLY", 400},
		{plan + "PROJ-CORE%2f", 400},
		{plan + "PROJ-CORE%3Fexpand=x", 400},
		{plan + "PROJ-CORE%23frag", 400},
		{plan + "PROJ-CORE%0D%0AX-Injected:1", 400},
		{plan + "PROJ-CORE..", 400},
		{plan + "PROJ-CORE.json.json", 400},
		{plan + "PROJ-CORE-6-", 400},
		{plan + "PROJ-CORE-JOB1-JOB2-6", 400},
		{plan + "PROJ-CORE-6x", 400},
		{plan + "PROJ-CORE-JOB1-latest", 400},
		{plan + "PROJ-", 400},
		{plan + "-CORE", 400},
		{plan + "PROJ-%43ORE", 400},
		{plan + "1PROJ-CORE", 400},
		{plan + "PROJ-" + strings.Repeat("A", 65), 400},
		// Caller query text: paging out of range is a 400 ...
		{plan + "PROJ-CORE?max-results=1001", 400},
		{plan + "PROJ-CORE?max-results=0", 400},
		{plan + "PROJ-CORE?start-index=-1", 400},
		{plan + "PROJ-CORE?max-results=5&max-result=6", 400},
		{plan + "PROJ-CORE?max-results=%2B5", 400},
		// ... anything else is ignored, never forwarded.
		{plan + "PROJ-CORE?expand=results.result.artifacts&os_authType=basic", 200},
		{plan + "PROJ-CORE?expand=x&admin=1", 200},
		{plan + "PROJ-CORE?expand=results.result.artifacts%26admin%3D1", 200},
		{plan + "PROJ-CORE?showEmpty&max-result=3", 200},
		{plan + "PROJ-CORE.json?expand=results.result,admin&max-results=%32", 200},
		{plan + "PROJ-CORE?start-index=1&os_username=admin&os_password=x", 200},
	}
	for _, tc := range cases {
		before := len(f.bamboo.Calls())
		rec := f.get("carol", tc.target)
		if rec.Code != tc.status {
			t.Errorf("%s: status %d, want %d (%s)", tc.target, rec.Code, tc.status, rec.Body)
			continue
		}
		if tc.status == 400 && len(f.bamboo.Calls()) != before {
			t.Errorf("%s: refused, yet upstream was called", tc.target)
		}
	}
	calls := f.bamboo.Calls()
	if len(calls) == 0 {
		t.Fatal("no upstream call recorded")
	}
	for _, call := range calls {
		if !strings.HasPrefix(call.EscapedPath, "/rest/api/latest/result/PROJ-CORE.json") || call.EscapedPath != call.Path {
			t.Errorf("upstream path %q", call.EscapedPath)
		}
		q, err := url.ParseQuery(call.RawQuery)
		if err != nil {
			t.Fatalf("upstream query %q: %v", call.RawQuery, err)
		}
		for name, values := range q {
			switch name {
			case "expand":
				if v := strings.Join(values, ","); v != "results.result.artifacts" && v != "results.result" {
					t.Errorf("upstream expand %q", v)
				}
			case "max-results", "start-index":
			default:
				t.Errorf("caller parameter %q reached upstream: %q", name, call.RawQuery)
			}
		}
		for _, banned := range []string{"admin", "os_", "showEmpty", "%"} {
			if strings.Contains(call.RawQuery, banned) {
				t.Errorf("caller text %q reached upstream: %q", banned, call.RawQuery)
			}
		}
	}
}

func TestOnlyTheServiceTokenReachesUpstream(t *testing.T) {
	f := newFixture(t, options{})
	f.getOK("carol", "/rest/api/latest/project")
	f.getOK("carol", "/rest/api/latest/result/PROJ-CORE?expand=results.result.artifacts")
	rec := f.get("carol", "/download/PROJ-CORE-JOB1/build_logs/PROJ-CORE-JOB1-6.log")
	if rec.Code != http.StatusOK {
		t.Fatalf("build log: %d", rec.Code)
	}
	calls := f.bamboo.Calls()
	// The log is read with its job result, which says whether it still
	// grows (livelog.go).
	if len(calls) != 4 {
		t.Errorf("%d upstream calls, want 4", len(calls))
	}
	for _, call := range calls {
		auth := call.Header.Values("Authorization")
		if len(auth) != 1 || auth[0] != "Bearer bamboo-service-token" {
			t.Errorf("%s: upstream Authorization %q, want the service token only", call.Path, auth)
		}
		for name, values := range call.Header {
			for _, v := range values {
				if strings.Contains(v, "caller-own-token") {
					t.Errorf("caller token forwarded in %s", name)
				}
			}
		}
	}
}
