package server_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/facade-dev/facade/internal/testkit/testredis"
)

// TestEveryErrorStatusIsAProblemWithTheRequiredHeaders provokes every
// error status the service can give, from the router, the middleware, the
// handlers, the stores, the upstream and net/http itself, and checks each
// is an RFC 9457 body (harness checkProblem) with the headers every
// response carries and the ones its status needs.
func TestEveryErrorStatusIsAProblemWithTheRequiredHeaders(t *testing.T) {
	// 3 s, not 300 ms: the 502 case's three attempts must all finish inside
	// the budget (one still in flight at its end is a 504), even when a
	// loaded machine is slow to answer them.
	e := newEnv(t, withBuilds(), withUpstreamTimeout(3*time.Second))
	seedGrades(t, e)
	seedAccounts(t, e)
	alice, bob := token(t, "alice", "student"), token(t, "bob", "professor")
	carol := token(t, "carol", "developer")

	limited := newEnv(t, withRateLimit(1), withAuthFailureLimit(1))
	downRedis := testredis.Start(t, testredis.Options{})
	down := newEnv(t, withRedis(downRedis.Client(t)))
	downRedis.Stop()

	cases := []struct {
		name   string
		status int
		send   func() resp
		needs  []string // headers this status must carry besides the common ones
	}{
		{"malformed identifier", 400, call(e, req{method: "GET", path: "/rs/account/a%20b/balance", token: alice}), nil},
		{"malformed escape (net/http)", 400, raw(e, "GET /rs/account/%zz HTTP/1.1\r\nHost: x\r\n\r\n"), nil},
		{"malformed Host (net/http)", 400, raw(e, "GET /healthz HTTP/1.1\r\nHost: a b\r\n\r\n"), nil},
		{"no token", 401, call(e, req{method: "GET", path: "/rs/account/1001"}), []string{"WWW-Authenticate"}},
		{"not permitted", 403, call(e, req{method: "GET", path: "/rs/account/2002", token: alice}), nil},
		{"no anti-forgery header", 403, call(e, req{method: "POST", path: "/rs/transfer/from/1001/to/2002/amount/1", token: alice, header: map[string]string{"X-XSRF-TOKEN": ""}}), nil},
		{"unknown route", 404, call(e, req{method: "GET", path: "/nowhere", token: alice}), nil},
		{"absent resource", 404, call(e, req{method: "GET", path: "/student/ghost/english/grade", token: bob}), nil},
		{"wrong method", 405, call(e, req{method: "DELETE", path: "/rs/account/1001", token: alice}), []string{"Allow"}},
		{"Accept without JSON", 406, call(e, req{method: "GET", path: "/rs/account/1001", token: alice, header: map[string]string{"Accept": "application/xml"}}), nil},
		{"grade exists", 409, call(e, req{method: "POST", path: "/student/alice/english/grade", token: bob, body: `{"grade":"A"}`}), nil},
		{"stale If-Match", 412, call(e, req{method: "PUT", path: "/student/alice/english/grade", token: bob, body: `{"grade":"A"}`, header: map[string]string{"If-Match": `"99"`}}), nil},
		{"body over 16 KiB", 413, call(e, req{method: "PUT", path: "/student/alice/english/grade", token: bob, body: `{"grade":"` + strings.Repeat("A", 17<<10) + `"}`}), nil},
		{"unsupported Expect (net/http)", 417, raw(e, "GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\n\r\n"), nil},
		{"body not JSON", 415, call(e, req{method: "PUT", path: "/student/alice/english/grade", token: bob, body: "grade=A", header: map[string]string{"Content-Type": "text/plain"}}), nil},
		{"same account", 422, call(e, req{method: "POST", path: "/rs/transfer/from/1001/to/1001/amount/1", token: alice}), nil},
		{"rate limited", 429, burst(limited, alice), []string{"Retry-After"}},
		{"failed authentications past the limit", 429, burst(limited, tamper(alice)), []string{"Retry-After"}},
		{"headers over 16 KiB", 431, call(e, req{method: "GET", path: "/rs/account/1001", token: alice, header: map[string]string{"X-Big": strings.Repeat("b", 20<<10)}}), nil},
		{"headers past the server's own limit (net/http)", 431, raw(e, "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: "+strings.Repeat("b", 80<<10)+"\r\n\r\n"), nil},
		{"unknown transfer encoding (net/http)", 501, raw(e, "POST /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n"), nil},
		{"upstream answers badly", 502, func() resp {
			e.bamboo.SetFailing(500)
			defer e.bamboo.SetFailing(0)
			return e.do(req{method: "GET", path: "/rest/api/latest/result/WEB-NIGHTLY", token: carol})
		}, nil},
		{"store unavailable", 503, call(down, req{method: "GET", path: "/rs/account/1001", token: alice}), []string{"Retry-After"}},
		{"upstream does not answer", 504, func() resp {
			e.bamboo.SetHang(true)
			defer e.bamboo.SetHang(false)
			return e.do(req{method: "GET", path: "/rest/api/latest/result/PROJ-BUILD", token: carol})
		}, nil},
		{"unknown protocol version (net/http)", 505, raw(e, "GET /healthz HTTP/2.0\r\nHost: x\r\n\r\n"), nil},
		{"OPTIONS * is a pre-flight without an origin, not net/http's bare 200", 403, raw(e, "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n"), nil},
	}
	for _, c := range cases {
		r := c.send()
		if r.status != c.status {
			t.Errorf("%s: status %d, want %d: %s", c.name, r.status, c.status, r.body)
			continue
		}
		for _, h := range append(c.needs, "X-Request-ID", "X-Content-Type-Options", "Cache-Control",
			"Referrer-Policy", "X-Frame-Options", "Content-Security-Policy") {
			if r.header.Get(h) == "" {
				t.Errorf("%s: no %s header", c.name, h)
			}
		}
		if r.header.Get("X-Content-Type-Options") != "nosniff" || r.header.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: headers %v", c.name, r.header)
		}
		if r.header.Get("Server") != "" {
			t.Errorf("%s: Server header %q", c.name, r.header.Get("Server"))
		}
	}
}

func call(e *env, r req) func() resp { return func() resp { return e.do(r) } }

// burst sends requests until the rate limit answers.
func burst(e *env, tok string) func() resp {
	return func() resp {
		var r resp
		for range 10 {
			if r = e.do(req{method: "GET", path: "/nowhere", token: tok}); r.status == 429 {
				break
			}
		}
		return r
	}
}

// raw writes a request byte for byte (what http.Client refuses to send)
// and reads the answer.
func raw(e *env, request string) func() resp {
	return func() resp {
		e.t.Helper()
		u, _ := url.Parse(e.url)
		conn, err := net.Dial("tcp", u.Host)
		if err != nil {
			e.t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(30 * time.Second)) // only against a hang
		if _, err := io.WriteString(conn, request); err != nil {
			e.t.Fatal(err)
		}
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			e.t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		out := resp{status: res.StatusCode, header: res.Header, body: string(b)}
		e.checkProblem(out)
		return out
	}
}

func TestHeaderLimitIs16KiB(t *testing.T) {
	e := newEnv(t)
	send := func(size int) int {
		conn, err := net.Dial("tcp", strings.TrimPrefix(e.url, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: %s\r\n\r\n", strings.Repeat("a", size))
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if got := send(14 << 10); got != 200 {
		t.Errorf("14 KiB of headers: %d", got)
	}
	if got := send(17 << 10); got != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("17 KiB of headers: %d", got)
	}
}
