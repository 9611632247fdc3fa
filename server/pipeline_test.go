package server_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
)

func TestPreflights(t *testing.T) {
	e := newEnv(t, withWriteOrigins("https://app.example"))
	cases := []struct {
		name, origin, method, path string
		status                     int
		allowOrigin, methods       string
	}{
		{"read from anywhere", "https://random.example", "GET", "/student/alice/english/grade", 204, "*", "GET, HEAD"},
		{"write origin reads", "https://app.example", "GET", "/rs/account/1001", 204, "https://app.example", "GET, HEAD, POST, PUT"},
		{"write origin writes", "https://app.example", "POST", "/rs/transfer/from/1/to/2/amount/3", 204, "https://app.example", "GET, HEAD, POST, PUT"},
		{"write origin PUT on unknown path", "https://app.example", "PUT", "/nowhere", 204, "https://app.example", "GET, HEAD, POST, PUT"},
		{"untrusted origin writes", "https://evil.example", "POST", "/rs/transfer/from/1/to/2/amount/3", 403, "", ""},
		{"untrusted origin PUT", "https://evil.example", "PUT", "/student/alice/english/grade", 403, "", ""},
		{"lookalike origin", "https://app.example.evil.example", "POST", "/rs/transfer/from/1/to/2/amount/3", 403, "", ""},
		{"no origin", "", "POST", "/rs/transfer/from/1/to/2/amount/3", 403, "", ""},
		{"no method", "https://app.example", "", "/rs/account/1", 403, "", ""},
		{"DELETE is nobody's", "https://app.example", "DELETE", "/rs/account/1", 403, "", ""},
	}
	for _, c := range cases {
		h := map[string]string{"Origin": c.origin, "Access-Control-Request-Method": c.method}
		r := e.do(req{method: "OPTIONS", path: c.path, header: h})
		if r.status != c.status {
			t.Errorf("%s: status %d, want %d", c.name, r.status, c.status)
			continue
		}
		if r.header.Get("Vary") != "Origin" {
			t.Errorf("%s: Vary %q", c.name, r.header.Get("Vary"))
		}
		if c.status != 204 {
			for k := range r.header {
				if strings.HasPrefix(k, "Access-Control-") {
					t.Errorf("%s: refused pre-flight carries %s", c.name, k)
				}
			}
			continue
		}
		if got := r.header.Get("Access-Control-Allow-Origin"); got != c.allowOrigin {
			t.Errorf("%s: Allow-Origin %q, want %q", c.name, got, c.allowOrigin)
		}
		if got := r.header.Get("Access-Control-Allow-Methods"); got != c.methods {
			t.Errorf("%s: Allow-Methods %q, want %q", c.name, got, c.methods)
		}
		if r.header.Get("Access-Control-Allow-Headers") != "Authorization, Content-Type, X-XSRF-TOKEN, Idempotency-Key, If-Match, If-None-Match, X-Request-ID" ||
			r.header.Get("Access-Control-Max-Age") != "600" {
			t.Errorf("%s: headers %v", c.name, r.header)
		}
	}
}

func TestRestrictedReadOrigins(t *testing.T) {
	e := newEnv(t, withReadOrigins("https://reader.example"))
	seedGrades(t, e)
	if r := e.do(req{method: "OPTIONS", path: "/x", header: map[string]string{"Origin": "https://other.example", "Access-Control-Request-Method": "GET"}}); r.status != 403 {
		t.Fatalf("unlisted read origin pre-flight: %d", r.status)
	}
	r := e.do(req{method: "OPTIONS", path: "/x", header: map[string]string{"Origin": "https://reader.example", "Access-Control-Request-Method": "GET"}})
	if r.status != 204 || r.header.Get("Access-Control-Allow-Origin") != "https://reader.example" {
		t.Fatalf("listed read origin pre-flight: %d %q", r.status, r.header.Get("Access-Control-Allow-Origin"))
	}
	// Actual read from an unlisted origin: answered, but without CORS
	// headers, so the browser drops it.
	r = e.do(req{method: "GET", path: "/student/alice/english/grade", token: token(t, "alice", "student"), header: map[string]string{"Origin": "https://other.example"}})
	if r.status != 200 || r.header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("unlisted actual read: %d %q", r.status, r.header.Get("Access-Control-Allow-Origin"))
	}
}

