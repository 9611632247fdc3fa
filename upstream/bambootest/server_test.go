package bambootest_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/facade-dev/facade/upstream/bambootest"
)

// get sends a GET with the default token and Accept: application/json.
func get(t *testing.T, url string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+bambootest.DefaultToken)
	req.Header.Set("Accept", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		if header[i+1] == "" {
			req.Header.Del(header[i])
		} else {
			req.Header.Set(header[i], header[i+1])
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

func decode(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, body)
	}
	return v
}

// at walks a decoded document: at(doc, "projects", "project", 0, "key").
func at(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			v = v.(map[string]any)[k]
		case int:
			v = v.([]any)[k]
		}
	}
	return v
}

func demo(t *testing.T) (*bambootest.Server, string) {
	s, ts := bambootest.NewTestServer(t)
	bambootest.DemoData(s)
	return s, ts.URL
}

func TestProjectListShapeAndPaging(t *testing.T) {
	_, base := demo(t)
	_, body := get(t, base+"/rest/api/latest/project.json?max-result=2&start-index=1")
	doc := decode(t, body)
	if at(doc, "projects", "size") != 4.0 || at(doc, "projects", "start-index") != 1.0 || at(doc, "projects", "max-result") != 2.0 {
		t.Fatalf("paging numbers: %s", body)
	}
	if at(doc, "projects", "project", 0, "key") != "WEB" || at(doc, "link", "href") != base+"/rest/api/latest/project" {
		t.Fatalf("page content: %s", body)
	}
	plans := at(doc, "projects", "project", 0, "plans").(map[string]any)
	if _, listed := plans["plan"]; listed || plans["size"] != 2.0 {
		t.Fatalf("plans should be collapsed: %v", plans)
	}
	if _, has := at(doc, "projects", "project", 1).(map[string]any)["description"]; has {
		t.Fatal("MOBILE has no description; the member must be absent")
	}
}

func TestProjectListExpandedPlans(t *testing.T) {
	_, base := demo(t)
	_, body := get(t, base+"/rest/api/latest/project?expand=projects.project.plans&max-results=1")
	doc := decode(t, body)
	plan := at(doc, "projects", "project", 0, "plans", "plan", 0).(map[string]any)
	want := map[string]any{"key": "PROJ-CORE", "shortKey": "CORE", "shortName": "Core Service",
		"name": "Core Platform - Core Service", "enabled": true, "type": "chain"}
	for k, v := range want {
		if plan[k] != v {
			t.Fatalf("plan %s = %v, want %v", k, plan[k], v)
		}
	}
	if at(plan, "planKey", "key") != "PROJ-CORE" || at(plan, "link", "href") != base+"/rest/api/latest/plan/PROJ-CORE" {
		t.Fatalf("plan links: %v", plan)
	}
}

func TestResultListShapeAndArtifacts(t *testing.T) {
	_, base := demo(t)
	_, body := get(t, base+"/rest/api/latest/result/PROJ-CORE.json?expand=results.result.artifacts&max-results=2&start-index=1")
	doc := decode(t, body)
	if at(doc, "results", "size") != 2.0 || at(doc, "results", "start-index") != 1.0 {
		t.Fatalf("on /result size is the count returned: %s", body)
	}
	r := at(doc, "results", "result", 0).(map[string]any)
	if r["key"] != "PROJ-CORE-5" || r["buildNumber"] != 5.0 || r["buildState"] != "Successful" ||
		r["lifeCycleState"] != "Finished" || at(r, "planResultKey", "entityKey", "key") != "PROJ-CORE" {
		t.Fatalf("result: %v", r)
	}
	artifacts := at(r, "artifacts", "artifact").([]any)
	log, jar := artifacts[0].(map[string]any), artifacts[2].(map[string]any)
	if log["name"] != "Build log" || log["producerJobKey"] != "PROJ-CORE-JOB1-5" ||
		at(log, "link", "href") != base+"/download/PROJ-CORE-JOB1/build_logs/PROJ-CORE-JOB1-5.log" {
		t.Fatalf("build log entry: %v", log)
	}
	if _, has := log["size"]; has {
		t.Fatal("a build log has no size")
	}
	if jar["name"] != "core-service.jar" || jar["shared"] != true || jar["producerJobKey"] != "PROJ-CORE-PKG-5" ||
		at(jar, "link", "href") != base+"/browse/PROJ-CORE-5/artifact/shared/core-service.jar/" || jar["size"].(float64) <= 0 {
		t.Fatalf("jar entry: %v", jar)
	}

	_, body = get(t, base+"/rest/api/latest/result/PROJ-CORE?max-results=1")
	collapsed := at(decode(t, body), "results", "result", 0, "artifacts").(map[string]any)
	if _, listed := collapsed["artifact"]; listed || collapsed["size"] != 3.0 {
		t.Fatalf("artifacts should be collapsed: %v", collapsed)
	}
}

