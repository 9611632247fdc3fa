package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/facade-dev/facade/auth"
	"github.com/facade-dev/facade/internal/testkit/testlog"
	"github.com/facade-dev/facade/internal/testkit/testredis"
	"github.com/facade-dev/facade/upstream/bambootest"
)

// otlpReceiver is an OTLP/HTTP traces endpoint: it decodes what the real
// exporter sends (protobuf, as the protocol says) and keeps the spans.
type otlpReceiver struct {
	mu    sync.Mutex
	spans []*tracepb.Span
}

func (o *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		body = zr
	}
	b, _ := io.ReadAll(body)
	var req collectortrace.ExportTraceServiceRequest
	if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" || proto.Unmarshal(b, &req) != nil {
		http.Error(w, "not an OTLP traces export", 400)
		return
	}
	o.mu.Lock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			o.spans = append(o.spans, ss.Spans...)
		}
	}
	o.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
	out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
	_, _ = w.Write(out)
}

func (o *otlpReceiver) all() []*tracepb.Span {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]*tracepb.Span(nil), o.spans...)
}

// TestTracesReachBambooAndTheLogs runs `facade serve` with
// OTEL_EXPORTER_OTLP_ENDPOINT set: a caller's traceparent is continued by
// a server span named by the route template, Bamboo receives a
// traceparent of the same trace, the upstream call and the Redis round
// trips are child spans, every log line of the request carries the
// trace_id, and /metrics names the build.
func TestTracesReachBambooAndTheLogs(t *testing.T) {
	receiver := &otlpReceiver{}
	collector := httptest.NewServer(receiver)
	defer collector.Close()

	bt := bambootest.New(bambootest.WithToken("svc-token"))
	bambootest.DemoData(bt)
	var bambooMu sync.Mutex
	var bambooParents []string
	upstreamTS := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bambooMu.Lock()
		bambooParents = append(bambooParents, r.Header.Get("Traceparent"))
		bambooMu.Unlock()
		bt.ServeHTTP(w, r)
	}))
	defer upstreamTS.Close()
	bt.SetBaseURL(upstreamTS.URL)

	addr, opsAddr := freeAddr(t), freeAddr(t)
	env := settingsFrom(map[string]string{
		"FACADE_REDIS_URL": testredis.URL(t), "FACADE_JWT_SECRET": secret, "FACADE_ADDR": addr, "FACADE_OPS_ADDR": opsAddr,
		"FACADE_UPSTREAM_URL": upstreamTS.URL, "FACADE_UPSTREAM_TOKEN": "svc-token",
		"FACADE_MODEL": "../../model.conf", "FACADE_POLICY": "../../policy.csv", "FACADE_DRAIN_DELAY": "0",
		"OTEL_EXPORTER_OTLP_ENDPOINT": collector.URL,
	})
	var logs testlog.Buffer
	stopServe := startServe(t, env, "http://"+opsAddr, &logs)

	const callerTrace, callerSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	carol, _ := auth.Mint([]byte(secret), "carol", "developer", auth.Claims{}, time.Hour)
	alice, _ := auth.Mint([]byte(secret), "alice", "student", auth.Claims{}, time.Hour)
	for _, req := range []struct{ token, path string }{
		{carol, "/rest/api/latest/project?expand=projects.project.plans"},
		{alice, "/student/alice/english/grade"},
	} {
		r, _ := http.NewRequest("GET", "http://"+addr+req.path, nil)
		r.Header.Set("Authorization", "Bearer "+req.token)
		r.Header.Set("Traceparent", "00-"+callerTrace+"-"+callerSpan+"-01")
		res, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 && res.StatusCode != 404 {
			t.Fatalf("GET %s: %d", req.path, res.StatusCode)
		}
	}
	res, err := http.Get("http://" + opsAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metricsText, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !bytes.Contains(metricsText, []byte(`facade_build_info{commit="`)) || !bytes.Contains(metricsText, []byte(`goversion="go1.`)) {
		t.Errorf("/metrics has no facade_build_info with commit and goversion")
	}
	// serve sends the spans still queued before it returns
	if err := stopServe(); err != nil {
		t.Fatalf("serve: %v", err)
	}

	bambooMu.Lock()
	parents := append([]string(nil), bambooParents...)
	bambooMu.Unlock()
	if len(parents) == 0 {
		t.Fatal("Bamboo was not called")
	}
	for _, p := range parents {
		if !strings.HasPrefix(p, "00-"+callerTrace+"-") || strings.Contains(p, callerSpan) {
			t.Errorf("Bamboo received traceparent %q; want the caller's trace with the facade's own span", p)
		}
	}

	spans := receiver.all()
	byName := map[string][]*tracepb.Span{}
	for _, s := range spans {
		if hexID(s.TraceId) != callerTrace {
			t.Errorf("span %q in trace %s, not the caller's", s.Name, hexID(s.TraceId))
		}
		byName[s.Name] = append(byName[s.Name], s)
	}
	for _, name := range []string{"GET /rest/api/latest/project", "GET /student/:studentId/english/grade"} {
		got := byName[name]
		if len(got) != 1 || hexID(got[0].ParentSpanId) != callerSpan || got[0].Kind != tracepb.Span_SPAN_KIND_SERVER {
			t.Errorf("server span %q: %d of it, want one, child of the caller's span; spans: %v", name, len(got), names(spans))
		}
	}
	for _, s := range spans {
		if strings.Contains(s.Name, "alice") {
			t.Errorf("span named by a concrete id: %q", s.Name)
		}
	}
	// Each authorization step is a child of its request's span, and says
	// whether it allowed.
	for step, request := range map[string]string{
		"authorize grade.view":   "GET /student/:studentId/english/grade",
		"authorize project.list": "GET /rest/api/latest/project",
	} {
		got, parent := byName[step], byName[request]
		if len(got) != 1 || len(parent) != 1 || hexID(got[0].ParentSpanId) != hexID(parent[0].SpanId) {
			t.Errorf("authorization span %q: %d of it, want one, child of %q; spans: %v", step, len(got), request, names(spans))
		}
	}
	if got := byName["authorize grade.view"]; len(got) == 1 && !hasBoolAttr(got[0], "facade.authz.allowed", true) {
		t.Errorf("authorize grade.view does not record that alice's own grade was allowed: %v", got[0].Attributes)
	}
	server := byName["GET /rest/api/latest/project"]
	var upstreamCalls, redisTrips int
	for _, s := range spans {
		switch {
		case strings.HasPrefix(s.Name, "HTTP GET"):
			upstreamCalls++
			if len(server) == 1 && hexID(s.ParentSpanId) != hexID(server[0].SpanId) {
				t.Errorf("upstream span %q is not a child of the request's span", s.Name)
			}
		case strings.HasPrefix(s.Name, "redis "):
			redisTrips++
		}
	}
	if upstreamCalls == 0 || redisTrips == 0 {
		t.Errorf("%d upstream and %d Redis spans; want both: %v", upstreamCalls, redisTrips, names(spans))
	}

	requestLines := 0
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, `"request_id"`) {
			requestLines++
			if !strings.Contains(line, `"trace_id":"`+callerTrace+`"`) {
				t.Errorf("a log line of a request without its trace_id: %s", line)
			}
		}
	}
	if requestLines < 2 {
		t.Errorf("%d request log lines:\n%s", requestLines, logs.String())
	}
}