func TestActualCrossOriginRequests(t *testing.T) {
	e := newEnv(t, withWriteOrigins("https://app.example"))
	seedGrades(t, e)
	alice, bob := token(t, "alice", "student"), token(t, "bob", "professor")
	r := e.do(req{method: "GET", path: "/student/alice/english/grade", token: alice, header: map[string]string{"Origin": "https://random.example"}})
	if r.status != 200 || r.header.Get("Access-Control-Allow-Origin") != "*" ||
		r.header.Get("Access-Control-Expose-Headers") != "ETag, Location, X-Request-ID, Retry-After, X-Cache" {
		t.Fatalf("cross-origin read: %d %v", r.status, r.header)
	}
	// A write from a refused origin never reaches the handler: the grade
	// stays as it was.
	r = e.do(req{method: "PUT", path: "/student/alice/english/grade", token: bob, body: `{"grade":"F"}`, header: map[string]string{"Origin": "https://evil.example"}})
	if r.status != 403 || r.header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("write from refused origin: %d", r.status)
	}
	if g := e.do(req{method: "GET", path: "/student/alice/english/grade", token: bob}); !strings.Contains(g.body, `"grade":"B"`) {
		t.Fatalf("refused write changed the grade: %s", g.body)
	}
	r = e.do(req{method: "PUT", path: "/student/alice/english/grade", token: bob, body: `{"grade":"A"}`, header: map[string]string{"Origin": "https://app.example"}})
	if r.status != 200 || r.header.Get("Access-Control-Allow-Origin") != "https://app.example" {
		t.Fatalf("write from write origin: %d %v", r.status, r.header)
	}
	// Without an Origin (scripts, curl) writes are judged on token and
	// anti-forgery header alone.
	if r := e.do(req{method: "PUT", path: "/student/alice/english/grade", token: bob, body: `{"grade":"A-"}`}); r.status != 200 {
		t.Fatalf("write without origin: %d", r.status)
	}
}

func TestAntiForgeryHeader(t *testing.T) {
	e := newEnv(t)
	seedGrades(t, e)
	bob := token(t, "bob", "professor")
	cases := []struct {
		name   string
		header map[string]string
		want   int
	}{
		{"missing", map[string]string{"X-XSRF-TOKEN": ""}, 403},
		{"too long", map[string]string{"X-XSRF-TOKEN": strings.Repeat("a", 257)}, 403},
		{"space inside", map[string]string{"X-XSRF-TOKEN": "a b"}, 403},
		{"non-ASCII", map[string]string{"X-XSRF-TOKEN": "tök"}, 403},
		{"cookie mismatch", map[string]string{"X-XSRF-TOKEN": "abc", "Cookie": "XSRF-TOKEN=abd"}, 403},
		{"cookie match", map[string]string{"X-XSRF-TOKEN": "abc", "Cookie": "XSRF-TOKEN=abc"}, 200},
		{"256 chars", map[string]string{"X-XSRF-TOKEN": strings.Repeat("a", 256)}, 200},
		{"header only", map[string]string{"X-XSRF-TOKEN": "x"}, 200},
	}
	for _, c := range cases {
		r := e.do(req{method: "PUT", path: "/student/alice/english/grade", token: bob, body: `{"grade":"A"}`, header: c.header})
		if r.status != c.want {
			t.Errorf("%s: %d, want %d", c.name, r.status, c.want)
		}
	}
	// Order of checks: no token is 401 even without the header; a bad body
	// with no header is 403 (anti-forgery comes before validation).
	if r := e.do(req{method: "PUT", path: "/student/alice/english/grade", body: `{"grade":"A"}`, header: map[string]string{"X-XSRF-TOKEN": ""}}); r.status != 401 {
		t.Errorf("no token, no header: %d", r.status)
	}
	if r := e.do(req{method: "PUT", path: "/student/alice/english/grade", token: bob, body: `{"grade":"Z"}`, header: map[string]string{"X-XSRF-TOKEN": ""}}); r.status != 403 {
		t.Errorf("bad body, no header: %d", r.status)
	}
	// GET needs no header.
	if r := e.do(req{method: "GET", path: "/student/alice/english/grade", token: bob}); r.status != 200 {
		t.Errorf("GET: %d", r.status)
	}
}

