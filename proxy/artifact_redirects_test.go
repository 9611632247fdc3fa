package proxy

import (
	"net/http"
	"strings"
	"testing"

	"github.com/facade-dev/facade/upstream"
	"github.com/facade-dev/facade/upstream/bambootest"
)

// Artifact downloads under upstream redirects: a hop is followed only on
// the upstream's own host and only to an artifact path of the plan just
// authorized; an HTML page at the end (a directory listing, a login page)
// is a 502 with the generic body. Nothing of the upstream's answer (its
// host, its name, its version) reaches the caller.

const jar = "/browse/PROJ-CORE-6/artifact/shared/core-service.jar/"

func TestArtifactRedirectsThatLeaveTheRulesAre502(t *testing.T) {
	f := newFixture(t, options{})
	f.bamboo.AddResult("PROJ-CORE", 99, "Successful",
		bambootest.Artifact{Name: "site", ProducerJobKey: "JOB1", Directory: true, Content: []byte("<html>report</html>"), ContentType: "text/html"})
	cases := []struct {
		name, target string
		redirect     [2]string // from, to (set on the test server)
	}{
		{name: "directory link without its slash", target: "/browse/PROJ-CORE-99/artifact/JOB1/site"},
		{name: "directory link with its slash", target: "/browse/PROJ-CORE-99/artifact/JOB1/site/"},
		{name: "another host", target: jar, redirect: [2]string{jar, "http://elsewhere.example/browse/PROJ-CORE-6/artifact/shared/core-service.jar/"}},
		{name: "a loop", target: jar, redirect: [2]string{jar, jar}},
		{name: "another plan's artifact", target: jar, redirect: [2]string{jar, "/browse/WEB-PR-4/artifact/JOB1/test-report.xml/"}},
		{name: "the login page", target: jar, redirect: [2]string{jar, "/userlogin!doDefault.action?os_destination=%2Fbrowse"}},
		{name: "a page outside the artifact forms", target: jar, redirect: [2]string{jar, "/rest/api/latest/project.json"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.redirect[0] != "" {
				f.bamboo.Redirect(tc.redirect[0], tc.redirect[1])
				defer f.bamboo.Redirect(tc.redirect[0], "")
			}
			assertGeneric502(t, f, f.get("carol", tc.target))
		})
	}
}

func TestArtifactRedirectWithinTheRulesIsFollowed(t *testing.T) {
	f := newFixture(t, options{})
	// A plain file's link without its slash: redirected to the directory
	// form, which serves the file.
	rec := f.get("carol", "/browse/PROJ-CORE-6/artifact/shared/core-service.jar")
	if rec.Code != http.StatusOK || rec.Body.Len() == 0 {
		t.Fatalf("file link without slash: %d %s", rec.Code, rec.Body)
	}
	// A hop to another artifact of the same plan.
	f.bamboo.Redirect(jar, "/browse/PROJ-CORE-5/artifact/JOB1/test-report.xml/")
	rec = f.get("carol", jar)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "<testsuite") {
		t.Fatalf("same-plan hop: %d %s", rec.Code, rec.Body)
	}
}

// TestRejectedServiceTokenIsNever200: Bamboo sends a download with a bad
// token to its login page, and a REST call gets a 401; both are 502 here.
func TestRejectedServiceTokenIsNever200(t *testing.T) {
	f := newFixture(t, options{upstream: upstream.Config{Token: "expired-token"}})
	assertGeneric502(t, f, f.get("carol", jar))
	assertGeneric502(t, f, f.get("carol", "/download/PROJ-CORE-JOB1/build_logs/PROJ-CORE-JOB1-6.log"))
	assertGeneric502(t, f, f.get("carol", api+"/result/PROJ-CORE-6"))
}

func assertGeneric502(t *testing.T, f *fixture, rec interface {
	Result() *http.Response
}) {
	t.Helper()
	resp := rec.Result()
	body := make([]byte, 4096)
	n, _ := resp.Body.Read(body)
	text := string(body[:n])
	if resp.StatusCode != http.StatusBadGateway || resp.Header.Get("Content-Type") != "application/problem+json" {
		t.Fatalf("%d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), text)
	}
	f.assertNoUpstreamHost(text)
	for _, leak := range []string{"Bamboo", bambootest.Version, "html", "login"} {
		if strings.Contains(text, leak) {
			t.Errorf("502 body carries %q: %s", leak, text)
		}
	}
}