func hexID(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}

func names(spans []*tracepb.Span) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}

// hasBoolAttr says whether span carries the boolean attribute key = want.
func hasBoolAttr(span *tracepb.Span, key string, want bool) bool {
	for _, a := range span.Attributes {
		if a.Key == key {
			return a.Value.GetBoolValue() == want
		}
	}
	return false
}

// TestOpenTelemetryErrorsAreJSONLogLines: when the collector refuses an
// export, what OpenTelemetry reports is a JSON line of the service's log
// naming the problem (its default handler printed plain text to stderr,
// inside the JSON log), and every line serve writes stays JSON.
func TestOpenTelemetryErrorsAreJSONLogLines(t *testing.T) {
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "collector refuses", http.StatusBadRequest) // not retried by the exporter
	}))
	defer collector.Close()
	addr, opsAddr := freeAddr(t), freeAddr(t)
	env := settingsFrom(map[string]string{
		"FACADE_REDIS_URL": testredis.URL(t), "FACADE_JWT_SECRET": secret, "FACADE_ADDR": addr, "FACADE_OPS_ADDR": opsAddr,
		"FACADE_MODEL": "../../model.conf", "FACADE_POLICY": "../../policy.csv", "FACADE_DRAIN_DELAY": "0",
		"FACADE_PUBLIC_URL":           "http://" + addr,
		"OTEL_EXPORTER_OTLP_ENDPOINT": collector.URL,
	})
	var logs testlog.Buffer
	stopServe := startServe(t, env, "http://"+opsAddr, &logs)
	alice, _ := auth.Mint([]byte(secret), "alice", "student", auth.Claims{}, time.Hour)
	r, _ := http.NewRequest("GET", "http://"+addr+"/student/alice/english/grade", nil)
	r.Header.Set("Authorization", "Bearer "+alice)
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if err := stopServe(); err != nil { // sends the queued span: refused
		t.Fatalf("serve: %v", err)
	}
	found := false
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Errorf("not a JSON log line: %q", line)
			continue
		}
		if msg, _ := m["msg"].(string); strings.Contains(msg, "OpenTelemetry") {
			errText, _ := m["err"].(string)
			found = m["level"] == "WARN" && strings.Contains(errText, "400")
		}
	}
	if !found {
		t.Errorf("no JSON warning with the collector's refusal (400):\n%s", logs.String())
	}
}
