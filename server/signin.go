package server

import (
	"bytes"
	"embed"
	"errors"
	"html/template"
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/auth"
	"github.com/facade-dev/facade/authz"
	"github.com/facade-dev/facade/server/problem"
	"github.com/facade-dev/facade/web"
)

// signInHandlers answer /auth/me (for bearer and session callers alike)
// and, when browser sign-in is configured (signin not nil), the relying
// party's routes (docs/contract.md §2, "Browser sign-in"): package auth
// keeps the protocol and returns a Result; these handlers write it. The
// sign-in routes need no credential and run their own checks: the
// sign-in cookie, state and ID token on the callback; same origin and the
// session's X-XSRF-TOKEN on logout. authz only tells /auth/me what the
// caller holds.
type signInHandlers struct {
	signin   *auth.SignIn
	az       *authz.Authorizer
	failures *failureLimit
	log      *slog.Logger
}

// backchannelLogout is the provider ending sessions server to server
// (OpenID Connect Back-Channel Logout 1.0; docs/signin.md,
// "Back-channel logout"): no cookie, no anti-forgery header. 200 when the logout token
// verified (whether or not a session matched); an invalid one is 400
// {"error": "invalid_request"}, the shape that specification gives, ends
// nothing and spends one of the client address's failed authentications
// (FACADE_AUTH_FAILURE_LIMIT), so forged tokens are throttled (429) like
// forged bearer tokens; a valid one is never throttled.
func (h *signInHandlers) backchannelLogout(c echo.Context) error {
	ended, err := h.signin.BackchannelLogout(c.Request())
	if errors.Is(err, auth.ErrLogoutToken) {
		// As with bearer tokens (authenticator.failed): a valid logout
		// token is never refused for the address's failures.
		if retry, throttled := h.failures.throttled(c); throttled {
			h.log.Info("back-channel logout throttled", "request_id", requestID(c), "client", c.RealIP())
			return errAuthThrottled(retry)
		}
		h.failures.count(c)
		h.log.Info("back-channel logout refused", "request_id", requestID(c), "client", c.RealIP(), "reason", err.Error())
		return c.JSON(http.StatusBadRequest, map[string]string{"error": "invalid_request"})
	}
	if err != nil {
		return err
	}
	h.log.Info("back-channel logout", "request_id", requestID(c), "sessions", len(ended), "principals", ended)
	return c.NoContent(http.StatusOK)
}

func (h *signInHandlers) login(c echo.Context) error {
	res, err := h.signin.Login(c.Request())
	return writeSignIn(c, res, err)
}

// callback completes a sign-in. A refusal is shown to people as a page in
// the page's style saying what happened, with a link that starts a new
// sign-in; programs asking for JSON (application/problem+json) get the
// problem.
func (h *signInHandlers) callback(c echo.Context) error {
	res, err := h.signin.Callback(c.Request(), c.RealIP())
	if err != nil && errors.Is(err, facade.ErrSignInFailed) && acceptOf(c.Request()).asksFor("text/html") {
		return writeSignInFailedPage(c, res, err)
	}
	return writeSignIn(c, res, err)
}

// writeSignInFailedPage writes a refused callback for a person: its
// cookies, and the page saying why under the page's own
// Content-Security-Policy.
func writeSignInFailedPage(c echo.Context, res auth.Result, refused error) error {
	setCookies(c, res.Cookies)
	page, err := signInFailedPage(auth.SignInFailure(refused))
	if err != nil {
		return err
	}
	c.Response().Header().Set("Content-Security-Policy", web.CSP)
	return c.HTMLBlob(problem.Status(facade.ErrSignInFailed), page)
}

func (h *signInHandlers) logout(c echo.Context) error {
	res, err := h.signin.Logout(c.Request())
	return writeSignIn(c, res, err)
}

// writeSignIn writes what package auth answered: its cookies (also with
// an error), then the error through the one error path, or the redirect,
// JSON body or empty answer.
func writeSignIn(c echo.Context, res auth.Result, err error) error {
	setCookies(c, res.Cookies)
	switch {
	case err != nil:
		return err
	case res.Redirect != "":
		return c.Redirect(res.Status, res.Redirect)
	case res.Body != nil:
		return c.JSON(res.Status, res.Body)
	}
	return c.NoContent(res.Status)
}

func setCookies(c echo.Context, cookies []*http.Cookie) {
	for _, ck := range cookies {
		c.SetCookie(ck)
	}
}

// signInFailedTemplate is the page a refused sign-in shows
// (templates/signin-failed.html): the page's style sheet, what happened
// in words, and a link that starts a new sign-in.
//
//go:embed templates/signin-failed.html
var signInFailedFile embed.FS

var signInFailedTemplate = template.Must(template.ParseFS(signInFailedFile, "templates/signin-failed.html"))

// signInFailedPage is that page saying what happened (escaped by
// html/template).
func signInFailedPage(what string) ([]byte, error) {
	var b bytes.Buffer
	err := signInFailedTemplate.Execute(&b, what)
	return b.Bytes(), err
}

// signedOutKey is where authenticate leaves, for /auth/me, why a session
// cookie that came did not sign the caller in.
const signedOutKey = "facade.signed-out"

// meView is GET /auth/me's answer (docs/contract.md §2, "Browser
// sign-in"): 200 whether or not anyone is signed in, so a signed-out page
// logs no error.
type meView struct {
	SignedIn bool   `json:"signed_in"`
	Reason   string `json:"reason,omitempty"`
	Sub      string `json:"sub,omitempty"`
	Role     string `json:"role,omitempty"`
	// Roles are every role the caller has here: its token's (a list role
	// claim gives several) and the policy's, sorted. Role stays the
	// token's first, for clients that read one.
	Roles  []string `json:"roles,omitempty"`
	Groups []string `json:"groups,omitempty"`
	// GroupsIncomplete: the provider had more groups for the person than
	// fit in the token (overage), so they have none here; the page says
	// why and whom to ask.
	GroupsIncomplete bool            `json:"groups_incomplete,omitempty"`
	ExpiresAt        string          `json:"expires_at,omitempty"`
	Via              string          `json:"via,omitempty"`
	Has              *authz.Holdings `json:"has,omitempty"`
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
func (h *signInHandlers) me(c echo.Context) error {
	id := identity(c)
	if id.Principal.ID == "" {
		v := meView{}
		v.Reason, _ = c.Get(signedOutKey).(string)
		if h.signin != nil {
			v.SignIn = auth.LoginPath
		}
		return c.JSON(http.StatusOK, v)
	}
	p := id.Principal
	groups := p.Groups
	if groups == nil {
		groups = []string{}
	}
	has := h.az.Holdings(p)
	roles := h.az.Roles(p)
	if roles == nil {
		roles = []string{}
	}
	return c.JSON(http.StatusOK, meView{SignedIn: true, Sub: p.ID, Role: p.Role, Roles: roles, Groups: groups, GroupsIncomplete: p.GroupsIncomplete,
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
