package server_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/facade-dev/facade/internal/etag"
)

// strongETag is a strong entity tag: quoted, no W/ prefix.
var strongETag = regexp.MustCompile(`^"[!#-~]+"$`)

// TestEverySuccessfulReadHasAnETagAndAnswers304 walks the reads of every
// kind (the service's own JSON, the proxied Bamboo documents, the pages,
// the description, the ops endpoints): each 200 carries a strong ETag,
// HEAD carries the same one, and If-None-Match with it (alone, in a list,
// weak, or *) answers 304 with no body and the headers every answer
// carries; a tag that does not match answers the document.
func TestEverySuccessfulReadHasAnETagAndAnswers304(t *testing.T) {
	e := newEnv(t, withBuilds())
	seedGrades(t, e)
	seedAccounts(t, e)
	alice, bob := token(t, "alice", "student"), token(t, "bob", "professor")
	holder, carol := token(t, "alice", "customer"), token(t, "carol", "developer")
	reads := []req{
		{path: "/student/alice/english/grade", token: alice},
		{path: "/student/alice/english/grade/history", token: alice},
		{path: "/class", token: bob},
		{path: "/class/english-101/grades", token: bob},
		{path: "/class/english-101/grades", token: bob, header: map[string]string{"Accept": "text/csv"}},
		{path: "/rs/account", token: holder},
		{path: "/rs/account/1001", token: holder},
		{path: "/rs/account/1001/balance", token: holder},
		{path: "/rs/account/1001/transfers", token: holder},
		{path: "/rest/api/latest/project?expand=projects.project.plans", token: carol},
		{path: "/rest/api/latest/project.json", token: carol},
		{path: "/rest/api/latest/plan/PROJ-CORE", token: carol},
		{path: "/rest/api/latest/result/PROJ-CORE?expand=results.result.artifacts", token: carol},
		{path: "/rest/api/latest/result/PROJ-CORE-6", token: carol},
		{path: "/openapi.json"},
		{path: "/ui/"},
		{path: "/problems/"},
		{path: "/problems/insufficient-funds"},
		{path: "/healthz"},
	}
	for _, rd := range reads {
		rd.method = "GET"
		first := e.do(rd)
		tag := first.header.Get("ETag")
		if first.status != 200 || !strongETag.MatchString(tag) {
			t.Errorf("GET %s: %d, ETag %q", rd.path, first.status, tag)
			continue
		}
		methods := []string{"GET", "HEAD"}
		if rd.path == "/healthz" {
			methods = methods[:1] // the ops endpoints answer GET only
		}
		if len(methods) > 1 {
			head := rd
			head.method = "HEAD"
			if r := e.do(head); r.status != 200 || r.header.Get("ETag") != tag || r.body != "" {
				t.Errorf("HEAD %s: %d, ETag %q, want %q", rd.path, r.status, r.header.Get("ETag"), tag)
			}
		}
		for _, inm := range []string{tag, `"other", ` + tag, "W/" + tag, "*"} {
			for _, method := range methods {
				c := rd
				c.method, c.header = method, withHeader(rd.header, "If-None-Match", inm)
				r := e.do(c)
				if r.status != 304 || r.body != "" || r.header.Get("ETag") != tag || r.header.Get("Content-Type") != "" {
					t.Errorf("%s %s If-None-Match %s: %d %q, ETag %q, Content-Type %q", method, rd.path, inm,
						r.status, r.body, r.header.Get("ETag"), r.header.Get("Content-Type"))
				}
				for _, h := range []string{"X-Request-ID", "X-Content-Type-Options", "Cache-Control", "Referrer-Policy", "X-Frame-Options", "Content-Security-Policy"} {
					if r.header.Get(h) == "" {
						t.Errorf("304 for %s lacks %s", rd.path, h)
					}
				}
			}
		}
		c := rd
		c.header = withHeader(rd.header, "If-None-Match", `"stale", W/"older", garbage`)
		if r := e.do(c); r.status != 200 || r.body != first.body || r.header.Get("ETag") != tag {
			t.Errorf("GET %s with tags that do not match: %d, ETag %q", rd.path, r.status, r.header.Get("ETag"))
		}
	}
}

// withHeader is h (which it leaves alone) plus name: value.
func withHeader(h map[string]string, name, value string) map[string]string {
	out := map[string]string{name: value}
	for k, v := range h {
		out[k] = v
	}
	return out
}

// TestAGradeKeepsItsVersionAsETag: the grade's tag is its version, the
// one If-Match takes, and a change makes the old tag stale.
func TestAGradeKeepsItsVersionAsETag(t *testing.T) {
	e := newEnv(t)
	seedGrades(t, e)
	alice, bob := token(t, "alice", "student"), token(t, "bob", "professor")
	const path = "/student/alice/english/grade"
	r := e.do(req{method: "GET", path: path, token: alice})
	if r.header.Get("ETag") != `"1"` {
		t.Fatalf("grade ETag %q, want its version \"1\"", r.header.Get("ETag"))
	}
	if r := e.do(req{method: "GET", path: path, token: alice, header: map[string]string{"If-None-Match": `"1"`}}); r.status != 304 {
		t.Errorf("If-None-Match with the version: %d", r.status)
	}
	if r := e.do(req{method: "PUT", path: path, token: bob, body: `{"grade":"A"}`, header: map[string]string{"If-Match": `"1"`}}); r.status != 200 {
		t.Fatalf("PUT: %d %s", r.status, r.body)
	}
	r = e.do(req{method: "GET", path: path, token: alice, header: map[string]string{"If-None-Match": `"1"`}})
	if r.status != 200 || r.header.Get("ETag") != `"2"` || !strings.Contains(r.body, `"A"`) {
		t.Errorf("after a change, the old tag: %d ETag %q %s", r.status, r.header.Get("ETag"), r.body)
	}
}

