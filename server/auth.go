package server

import (
	"log/slog"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/auth"
)

// authenticator is the pipeline's authentication stage: bearer tokens,
// session cookies when browser sign-in is configured (signin and sessions
// both nil otherwise), the failed-authentication limit, and the one list
// of public routes, which routes fills as it registers them: tokenFree
// every route that needs no token, by the router's match (c.Path()), and
// opsPaths the ops endpoints, by the request's path.
type authenticator struct {
	tokens              *auth.Tokens
	signin              *auth.SignIn
	sessions            *auth.Sessions
	failures            *failureLimit
	log                 *slog.Logger
	tokenFree, opsPaths map[string]bool
}

// authenticate requires a valid bearer token (auth.Tokens) or, on a
// same-origin request without one, a current session (auth.Sessions), and
// stores the caller's identity in the request context. A refusal says why
// in its code (token-*, session-*). A token that fails verification counts
// against the client address's failed-authentication limit; a valid token
// is let through whatever the limit says (failed).
func (a *authenticator) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if a.needsNoToken(c) {
			return next(c)
		}
		raw, ok := auth.BearerToken(c.Request().Header.Get("Authorization"))
		if !ok {
			// No bearer token: the session cookie, if this request may
			// use it. A bearer token, when sent, always decides.
			id, ok, err := a.session(c.Request(), c.RealIP())
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
		id, ok := a.tokens.Cached(raw)
		if !ok {
			var err error
			if id, err = a.tokens.Identity(c.Request().Context(), raw); err != nil {
				return a.failed(c, err)
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
func (a *authenticator) needsNoToken(c echo.Context) bool {
	return a.opsPaths[c.Request().URL.Path] || a.tokenFree[c.Path()]
}

// session authenticates r by the session cookie, when sign-in is
// configured and r may use it (same origin only: auth.SameOrigin). ok is
// false when the request has no session to offer.
func (a *authenticator) session(r *http.Request, client string) (id auth.Identity, ok bool, err error) {
	if a.sessions == nil || !auth.SameOrigin(r, a.signin.Origin()) {
		return auth.Identity{}, false, nil
	}
	return a.sessions.Open(r.Context(), r, client)
}

// failed answers a token that failed verification: 401, counted against
// the client address, or 429 once the address has used up its failures.
// The limit is looked at only after the token failed, so a valid token is
// never refused for the failures of others behind the same address (a
// campus NAT, a proxy): it slows guessing, it does not lock callers out.
// Verifying a token is cheap (an HMAC, or a signature with a cached key),
// so verifying the tokens of a blocked address costs little. Both log
// lines name the client address.
func (a *authenticator) failed(c echo.Context, err error) error {
	if retry, throttled := a.failures.throttled(c); throttled {
		a.log.Info("authentication throttled", "request_id", requestID(c), "client", c.RealIP(),
			"code", string(facade.CodeOf(err)), "retry_after_s", int(retry.Seconds()))
		return errAuthThrottled(retry)
	}
	a.failures.count(c)
	a.log.Info("authentication failed", "request_id", requestID(c), "client", c.RealIP(),
		"code", string(facade.CodeOf(err)), "reason", err.Error())
	return err
}
