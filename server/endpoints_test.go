package server_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// endpoints lists one call per route, with identifiers that belong to
// alice (and exist).
var endpoints = []req{
	{method: "GET", path: "/student/alice/english/grade"},
	{method: "POST", path: "/student/ghost/english/grade", body: `{"grade":"A"}`},
	{method: "PUT", path: "/student/alice/english/grade", body: `{"grade":"A"}`},
	{method: "GET", path: "/rs/account/1001"},
	{method: "GET", path: "/rs/account/1001/balance"},
	{method: "GET", path: "/rs/account/1001/transfers"},
	{method: "POST", path: "/rs/transfer/from/1001/to/2002/amount/1"},
	{method: "GET", path: "/rest/api/latest/project"},
	{method: "GET", path: "/rest/api/latest/project.json"},
	{method: "GET", path: "/rest/api/latest/result/PROJ-CORE"},
	{method: "GET", path: "/browse/PROJ-CORE-1/artifact/JOB1/x/x.jar"},
	{method: "GET", path: "/download/PROJ-CORE-JOB1/build_logs/PROJ-CORE-JOB1-1.log"},
}

// TestEveryEndpointNeedsAToken: no token, a bad token, or an expired one is
// 401 with WWW-Authenticate on every route, and nothing changes.
func TestEveryEndpointNeedsAToken(t *testing.T) {
	e := newEnv(t, withBuilds())
	seedGrades(t, e)
	seedAccounts(t, e)
	calls := e.bamboo.CallCount("/")
	for _, ep := range endpoints {
		for _, tok := range []string{"", "garbage", expiredToken(t)} {
			r := ep
			r.token = tok
			got := e.do(r)
			challenge := got.header.Get("WWW-Authenticate")
			if got.status != 401 || tok == "" && challenge != "Bearer" ||
				tok != "" && !strings.HasPrefix(challenge, `Bearer error="invalid_token", error_description="`) {
				t.Errorf("%s %s with token %q: %d", ep.method, ep.path, tok, got.status)
			}
		}
	}
	if e.bamboo.CallCount("/") != calls {
		t.Error("an unauthenticated request reached upstream")
	}
	if b := balance(t, e, "1001"); b != "250.00" {
		t.Errorf("unauthenticated transfer moved money: %s", b)
	}
}

// TestEveryUnsafeEndpointNeedsTheAntiForgeryHeader, even for a principal
// who may do the operation.
func TestEveryUnsafeEndpointNeedsTheAntiForgeryHeader(t *testing.T) {
	e := newEnv(t)
	seedGrades(t, e)
	seedAccounts(t, e)
	for _, ep := range endpoints {
		if ep.method == "GET" {
			continue
		}
		for _, tok := range []string{token(t, "bob", "professor"), token(t, "alice", "customer")} {
			r := ep
			r.token = tok
			r.header = map[string]string{"X-XSRF-TOKEN": ""}
			if got := e.do(r); got.status != 403 {
				t.Errorf("%s %s without X-XSRF-TOKEN: %d", ep.method, ep.path, got.status)
			}
		}
	}
	if b := balance(t, e, "1001"); b != "250.00" {
		t.Errorf("forged transfer moved money: %s", b)
	}
}

func expiredToken(t *testing.T) string {
	return sign(t, hs256, testSecret, "", claims("alice", -time2h))
}

