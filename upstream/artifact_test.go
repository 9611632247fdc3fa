package upstream_test

import (
	"context"
	"errors"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	facade "github.com/facade-dev/facade"
	"github.com/facade-dev/facade/upstream"
	"github.com/facade-dev/facade/upstream/bambootest"
)

func TestArtifactStreamsLargeFileInBoundedMemory(t *testing.T) {
	const size = bambootest.DemoLargeArtifactSize
	_, client := newPair(t, upstream.Config{})

	stream, err := client.Artifact(context.Background(), "/browse/INFRA-IMAGES-3/artifact/shared/base-image.img/")
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	if stream.ContentLength != size || stream.Filename != "base-image.img" || stream.ContentType != "application/octet-stream" {
		t.Fatalf("stream metadata: length %d, name %q, type %q", stream.ContentLength, stream.Filename, stream.ContentType)
	}

	baseline := heapInuse()
	sink := &peakHeapWriter{every: 16 << 20, baseline: baseline}
	got := crc32.New(crc32.MakeTable(crc32.Castagnoli))
	n, err := io.Copy(io.MultiWriter(got, sink), stream.Body)
	if err != nil || n != size {
		t.Fatalf("copied %d bytes, err %v; want %d", n, err, size)
	}

	want := crc32.New(crc32.MakeTable(crc32.Castagnoli))
	if _, err := io.Copy(want, bambootest.GeneratedContent(size)); err != nil {
		t.Fatal(err)
	}
	if got.Sum32() != want.Sum32() {
		t.Fatal("streamed bytes differ from the artifact")
	}
	t.Logf("streamed %d MB; heap in use %.1f MB before, peak growth %.2f MB, %d samples", size>>20, float64(baseline)/(1<<20), float64(sink.peak)/(1<<20), sink.samples)
	if sink.peak > 16<<20 {
		t.Fatalf("heap grew by %d MB while streaming: the body is being buffered", sink.peak>>20)
	}
}

func heapInuse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse)
}

// peakHeapWriter samples HeapInuse every `every` bytes written and keeps
// the largest growth over baseline.
type peakHeapWriter struct {
	every, since   int64
	baseline, peak int64
	samples        int
}

func (p *peakHeapWriter) Write(b []byte) (int, error) {
	p.since += int64(len(b))
	if p.since >= p.every {
		p.since = 0
		p.samples++
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		p.peak = max(p.peak, int64(m.HeapInuse)-p.baseline)
	}
	return len(b), nil
}

func TestArtifactMetadataAndEscaping(t *testing.T) {
	bamboo, client := newPair(t, upstream.Config{})
	content := []byte("release notes\n")
	bamboo.AddResult("PROJ-CORE", 7, "Successful", bambootest.Artifact{Name: "notes v1+é.txt", ProducerJobKey: "DOCS", Content: content})

	stream, err := client.Artifact(context.Background(), "/browse/PROJ-CORE-7/artifact/DOCS/notes-v1+é.txt/")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(stream.Body)
	_ = stream.Body.Close()
	if err != nil || string(body) != string(content) {
		t.Fatalf("body %q, err %v", body, err)
	}
	if stream.ContentType != "text/plain; charset=utf-8" || stream.ContentLength != int64(len(content)) || stream.Filename != "notes v1+é.txt" {
		t.Fatalf("metadata: %q %d %q", stream.ContentType, stream.ContentLength, stream.Filename)
	}
	call := bamboo.Calls()[0]
	if call.EscapedPath != "/browse/PROJ-CORE-7/artifact/DOCS/notes-v1+%C3%A9.txt/" {
		t.Fatalf("escaped path %q", call.EscapedPath)
	}
	if call.Header.Get("Authorization") != "Bearer "+serviceToken {
		t.Fatal("artifact call without the service token")
	}
}

// The file name Bamboo gives in Content-Disposition is the stream's
// Filename, without the quotes and control characters that would break
// the attachment header it goes into.
func TestArtifactFilenameDropsQuotes(t *testing.T) {
	bamboo, client := newPair(t, upstream.Config{})
	bamboo.AddResult("PROJ-CORE", 8, "Successful", bambootest.Artifact{Name: `say "hi".txt`, ProducerJobKey: "DOCS", Content: []byte("hi\n")})
	stream, err := client.Artifact(context.Background(), `/browse/PROJ-CORE-8/artifact/DOCS/say-"hi".txt/`)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	if stream.Filename != "say hi.txt" {
		t.Fatalf("file name %q, want %q", stream.Filename, "say hi.txt")
	}
}

