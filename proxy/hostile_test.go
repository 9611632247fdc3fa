package proxy

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// A hostile (or compromised) upstream: every text member carries markup
// and links of other schemes. Only http(s) links reach a client.

// hostileResult is a result document whose every text member is an
// attack: link.href, a Jira issue's url.href, anchors and images in
// buildReason, each with a scheme a browser would run.
func hostileResult(base string) map[string]any {
	const markup = `<a href="javascript:alert(1)">run</a><img src="data:text/html,<script>alert(2)</script>" onerror="x">` +
		`<a href=" JaVa&#x09;ScRiPt:alert(3)">tab</a><a href='vbscript:msgbox(4)'>vb</a><a href="https://jira.example.com/browse/CORE-1">CORE-1</a>`
	return map[string]any{
		"key": "PROJ-CORE-6", "buildNumber": 6, "buildState": "Failed", "lifeCycleState": "Finished",
		"link":          map[string]any{"href": base + "/rest/api/latest/result/PROJ-CORE-6", "rel": "self"},
		"buildReason":   markup,
		"reasonSummary": markup,
		"planName":      `<script>alert(5)</script>`,
		"artifacts": map[string]any{"size": 2, "start-index": 0, "max-result": 2, "artifact": []any{
			map[string]any{"name": "evil", "link": map[string]any{"href": "javascript:alert(6)", "rel": "self"}},
			map[string]any{"name": "data", "link": map[string]any{"href": "\tdata:text/html;base64,PHNjcmlwdD4=", "rel": "self"}},
		}},
		"jiraIssues": map[string]any{"size": 2, "start-index": 0, "max-result": 2, "issue": []any{
			map[string]any{"key": "CORE-1", "url": map[string]any{"href": "vbscript:msgbox(7)", "rel": "self"}},
			map[string]any{"key": "CORE-2", "url": map[string]any{"href": "https://jira.example.com/browse/CORE-2", "rel": "self"}},
		}},
		"testResults": map[string]any{"failedTests": map[string]any{"size": 1, "testResult": []any{
			map[string]any{"className": `<img src=x onerror=alert(8)>`, "methodName": "m",
				"errors": map[string]any{"size": 1, "error": []any{map[string]any{"message": `<a href="javascript:alert(9)">x</a>`}}}},
		}}},
	}
}

func TestOnlyHTTPLinksReachAClient(t *testing.T) {
	f := newFixture(t, options{upstreamHandler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(hostileResult("http://" + r.Host))
	})})
	_, rec := f.getOK("carol", api+"/result/PROJ-CORE-6?expand=artifacts,jiraIssues,testResults.failedTests.testResult.errors")
	body := rec.Body.String()
	for _, bad := range []string{"javascript:", "JaVa", "vbscript:", "data:text", "alert(1)", "alert(2)", "alert(3)", "msgbox(4)", "alert(6)", "msgbox(7)", "alert(9)"} {
		if strings.Contains(strings.ToLower(body), strings.ToLower(bad)) {
			t.Errorf("%q reached the client: %s", bad, body)
		}
	}
	var doc map[string]any
	_ = json.Unmarshal(rec.Body.Bytes(), &doc)
	// The http(s) ones stay: the Jira anchor in buildReason, CORE-2's URL.
	if reason, _ := doc["buildReason"].(string); !strings.Contains(reason, `<a href="https://jira.example.com/browse/CORE-1">CORE-1</a>`) || !strings.Contains(reason, ">run<") {
		t.Errorf("buildReason lost its http link or an anchor's text: %q", reason)
	}
	issues := list(path(doc, "jiraIssues", "issue"))
	if len(issues) != 2 || path(issues[0], "url", "href") != nil || path(issues[1], "url", "href") != "https://jira.example.com/browse/CORE-2" {
		t.Errorf("jira issues: %v", issues)
	}
	for _, a := range list(path(doc, "artifacts", "artifact")) {
		if href := path(a, "link", "href"); href != nil {
			t.Errorf("artifact %v keeps link %v", path(a, "name"), href)
		}
	}
	// Text that is not a link is data, passed as written: the page shows
	// it as text (and Bamboo's clients escape class names).
	if doc["planName"] != `<script>alert(5)</script>` {
		t.Errorf("planName changed: %v", doc["planName"])
	}
}

func TestSafeSchemeReadsSchemesAsBrowsersDo(t *testing.T) {
	cases := map[string]bool{
		"https://x/y": true, "http://x": true, "/browse/K-P-1": true, "relative/path:with-colon": true, "?q=a:b": true, "#a:b": true,
		"javascript:alert(1)": false, " javascript:x": false, "java\tscript:x": false, "java\nscript:x": false, "JAVASCRIPT:x": false,
		"data:text/html,x": false, "vbscript:x": false, "\x00javascript:x": false, "ftp://x": false, "mailto:a@b": false,
	}
	for u, want := range cases {
		if got := safeScheme(u); got != want {
			t.Errorf("safeScheme(%q) = %v, want %v", u, got, want)
		}
	}
}