// FuzzRequests sends arbitrary identifiers, bodies, headers and amounts
// through the whole pipeline, as several principals: whatever arrives, the
// answer is never a 5xx, always carries the security headers, an error is
// a problem body with no internals in it, and no principal gets a success
// for an identifier outside its grants (fuzzGrants, from testPolicy).
func FuzzRequests(f *testing.F) {
	e := newEnv(f, withBuilds())
	seedGrades(f, e)
	seedAccounts(f, e)
	var tokens []string
	for _, p := range fuzzPrincipals {
		tokens = append(tokens, token(f, p.sub, p.role))
	}
	f.Add("alice", `{"grade":"A"}`, "application/json", "12.50", "key-1")
	f.Add("a%2Fb", `{"grade":"A","x":1}`, "application/xml", "1e3", "")
	f.Add("..", `{"grade":null}`, "", "-5", " ")
	f.Add("%00", "\x00\xff", "application/json; charset=\x00", "１", strings.Repeat("k", 300))
	f.Add("2002", `{"grade":"B"}`, "application/json", "5", "")
	f.Add("WEB-NIGHTLY-5", "", "", "1", "")
	f.Add("WEB-PR", "labels", "", "25", "")
	f.Add("%61lice", "", "", "1", "")
	f.Fuzz(func(t *testing.T, id, body, ctype, amount, idem string) {
		for i, p := range fuzzPrincipals {
			for _, fr := range []struct {
				route string
				r     *http.Request
			}{
				{"grade", newReq("PUT", "/student/"+id+"/english/grade", body)},
				{"grade", newReq("POST", "/student/"+id+"/english/grade", body)},
				{"grade", newReq("GET", "/student/"+id+"/english/grade", "")},
				{"statement", newReq("GET", "/rs/account/"+id+"/transfers?limit="+amount, "")},
				{"transfer", newReq("POST", "/rs/transfer/from/1001/to/"+id+"/amount/"+amount, "")},
				{"result", newReq("GET", "/rest/api/latest/result/"+id+"?max-results="+amount+"&expand="+body, "")},
			} {
				r := fr.r
				if r == nil {
					continue // not even a parseable URL: no server would see it
				}
				r.Header.Set("Authorization", "Bearer "+tokens[i])
				r.Header.Set("X-XSRF-TOKEN", "fuzz")
				setIfValid(r.Header, "Content-Type", ctype)
				setIfValid(r.Header, "Idempotency-Key", idem)
				w := httptest.NewRecorder()
				e.srv.ServeHTTP(w, r)
				checkFuzzResponse(t, r, w)
				if w.Code < 300 && !p.granted(fr.route, r.URL.Path) {
					t.Fatalf("%s (%s) %s %s: %d for an identifier outside the grants", p.sub, p.role, r.Method, r.URL, w.Code)
				}
			}
		}
	})
}

// fuzzPrincipal is one caller of FuzzRequests and what testPolicy grants
// it, by route: the identifiers (as the decoded path carries them) it may
// get a success for.
type fuzzPrincipal struct {
	sub, role string
	grants    map[string][]string
}

var (
	aliceAccounts    = []string{"1001", "ghost-acct"} // view_account
	aliceTransfersTo = []string{"2002", "ghost-acct"} // transfer on 1001 and on these
)

var fuzzPrincipals = []fuzzPrincipal{
	{"bob", "professor", map[string][]string{"grade": {"alice", "ghost"}}}, // english-101's students
	// Account grants name the sub, whatever the role.
	{"alice", "student", map[string][]string{"grade": {"alice"}, "statement": aliceAccounts, "transfer": aliceTransfersTo}},
	{"alice", "customer", map[string][]string{"statement": aliceAccounts, "transfer": aliceTransfersTo}},
	{"carol", "developer", map[string][]string{"result": {"PROJ", "WEB-NIGHTLY"}}}, // a project and a plan
	{"mallory", "developer", nil},
}

// granted reports whether the decoded request path names, for route, an
// identifier p holds a grant on. A path of another shape names none.
func (p fuzzPrincipal) granted(route, path string) bool {
	var id string
	var ok bool
	switch route {
	case "grade":
		id, ok = cutBetween(path, "/student/", "/english/grade")
	case "statement":
		id, ok = cutBetween(path, "/rs/account/", "/transfers")
	case "transfer":
		id, ok = cutBetween(path, "/rs/transfer/from/1001/to/", "/amount/")
		id, _, _ = strings.Cut(id, "/amount/")
	case "result":
		id, ok = strings.CutPrefix(path, "/rest/api/latest/result/")
		id, _, _ = strings.Cut(id, "/")
		id = strings.TrimSuffix(id, ".json")
		if parts := strings.Split(id, "-"); ok && len(parts) >= 2 {
			return slices.Contains(p.grants[route], parts[0]) || slices.Contains(p.grants[route], parts[0]+"-"+parts[1])
		}
		// A project key: its own grant or a plan of it (WEB-NIGHTLY).
		return ok && slices.ContainsFunc(p.grants[route], func(g string) bool { return g == id || strings.HasPrefix(g, id+"-") })
	}
	return ok && slices.Contains(p.grants[route], id)
}

