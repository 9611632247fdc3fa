package server_test

import (
	"fmt"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/facade-dev/facade/internal/testkit/testredis"
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
		!strings.Contains(r.body, `"upstream_breaker":"closed"`) || !strings.Contains(r.body, `"decider":"index"`) ||
		!regexp.MustCompile(`"hash":"[0-9a-f]{16}"`).MatchString(r.body) || !strings.Contains(r.body, `"loaded_at":"20`) {
		t.Fatalf("readyz: %d %s", r.status, r.body)
	}
	r = e.do(req{method: "GET", path: "/metrics"})
	for _, m := range []string{
		`facade_http_requests_total{method="GET",route="/student/:studentId/english/grade",status="200"}`,
		`facade_http_requests_total{method="GET",route="/student/:studentId/english/grade",status="403"}`,
		"facade_http_request_duration_seconds_bucket",
		`facade_authz_decisions_total{op=`,
		`facade_policy_last_reload_ok 1`,
		`facade_upstream_calls_total{`,
		`facade_cache_lookups_total{result="miss"}`,
		"facade_upstream_breaker_state",
		`facade_policy_info{decider="index",hash="`,
		"facade_policy_loaded_timestamp_seconds ",
		`facade_authz_list_entries_total{result="hidden"}`, // alice's project list is filtered, not refused
	} {
		if !strings.Contains(r.body, m) {
			t.Errorf("metrics lack %s", m)
		}
	}
	denial := ""
	for _, line := range strings.Split(e.logs.String(), "\n") {
		if strings.Contains(line, `"audit":true,"event":"authorization denied"`) {
			denial = line
		}
	}
	if !strings.Contains(denial, `"principal":"alice"`) || !strings.Contains(denial, `"target":"student:dave"`) ||
		!strings.Contains(denial, `"request_id":"`) {
		t.Errorf("denial audit line %q lacks principal, target or request id", denial)
	}
}

// TestMetricsOnTheAPIListenerNameNoVersion: the API listener's /metrics
// carries no version (go_info names the Go release); the ops listener's
// may.
func TestMetricsOnTheAPIListenerNameNoVersion(t *testing.T) {
	e := newEnv(t)
	api := e.do(req{method: "GET", path: "/metrics"})
	if api.status != 200 || !strings.Contains(api.body, "go_goroutines") {
		t.Fatalf("API /metrics: %d %.200s", api.status, api.body)
	}
	if strings.Contains(api.body, "go_info") || regexp.MustCompile(`version="`).MatchString(api.body) ||
		regexp.MustCompile(`go1\.\d+`).MatchString(api.body) {
		t.Errorf("API /metrics names a version")
	}
	ops := httptest.NewRecorder()
	e.srv.Ops().ServeHTTP(ops, httptest.NewRequest("GET", "/metrics", nil))
	if !strings.Contains(ops.Body.String(), "go_info{version=") {
		t.Errorf("ops /metrics lost go_info: %.300s", ops.Body.String())
	}
}

// TestCallerChosenMethodsDoNotGrowMetrics: the method label is bounded.
func TestCallerChosenMethodsDoNotGrowMetrics(t *testing.T) {
	e := newEnv(t)
	for i := 0; i < 5; i++ {
		e.do(req{method: fmt.Sprintf("XMETHOD%d", i), path: "/rs/account/1001"})
	}
	if m := e.do(req{method: "GET", path: "/metrics"}); strings.Contains(m.body, "XMETHOD") || !strings.Contains(m.body, `method="OTHER"`) {
		t.Fatal("caller-chosen methods appear as metric labels")
	}
}

// TestReadinessIsWhatThisInstanceDecides: with its Redis stopped, /readyz
// answers 200 within the probe's second, saying Redis is unavailable,
// while the build routes keep answering (a shared Redis's blip used to
// take every instance out of the Service at once); draining is a 503
// whose body says why.
func TestReadinessIsWhatThisInstanceDecides(t *testing.T) {
	srv := testredis.Start(t, testredis.Options{})
	e := newEnv(t, withRedis(srv.Client(t)), withBuilds())
	carol := token(t, "carol", "developer")
	if r := e.do(req{method: "GET", path: "/rest/api/latest/project", token: carol}); r.status != 200 {
		t.Fatalf("project list with Redis up: %d %s", r.status, r.body)
	}
	srv.Stop()
	started := time.Now()
	r := e.do(req{method: "GET", path: "/readyz"})
	if took := time.Since(started); r.status != 200 || !strings.Contains(r.body, `"redis":"unavailable"`) ||
		!strings.Contains(r.body, `"status":"ok"`) || took > time.Second {
		t.Fatalf("readyz with Redis down: %d %s after %v; want 200 saying redis unavailable, within 1 s", r.status, r.body, took)
	}
	if r := e.do(req{method: "GET", path: "/rest/api/latest/project", token: carol}); r.status != 200 {
		t.Errorf("project list with Redis down: %d %s", r.status, r.body)
	}
	e.srv.Drain()
	ops := httptest.NewRecorder() // the ops listener, as the probe asks it
	e.srv.Ops().ServeHTTP(ops, httptest.NewRequest("GET", "/readyz", nil))
	if body := ops.Body.String(); ops.Code != 503 || !strings.Contains(body, `"status":"draining"`) || !strings.Contains(body, `"reason":"draining`) {
		t.Fatalf("readyz while draining: %d %s", ops.Code, body)
	}
}
