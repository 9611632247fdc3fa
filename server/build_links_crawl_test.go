package server_test

import (
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestEveryLinkTheFacadeHandsOutIsServed crawls the build API as carol (a
// developer with partial grants: project PROJ through her team, and the
// one plan WEB-NIGHTLY) from the project list and the latest results,
// following every link.href of every answer and every href inside the
// HTML fragments of its text members (buildReason, reasonSummary). Every
// link answers 200, or a deliberate 403 for something outside her grants;
// never 400 or 404 (a link the facade made and cannot serve). No answer
// names a plan she may not see, or the upstream host.
func TestEveryLinkTheFacadeHandsOutIsServed(t *testing.T) {
	e := newEnv(t, withBuilds())
	carol := token(t, "carol", "developer")
	upstreamHost := strings.TrimPrefix(e.bambooURL, "http://")
	// Plans outside carol's grants, branches included (WEB-NIGHTLY1 is a
	// branch of WEB-NIGHTLY: a plan of its own, not covered by her grant
	// on the master).
	hidden := regexp.MustCompile(`WEB-PR|WEB-NIGHTLY1|MOBILE-|INFRA-`)

	seeds := []string{
		"/rest/api/latest/project?expand=projects.project.plans",
		"/rest/api/latest/result",
		// The same starts with the parts a browsing developer expands, so
		// that artifact, job-result and branch links are crawled too.
		"/rest/api/latest/result?expand=results.result.artifacts",
		"/rest/api/latest/plan/PROJ-CORE?expand=branches",
		"/rest/api/latest/result/PROJ-CORE-6?expand=stages.stage.results,artifacts,labels",
		"/rest/api/latest/result/PROJ-CORE1.json",
		"/rest/api/latest/plan/PROJ-CORE/branch",
		"/rest/api/latest/result/WEB?expand=results.result.labels",
	}
	queue, seen := append([]string(nil), seeds...), map[string]int{}
	htmlLinks := 0
	for len(queue) > 0 && len(seen) < 400 {
		path := queue[0]
		queue = queue[1:]
		if _, done := seen[path]; done {
			continue
		}
		r := e.do(req{method: "GET", path: path, token: carol, header: map[string]string{"Accept": "*/*"}})
		seen[path] = r.status
		switch {
		case r.status == http.StatusForbidden:
			continue
		case r.status != http.StatusOK:
			t.Errorf("GET %s: %d, want 200 or 403 (%s)", path, r.status, r.body)
			continue
		}
		if m := hidden.FindString(r.body); m != "" {
			t.Errorf("GET %s names %s, outside carol's grants", path, m)
		}
		if strings.Contains(r.body, upstreamHost) {
			t.Errorf("GET %s names the upstream host", path)
		}
		if !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
			continue // an artifact
		}
		links, inHTML := hrefs(t, r.body)
		for _, href := range links {
			u, err := url.Parse(href)
			if err != nil || u.Scheme+"://"+u.Host != e.url {
				t.Errorf("GET %s: link %q does not point at the facade", path, href)
				continue
			}
			queue = append(queue, u.RequestURI())
		}
		for _, href := range inHTML {
			u, err := url.Parse(html.UnescapeString(href))
			switch {
			case err != nil:
				t.Errorf("GET %s: HTML link %q is not a URL", path, href)
			case u.Host == "" || u.Scheme+"://"+u.Host == e.url:
				queue = append(queue, u.RequestURI()) // the facade's: it must serve it
				htmlLinks++
			}
		}
	}
	counts := map[string]int{}
	for path, status := range seen {
		counts[routeShape(path)]++
		if status == http.StatusForbidden {
			t.Logf("deliberate 403: %s", path)
		}
	}
	// The crawl reached every kind of route, not just the seeds.
	for _, shape := range []string{"project/K", "plan/K-P", "result/K-P", "result/K-P-N", "result/K-P-J-N", "browse", "download", "plan/K-P/branch"} {
		if counts[shape] == 0 {
			keys := make([]string, 0, len(counts))
			for k := range counts {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			t.Errorf("the crawl never reached a %s link (reached %v)", shape, keys)
		}
	}
	t.Logf("crawled %d links; %d hrefs to the facade found in HTML fragments", len(seen), htmlLinks)
}

// htmlHref finds the href of an HTML anchor inside a text member.
var htmlHref = regexp.MustCompile(`(?i)<a\s[^>]*href\s*=\s*["']([^"']*)["']`)

// hrefs returns every link.href of a JSON document, and every href of an
// HTML anchor in its strings.
func hrefs(t *testing.T, body string) (links, inHTML []string) {
	t.Helper()
	var doc any
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatalf("not JSON: %s", body)
	}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			for _, m := range htmlHref.FindAllStringSubmatch(x, -1) {
				inHTML = append(inHTML, m[1])
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			if link, ok := x["link"].(map[string]any); ok {
				if href, ok := link["href"].(string); ok {
					links = append(links, href)
				}
			}
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(doc)
	return links, inHTML
}

var keyShape = regexp.MustCompile(`[A-Z][A-Z0-9]*(-[A-Z0-9]+)*`)

// routeShape names the kind of a crawled path: "result/K-P-N", "browse".
func routeShape(path string) string {
	path, _, _ = strings.Cut(path, "?")
	if strings.HasPrefix(path, "/browse/") {
		return "browse"
	}
	if strings.HasPrefix(path, "/download/") {
		return "download"
	}
	path = strings.TrimPrefix(path, "/rest/api/latest/")
	return keyShape.ReplaceAllStringFunc(path, func(k string) string {
		letters := []string{"K", "K-P", "K-P-N", "K-P-J-N"}
		n := strings.Count(k, "-")
		if n < len(letters) {
			return letters[n]
		}
		return k
	})
}
