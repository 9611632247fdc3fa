package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/facade-dev/facade/auth"
	"github.com/facade-dev/facade/internal/testkit/testlog"
	"github.com/facade-dev/facade/internal/testkit/testredis"
	"github.com/facade-dev/facade/upstream/bambootest"
)

// TestTraceContextIsPassedOnWithoutExport runs `facade serve` with no
// OTEL_EXPORTER_OTLP_ENDPOINT: a caller's traceparent still reaches
// Bamboo (the same trace; the facade records no span of its own, so the
// caller's is passed on as it came), and every log line of that request,
// the upstream failure's warning as well as the access line, carries its
// trace_id; a request without a traceparent sends none to Bamboo and
// logs none (docs/operations.md, "Tracing").
func TestTraceContextIsPassedOnWithoutExport(t *testing.T) {
	bt := bambootest.New(bambootest.WithToken("svc-token"))
	bambootest.DemoData(bt)
	var mu sync.Mutex
	seen := map[string][]string{} // Bamboo path → the traceparents it received
	upstreamTS := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.URL.Path] = append(seen[r.URL.Path], r.Header.Get("Traceparent"))
		mu.Unlock()
		bt.ServeHTTP(w, r)
	}))
	defer upstreamTS.Close()
	bt.SetBaseURL(upstreamTS.URL)

	addr, opsAddr := freeAddr(t), freeAddr(t)
	env := settingsFrom(map[string]string{
		"FACADE_REDIS_URL": testredis.URL(t), "FACADE_JWT_SECRET": secret, "FACADE_ADDR": addr, "FACADE_OPS_ADDR": opsAddr,
		"FACADE_UPSTREAM_URL": upstreamTS.URL, "FACADE_UPSTREAM_TOKEN": "svc-token",
		"FACADE_MODEL": "../../model.conf", "FACADE_POLICY": "../../policy.csv", "FACADE_DRAIN_DELAY": "0",
	})
	var logs testlog.Buffer
	stopServe := startServe(t, env, "http://"+opsAddr, &logs)

	const callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	const traceparent = "00-" + callerTrace + "-00f067aa0ba902b7-01"
	carol, _ := auth.Mint([]byte(secret), "carol", "developer", auth.Claims{}, time.Hour)
	get := func(path, traceparent string, want int) {
		t.Helper()
		r, _ := http.NewRequest("GET", "http://"+addr+path, nil)
		r.Header.Set("Authorization", "Bearer "+carol)
		if traceparent != "" {
			r.Header.Set("Traceparent", traceparent)
		}
		res, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != want {
			t.Fatalf("GET %s: %d, want %d", path, res.StatusCode, want)
		}
	}
	bt.FailNext(1+3, http.StatusInternalServerError) // every attempt of one call: a warning logged in the request
	get("/rest/api/latest/project", traceparent, http.StatusBadGateway)
	get("/rest/api/latest/project", traceparent, http.StatusOK)
	get("/rest/api/latest/result/WEB-NIGHTLY", "", http.StatusOK)
	if err := stopServe(); err != nil {
		t.Fatalf("serve: %v", err)
	}

	mu.Lock()
	defer mu.Unlock()
	projects, results := seen["/rest/api/latest/project.json"], seen["/rest/api/latest/result/WEB-NIGHTLY.json"]
	if len(projects) < 2 || len(results) == 0 {
		t.Fatalf("Bamboo was asked for projects %d times and for results %d times: %v", len(projects), len(results), seen)
	}
	for _, p := range projects {
		if !strings.HasPrefix(p, "00-"+callerTrace+"-") {
			t.Errorf("Bamboo received traceparent %q for a traced request; want the caller's trace %s", p, callerTrace)
		}
	}
	for _, p := range results {
		if p != "" {
			t.Errorf("Bamboo received traceparent %q for a request that sent none", p)
		}
	}

	var traced, warnings, untraced int
	for _, line := range strings.Split(logs.String(), "\n") {
		switch {
		case !strings.Contains(line, `"request_id"`):
		case strings.Count(line, `"request_id"`) > 1:
			t.Errorf("a log line names its request twice: %s", line)
		case strings.Contains(line, `"route":"/rest/api/latest/result/:key"`):
			untraced++
			if strings.Contains(line, `"trace_id"`) {
				t.Errorf("a request without a traceparent logged a trace_id: %s", line)
			}
		default:
			traced++
			if strings.Contains(line, "upstream call failed") {
				warnings++
			}
			if !strings.Contains(line, `"trace_id":"`+callerTrace+`"`) {
				t.Errorf("a log line of a traced request without its trace_id: %s", line)
			}
		}
	}
	if traced < 3 || warnings == 0 || untraced == 0 {
		t.Errorf("%d log lines of traced requests (%d upstream warnings), %d of the untraced one:\n%s",
			traced, warnings, untraced, logs.String())
	}
}
