package server

import (
	"context"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/proxy"
)

// BuildHandlers serves the build routes (package proxy, plain net/http):
// the handler of one endpoint of proxy.Endpoints, whose errors go to fail.
type BuildHandlers interface {
	Handler(ep proxy.Endpoint, fail proxy.ErrorWriter) http.Handler
}

// noUpstream serves the build routes on an instance without
// FACADE_UPSTREAM_URL: every one answers 503.
type noUpstream struct{}

func (noUpstream) Handler(_ proxy.Endpoint, fail proxy.ErrorWriter) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fail(w, r, errNoUpstream) })
}

var errNoUpstream = facade.ErrBuildsNotConfigured

// buildRoute mounts one build endpoint on Echo. The handler is net/http's;
// an error it reports is handed back to Echo as the route's error, so the
// one error path (problem.Handler, Echo's HTTPErrorHandler) answers it as
// it answers every other route's, and the middleware around sees it.
func buildRoute(builds BuildHandlers, ep proxy.Endpoint) echo.HandlerFunc {
	h := builds.Handler(ep, handBackToEcho)
	return func(c echo.Context) error {
		r := c.Request()
		if rc := requestContextOf(r.Context()); rc != nil {
			// The slot is the request context's (one request, one route).
			rc.failed = nil
			h.ServeHTTP(c.Response(), r)
			return rc.failed
		}
		var failed error
		h.ServeHTTP(c.Response(), r.WithContext(context.WithValue(r.Context(), buildErrorKey{}, &failed)))
		return failed
	}
}

type buildErrorKey struct{}

// handBackToEcho is the proxy.ErrorWriter of every build route: it keeps
// the error for buildRoute to return. It writes nothing itself.
func handBackToEcho(_ http.ResponseWriter, r *http.Request, err error) {
	if slot, ok := r.Context().Value(buildErrorKey{}).(*error); ok {
		*slot = err
	}
}

// echoPath spells a ServeMux pattern of the route table in Echo's syntax:
// {name} is :name, a trailing {name...} is *.
func echoPath(pattern string) string {
	segs := strings.Split(pattern, "/")
	for i, s := range segs {
		switch {
		case strings.HasPrefix(s, "{") && strings.HasSuffix(s, "...}"):
			segs[i] = "*"
		case strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}"):
			segs[i] = ":" + s[1:len(s)-1]
		}
	}
	return strings.Join(segs, "/")
}
