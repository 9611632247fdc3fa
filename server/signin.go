package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/facade-dev/facade/auth"
)

// signInRoutes mounts /auth/me (for bearer and session callers alike)
// and, when browser sign-in is configured, the relying party's routes of
// package auth (docs/contract.md §2, "Browser sign-in"). Those three need
// no credential and run their own checks: the sign-in cookie, state and
// ID token on the callback; same origin and the session's X-XSRF-TOKEN on
// logout.
func (s *Server) signInRoutes(e *echo.Echo, api []echo.MiddlewareFunc) {
	e.Match([]string{http.MethodGet, http.MethodHead}, auth.MePath, chain(handle(auth.Me), api...))
	if s.signin == nil {
		return
	}
	e.GET(auth.LoginPath, handle(s.signin.Login))
	e.GET(auth.CallbackPath, handle(s.signin.Callback))
	e.POST(auth.LogoutPath, chain(handle(s.signin.Logout), limitBody))
}

// isSignInRoute reports whether the matched route is one of the routes
// that sign in or out, which take no credential.
func isSignInRoute(route string) bool {
	return route == auth.LoginPath || route == auth.CallbackPath || route == auth.LogoutPath
}

// handle runs a net/http handler of package auth that returns its error,
// so the error takes the one error path (problem.Handler).
func handle(h func(http.ResponseWriter, *http.Request) error) echo.HandlerFunc {
	return func(c echo.Context) error { return h(c.Response(), c.Request()) }
}

// session authenticates r by the session cookie, when sign-in is
// configured and r may use it (same origin only: auth.SameOrigin). ok is
// false when the request has no session to offer.
func (s *Server) session(r *http.Request) (id auth.Identity, ok bool, err error) {
	if s.sessions == nil || !auth.SameOrigin(r, s.signin.Origin()) {
		return auth.Identity{}, false, nil
	}
	return s.sessions.Open(r)
}