func TestUnknownPlanIs404WithBambooBody(t *testing.T) {
	_, base := demo(t)
	resp, body := get(t, base+"/rest/api/latest/result/PROJ-NOPE.json")
	if resp.StatusCode != 404 || at(decode(t, body), "status-code") != 404.0 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
}

func TestXMLUnlessJSONIsAsked(t *testing.T) {
	_, base := demo(t)
	resp, body := get(t, base+"/rest/api/latest/project", "Accept", "")
	if resp.Header.Get("Content-Type") != "application/xml" || !bytes.HasPrefix(body, []byte("<?xml")) {
		t.Fatalf("%s: %s", resp.Header.Get("Content-Type"), body)
	}
	resp, _ = get(t, base+"/rest/api/latest/project.json", "Accept", "")
	if resp.Header.Get("Content-Type") != "application/json" {
		t.Fatal(".json suffix should give JSON")
	}
}

func TestTokenRequired(t *testing.T) {
	_, base := demo(t)
	for _, auth := range []string{"", "Bearer wrong", "Basic " + bambootest.DefaultToken, bambootest.DefaultToken} {
		resp, body := get(t, base+"/rest/api/latest/project.json", "Authorization", auth)
		if resp.StatusCode != 401 || at(decode(t, body), "status-code") != 401.0 {
			t.Fatalf("Authorization %q: %d %s", auth, resp.StatusCode, body)
		}
	}
	s, ts := bambootest.NewTestServer(t, bambootest.WithToken("other"))
	bambootest.DemoData(s)
	if resp, _ := get(t, ts.URL+"/rest/api/latest/project.json", "Authorization", "Bearer other"); resp.StatusCode != 200 {
		t.Fatalf("configured token refused: %d", resp.StatusCode)
	}
}

