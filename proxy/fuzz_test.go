package proxy

import (
	"html"
	"strings"
	"testing"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/server/problem"
)

// FuzzParseListParams: whatever the caller's query, parsing never panics
// and what it accepts is in range, so the upstream query built from it is
// always one the facade would have written itself.
func FuzzParseListParams(f *testing.F) {
	for _, q := range []string{"", "expand=results.result.artifacts&max-results=10&start-index=5", "max-result=100",
		"expand=x&admin=1", "max-results=1000", "start-index=-1", "os_authType=basic&showEmpty", "expand=%zz", "max-results=1&max-results=2"} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, q string) {
		for _, rt := range []*Route{route("projects"), route("results")} {
			rq, err := parseRouteQuery(q, rt)
			p := rq.listParams
			if err != nil {
				if problem.Status(err) != 400 {
					t.Fatalf("%q: error %v is not a 400", q, err)
				}
				continue
			}
			if p.maxResults < 1 || p.maxResults > maxPage || p.startIndex < 0 || p.startIndex > maxStartIndex {
				t.Fatalf("%q: out-of-range paging accepted: %+v", q, p)
			}
		}
	})
}

// FuzzParseArtifactPath: an accepted artifact path names a well-formed
// plan and can never climb out of /browse or /download on the upstream.
func FuzzParseArtifactPath(f *testing.F) {
	for _, p := range []string{"/browse/PROJ-CORE-6/artifact/JOB1/app.jar/app.jar", "/download/PROJ-CORE-JOB1/build_logs/PROJ-CORE-JOB1-6.log",
		"/browse/PROJ-CORE-6/artifact/JOB1/%2e%2e/x", "/browse/PROJ-CORE-6/artifact/JOB1/a%2Fb", "/download/../../etc/passwd", "/browse/PROJ-CORE-JOB1-6/artifact/JOB1/name/",
		"/browse/WEB-NIGHTLY-5/artifact/shared/web-dist.zip/", "/download/MOBILE-IOS-JOB1/build_logs/MOBILE-IOS-JOB1-3.log"} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, escaped string) {
		target, err := parseArtifactPath(escaped)
		if err != nil {
			return
		}
		if !facade.ValidProjectKey(target.plan.Project().String()) || !facade.ValidPlanKey(target.plan.Short()) {
			t.Fatalf("%q: accepted with plan %v", escaped, target.plan)
		}
		if !strings.HasPrefix(target.path, "/browse/") && !strings.HasPrefix(target.path, "/download/") {
			t.Fatalf("%q: upstream path %q outside /browse and /download", escaped, target.path)
		}
		for _, seg := range strings.Split(target.path, "/")[1:] {
			if seg == "." || seg == ".." || strings.ContainsAny(seg, "?#%\\") {
				t.Fatalf("%q: upstream path %q has segment %q", escaped, target.path, seg)
			}
		}
		// The plan authorized is the plan of the build the path names,
		// as sent and as it goes upstream: the key segment is K-P (a
		// plan's own download) or K-P-... (a build, a job, a job's build).
		plan := target.plan.Project().String() + "-" + target.plan.Short()
		names := func(seg string) bool { return seg == plan || strings.HasPrefix(seg, plan+"-") }
		sent, upstream := strings.Split(escaped, "/"), strings.Split(target.path, "/")
		if !names(sent[2]) || !names(upstream[2]) || sent[2] != upstream[2] {
			t.Fatalf("%q: authorized plan %v, but the path names %q (upstream %q)", escaped, target.plan, sent[2], target.path)
		}
	})
}

// FuzzBuildRouteRequest: whatever the caller's key and query, a build
// route either refuses with a 400 or yields a key whose upstream path
// segments are plain keys, and an upstream query holding only values the
// facade writes (supported expand values, validated filters, paging).
func FuzzBuildRouteRequest(f *testing.F) {
	for _, s := range [][3]string{
		{"PROJ-CORE", "", "label=release&buildstate=failed&expand=results.result.artifacts"},
		{"PROJ-CORE-6.json", "", "expand=stages.stage.results,labels&favourite"},
		{"PROJ-CORE", "latest.json", "issueKey=CORE-1,WEB-2"},
		{"PROJ-CORE-JOB1-6", "", "expand=logEntries&includeAllStates=TRUE"},
		{"PROJ%2FCORE", "", "label=a%2Cb"}, {"PROJ", "", "cloverEnabled=true&continuable=false"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, key, number, query string) {
		k, kind, err := readKey(key, number)
		for i := range Routes {
			rt := &Routes[i]
			if err != nil || rt.Key != kind || rt.Upstream.Resource == "" {
				continue // refused, another route's key, or answered from the project list
			}
			for _, seg := range strings.Split(upstreamPath(rt, k).String(), "/") {
				if seg == "" || strings.IndexFunc(seg, func(r rune) bool {
					return !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-')
				}) >= 0 {
					t.Fatalf("%q %q: upstream segment %q", key, number, seg)
				}
			}
			q, err := parseRouteQuery(query, rt)
			if err != nil {
				if problem.Status(err) != 400 {
					t.Fatalf("%q: error %v is not a 400", query, err)
				}
				continue
			}
			for name, values := range q.upstreamValues(true) {
				if name == "expand" {
					for _, v := range strings.Split(values[0], ",") {
						if !slicesContains(rt.Expand, v) {
							t.Fatalf("%q: unsupported expand %q forwarded", query, v)
						}
					}
					continue
				}
				if name != "max-results" && name != "start-index" && !slicesContains(rt.Filters, name) {
					t.Fatalf("%q: parameter %q forwarded on %s", query, name, rt.Name)
				}
				if strings.ContainsAny(values[0], "&=?#% \x00") {
					t.Fatalf("%q: raw value %q forwarded", query, values[0])
				}
			}
		}
	})
}

func slicesContains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// FuzzOnlyHTTPLinksSurvive: whatever an upstream writes in a link or in
// HTML text, what reaches a client holds no URL of another scheme: no
// href or url member, and no URL attribute in text.
func FuzzOnlyHTTPLinksSurvive(f *testing.F) {
	for _, s := range []string{`<a href="javascript:alert(1)">x</a>`, `<img s src="javascript:1"rc="javascript:2">`,
		`<a href=" java&#x09;script:x">t</a>`, "\tjavascript:x", `<a hr href="data:x"ef="vbscript:y">`, "https://jira/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		doc := map[string]any{"link": map[string]any{"href": s}, "url": s, "buildReason": s,
			"issue": map[string]any{"url": map[string]any{"href": s}}}
		out := newRewriter(doc).rewriteTree(doc).(map[string]any)
		for _, u := range []any{path(out, "link", "href"), out["url"], path(out, "issue", "url", "href")} {
			if u, ok := u.(string); ok && !safeScheme(u) {
				t.Fatalf("%q: link %q reached the client", s, u)
			}
		}
		text, _ := out["buildReason"].(string)
		if !strings.Contains(text, "<") {
			return // no tag, so no attribute a browser would read
		}
		for _, m := range htmlURLAttr.FindAllStringSubmatch(text, -1) {
			if u := html.UnescapeString(m[1] + m[2] + m[3]); !safeScheme(u) {
				t.Fatalf("%q: attribute %q reached the client in %q", s, u, text)
			}
		}
	})
}
