package proxy

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/facade-dev/facade/upstream/bambootest"
)

func TestArtifactDownloadAuthorized(t *testing.T) {
	f := newFixture(t, options{})
	doc, _ := f.getOK("carol", coreResults)
	artifacts := list(path(list(path(doc, "results", "result"))[0], "artifacts", "artifact"))
	for _, a := range artifacts {
		href, _ := path(a, "link", "href").(string)
		name, _ := path(a, "name").(string)
		// Follow the rewritten link, as a client would.
		rec := f.get("carol", strings.TrimPrefix(href, "http://example.com"))
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: %d %s", href, rec.Code, rec.Body)
		}
		if size, ok := path(a, "size").(float64); ok && rec.Body.Len() != int(size) {
			t.Errorf("%s: %d bytes, listed as %v", name, rec.Body.Len(), size)
		}
		if cl := rec.Header().Get("Content-Length"); cl != strconv.Itoa(rec.Body.Len()) {
			t.Errorf("%s: Content-Length %q for %d bytes", name, cl, rec.Body.Len())
		}
		if cd := rec.Header().Get("Content-Disposition"); !strings.HasPrefix(cd, `attachment; filename="`) {
			t.Errorf("%s: Content-Disposition %q", name, cd)
		}
	}
	// test-report.xml is application/xml upstream: active content in a
	// browser, so it is sent as a download.
	rec := f.get("carol", "/browse/PROJ-CORE-6/artifact/JOB1/test-report.xml/")
	if ct := rec.Header().Get("Content-Type"); ct != "application/octet-stream" {
		t.Errorf("XML artifact Content-Type %q, want application/octet-stream", ct)
	}
	if cd := rec.Header().Get("Content-Disposition"); cd != `attachment; filename="test-report.xml"` {
		t.Errorf("Content-Disposition %q", cd)
	}
	if !bytes.Contains(rec.Body.Bytes(), []byte("<testsuite")) {
		t.Error("report content not served")
	}
	log := f.get("carol", "/download/PROJ-CORE-JOB1/build_logs/PROJ-CORE-JOB1-6.log")
	if ct := log.Header().Get("Content-Type"); ct != "text/plain; charset=utf-8" {
		t.Errorf("build log Content-Type %q", ct)
	}
	if missing := f.get("carol", "/browse/PROJ-CORE-6/artifact/JOB1/nope.zip/"); missing.Code != http.StatusNotFound ||
		strings.Contains(missing.Body.String(), "Artifact not found") {
		t.Errorf("absent artifact: %d %s, want 404 without upstream text", missing.Code, missing.Body)
	}
}

func TestArtifactRefusedBeforeAnyUpstreamCall(t *testing.T) {
	f := newFixture(t, options{})
	for _, target := range []string{
		"/browse/PROJ-CORE-6/artifact/shared/core-service.jar/",
		"/browse/PROJ-CORE-JOB1-6/artifact/JOB1/test-report.xml/",
		"/download/PROJ-CORE-JOB1/build_logs/PROJ-CORE-JOB1-6.log",
		"/browse/PROJ-NOSUCH-1/artifact/shared/x/",
	} {
		rec := f.get("dave", target)
		if rec.Code != http.StatusForbidden {
			t.Errorf("%s as dave: %d, want 403", target, rec.Code)
		}
	}
	if n := f.calls("/"); n != 0 {
		t.Errorf("%d upstream calls for refused downloads", n)
	}
	if n := strings.Count(f.logs.String(), "audit=true principal=dave role=developer op=download_artifact target=plan:PROJ-"); n != 4 {
		t.Errorf("%d audit lines for 4 refusals:\n%s", n, f.logs)
	}
}

