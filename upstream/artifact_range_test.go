package upstream_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	facade "github.com/facade-dev/facade"
	"github.com/facade-dev/facade/upstream"
)

func TestParseRangePassesOneWellFormedByteRangeOnly(t *testing.T) {
	date := "Mon, 23 Nov 2026 10:00:00 GMT"
	for _, c := range []struct {
		rng, ifRange string
		want         upstream.Range
	}{
		{"bytes=0-99", "", upstream.Range{Bytes: "0-99"}},
		{"bytes=100-", "", upstream.Range{Bytes: "100-"}},
		{"bytes=-100", "", upstream.Range{Bytes: "-100"}},
		{"bytes= 5-5 ", "", upstream.Range{Bytes: "5-5"}},
		{"bytes=9223372036854775806-9223372036854775807", "", upstream.Range{Bytes: "9223372036854775806-9223372036854775807"}},
		{"bytes=0-99", `"v1"`, upstream.Range{Bytes: "0-99", IfRange: `"v1"`}},
		{"bytes=0-99", date, upstream.Range{Bytes: "0-99", IfRange: date}},
		// Everything else asks for the whole file.
		{"", "", upstream.Range{}},
		{"", `"v1"`, upstream.Range{}},                       // If-Range alone means nothing
		{"bytes=0-1,5-6", "", upstream.Range{}},              // several ranges
		{"bytes=0-1, 5-6", "", upstream.Range{}},             // several ranges
		{"items=0-1", "", upstream.Range{}},                  // another unit
		{"Bytes=0-1", "", upstream.Range{}},                  // units are case-sensitive tokens here
		{"bytes=5-4", "", upstream.Range{}},                  // backwards
		{"bytes=-0", "", upstream.Range{}},                   // an empty suffix
		{"bytes=-", "", upstream.Range{}},                    // nothing
		{"bytes=a-b", "", upstream.Range{}},                  // not numbers
		{"bytes=+1-2", "", upstream.Range{}},                 // a sign
		{"bytes=0x1-2", "", upstream.Range{}},                // hex
		{"bytes=1-2-3", "", upstream.Range{}},                // three parts
		{"bytes=9223372036854775808-", "", upstream.Range{}}, // beyond int64
		{"bytes=0-1\r\nX: y", "", upstream.Range{}},          // header injection
		{"bytes=0-" + strings.Repeat("1", 80), "", upstream.Range{}},
		{"bytes=0-99", `W/"v1"`, upstream.Range{}}, // a weak tag never matches
		{"bytes=0-99", `v1`, upstream.Range{}},     // unquoted
		{"bytes=0-99", `"v"1"`, upstream.Range{}},  // a quote inside
		{"bytes=0-99", "yesterday", upstream.Range{}},
	} {
		if got := upstream.ParseRange(c.rng, c.ifRange); got != c.want {
			t.Errorf("ParseRange(%q, %q) = %+v; want %+v", c.rng, c.ifRange, got, c.want)
		}
	}
}

