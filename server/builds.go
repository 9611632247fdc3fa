package server

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/proxy"
)

// BuildHandlers answer the build routes (package proxy): the routes of one
// endpoint of proxy.Endpoints, from the request's matched parameters. Errors
// are *facade.Error, written by the one error path like every route's.
type BuildHandlers interface {
	Read(ctx context.Context, ep *proxy.Endpoint, req *proxy.Request) (proxy.Answer, error)
	Favourite(ctx context.Context, ep *proxy.Endpoint, req *proxy.Request, mark bool) error
	Download(ctx context.Context, ep *proxy.Endpoint, req *proxy.Request) (*proxy.Download, error)
}

// noUpstream serves the build routes on an instance without
// FACADE_UPSTREAM_URL: every one answers 503.
type noUpstream struct{}

func (noUpstream) Read(context.Context, *proxy.Endpoint, *proxy.Request) (proxy.Answer, error) {
	return proxy.Answer{}, errNoUpstream
}

func (noUpstream) Favourite(context.Context, *proxy.Endpoint, *proxy.Request, bool) error {
	return errNoUpstream
}

func (noUpstream) Download(context.Context, *proxy.Endpoint, *proxy.Request) (*proxy.Download, error) {
	return nil, errNoUpstream
}

var errNoUpstream = facade.ErrBuildsNotConfigured

// buildRequest is what a build route needs of the request: the caller and
// the path parameters Echo matched, still percent-encoded.
func buildRequest(c echo.Context) *proxy.Request {
	r := c.Request()
	return &proxy.Request{
		Principal: principal(c),
		Key:       escapedParam(c, "key"),
		Number:    escapedParam(c, "number"),
		ResultKey: escapedParam(c, "resultKey"),
		Path:      escapedParam(c, "*"),
		RawQuery:  r.URL.RawQuery,
		Host:      r.Host,
		TLS:       r.TLS != nil,
	}
}

// escapedParam is the path parameter name as the caller sent it. Echo
// matches the raw path when the request's path has one (an encoding of its
// own, %2F), else the decoded path, which is then exactly the raw path
// decoded (net/url keeps no raw path when encoding the decoded one gives
// the raw bytes back): encoding the value the same way restores them.
func escapedParam(c echo.Context, name string) string {
	v := c.Param(name)
	if c.Request().URL.RawPath != "" || !needsEscape(v) {
		return v
	}
	const hex = "0123456789ABCDEF"
	b := make([]byte, 0, len(v)+8)
	for i := 0; i < len(v); i++ {
		if ch := v[i]; escapedInPath(ch) {
			b = append(b, '%', hex[ch>>4], hex[ch&15])
		} else {
			b = append(b, ch)
		}
	}
	return string(b)
}

func needsEscape(v string) bool {
	for i := 0; i < len(v); i++ {
		if escapedInPath(v[i]) {
			return true
		}
	}
	return false
}

// escapedInPath is net/url's rule for a path (URL.EscapedPath): all but
// letters, digits, "-_.~" and "$&+,/:;=@" is percent-encoded.
func escapedInPath(c byte) bool {
	if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
		return false
	}
	switch c {
	case '-', '_', '.', '~', '$', '&', '+', ',', '/', ':', ';', '=', '@':
		return false
	}
	return true
}

// buildRead serves a JSON build route (GET and HEAD) of ep.
func (s *bambooHandlers) buildRead(ep *proxy.Endpoint) echo.HandlerFunc {
	return func(c echo.Context) error {
		a, err := s.builds.Read(c.Request().Context(), ep, buildRequest(c))
		if err != nil {
			return err
		}
		return writeAnswer(c, a)
	}
}

// buildFavourite serves POST (mark) and DELETE (unmark) of a favourite
// route of ep: 204.
func (s *bambooHandlers) buildFavourite(ep *proxy.Endpoint) echo.HandlerFunc {
	return func(c echo.Context) error {
		mark := c.Request().Method != http.MethodDelete
		if err := s.builds.Favourite(c.Request().Context(), ep, buildRequest(c), mark); err != nil {
			return err
		}
		return c.NoContent(http.StatusNoContent)
	}
}

// buildDownload streams an artifact or log of ep as an attachment.
func (s *bambooHandlers) buildDownload(ep *proxy.Endpoint) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		req := buildRequest(c)
		req.Range, req.IfRange = r.Header.Get("Range"), r.Header.Get("If-Range")
		d, err := s.builds.Download(r.Context(), ep, req)
		if d != nil {
			defer d.Close()
			d.SetHeaders(c.Response().Header())
		}
		if err != nil {
			return err
		}
		if status, ok := d.Cached(); ok {
			// A build log kept in the shared cache (a running job's grows
			// once per live interval): a page tailing it polls with
			// If-None-Match, and a poll that finds it unchanged is a 304.
			h := c.Response().Header()
			h.Set("X-Cache", string(status))
			if noneMatch(r.Header.Values("If-None-Match"), h.Get("ETag")) {
				notModified(c.Response(), h)
				return nil
			}
		}
		c.Response().WriteHeader(d.Status())
		return d.Send(c.Response())
	}
}