func TestArtifactPathTricksAreRejected(t *testing.T) {
	f := newFixture(t, options{})
	for _, target := range []string{
		"/browse/PROJ-CORE-6/artifact/shared/..%2F..%2Frest%2Fapi/",
		"/browse/PROJ-CORE-6/artifact/shared/%2e%2e/%2e%2e/rest/api/latest/project",
		"/browse/PROJ-CORE-6/artifact/shared/../../../rest/api/latest/project",
		"/browse/PROJ-CORE-6/artifact/JOB1/a%5Cb/",
		"/browse/PROJ-CORE-6/artifact/JOB1/x%3Fos_authType=basic/",
		"/browse/PROJ-CORE-6/artifact/JOB1/x%23y/",
		"/browse/PROJ-CORE-6/artifact/JOB1/x%25y/",
		"/browse/PROJ-CORE-6/artifact/JOB1/x%0d%0aSet-Cookie:a/",
		"/browse/PROJ-CORE-6/artifact/JOB1/x%00.log",
		"/browse/PROJ-CORE-6/artifact/JOB1//x/",
		"/browse/PROJ-CORE-6/artifact/",
		"/browse/PROJ-CORE-6/artifact/JOB1/" + strings.Repeat("a", 256) + "/",
		"/browse/proj-core-6/artifact/JOB1/test-report.xml/",
		"/browse/PROJ-CORE/artifact/JOB1/test-report.xml/",
		"/browse/PROJ-CORE-X/artifact/JOB1/test-report.xml/",
		"/browse/PROJ%2DCORE-6/artifact/JOB1/test-report.xml/",
		"/download/PROJ/build_logs/x.log",
		"/download/PROJ-CORE-JOB1-6-7/build_logs/x.log",
		"/download/PROJ-CORE-JOB1/",
		"/download/PROJ-CORE-JOB1/build_logs/" + strings.Repeat("a/", 40) + "x.log",
	} {
		rec := f.get("carol", target)
		if rec.Code != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", target, rec.Code)
		}
	}
	if n := f.calls("/"); n != 0 {
		t.Errorf("%d upstream calls for refused paths", n)
	}
}

// discardWriter is a ResponseWriter that counts and drops the body, so the
// test itself holds no copy of the file.
type discardWriter struct {
	header http.Header
	status int
	n      atomic.Int64
}

func (w *discardWriter) Header() http.Header { return w.header }
func (w *discardWriter) WriteHeader(s int)   { w.status = s }
func (w *discardWriter) Write(p []byte) (int, error) {
	w.n.Add(int64(len(p)))
	return len(p), nil
}

func TestLargeArtifactStreamsInBoundedMemory(t *testing.T) {
	f := newFixture(t, options{})
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)

	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	})

	req := httptest.NewRequest(http.MethodGet, "/browse/INFRA-IMAGES-3/artifact/shared/base-image.img/", nil)
	req.Header.Set("X-Test-Sub", "erin")
	w := &discardWriter{header: http.Header{}}
	f.e.ServeHTTP(w, req)
	close(done)
	wg.Wait()

	if w.status != http.StatusOK || w.n.Load() != bambootest.DemoLargeArtifactSize {
		t.Fatalf("status %d, %d bytes, want 200 and %d", w.status, w.n.Load(), bambootest.DemoLargeArtifactSize)
	}
	if cl := w.header.Get("Content-Length"); cl != strconv.Itoa(bambootest.DemoLargeArtifactSize) {
		t.Errorf("Content-Length %q", cl)
	}
	growth := int64(peak.Load()) - int64(base.HeapInuse)
	t.Logf("streamed %d MB; peak HeapInuse growth %.1f MB", w.n.Load()>>20, float64(growth)/(1<<20))
	if growth >= 32<<20 {
		t.Errorf("HeapInuse grew by %d MB while streaming, want < 32 MB", growth>>20)
	}
}

