package server_test

import (
	"net"
	"testing"

	"github.com/facade-dev/facade/internal/testkit/testredis"
)

// TestFailedAuthenticationsAreLimitedPerAddressAcrossInstances: two
// instances on one Redis share each client address's budget of failed
// authentications; past it, every uncached token from that address is
// answered 429 with Retry-After before any verification, a valid one too.
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
	if r := get(b, token(t, "dave", "student")); r.status != 429 {
		t.Errorf("a valid, never-seen token from a blocked address: %d, want 429", r.status)
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
