package server

import (
	"context"

	"github.com/labstack/echo/v4"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/auth"
)

// requestContext is a request's context from baseHeaders on: every value
// the service keeps per request (its id, its audit record, the caller's
// identity and principal once authenticated) in one allocation, filled in
// place as the request advances, and read by this package's own accessors
// (requestID, principal, the log handler). Stacking a context.WithValue
// per value cost a context, a boxed value and a copy of the http.Request
// each: 14 of a cached list's 32 allocations
// (BenchmarkWarmListThroughServer). Only the request's own goroutine fills
// it, before anything that reads a field runs (authentication before the
// rate limit and the handlers), and before any goroutine is started with
// the context.
type requestContext struct {
	context.Context
	id        string
	traceID   string // the request's trace, when it has one (Config.Tracer or Propagator)
	principal facade.Principal
	identity  auth.Identity
	authed    bool
	audit     requestAudit
}

type requestContextKey struct{}

// newRequestContext starts a request's context. A record logged with it
// (or a context derived from it) carries its id: see LogHandler.
func newRequestContext(parent context.Context, id string) *requestContext {
	return &requestContext{Context: parent, id: id}
}

func (c *requestContext) Value(key any) any {
	if _, ok := key.(requestContextKey); ok {
		return c
	}
	return c.Context.Value(key)
}

// requestContextOf is the requestContext ctx derives from, or nil.
func requestContextOf(ctx context.Context) *requestContext {
	if c, ok := ctx.(*requestContext); ok {
		return c
	}
	c, _ := ctx.Value(requestContextKey{}).(*requestContext)
	return c
}

// setIdentity records the caller in the request's context, in place (see
// requestContext); a request that came without one (baseHeaders makes it
// for every request) is given one.
func setIdentity(c echo.Context, id auth.Identity) {
	rc := requestContextOf(c.Request().Context())
	if rc == nil {
		rc = newRequestContext(c.Request().Context(), newRequestID())
		c.SetRequest(c.Request().WithContext(rc))
	}
	rc.identity, rc.authed = id, true
	rc.principal = id.Principal
}

// identity is the caller as authenticate found it (the zero Identity
// before, and on the public routes).
func identity(c echo.Context) auth.Identity {
	if rc := requestContextOf(c.Request().Context()); rc != nil {
		return rc.identity
	}
	return auth.Identity{}
}