func TestArtifactBuildLog(t *testing.T) {
	_, client := newPair(t, upstream.Config{})
	stream, err := client.Artifact(context.Background(), "/download/WEB-NIGHTLY-JOB1/build_logs/WEB-NIGHTLY-JOB1-2.log")
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	if stream.Filename != "WEB-NIGHTLY-JOB1-2.log" || stream.ContentType != "text/plain; charset=utf-8" {
		t.Fatalf("metadata: %q %q", stream.Filename, stream.ContentType)
	}
}

func TestArtifactNotFound(t *testing.T) {
	_, client := newPair(t, upstream.Config{})
	_, err := client.Artifact(context.Background(), "/browse/PROJ-CORE-1/artifact/JOB1/missing.bin/")
	wantError(t, err, facade.ErrNotFound)
}

func TestArtifactRefusesPathsOutsideArtifactRoutes(t *testing.T) {
	bamboo, client := newPair(t, upstream.Config{})
	for _, path := range []string{
		"", "browse/X", "/rest/api/latest/project.json", "/browse/../rest/api/latest/project",
		"/browse/A/./b", "/browse//x", "/browse/A/x?os_authType=basic", "/browse/A/x#f",
		"/browse/A/%2e%2e/x", `/browse/A\..\x`, "/download/A/b\x00c", "https://elsewhere/browse/x",
	} {
		_, err := client.Artifact(context.Background(), path)
		wantError(t, err, facade.ErrBadIdentifier)
	}
	if n := len(bamboo.Calls()); n != 0 {
		t.Fatalf("refused paths produced %d upstream calls", n)
	}
}

// A body that starts and then stops must fail its Read with ErrUpstreamTimeout
// after Timeout of silence, not hang the download.
func TestArtifactStalledBodyTimesOut(t *testing.T) {
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		_, _ = w.Write(make([]byte, 100))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(ts.Close)
	t.Cleanup(func() { close(release) })
	// The budget also covers the headers and the first 100 bytes, which a
	// loaded machine may take a while to deliver: 2 s, not a few hundred ms.
	client, err := upstream.New(upstream.Config{BaseURL: ts.URL, Timeout: 2 * time.Second, Log: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	stream, err := client.Artifact(context.Background(), "/browse/A-B-1/artifact/JOB1/x/")
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	n, err := io.Copy(io.Discard, stream.Body)
	var fe *facade.Error
	if n != 100 || !errors.As(err, &fe) || fe.Code != facade.ErrUpstreamTimeout.Code {
		t.Fatalf("read %d bytes, err %v; want 100 then ErrUpstreamTimeout", n, err)
	}
}

// A download that keeps making progress may last longer than Timeout. The
// server sends a byte every 20 ms until the test has read for longer than
// Timeout, measured from a clock reading taken after the call returned (so
// after the watchdog started): the download always outlasts Timeout, however
// slow the machine, and only a gap of a whole Timeout between bytes fails.
// Timeout is 2 s, not 1: on a 2-core machine at load 20 the sender was
// once held off for a whole second (9 bytes in 2.08 s).
func TestArtifactSlowButSteadyDownloadOutlastsTimeout(t *testing.T) {
	const timeout, every = 2 * time.Second, 20 * time.Millisecond
	stop := make(chan struct{})
	sent := make(chan int, 1)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := 0
		defer func() { sent <- n }()
		for {
			if _, err := w.Write([]byte{'x'}); err != nil {
				return
			}
			n++
			w.(http.Flusher).Flush()
			select {
			case <-stop:
				return
			case <-r.Context().Done():
				return
			case <-time.After(every):
			}
		}
	}))
	t.Cleanup(ts.Close)
	client, err := upstream.New(upstream.Config{BaseURL: ts.URL, Timeout: timeout, Log: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	stream, err := client.Artifact(context.Background(), "/download/A-B-J/build_logs/A-B-J-1.log")
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	started := time.Now()
	n, buf, stopped := 0, make([]byte, 64), false
	for {
		if !stopped && time.Since(started) > timeout+timeout/2 {
			close(stop)
			stopped = true
		}
		m, err := stream.Body.Read(buf)
		n += m
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("read %d bytes over %v, then %v", n, time.Since(started).Round(time.Millisecond), err)
		}
	}
	if want := <-sent; n != want {
		t.Fatalf("read %d of the %d bytes sent", n, want)
	}
}

func TestArtifactUpstreamFailureIsBadGateway(t *testing.T) {
	bamboo, client := newPair(t, upstream.Config{Retries: 1})
	bamboo.SetFailing(http.StatusInternalServerError)
	_, err := client.Artifact(context.Background(), "/browse/PROJ-CORE-1/artifact/JOB1/test-report.xml/")
	wantError(t, err, facade.ErrUpstreamBad)
	if n := len(bamboo.Calls()); n != 2 {
		t.Fatalf("want 2 attempts, got %d", n)
	}
}