func TestResponseHeadersEverywhere(t *testing.T) {
	e := newEnv(t)
	seedGrades(t, e)
	alice := token(t, "alice", "student")
	calls := []req{
		{method: "GET", path: "/student/alice/english/grade", token: alice},
		{method: "GET", path: "/student/dave/english/grade", token: alice},
		{method: "GET", path: "/nowhere", token: alice},
		{method: "GET", path: "/nowhere"},
		{method: "DELETE", path: "/student/alice/english/grade", token: alice},
		{method: "OPTIONS", path: "/x", header: map[string]string{"Origin": "https://a.example", "Access-Control-Request-Method": "GET"}},
		{method: "GET", path: "/healthz"},
	}
	for _, c := range calls {
		r := e.do(c)
		for k, v := range map[string]string{
			"X-Content-Type-Options": "nosniff", "Cache-Control": "no-store", "Referrer-Policy": "no-referrer",
			"X-Frame-Options": "DENY", "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'",
		} {
			if r.header.Get(k) != v {
				t.Errorf("%s %s: %s = %q, want %q", c.method, c.path, k, r.header.Get(k), v)
			}
		}
		if r.header.Get("Server") != "" || r.header.Get("X-Request-ID") == "" {
			t.Errorf("%s %s: Server %q, X-Request-ID %q", c.method, c.path, r.header.Get("Server"), r.header.Get("X-Request-ID"))
		}
	}
}

func TestRequestID(t *testing.T) {
	e := newEnv(t)
	ids := map[string]bool{"abc-123_x.y": true, "AZaz09": true, strings.Repeat("a", 64): true, strings.Repeat("a", 65): false, "has space": false, "<script>": false, "é": false}
	// The neighbours of every allowed range, one byte past each end.
	for _, c := range "/:@[`{,~" {
		ids["id"+string(c)] = false
	}
	for id, keep := range ids {
		r := e.do(req{method: "GET", path: "/nowhere", header: map[string]string{"X-Request-ID": id}})
		if got := r.header.Get("X-Request-ID"); (got == id) != keep || got == "" {
			t.Errorf("X-Request-ID %q: answered %q", id, got)
		}
	}
}

func TestRoutingErrors(t *testing.T) {
	e := newEnv(t)
	alice := token(t, "alice", "student")
	if r := e.do(req{method: "GET", path: "/nowhere", token: alice}); r.status != 404 {
		t.Errorf("unknown route: %d", r.status)
	}
	if r := e.do(req{method: "GET", path: "/nowhere"}); r.status != 401 {
		t.Errorf("unknown route without token: %d", r.status)
	}
	r := e.do(req{method: "DELETE", path: "/student/alice/english/grade", token: alice, header: map[string]string{"X-XSRF-TOKEN": "x"}})
	if r.status != 405 || r.header.Get("Allow") == "" || !strings.Contains(r.header.Get("Allow"), "PUT") {
		t.Errorf("wrong method: %d Allow=%q", r.status, r.header.Get("Allow"))
	}
	r = e.do(req{method: "GET", path: "/rs/transfer/from/1001/to/2002/amount/5", token: alice})
	if r.status != 405 || !strings.Contains(r.header.Get("Allow"), "POST") {
		t.Errorf("GET on transfer: %d Allow=%q", r.status, r.header.Get("Allow"))
	}
}

