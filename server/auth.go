package server

import (
	"github.com/labstack/echo/v4"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/auth"
)

// authenticate requires a valid bearer token (auth.Tokens) or, on a
// same-origin request without one, a current session (auth.Sessions), and
// stores the caller's identity in the request context. A refusal says why
// in its code (token-*, session-*). Token verification, but not a cached
// token, counts against the client address's failed-authentication limit.
func (s *Server) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if s.needsNoToken(c) {
			return next(c)
		}
		raw, ok := auth.BearerToken(c.Request().Header.Get("Authorization"))
		if !ok {
			// No bearer token: the session cookie, if this request may
			// use it. A bearer token, when sent, always decides.
			id, ok, err := s.session(c.Request(), c.RealIP())
			if c.Path() == auth.MePath && (err == nil && !ok) {
				return next(c) // /auth/me answers "signed out"
			}
			if reason, out := signedOut(err); out && c.Path() == auth.MePath {
				c.Set(signedOutKey, reason)
				return next(c)
			}
			switch {
			case err != nil:
				return err
			case !ok:
				return facade.ErrTokenMissing
			}
			setIdentity(c, id)
			return next(c)
		}
		id, ok := s.auth.Cached(raw)
		if !ok {
			if retry, throttled := s.authThrottled(c); throttled {
				return errAuthThrottled(retry)
			}
			var err error
			if id, err = s.auth.Identity(c.Request().Context(), raw); err != nil {
				s.countAuthFailure(c)
				s.log.Info("authentication failed", "request_id", requestID(c),
					"code", string(facade.CodeOf(err)), "reason", err.Error())
				return err
			}
		}
		setIdentity(c, id)
		return next(c)
	}
}

// needsNoToken reports whether c's route is one registered as needing no
// token (routes.go): the ops endpoints by path, the rest by the router's
// match, not the raw path, so no spelling of a path can reach an API route
// without a token.
func (s *Server) needsNoToken(c echo.Context) bool {
	return s.opsPaths[c.Request().URL.Path] || s.tokenFree[c.Path()]
}
