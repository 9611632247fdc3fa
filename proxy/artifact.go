package proxy

import (
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/cache"
	"github.com/facade-dev/facade/upstream"
)

// Download serves GET /browse/:resultKey/artifact/* and GET /download/*
// (the route "artifact"): the path is the upstream's
// own (so rewritten links work), validated segment by segment, authorized
// on its plan BEFORE any upstream call, and then opened upstream. The
// caller sets the Download's headers (SetHeaders), sends its status and
// streams it (Send) through a fixed-size buffer: memory does not grow
// with the file. A Download is returned with an error too when it has
// headers for the error's answer (the validators, a 416's Content-Range);
// it must be closed whenever it is not nil.
func (h *Handler) Download(ctx context.Context, _ *Endpoint, req *Request) (*Download, error) {
	target, err := parseArtifactPath(req.Path)
	if err != nil {
		return nil, err
	}
	if err := h.authorizePlan(ctx, "download_artifact", req.Principal, target.plan); err != nil {
		return nil, err
	}
	// Every redirect hop must lead to an artifact path this route itself
	// would accept, of the plan just authorized (never another plan's
	// file, a login page or another host).
	ctx = upstream.WithRedirectCheck(ctx, func(path string) bool {
		hop, err := parseArtifactPath(escapeSegments(path))
		return err == nil && hop.plan == target.plan
	})
	if d, ok, err := h.cachedLog(ctx, target, req); ok {
		return d, err
	}
	// Range and If-Range go upstream only now, after authorization, and
	// only as one well-formed byte range (upstream.ParseRange says why).
	part := upstream.ParseRange(req.Range, req.IfRange)
	stream, err := h.up.ArtifactRange(ctx, target.path, part)
	if err != nil {
		return nil, asFacadeError(err)
	}
	if isDirectoryListing(stream.Path, stream.ContentType) || stream.Redirected && isHTML(stream.ContentType) {
		// Bamboo answers a directory link (with its slash, or redirected
		// to it) with an HTML page full of links to its own host and its
		// version: that page must not reach a client.
		stream.Body.Close()
		return nil, facade.Wrap(facade.ErrUpstreamBad, errHTMLAnswer)
	}
	d := &Download{ctx: ctx, stream: stream, name: target.name}
	if stream.Status == http.StatusRequestedRangeNotSatisfiable {
		// As Bamboo answers: the file's size, no part of it.
		return d, facade.ErrRangeNotSatisfiable
	}
	d.buf = copyBuffers.Get().(*[]byte)
	// Read the first chunk before committing to 200: an upstream that
	// fails right away still gets a proper problem response.
	n, err := readSome(stream.Body, *d.buf)
	if err != nil && !errors.Is(err, io.EOF) {
		return d, asFacadeError(err)
	}
	d.first, d.done, d.ready = (*d.buf)[:n], err != nil, true
	return d, nil
}

// Download is an artifact or log opened upstream (Handler.Download).
type Download struct {
	ctx    context.Context
	stream *upstream.ArtifactStream
	name   string
	buf    *[]byte
	first  []byte       // the chunk read before the status was decided
	done   bool         // first is the whole file
	ready  bool         // the answer is the file (not an error)
	cached cache.Status // a build log read through the shared cache (livelog.go); "" when streamed
}

// Status is the answer's status: 200, or 206 for a part.
func (d *Download) Status() int { return d.stream.Status }

// SetHeaders sets the answer's headers in h: what a client needs to
// resume a download (the upstream's ETag and Last-Modified, checked by
// package upstream, and its Accept-Ranges), and, when the answer is the
// file, its safe media type, length, name (always as an attachment) and
// range.
func (d *Download) SetHeaders(h http.Header) {
	stream := d.stream
	setValidators(h, stream)
	if stream.Status == http.StatusRequestedRangeNotSatisfiable {
		h.Set("Content-Range", stream.ContentRange)
	}
	if !d.ready {
		return
	}
	h.Set("Content-Type", safeContentType(stream.ContentType))
	if stream.ContentLength >= 0 {
		h.Set("Content-Length", strconv.FormatInt(stream.ContentLength, 10))
	}
	name := stream.Filename
	if name == "" {
		name = d.name
	}
	h.Set("Content-Disposition", attachment(name))
	if stream.Status == http.StatusPartialContent {
		h.Set("Content-Range", stream.ContentRange)
	}
}

// Send streams the file into w, after the status went out. An error is
// the upstream's failing mid-file: all that is left is to cut the body
// short, which the client sees as a truncated download. The client
// leaving is no error.
func (d *Download) Send(w io.Writer) error {
	if _, werr := w.Write(d.first); werr != nil || d.done {
		return nil // the client left, or the file is complete
	}
	// Only Write is exposed, so io.CopyBuffer cannot bypass the fixed
	// buffer through a ReaderFrom.
	_, err := io.CopyBuffer(writerOnly{w}, d.stream.Body, *d.buf)
	if err != nil && d.ctx.Err() == nil {
		return asFacadeError(err)
	}
	return nil
}