func TestAcceptNegotiation(t *testing.T) {
	e := newEnv(t)
	seedGrades(t, e)
	alice := token(t, "alice", "student")
	for accept, want := range map[string]int{
		"application/xml":                       406,
		"text/html":                             406,
		"application/json;q=0, application/xml": 406,
		"application/json":                      200,
		"*/*":                                   200,
		"application/*":                         200,
		"text/html, application/json;q=0.5":     200,
		"application/json, text/plain, */*":     200,
		"":                                      200,
	} {
		r := e.do(req{method: "GET", path: "/student/alice/english/grade", token: alice, header: map[string]string{"Accept": accept}})
		if r.status != want {
			t.Errorf("Accept %q: %d, want %d", accept, r.status, want)
		}
	}
}

func TestRateLimit(t *testing.T) {
	e := newEnv(t, withRateLimit(5))
	alice, bob := token(t, "alice", "student"), token(t, "bob", "professor")
	limited := 0
	var last resp
	for i := 0; i < 30; i++ {
		r := e.do(req{method: "GET", path: "/nowhere", token: alice})
		if r.status == 429 {
			limited++
			last = r
		}
	}
	if limited == 0 || last.header.Get("Retry-After") == "" {
		t.Fatalf("30 quick requests at 5/s: %d limited, Retry-After %q", limited, last.header.Get("Retry-After"))
	}
	// The limit is per principal: bob is unaffected.
	if r := e.do(req{method: "GET", path: "/nowhere", token: bob}); r.status != 404 {
		t.Fatalf("other principal: %d", r.status)
	}
}

// TestOversizedHeaders: headers beyond 16 KiB never reach a handler.
func TestOversizedHeaders(t *testing.T) {
	e := newEnv(t)
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /nowhere HTTP/1.1\r\nHost: x\r\nX-Big: %s\r\n\r\n", strings.Repeat("a", 40<<10))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("40 KiB header: %d", res.StatusCode)
	}
}

// TestHostHeaderDoesNotWhitelistAnOrigin: a refused origin stays refused
// when the request also claims that origin's host (DNS rebinding).
func TestHostHeaderDoesNotWhitelistAnOrigin(t *testing.T) {
	e := newEnv(t)
	seedGrades(t, e)
	hr, _ := http.NewRequest("PUT", e.url+"/student/alice/english/grade", strings.NewReader(`{"grade":"F"}`))
	hr.Host = "evil.example"
	hr.Header.Set("Origin", "http://evil.example")
	hr.Header.Set("Authorization", "Bearer "+token(t, "bob", "professor"))
	hr.Header.Set("X-XSRF-TOKEN", "x")
	hr.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 403 {
		t.Fatalf("write from refused origin with matching Host: %d", res.StatusCode)
	}
}

func TestJSONKeysAreExact(t *testing.T) {
	e := newEnv(t)
	bob := token(t, "bob", "professor")
	for _, body := range []string{`{"GRADE":"A"}`, `{"Grade":"A"}`, `{"grade":"E","grade":"A"}`, `{"grade":"A","grade":"A"}`} {
		if r := e.do(req{method: "POST", path: "/student/ghost/english/grade", token: bob, body: body}); r.status != 400 {
			t.Errorf("%s: %d, want 400", body, r.status)
		}
	}
}

func TestAcceptPrecedence(t *testing.T) {
	e := newEnv(t)
	seedGrades(t, e)
	alice := token(t, "alice", "student")
	for accept, want := range map[string]int{
		" ":                             200, // empty value: no preference
		"application/json;q=0, */*":     406,
		"*/*;q=0.1, application/json":   200,
		"application/*;q=0, */*":        406,
		"application/json;q=0.001, */*": 200,
	} {
		if r := e.do(req{method: "GET", path: "/student/alice/english/grade", token: alice, header: map[string]string{"Accept": accept}}); r.status != want {
			t.Errorf("Accept %q: %d, want %d", accept, r.status, want)
		}
	}
}