func TestAttachmentHeaderIsSanitised(t *testing.T) {
	cases := map[string]string{
		"report.xml":        `attachment; filename="report.xml"`,
		`a"b\c/d.txt`:       `attachment; filename="abcd.txt"`,
		"résumé v2.pdf":     `attachment; filename="r_sum__v2.pdf"; filename*=UTF-8''r%C3%A9sum%C3%A9%20v2.pdf`,
		"..":                `attachment; filename="artifact"`,
		"line\r\nbreak.log": `attachment; filename="linebreak.log"`,
		"":                  `attachment; filename="artifact"`,
		"semi;colon=1.txt":  `attachment; filename="semi_colon_1.txt"; filename*=UTF-8''semi%3Bcolon%3D1.txt`,
		// The first and last letters and digits stay as they are in both
		// forms, and so does RFC 5987's first attr-char, "!".
		"azAZ09.txt":  `attachment; filename="azAZ09.txt"`,
		"azAZ09 é!":   `attachment; filename="azAZ09___"; filename*=UTF-8''azAZ09%20%C3%A9!`,
		"del\x7f.txt": `attachment; filename="del.txt"`,
		// A name too long for a file system is cut at 255 bytes, never
		// inside a character.
		strings.Repeat("x", 254) + "é": `attachment; filename="` + strings.Repeat("x", 254) + `"`,
	}
	for name, want := range cases {
		if got := attachment(name); got != want {
			t.Errorf("attachment(%q) = %s, want %s", name, got, want)
		}
	}
	types := map[string]string{
		"text/html; charset=utf-8":              "application/octet-stream",
		"image/svg+xml":                         "application/octet-stream",
		"application/zip":                       "application/zip",
		"text/plain; charset=utf-8; x=1":        "text/plain; charset=utf-8",
		"":                                      "application/octet-stream",
		"nonsense":                              "application/octet-stream",
		"multipart/x-mixed-replace; boundary=a": "application/octet-stream",
		// Every XML type renders as a page with its stylesheets and scripts.
		"application/rss+xml":                 "application/octet-stream",
		"application/vnd.ms-excel.sheet+xml":  "application/octet-stream",
		"application/atom+xml; charset=utf-8": "application/octet-stream",
		"text/xml":                            "application/octet-stream",
		"application/x-whatever/xml":          "application/octet-stream",
		"application/javascript":              "application/octet-stream",
		"application/json":                    "application/json",
	}
	for in, want := range types {
		if got := safeContentType(in); got != want {
			t.Errorf("safeContentType(%q) = %q, want %q", in, got, want)
		}
	}
}

// The saved file takes the name Bamboo gives the artifact, not the link's
// last segment: "notes v1.txt", linked as notes-v1.txt.
func TestDownloadKeepsBamboosFileName(t *testing.T) {
	f := newFixture(t, options{})
	f.bamboo.AddResult("PROJ-CORE", 97, "Successful", bambootest.Artifact{Name: "notes v1.txt", ProducerJobKey: "JOB1", Content: []byte("notes\n")})
	rec := f.get("carol", "/browse/PROJ-CORE-97/artifact/JOB1/notes-v1.txt/")
	want := `attachment; filename="notes_v1.txt"; filename*=UTF-8''notes%20v1.txt`
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Disposition") != want {
		t.Fatalf("download: %d, Content-Disposition %q, want %q", rec.Code, rec.Header().Get("Content-Disposition"), want)
	}
}

// An empty artifact is a download of 0 bytes that says so, not one of
// unknown length.
func TestEmptyArtifactSaysItsLength(t *testing.T) {
	f := newFixture(t, options{})
	f.bamboo.AddResult("PROJ-CORE", 98, "Successful", bambootest.Artifact{Name: "empty.txt", ProducerJobKey: "JOB1", Content: []byte{}})
	rec := f.get("carol", "/browse/PROJ-CORE-98/artifact/JOB1/empty.txt/")
	if rec.Code != http.StatusOK || rec.Body.Len() != 0 || rec.Header().Get("Content-Length") != "0" {
		t.Fatalf("empty artifact: %d, %d bytes, Content-Length %q", rec.Code, rec.Body.Len(), rec.Header().Get("Content-Length"))
	}
}

// TestDirectoryListingNeverReachesAClient: an HTML answer to a
// directory-form link (Bamboo's listing page, full of links to its own
// host) is a 502; an HTML file asked for by its name is a download.
func TestDirectoryListingNeverReachesAClient(t *testing.T) {
	f := newFixture(t, options{})
	page := []byte(`<html><a href="` + f.upstreamTS.URL + `/browse/PROJ-CORE-6/artifact/JOB1/site/index.html">index</a></html>`)
	f.bamboo.AddResult("PROJ-CORE", 99, "Successful",
		bambootest.Artifact{Name: "site", ProducerJobKey: "JOB1", Content: page, ContentType: "text/html; charset=utf-8"})
	rec := f.get("carol", "/browse/PROJ-CORE-99/artifact/JOB1/site/")
	if rec.Code != http.StatusBadGateway || strings.Contains(rec.Body.String(), "href") {
		t.Fatalf("HTML listing: %d %s", rec.Code, rec.Body)
	}
	rec = f.get("carol", "/browse/PROJ-CORE-99/artifact/JOB1/site")
	if rec.Code == http.StatusOK && rec.Header().Get("Content-Type") != "application/octet-stream" {
		t.Fatalf("HTML file served as %q", rec.Header().Get("Content-Type"))
	}
}
