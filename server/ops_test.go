package server_test

import (
	"strings"
	"testing"
)

func TestOpsEndpoints(t *testing.T) {
	e := newEnv(t, withBuilds())
	seedGrades(t, e)
	alice := token(t, "alice", "student")
	e.do(req{method: "GET", path: "/student/alice/english/grade", token: alice})
	e.do(req{method: "GET", path: "/student/dave/english/grade", token: alice})
	e.do(req{method: "GET", path: "/rest/api/latest/project", token: alice})

	if r := e.do(req{method: "GET", path: "/healthz"}); r.status != 200 {
		t.Fatalf("healthz: %d", r.status)
	}
	r := e.do(req{method: "GET", path: "/readyz"})
	if r.status != 200 || !strings.Contains(r.body, `"redis":"ok"`) || !strings.Contains(r.body, `"loaded":true`) ||
		!strings.Contains(r.body, `"upstream_breaker":"closed"`) {
		t.Fatalf("readyz: %d %s", r.status, r.body)
	}
	r = e.do(req{method: "GET", path: "/metrics"})
	for _, m := range []string{
		`facade_http_requests_total{method="GET",route="/student/:student_id/english/grade",status="200"}`,
		`facade_http_requests_total{method="GET",route="/student/:student_id/english/grade",status="403"}`,
		"facade_http_request_duration_seconds_bucket",
		`facade_authz_decisions_total{op=`,
		`facade_policy_last_reload_ok 1`,
		`facade_upstream_calls_total{`,
		`facade_cache_lookups_total{result="miss"}`,
		"facade_upstream_breaker_state",
	} {
		if !strings.Contains(r.body, m) {
			t.Errorf("metrics lack %s", m)
		}
	}
	denial := ""
	for _, line := range strings.Split(e.logs.String(), "\n") {
		if strings.Contains(line, `"msg":"authorization denied","audit":true`) {
			denial = line
		}
	}
	if !strings.Contains(denial, `"principal":"alice"`) || !strings.Contains(denial, `"target":"student:dave"`) ||
		!strings.Contains(denial, `"request_id":"`) {
		t.Errorf("denial audit line %q lacks principal, target or request id", denial)
	}
}
