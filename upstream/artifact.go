package upstream

import (
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	facade "github.com/facade-dev/facade"
)

// ArtifactStream is an artifact being downloaded from Bamboo. The caller
// must Close Body. Nothing of the file is buffered: Body reads straight
// from the upstream connection.
type ArtifactStream struct {
	Body          io.ReadCloser
	ContentType   string // upstream's media type, normalised; application/octet-stream when absent or malformed
	ContentLength int64  // -1 when unknown
	Filename      string // from Content-Disposition, else the last path segment; never contains a path separator
	// Path is the unescaped path (relative to the base URL) that answered:
	// the one asked for, or where the upstream's redirects led.
	Path string
	// Redirected reports that the upstream answered through redirects.
	Redirected bool

	// Status is 200 (the whole file), or for a Range request 206 (the part
	// in ContentRange) or 416 (no such part: ContentRange is "bytes */size"
	// and Body is empty).
	Status       int
	ContentRange string
	// AcceptRanges reports that the upstream said "Accept-Ranges: bytes".
	AcceptRanges bool
	// ETag and LastModified are the upstream's validators, "" when absent
	// or malformed; LastModified is in HTTP's preferred date form.
	ETag, LastModified string
}

// RedirectCheck approves one redirect hop of an artifact download: path is
// the hop's unescaped path relative to the base URL, already known to be
// an artifact path of the form Artifact accepts.
type RedirectCheck func(path string) bool

type artifactHopKey struct{}

// artifactHop is what checkRedirect needs to judge a hop of a download.
type artifactHop struct{ check RedirectCheck }

// WithRedirectCheck returns a context under which Artifact follows a
// redirect only when check approves the hop (every hop, however long the
// chain). Without it, Artifact follows no redirect at all.
func WithRedirectCheck(ctx context.Context, check RedirectCheck) context.Context {
	return context.WithValue(ctx, artifactHopKey{}, artifactHop{check: check})
}

// artifactHopAllowed judges one hop: below the base URL's path, no query,
// an artifact path (see artifactURL), and approved by the caller's check.
func (c *Client) artifactHopAllowed(u *url.URL, hop artifactHop) bool {
	basePath := strings.TrimSuffix(c.baseURL.EscapedPath(), "/")
	rel, ok := strings.CutPrefix(u.EscapedPath(), basePath)
	if !ok || u.RawQuery != "" || u.Fragment != "" || hop.check == nil {
		return false
	}
	path, err := unescapeArtifactPath(rel)
	if err != nil {
		return false
	}
	if _, err := c.artifactURL(path); err != nil {
		return false
	}
	return hop.check(path)
}

// unescapeArtifactPath unescapes each segment on its own, so that an
// encoded "/" stays inside its segment (and then fails validSegment).
func unescapeArtifactPath(escaped string) (string, error) {
	segs := strings.Split(escaped, "/")
	for i, s := range segs {
		u, err := url.PathUnescape(s)
		if err != nil || strings.Contains(u, "/") {
			return "", errRedirectElsewhere
		}
		segs[i] = u
	}
	return strings.Join(segs, "/"), nil
}

// Artifact GETs {base}{path} and returns its body as a stream. path is the
// unescaped path of an artifact or build log, relative to the base URL,
// which the caller built from validated parts: it must start with /browse/
// or /download/ and have no empty, "." or ".." segment and none of
// ? # \ % or control characters (else ErrBadIdentifier, without any call); each
// segment is escaped here.
//
// Config.Timeout bounds the wait for the response headers (retries
// included). After that the body streams for as long as each read makes
// progress within Timeout; a stalled body fails its Read with ErrUpstreamTimeout.
// Cancelling ctx stops the stream too.
func (c *Client) Artifact(ctx context.Context, path string) (*ArtifactStream, error) {
	return c.ArtifactRange(ctx, path, Range{})
}