// The test server serves artifacts with http.ServeContent, as
// Bamboo's servlet serves artifacts: a download cut short and resumed
// with Range and If-Range gives the same bytes as the whole file.
func TestArtifactResumedDownloadEqualsTheWholeFile(t *testing.T) {
	_, client := newPair(t, upstream.Config{})
	ctx := context.Background()
	const path = "/browse/PROJ-CORE-6/artifact/shared/core-service.jar/"
	whole := download(t, client, path, upstream.Range{}, http.StatusOK)
	if whole.stream.LastModified == "" || !whole.stream.AcceptRanges {
		t.Fatalf("whole file: Last-Modified %q, Accept-Ranges %v", whole.stream.LastModified, whole.stream.AcceptRanges)
	}
	size := int64(len(whole.body))
	cut := size/3 + 7

	first := download(t, client, path, upstream.Range{Bytes: "0-" + strconv.FormatInt(cut-1, 10)}, http.StatusPartialContent)
	rest := download(t, client, path, upstream.Range{Bytes: strconv.FormatInt(cut, 10) + "-", IfRange: whole.stream.LastModified}, http.StatusPartialContent)
	if want := "bytes " + strconv.FormatInt(cut, 10) + "-" + strconv.FormatInt(size-1, 10) + "/" + strconv.FormatInt(size, 10); rest.stream.ContentRange != want {
		t.Fatalf("Content-Range %q; want %q", rest.stream.ContentRange, want)
	}
	if !bytes.Equal(append(first.body, rest.body...), whole.body) {
		t.Fatal("the resumed download's bytes differ from the whole file's")
	}

	// The file changed since (an older date): the whole file again.
	stale := time.Now().Add(-100 * 365 * 24 * time.Hour).UTC().Format(http.TimeFormat)
	again := download(t, client, path, upstream.Range{Bytes: "5-", IfRange: stale}, http.StatusOK)
	if !bytes.Equal(again.body, whole.body) {
		t.Fatal("a stale If-Range must give the whole file")
	}
	// Beyond the end: 416 with the size.
	stream, err := client.ArtifactRange(ctx, path, upstream.Range{Bytes: strconv.FormatInt(size, 10) + "-"})
	if err != nil {
		t.Fatal(err)
	}
	stream.Body.Close()
	if stream.Status != http.StatusRequestedRangeNotSatisfiable || stream.ContentRange != "bytes */"+strconv.FormatInt(size, 10) {
		t.Fatalf("beyond the end: %d %q", stream.Status, stream.ContentRange)
	}
}

type downloaded struct {
	stream *upstream.ArtifactStream
	body   []byte
}

func download(t *testing.T, client *upstream.Client, path string, part upstream.Range, status int) downloaded {
	t.Helper()
	stream, err := client.ArtifactRange(context.Background(), path, part)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	body, err := io.ReadAll(stream.Body)
	if err != nil || stream.Status != status || stream.ContentLength != int64(len(body)) {
		t.Fatalf("%+v: status %d, %d of %d bytes, %v; want %d", part, stream.Status, len(body), stream.ContentLength, err, status)
	}
	return downloaded{stream, body}
}

// An upstream's ETag is kept and matched by If-Range; malformed
// validators and Content-Ranges never pass.
func TestArtifactValidatorsAndContentRangeAreChecked(t *testing.T) {
	content := strings.Repeat("0123456789", 100)
	var etag, contentRange string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", etag)
		if contentRange != "" && r.Header.Get("Range") != "" {
			w.Header().Set("Content-Range", contentRange)
			w.WriteHeader(http.StatusPartialContent)
			return
		}
		http.ServeContent(w, r, "f.bin", time.Time{}, strings.NewReader(content))
	}))
	t.Cleanup(ts.Close)
	client, err := upstream.New(upstream.Config{BaseURL: ts.URL, Token: serviceToken, Log: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	const path = "/browse/P-Q-1/artifact/shared/f.bin/f.bin"

	etag = `"v1"`
	got := download(t, client, path, upstream.Range{Bytes: "990-", IfRange: `"v1"`}, http.StatusPartialContent)
	if got.stream.ETag != `"v1"` || string(got.body) != content[990:] || got.stream.LastModified != "" {
		t.Fatalf("ETag %q, body %q, Last-Modified %q", got.stream.ETag, got.body, got.stream.LastModified)
	}
	download(t, client, path, upstream.Range{Bytes: "990-", IfRange: `"v0"`}, http.StatusOK)

	etag = "v1 <script>" // not an entity tag: dropped
	if got := download(t, client, path, upstream.Range{}, http.StatusOK); got.stream.ETag != "" {
		t.Fatalf("malformed ETag kept: %q", got.stream.ETag)
	}
	for _, cr := range []string{"bytes 5-4/10", "bytes 0-10/10", "bytes */10", "items 0-1/10", "bytes 0-1"} {
		contentRange = cr
		_, err := client.ArtifactRange(context.Background(), path, upstream.Range{Bytes: "0-1"})
		wantError(t, err, facade.ErrUpstreamBad)
	}
}