func TestArtifactDownload(t *testing.T) {
	s, base := demo(t)
	content := []byte("hello artifact")
	s.AddResult("WEB-PR", 9, "Successful", bambootest.Artifact{Name: "site report", ProducerJobKey: "SITE", Content: content})

	resp, body := get(t, base+"/browse/WEB-PR-9/artifact/SITE/site-report/")
	if resp.StatusCode != 200 || !bytes.Equal(body, content) {
		t.Fatalf("%d %q", resp.StatusCode, body)
	}
	if resp.Header.Get("Content-Length") != "14" || resp.Header.Get("Content-Disposition") != `attachment; filename="site report"` ||
		resp.Header.Get("Content-Type") != "application/octet-stream" {
		t.Fatalf("headers: %v", resp.Header)
	}
	resp, body = get(t, base+"/browse/WEB-PR-9/artifact/SITE/site-report/sub/index.html", "Range", "bytes=6-")
	if resp.StatusCode != 206 || string(body) != "artifact" || !strings.Contains(resp.Header.Get("Content-Disposition"), "index.html") {
		t.Fatalf("range under the directory: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	for _, path := range []string{"/browse/WEB-PR-9/artifact/OTHER/site-report/", "/browse/WEB-PR-8/artifact/SITE/site-report/", "/browse/WEB-PR-9/artifact/shared/site-report/"} {
		if resp, _ := get(t, base+path); resp.StatusCode != 404 {
			t.Fatalf("%s: %d", path, resp.StatusCode)
		}
	}
}

func TestLargeArtifactIsGeneratedWithExactLength(t *testing.T) {
	_, base := demo(t)
	req, _ := http.NewRequest(http.MethodGet, base+"/browse/INFRA-IMAGES-2/artifact/shared/base-image.img/", nil)
	req.Header.Set("Authorization", "Bearer "+bambootest.DefaultToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil || n != bambootest.DemoLargeArtifactSize || resp.ContentLength != bambootest.DemoLargeArtifactSize {
		t.Fatalf("got %d bytes (Content-Length %d), err %v", n, resp.ContentLength, err)
	}
}

func TestGeneratedContentReadsAndSeeks(t *testing.T) {
	g := bambootest.GeneratedContent(1000)
	all, _ := io.ReadAll(g)
	if len(all) != 1000 {
		t.Fatalf("%d bytes", len(all))
	}
	if _, err := g.Seek(-10, io.SeekEnd); err != nil {
		t.Fatal(err)
	}
	tail, _ := io.ReadAll(g)
	if !bytes.Equal(tail, all[990:]) {
		t.Fatal("seek then read gives other bytes")
	}
	if _, err := g.Seek(-1, io.SeekStart); err == nil {
		t.Fatal("negative seek accepted")
	}
}

func TestBuildLogDownload(t *testing.T) {
	_, base := demo(t)
	resp, body := get(t, base+"/download/MOBILE-IOS-JOB1/build_logs/MOBILE-IOS-JOB1-3.log")
	if resp.StatusCode != 200 || !bytes.Contains(body, []byte("MOBILE-IOS-3 job JOB1")) {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	if resp, _ := get(t, base+"/download/MOBILE-IOS-JOB1/build_logs/MOBILE-IOS-JOB1-99.log"); resp.StatusCode != 404 {
		t.Fatalf("missing build: %d", resp.StatusCode)
	}
}

func TestFaultInjection(t *testing.T) {
	s, base := demo(t)
	url := base + "/rest/api/latest/project.json"

	s.FailNext(2, http.StatusServiceUnavailable)
	for i, want := range []int{503, 503, 200} {
		if resp, _ := get(t, url); resp.StatusCode != want {
			t.Fatalf("call %d: %d, want %d", i, resp.StatusCode, want)
		}
	}
	s.SetFailing(http.StatusInternalServerError)
	if resp, body := get(t, url); resp.StatusCode != 500 || at(decode(t, body), "status-code") != 500.0 {
		t.Fatalf("failing: %d %s", resp.StatusCode, body)
	}
	s.SetFailing(0)
	s.SetGarbage(true)
	if resp, body := get(t, url); resp.StatusCode != 200 || json.Valid(body) {
		t.Fatalf("garbage: %d %s", resp.StatusCode, body)
	}
	s.SetGarbage(false)

	s.SetHang(true)
	s.ResetCalls()
	answered := make(chan int, 1)
	go func() {
		resp, err := http.Get(url) // no token: answers 401 once released
		if err == nil {
			resp.Body.Close()
			answered <- resp.StatusCode
		}
	}()
	for s.CallCount("/rest/api/latest/project") < 1 {
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case code := <-answered:
		t.Fatalf("a hung request answered %d", code)
	default:
	}
	s.SetHang(false)
	if code := <-answered; code != 401 {
		t.Fatalf("released request answered %d", code)
	}
}

func TestCallsAreRecorded(t *testing.T) {
	s, base := demo(t)
	get(t, base+"/rest/api/latest/result/WEB-NIGHTLY.json?max-results=3")
	get(t, base+"/rest/api/latest/project.json")
	calls := s.Calls()
	if len(calls) != 2 || s.CallCount("/rest/api/latest/result/") != 1 {
		t.Fatalf("%d calls recorded", len(calls))
	}
	c := calls[0]
	if c.Method != "GET" || c.Path != "/rest/api/latest/result/WEB-NIGHTLY.json" || c.RawQuery != "max-results=3" ||
		c.Header.Get("Authorization") != "Bearer "+bambootest.DefaultToken {
		t.Fatalf("recorded %+v", c)
	}
	s.ResetCalls()
	if len(s.Calls()) != 0 {
		t.Fatal("ResetCalls kept calls")
	}
}

func TestDemoData(t *testing.T) {
	_, base := demo(t)
	_, body := get(t, base+"/rest/api/latest/project.json?expand=projects.project.plans")
	doc := decode(t, body)
	var keys []string
	for _, p := range at(doc, "projects", "project").([]any) {
		keys = append(keys, p.(map[string]any)["key"].(string))
		if n := len(at(p, "plans", "plan").([]any)); n < 2 || n > 3 {
			t.Fatalf("project %v has %d plans", p, n)
		}
	}
	if strings.Join(keys, ",") != "PROJ,WEB,MOBILE,INFRA" {
		t.Fatalf("projects %v", keys)
	}
	_, body = get(t, base+"/rest/api/latest/result/WEB-NIGHTLY.json")
	states := map[any]int{}
	for _, r := range at(decode(t, body), "results", "result").([]any) {
		states[r.(map[string]any)["state"]]++
	}
	if states["Successful"] == 0 || states["Failed"] == 0 {
		t.Fatalf("WEB-NIGHTLY states %v", states)
	}
}

func TestLinksFollowConfiguredBaseURL(t *testing.T) {
	s, ts := bambootest.NewTestServer(t, bambootest.WithBaseURL("https://bamboo.example.com/bamboo/"))
	bambootest.DemoData(s)
	_, body := get(t, ts.URL+"/rest/api/latest/result/PROJ-LIB.json?expand=results.result.artifacts")
	if href := at(decode(t, body), "results", "result", 0, "artifacts", "artifact", 1, "link", "href"); href != "https://bamboo.example.com/bamboo/browse/PROJ-LIB-4/artifact/JOB1/test-report.xml/" {
		t.Fatalf("href %v", href)
	}
}

// The server is plain code for `facade demo`: mounted as a handler.
func TestHandlerMounts(t *testing.T) {
	s := bambootest.New(bambootest.WithToken("t"))
	bambootest.DemoData(s)
	mux := http.NewServeMux()
	mux.Handle("/bamboo/", http.StripPrefix("/bamboo", s.Handler))
	req, _ := http.NewRequest(http.MethodGet, "/bamboo/rest/api/latest/project.json", nil)
	req.Header.Set("Authorization", "Bearer t")
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	if rec.Code != 200 || !json.Valid(rec.Body.Bytes()) {
		t.Fatalf("%d %s", rec.Code, rec.Body.String())
	}
}