// cutBetween returns what lies between prefix and suffix in s; suffix may
// be followed by more path.
func cutBetween(s, prefix, suffix string) (string, bool) {
	rest, ok := strings.CutPrefix(s, prefix)
	if !ok {
		return "", false
	}
	i := strings.Index(rest, suffix)
	if i < 0 {
		return "", false
	}
	return rest[:i], true
}

func newReq(method, target, body string) *http.Request {
	var r *http.Request
	func() {
		defer func() { _ = recover() }()
		r = httptest.NewRequest(method, target, strings.NewReader(body))
	}()
	return r
}

// setIfValid sets a header only when net/http would send it at all.
func setIfValid(h http.Header, k, v string) {
	if v == "" || !utf8.ValidString(v) || strings.ContainsAny(v, "\r\n\x00") {
		return
	}
	h.Set(k, v)
}

func checkFuzzResponse(t *testing.T, r *http.Request, w *httptest.ResponseRecorder) {
	t.Helper()
	if w.Code >= 500 && w.Code != http.StatusServiceUnavailable {
		t.Fatalf("%s %s: %d %s", r.Method, r.URL, w.Code, w.Body.String())
	}
	if w.Header().Get("X-Content-Type-Options") != "nosniff" || w.Header().Get("X-Request-ID") == "" {
		t.Fatalf("%s %s: missing security headers", r.Method, r.URL)
	}
	if w.Code >= 400 {
		if w.Header().Get("Content-Type") != "application/problem+json" {
			t.Fatalf("%s %s: %d with Content-Type %q", r.Method, r.URL, w.Code, w.Header().Get("Content-Type"))
		}
		if m := leakPatterns.FindString(w.Body.String()); m != "" {
			t.Fatalf("%s %s: body leaks %q: %s", r.Method, r.URL, m, w.Body.String())
		}
	}
}

func TestHeadOnReadRoutes(t *testing.T) {
	e := newEnv(t)
	seedGrades(t, e)
	alice := token(t, "alice", "student")
	r := e.do(req{method: "HEAD", path: "/student/alice/english/grade", token: alice})
	if r.status != 200 || r.body != "" || r.header.Get("ETag") != `"1"` {
		t.Fatalf("HEAD grade: %d %q %v", r.status, r.body, r.header)
	}
	if r := e.do(req{method: "DELETE", path: "/student/alice/english/grade", token: alice, header: map[string]string{"X-XSRF-TOKEN": "x"}}); !strings.Contains(r.header.Get("Allow"), "HEAD") {
		t.Fatalf("Allow without HEAD: %q", r.header.Get("Allow"))
	}
}

// TestEncodedIdentifiers: what encodeURIComponent writes for an allowed
// character works; an encoded '/', '.', '?', '#' or '%' never does.
func TestEncodedIdentifiers(t *testing.T) {
	e := newEnv(t)
	seedGrades(t, e)
	alice := token(t, "alice", "student")
	if r := e.do(req{method: "GET", path: "/student/%61lice/english/grade", token: alice}); r.status != 200 {
		t.Errorf("%%61lice: %d", r.status)
	}
	for _, id := range []string{"%2E%2E", "a%2fb", "a%3Fb", "a%23b", "%252E", "a%25zz"} {
		if r := e.do(req{method: "GET", path: "/student/" + id + "/english/grade", token: alice}); r.status != 400 {
			t.Errorf("%s: %d, want 400", id, r.status)
		}
	}
}