// ArtifactRange is Artifact for part of the file: part (from ParseRange)
// goes upstream as Range and If-Range, and the stream's Status says what
// came back. A 206 or 416 whose Content-Range is malformed, or a 206 to a
// request for the whole file, is ErrUpstreamBad.
func (c *Client) ArtifactRange(ctx context.Context, path string, part Range) (*ArtifactStream, error) {
	target, err := c.artifactURL(path)
	if err != nil {
		return nil, err
	}
	start := c.cfg.Now()
	done, err := c.breaker.allow()
	if err != nil {
		c.finish(ctx, opArtifact, start, "open", 0, err)
		return nil, err
	}
	if _, ok := ctx.Value(artifactHopKey{}).(artifactHop); !ok {
		ctx = WithRedirectCheck(ctx, nil) // no check given: no redirect followed
	}
	// Not a context deadline: the budget stops applying once the headers
	// are in, and turns into an idle watchdog for the body.
	ctx, cancel := context.WithCancelCause(withBudget(ctx, c.cfg.Timeout))
	watchdog := time.AfterFunc(c.cfg.Timeout, func() { cancel(errBudget) })

	r, result, cause := c.get(ctx, target, part, true)
	done(result.breakerReport())
	c.finish(ctx, opArtifact, start, result.metricLabel(), attempts(r), cause)
	if result != outcomeOK {
		watchdog.Stop()
		cancel(nil)
		return nil, result.clientError(cause)
	}
	resp := r.RawResponse
	watchdog.Reset(c.cfg.Timeout)
	final := path
	if resp.Request != nil && resp.Request.URL != nil {
		if rel, ok := strings.CutPrefix(resp.Request.URL.EscapedPath(), strings.TrimSuffix(c.baseURL.EscapedPath(), "/")); ok {
			if p, err := unescapeArtifactPath(rel); err == nil {
				final = p
			}
		}
	}
	stream := &ArtifactStream{
		Path:          final,
		Redirected:    final != path,
		Body:          &streamBody{body: resp.Body, ctx: ctx, cancel: cancel, watchdog: watchdog, idle: c.cfg.Timeout},
		ContentType:   mediaType(resp.Header.Get("Content-Type")),
		ContentLength: resp.ContentLength,
		Filename:      filename(resp.Header.Get("Content-Disposition"), path),
		Status:        resp.StatusCode,
		AcceptRanges:  resp.Header.Get("Accept-Ranges") == "bytes",
	}
	validators(stream, resp.Header)
	if stream.Status != http.StatusOK {
		stream.ContentRange = resp.Header.Get("Content-Range")
		if !contentRange(stream.ContentRange, stream.Status) {
			stream.Body.Close()
			return nil, facade.Wrap(facade.ErrUpstreamBad, errContentRange)
		}
	}
	return stream, nil
}

var errContentRange = errors.New("upstream answered a range request with a malformed Content-Range")

// validators keeps the upstream's ETag and Last-Modified when well-formed.
func validators(s *ArtifactStream, h http.Header) {
	if e := h.Get("ETag"); etag(e) {
		s.ETag = e
	}
	if t, err := http.ParseTime(h.Get("Last-Modified")); err == nil {
		s.LastModified = t.UTC().Format(http.TimeFormat)
	}
}

// streamBody is the upstream body plus the watchdog that cancels it when a
// read makes no progress for idle.
type streamBody struct {
	body     io.ReadCloser
	ctx      context.Context
	cancel   context.CancelCauseFunc
	watchdog *time.Timer
	idle     time.Duration
	once     sync.Once
}

func (s *streamBody) Read(p []byte) (int, error) {
	n, err := s.body.Read(p)
	if n > 0 {
		s.watchdog.Reset(s.idle)
	}
	if err == nil || errors.Is(err, io.EOF) {
		return n, err
	}
	if errors.Is(context.Cause(s.ctx), errBudget) {
		return n, facade.Wrap(facade.ErrUpstreamTimeout, err)
	}
	return n, facade.Wrap(facade.ErrUpstreamBad, err)
}

func (s *streamBody) Close() error {
	var err error
	s.once.Do(func() {
		s.watchdog.Stop()
		err = s.body.Close()
		s.cancel(context.Canceled)
	})
	return err
}

func mediaType(header string) string {
	mt, params, err := mime.ParseMediaType(header)
	if err != nil || !strings.Contains(mt, "/") {
		return "application/octet-stream"
	}
	return mime.FormatMediaType(mt, params)
}

// filename takes the name from Content-Disposition, else from the last
// non-empty segment of path, and keeps only its final path element.
func filename(disposition, path string) string {
	name := ""
	if _, params, err := mime.ParseMediaType(disposition); err == nil {
		name = params["filename"]
	}
	if name == "" {
		name = lastSegment(path)
	}
	name = name[strings.LastIndexAny(name, `/\`)+1:]
	name = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '"' {
			return -1
		}
		return r
	}, name)
	if name == "" || name == "." || name == ".." {
		return "artifact"
	}
	return name
}

func lastSegment(path string) string {
	path = strings.TrimRight(path, "/")
	return path[strings.LastIndex(path, "/")+1:]
}
