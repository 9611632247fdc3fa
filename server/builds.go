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

// buildRequest is what a build route needs of the request: the caller,
// the key parameters as Echo matched them (package proxy parses them once
// into a facade.BuildKey; encoded or not, a character outside a key's
// format is refused) and the escaped path (a download unescapes its
// segments one at a time).
func buildRequest(c echo.Context) *proxy.Request {
	r := c.Request()
	return &proxy.Request{
		Principal: principal(c),
		Key:       c.Param("key"),
		Number:    c.Param("number"),
		Path:      r.URL.EscapedPath(),
		RawQuery:  r.URL.RawQuery,
		Host:      r.Host,
		TLS:       r.TLS != nil,
	}
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
