package server_test

import (
	"strconv"
	"testing"
)

// TestArtifactDownloadResumesThroughTheService: a download resumes with
// Range through the whole pipeline (206, Content-Range), and a range
// beyond the end is 416 with the file's size and its problem code.
func TestArtifactDownloadResumesThroughTheService(t *testing.T) {
	e := newEnv(t, withBuilds())
	carol := token(t, "carol", "developer")
	const path = "/browse/PROJ-CORE-6/artifact/shared/core-service.jar/core-service.jar"
	whole := e.do(req{method: "GET", path: path, token: carol})
	size := len(whole.body)
	if whole.status != 200 || size < 20 || whole.header.Get("Accept-Ranges") != "bytes" {
		t.Fatalf("whole file: %d, %d bytes, Accept-Ranges %q", whole.status, size, whole.header.Get("Accept-Ranges"))
	}
	rest := e.do(req{method: "GET", path: path, token: carol, header: map[string]string{
		"Range": "bytes=10-", "If-Range": whole.header.Get("Last-Modified")}})
	if rest.status != 206 || rest.body != whole.body[10:] || rest.header.Get("Content-Range") != "bytes 10-"+strconv.Itoa(size-1)+"/"+strconv.Itoa(size) {
		t.Fatalf("resumed: %d, Content-Range %q, %d bytes", rest.status, rest.header.Get("Content-Range"), len(rest.body))
	}
	beyond := e.do(req{method: "GET", path: path, token: carol, header: map[string]string{"Range": "bytes=" + strconv.Itoa(size) + "-"}})
	if beyond.status != 416 || beyond.header.Get("Content-Range") != "bytes */"+strconv.Itoa(size) {
		t.Fatalf("beyond the end: %d, Content-Range %q", beyond.status, beyond.header.Get("Content-Range"))
	}
}
