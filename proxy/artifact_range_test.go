package proxy

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// getWith is fixture.get with extra request headers.
func (f *fixture) getWith(sub, target string, header map[string]string) *httptest.ResponseRecorder {
	f.t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	req.Header.Set("Authorization", callerToken)
	req.Header.Set("X-Test-Sub", sub)
	req.Header.Set("X-Test-Role", "developer")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	f.e.ServeHTTP(rec, req)
	return rec
}

// A download cut short resumes through the facade: Range and If-Range go
// upstream once the caller is authorized, the 206 carries Content-Range,
// Accept-Ranges and the validators, and the two parts make the whole file.
func TestArtifactDownloadResumes(t *testing.T) {
	f := newFixture(t, options{})
	const target = "/browse/PROJ-CORE-6/artifact/shared/core-service.jar/"
	whole := f.get("carol", target)
	lastModified := whole.Header().Get("Last-Modified")
	if whole.Code != http.StatusOK || lastModified == "" || whole.Header().Get("Accept-Ranges") != "bytes" {
		t.Fatalf("whole file: %d, Last-Modified %q, Accept-Ranges %q", whole.Code, lastModified, whole.Header().Get("Accept-Ranges"))
	}
	size := whole.Body.Len()
	cut := size / 2
	first := f.getWith("carol", target, map[string]string{"Range": "bytes=0-" + strconv.Itoa(cut-1)})
	rest := f.getWith("carol", target, map[string]string{"Range": "bytes=" + strconv.Itoa(cut) + "-", "If-Range": lastModified})
	for _, part := range []*httptest.ResponseRecorder{first, rest} {
		if part.Code != http.StatusPartialContent || part.Header().Get("Content-Length") != strconv.Itoa(part.Body.Len()) ||
			!strings.HasPrefix(part.Header().Get("Content-Disposition"), "attachment;") {
			t.Fatalf("part: %d, %d bytes, headers %v", part.Code, part.Body.Len(), part.Header())
		}
	}
	if want := "bytes " + strconv.Itoa(cut) + "-" + strconv.Itoa(size-1) + "/" + strconv.Itoa(size); rest.Header().Get("Content-Range") != want {
		t.Fatalf("Content-Range %q; want %q", rest.Header().Get("Content-Range"), want)
	}
	if !bytes.Equal(append(first.Body.Bytes(), rest.Body.Bytes()...), whole.Body.Bytes()) {
		t.Fatal("the resumed download's bytes differ from the whole file's")
	}
	// Several ranges, or a malformed one: the whole file.
	for _, r := range []string{"bytes=0-1,4-5", "bytes=x-", "lines=1-2"} {
		if rec := f.getWith("carol", target, map[string]string{"Range": r}); rec.Code != http.StatusOK || rec.Body.Len() != size {
			t.Errorf("Range %q: %d, %d bytes; want the whole file", r, rec.Code, rec.Body.Len())
		}
	}
}

// Beyond the end of the file: 416 with the file's size, as Bamboo answers,
// in a problem body that carries no upstream text.
func TestArtifactRangeBeyondTheEnd(t *testing.T) {
	f := newFixture(t, options{})
	const target = "/browse/PROJ-CORE-6/artifact/shared/core-service.jar/"
	size := f.get("carol", target).Body.Len()
	rec := f.getWith("carol", target, map[string]string{"Range": "bytes=" + strconv.Itoa(size) + "-"})
	if rec.Code != http.StatusRequestedRangeNotSatisfiable || rec.Header().Get("Content-Range") != "bytes */"+strconv.Itoa(size) {
		t.Fatalf("beyond the end: %d, Content-Range %q", rec.Code, rec.Header().Get("Content-Range"))
	}
	if problemDetail(t, rec) == "" || strings.Contains(rec.Body.String(), "overlap") {
		t.Fatalf("416 body: %s", rec.Body)
	}
}

// A Range changes nothing for a caller who may not download: 403, and no
// upstream call.
func TestArtifactRangeRefusedBeforeAnyUpstreamCall(t *testing.T) {
	f := newFixture(t, options{})
	rec := f.getWith("dave", "/browse/PROJ-CORE-6/artifact/shared/core-service.jar/", map[string]string{"Range": "bytes=0-1"})
	if rec.Code != http.StatusForbidden || f.calls("/") != 0 {
		t.Fatalf("dave with a Range: %d, %d upstream calls", rec.Code, f.calls("/"))
	}
}