// TestETagIsTheCallersView: two callers who see different parts of the
// same upstream document get different tags, each the tag of the very
// bytes that caller received (package proxy tags its cached views itself:
// the tag must be the one the server would compute, so that it does not
// change when the view is rebuilt), and neither's tag earns the other a
// 304; a refusal or an absence is never a 304, whatever the tag.
func TestETagIsTheCallersView(t *testing.T) {
	e := newEnv(t, withBuilds())
	carol, dave := token(t, "carol", "developer"), token(t, "dave", "developer")
	const path = "/rest/api/latest/project?expand=projects.project.plans"
	c := e.do(req{method: "GET", path: path, token: carol})
	d := e.do(req{method: "GET", path: path, token: dave})
	if c.status != 200 || d.status != 200 || c.body == d.body || c.header.Get("ETag") == d.header.Get("ETag") {
		t.Fatalf("carol %d %s, dave %d %s: the views or their tags do not differ", c.status, c.header.Get("ETag"), d.status, d.header.Get("ETag"))
	}
	for _, r := range []resp{c, d} {
		if tag := r.header.Get("ETag"); tag != etag.Strong([]byte(r.body)) {
			t.Errorf("ETag %s is not the tag of the answer's bytes, %s", tag, etag.Strong([]byte(r.body)))
		}
	}
	if r := e.do(req{method: "GET", path: path, token: dave, header: map[string]string{"If-None-Match": c.header.Get("ETag")}}); r.status != 200 || r.body != d.body {
		t.Errorf("dave with carol's tag: %d", r.status)
	}
	for _, rd := range []req{
		{path: "/rest/api/latest/result/MOBILE-IOS", token: carol}, // not permitted
		{path: "/rest/api/latest/result/PROJ-NOPE", token: carol},  // absent
		{path: "/student/bob/english/grade", token: dave},          // not permitted
		{path: "/rs/account/1001/balance", token: carol},           // not permitted
		{path: "/rs/account/1001/transfers?limit=0", token: carol}, // malformed
	} {
		rd.method, rd.header = "GET", map[string]string{"If-None-Match": "*"}
		if r := e.do(rd); r.status < 400 {
			t.Errorf("%s with If-None-Match *: %d", rd.path, r.status)
		}
	}
}

// TestA304OnABuildRouteCostsNoUpstreamCall: while the cache entry is
// fresh, a conditional read is answered from it, and the bambootest
// server's counter does not move.
func TestA304OnABuildRouteCostsNoUpstreamCall(t *testing.T) {
	e := newEnv(t, withBuilds())
	carol := token(t, "carol", "developer")
	const path = "/rest/api/latest/result/PROJ-CORE?expand=results.result.artifacts"
	first := e.do(req{method: "GET", path: path, token: carol})
	if first.status != 200 {
		t.Fatalf("GET: %d %s", first.status, first.body)
	}
	calls := e.bamboo.CallCount("/")
	if calls == 0 {
		t.Fatal("the first read made no upstream call: the counter proves nothing")
	}
	for range 3 {
		r := e.do(req{method: "GET", path: path, token: carol, header: map[string]string{"If-None-Match": first.header.Get("ETag")}})
		if r.status != 304 {
			t.Fatalf("conditional read: %d", r.status)
		}
	}
	if n := e.bamboo.CallCount("/"); n != calls {
		t.Errorf("304s made %d upstream calls", n-calls)
	}
}

// TestDownloadsAreNotBuffered: the artifact routes stream; they carry no
// tag of the service's and If-None-Match does not turn them into a 304.
// (A job's build log is a cached document instead, tagged and
// conditional, so a page can tail it: TestTailedLogIsConditional.)
func TestDownloadsAreNotBuffered(t *testing.T) {
	e := newEnv(t, withBuilds())
	carol := token(t, "carol", "developer")
	for _, path := range []string{"/browse/PROJ-CORE-6/artifact/shared/core-service.jar/core-service.jar",
		"/browse/PROJ-CORE-6/artifact/JOB1/test-report.xml/test-report.xml"} {
		r := e.do(req{method: "GET", path: path, token: carol, header: map[string]string{"If-None-Match": "*"}})
		if r.status != 200 || r.body == "" || strongETag.MatchString(r.header.Get("ETag")) && len(r.header.Get("ETag")) == 18 {
			t.Errorf("%s: %d, ETag %q", path, r.status, r.header.Get("ETag"))
		}
	}
}