// Close releases the upstream stream and the buffer.
func (d *Download) Close() {
	d.stream.Body.Close()
	if d.buf != nil {
		copyBuffers.Put(d.buf)
		d.buf, d.first = nil, nil
	}
}

// setValidators passes on what a client needs to resume a download: the
// upstream's ETag and Last-Modified (checked by package upstream) and its
// Accept-Ranges.
func setValidators(header http.Header, stream *upstream.ArtifactStream) {
	if stream.ETag != "" {
		header.Set("ETag", stream.ETag)
	}
	if stream.LastModified != "" {
		header.Set("Last-Modified", stream.LastModified)
	}
	if stream.AcceptRanges {
		header.Set("Accept-Ranges", "bytes")
	}
}

// readSome reads until it has some bytes or an error.
func readSome(r io.Reader, buf []byte) (int, error) {
	for {
		n, err := r.Read(buf)
		if n > 0 || err != nil {
			return n, err
		}
	}
}

// copyBuffers hold 1 MiB: fewer read and write system calls than smaller
// buffers, which cost dearly on a virtual machine (docs/performance.md,
// "The build path", has the figures). Memory stays bounded: 1 MiB per
// download in flight.
var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 1<<20); return &b }}

type writerOnly struct{ w io.Writer }

func (w writerOnly) Write(p []byte) (int, error) { return w.w.Write(p) }

// activeTypes are media types a browser would render or run; so is any
// XML type (every "+xml" suffix, application/rss+xml,
// application/vnd.*+xml: a browser renders XML with its stylesheets and
// scripts), which safeContentType checks by suffix. An artifact
// is data to download, never a page of this origin, so these become
// application/octet-stream (Content-Disposition says attachment too, and
// nosniff is on every response).
var activeTypes = map[string]bool{
	"text/html": true, "application/xhtml+xml": true, "image/svg+xml": true,
	"text/xml": true, "application/xml": true, "text/javascript": true,
	"application/javascript": true, "application/ecmascript": true, "text/ecmascript": true,
	"application/x-javascript": true, "text/xsl": true, "application/xslt+xml": true,
	"application/pdf": true, "text/vtt": true, "application/wasm": true,
}

var errHTMLAnswer = errors.New("upstream answered an artifact link with an HTML page")

// escapeSegments escapes each segment of an unescaped path.
func escapeSegments(path string) string {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

func isHTML(contentType string) bool {
	mt, _, _ := mime.ParseMediaType(contentType)
	return mt == "text/html" || mt == "application/xhtml+xml"
}

// isDirectoryListing reports an HTML answer to a directory-form link (one
// ending in "/"). An HTML file asked for by name (a test report) is served,
// as an attachment like every artifact.
func isDirectoryListing(path, contentType string) bool {
	return strings.HasSuffix(path, "/") && isHTML(contentType)
}

// safeContentType keeps upstream's media type (and only its charset
// parameter) unless it is active content or unparsable.
func safeContentType(upstreamType string) string {
	const fallback = "application/octet-stream"
	mt, params, err := mime.ParseMediaType(upstreamType)
	if err != nil || activeTypes[mt] || strings.HasSuffix(mt, "+xml") || strings.HasSuffix(mt, "/xml") ||
		strings.HasPrefix(mt, "multipart/") || !strings.Contains(mt, "/") {
		return fallback
	}
	kept := map[string]string{}
	if cs, ok := params["charset"]; ok {
		kept["charset"] = cs
	}
	if out := mime.FormatMediaType(mt, kept); out != "" {
		return out
	}
	return fallback
}

// attachment builds Content-Disposition: an ASCII filename (anything
// outside letters, digits, ". _ - +" becomes "_") and, when the name had
// more than that, the exact UTF-8 name as RFC 5987 filename*.
func attachment(name string) string {
	name = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '/' || r == '\\' || r == '"' {
			return -1
		}
		return r
	}, name)
	if len(name) > maxSegmentBytes {
		name = name[:maxSegmentBytes]
		for !utf8.ValidString(name) {
			name = name[:len(name)-1]
		}
	}
	if name == "" || name == "." || name == ".." {
		name = "artifact"
	}
	ascii := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-+", r) {
			return r
		}
		return '_'
	}, name)
	out := `attachment; filename="` + ascii + `"`
	if ascii != name {
		out += "; filename*=UTF-8''" + rfc5987(name)
	}
	return out
}

// rfc5987 percent-encodes everything but RFC 5987's attr-char.
func rfc5987(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$&+-.^_`|~", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		const hex = "0123456789ABCDEF"
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}
