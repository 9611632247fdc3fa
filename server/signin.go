package server

import (
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/auth"
	"github.com/facade-dev/facade/authz"
)

// signInRoutes mounts /auth/me (for bearer and session callers alike)
// and, when browser sign-in is configured, the relying party's routes of
// package auth (docs/contract.md §2, "Browser sign-in"). Those three need
// no credential and run their own checks: the sign-in cookie, state and
// ID token on the callback; same origin and the session's X-XSRF-TOKEN on
// logout.
func (s *Server) signInRoutes(e *echo.Echo, api []echo.MiddlewareFunc) {
	e.Match([]string{http.MethodGet, http.MethodHead}, auth.MePath, chain(s.me, api...))
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

// signedOutKey is where authenticate leaves, for /auth/me, why a session
// cookie that came did not sign the caller in.
const signedOutKey = "facade.signed-out"

// meView is GET /auth/me's answer (docs/contract.md §2, "Browser
// sign-in"): 200 whether or not anyone is signed in, so a signed-out page
// logs no error.
type meView struct {
	SignedIn  bool            `json:"signed_in"`
	Reason    string          `json:"reason,omitempty"`
	Sub       string          `json:"sub,omitempty"`
	Role      string          `json:"role,omitempty"`
	Groups    []string        `json:"groups,omitempty"`
	ExpiresAt string          `json:"expires_at,omitempty"`
	Via       string          `json:"via,omitempty"`
	Has       *authz.Holdings `json:"has,omitempty"`
	// XSRFToken is the session's anti-forgery token: the page sends it
	// back in X-XSRF-TOKEN (never from document.cookie, which a sibling
	// subdomain can write).
	XSRFToken string `json:"xsrf_token,omitempty"`
	// SignIn, when signed out and browser sign-in is configured, is where
	// a person starts it: the page learns that sign-in exists without
	// starting one (a load that started one would disturb another tab's).
	SignIn string `json:"sign_in,omitempty"`
}

// me answers who the caller is; authenticate let it through without a
// credential, or with a session that has ended.
func (s *Server) me(c echo.Context) error {
	id, ok := auth.IdentityFrom(c.Request().Context())
	if !ok || id.Principal.ID == "" {
		v := meView{}
		v.Reason, _ = c.Get(signedOutKey).(string)
		if s.signin != nil {
			v.SignIn = auth.LoginPath
		}
		return c.JSON(http.StatusOK, v)
	}
	p := id.Principal
	groups := p.Groups
	if groups == nil {
		groups = []string{}
	}
	has := s.authz.Holdings(p)
	return c.JSON(http.StatusOK, meView{SignedIn: true, Sub: p.ID, Role: p.Role, Groups: groups,
		ExpiresAt: id.ExpiresAt.UTC().Format(time.RFC3339), Via: id.Via, Has: &has, XSRFToken: id.XSRFToken()})
}

// signedOut reports whether err, from opening a session cookie, means the
// caller is simply not signed in (for /auth/me: 200, not a 401), and why
// in /auth/me's words. A store that cannot be reached is not one of them.
func signedOut(err error) (reason string, ok bool) {
	switch {
	case errors.Is(err, facade.ErrSessionExpired):
		return "session-expired", true
	case errors.Is(err, facade.ErrSessionInvalid):
		return "", true
	}
	return "", false
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
