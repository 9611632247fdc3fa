package server_test

import (
	"net"
	"strings"
	"testing"

	"github.com/facade-dev/facade/internal/testkit/testredis"
)

// TestFailedAuthenticationsAreLimitedPerAddressAcrossInstances: two
// instances on one Redis share each client address's budget of failed
// authentications; past it, every bad token from that address is answered
// 429 with Retry-After, but a valid token, even one never seen before, is
// let through (behind a NAT, others' stale tokens must not lock a caller
// out). The 401 and 429 log lines name the client address.
func TestFailedAuthenticationsAreLimitedPerAddressAcrossInstances(t *testing.T) {
	rdb := testredis.Client(t)
	a := newEnv(t, withRedis(rdb), withAuthFailureLimit(3))
	b := newEnv(t, withRedis(rdb), withAuthFailureLimit(3))
	seedGrades(t, a)
	bad := tamper(token(t, "alice", "student"))
	get := func(e *env, tok string) resp {
		return e.do(req{method: "GET", path: "/student/alice/english/grade", token: tok})
	}
	if r := get(a, token(t, "alice", "student")); r.status != 200 {
		t.Fatalf("valid token before any failure: %d", r.status)
	}
	for i, e := range []*env{a, a, b} {
		if r := get(e, bad); r.status != 401 {
			t.Fatalf("failure %d: %d, want 401", i+1, r.status)
		}
	}
	for name, e := range map[string]*env{"instance A": a, "instance B": b} {
		r := get(e, bad)
		if r.status != 429 || r.header.Get("Retry-After") != "20" {
			t.Errorf("%s past the limit: %d Retry-After %q, want 429 after 20s (3 a minute)", name, r.status, r.header.Get("Retry-After"))
		}
	}
	if r := b.do(req{method: "GET", path: "/student/dave/english/grade", token: token(t, "dave", "student")}); r.status == 401 || r.status == 429 {
		t.Errorf("a valid, never-seen token from a blocked address: %d, want it let through", r.status)
	}
	if r := get(a, token(t, "alice", "student")); r.status != 200 {
		t.Errorf("a valid token from a blocked address: %d, want 200", r.status)
	}
	for _, e := range []*env{a, b} {
		for _, msg := range []string{"authentication failed", "authentication throttled"} {
			if !logLineWith(e.logs.String(), `"msg":"`+msg+`"`, `"client":"127.0.0.1"`) {
				t.Errorf("no %q line naming the client address in\n%s", msg, e.logs.String())
			}
		}
	}
	// No token at all costs nothing and says nothing: still 401.
	if r := b.do(req{method: "GET", path: "/student/alice/english/grade"}); r.status != 401 {
		t.Errorf("no token from a blocked address: %d", r.status)
	}
}

// TestXForwardedForCountsOnlyFromTrustedProxies: behind a trusted proxy
// each forwarded client has its own budget; from anyone else the header is
// ignored, so rotating it does not reset the count.
func TestXForwardedForCountsOnlyFromTrustedProxies(t *testing.T) {
	bad := tamper(token(t, "alice", "student"))
	from := func(e *env, client string) int {
		return e.do(req{method: "GET", path: "/student/alice/english/grade", token: bad,
			header: map[string]string{"X-Forwarded-For": client}}).status
	}
	_, loopback, _ := net.ParseCIDR("127.0.0.0/8")
	proxied := newEnv(t, withAuthFailureLimit(2, loopback))
	direct := newEnv(t, withAuthFailureLimit(2))
	for _, c := range []struct {
		name    string
		e       *env
		clients []string
		want    []int
	}{
		{"behind a trusted proxy", proxied, []string{"203.0.113.1", "203.0.113.1", "203.0.113.1", "203.0.113.2", "198.51.100.9, 203.0.113.2"}, []int{401, 401, 429, 401, 401}},
		{"spoofed by the peer", direct, []string{"203.0.113.1", "203.0.113.2", "203.0.113.3"}, []int{401, 401, 429}},
	} {
		for i, client := range c.clients {
			if got := from(c.e, client); got != c.want[i] {
				t.Errorf("%s: request %d from %s: %d, want %d", c.name, i+1, client, got, c.want[i])
			}
		}
	}
}

// logLineWith reports whether one line of logs holds every part.
func logLineWith(logs string, parts ...string) bool {
	for _, line := range strings.Split(logs, "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			return true
		}
	}
	return false
}

// TestFailedAuthLimitLogsARedisOutageOnce: with the limit's Redis down,
// bad tokens are still answered 401 and the outage is one line, not a
// warning per request (it was one "failed-authentication limiter
// unavailable" line per request, twice for each bad token).
func TestFailedAuthLimitLogsARedisOutageOnce(t *testing.T) {
	srv := testredis.Start(t, testredis.Options{})
	e := newEnv(t, withRedis(srv.Client(t)), withAuthFailureLimit(3))
	bad := tamper(token(t, "alice", "student"))
	srv.Stop()
	for i := range 20 {
		if r := e.do(req{method: "GET", path: "/student/alice/english/grade", token: bad}); r.status != 401 {
			t.Fatalf("bad token %d with Redis down: %d, want 401", i+1, r.status)
		}
	}
	logs := e.logs.String()
	n := 0
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, "unavailable") && strings.Contains(line, authFailPrefix) {
			n++
		}
	}
	if n != 1 || strings.Contains(logs, "failed-authentication limiter unavailable") {
		t.Fatalf("%d outage lines about the failure limit's Redis, want 1:\n%s", n, logs)
	}
}

const authFailPrefix = `"keys":"facade:authfail:"`
