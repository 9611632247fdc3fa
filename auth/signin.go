package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/metrics"
)

// DefaultScopes are the scopes asked for when none are configured
// (FACADE_OIDC_SCOPES's default).
var DefaultScopes = []string{oidc.ScopeOpenID, "profile", "email"}

// SignInConfig is the relying party's settings (FACADE_OIDC_*). Every
// field documents what its zero value means.
type SignInConfig struct {
	Issuer       string   // FACADE_OIDC_ISSUER: discovery starts here (required)
	ClientID     string   // FACADE_OIDC_CLIENT_ID; empty is refused (Check)
	ClientSecret string   // FACADE_OIDC_CLIENT_SECRET: optional (empty: a public client), PKCE is always used
	Scopes       []string // FACADE_OIDC_SCOPES; nil means DefaultScopes
	// PublicURL is the service's external base (FACADE_PUBLIC_URL): the
	// redirect URI is PublicURL + "/auth/callback", sign-in returns only
	// to paths below it, and the session cookie counts only on requests
	// from its origin. Empty is refused (Check).
	PublicURL string
	// Claims names the claims the principal is read from; zero fields
	// mean the defaults (Claims says which).
	Claims Claims
	// HTTPClient makes the calls to the provider (discovery, keys, code
	// exchange); nil means one with a 10 s timeout.
	HTTPClient *http.Client
	// Now is the clock ID tokens are checked against; nil means time.Now.
	Now func() time.Time
	// Log receives the sign-in lines; nil means slog.Default().
	Log *slog.Logger
	// Metrics counts the calls to the provider by result
	// (facade_signin_provider_calls_total); nil means a private set.
	Metrics *metrics.Metrics
}

// SignIn is the OpenID Connect relying party: the authorization code flow
// with PKCE (S256), state and nonce, for /auth/login, /auth/callback and
// /auth/logout. It keeps nothing between requests: the sign-in in progress
// is a sealed cookie in the browser that started it.
type SignIn struct {
	cfg      SignInConfig
	sessions *Sessions
	oauth    oauth2.Config
	verifier *oidc.IDTokenVerifier
	// logoutVerifier checks back-channel logout tokens (backchannel.go).
	logoutVerifier *oidc.IDTokenVerifier
	endSession     string // the provider's end_session_endpoint, if it offers one
	origin         string // scheme://host of PublicURL
	ctx            context.Context
}

// NewSignIn discovers the provider (FACADE_OIDC_ISSUER/.well-known/...)
// and signs people in to sessions, which is required. ctx bounds discovery
// and carries the HTTP client for key fetches later.
func NewSignIn(ctx context.Context, sessions *Sessions, cfg SignInConfig) (*SignIn, error) {
	if err := errors.Join(cfg.Check(), cfg.Claims.Check()); err != nil {
		return nil, err
	}
	if sessions == nil {
		return nil, errors.New("auth: NewSignIn needs Sessions")
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	cfg.Metrics = metrics.Or(cfg.Metrics)
	if len(cfg.Scopes) == 0 {
		cfg.Scopes = slices.Clone(DefaultScopes)
	}
	if !slices.Contains(cfg.Scopes, oidc.ScopeOpenID) {
		cfg.Scopes = append([]string{oidc.ScopeOpenID}, cfg.Scopes...)
	}
	// Keys are fetched later, on requests, with this context's client: it
	// must outlive start-up.
	pctx := oidc.ClientContext(context.WithoutCancel(ctx), cfg.HTTPClient)
	dctx, cancel := context.WithTimeout(pctx, 15*time.Second)
	defer cancel()
	provider, err := oidc.NewProvider(dctx, cfg.Issuer)
	if err != nil {
		return nil, configError("FACADE_OIDC_ISSUER: the provider's discovery document could not be read (" + err.Error() + ")")
	}
	var meta struct {
		EndSession string `json:"end_session_endpoint"`
	}
	_ = provider.Claims(&meta)
	endpoint := provider.Endpoint()
	if cfg.ClientSecret == "" {
		// A public client sends its id in the form; PKCE proves the rest.
		endpoint.AuthStyle = oauth2.AuthStyleInParams
	}
	u, _ := url.Parse(cfg.PublicURL)
	s := &SignIn{
		cfg:      cfg,
		sessions: sessions,
		oauth: oauth2.Config{
			ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, Endpoint: endpoint,
			RedirectURL: cfg.PublicURL + CallbackPath, Scopes: cfg.Scopes,
		},
		verifier:       provider.VerifierContext(pctx, &oidc.Config{ClientID: cfg.ClientID, Now: cfg.Now}),
		logoutVerifier: newLogoutVerifier(pctx, provider, cfg),
		endSession:     meta.EndSession,
		origin:         u.Scheme + "://" + u.Host,
		ctx:            pctx,
	}
	sessions.refresher, sessions.logger = s.refresh, cfg.Log
	return s, nil
}

// The routes of browser sign-in (docs/contract.md §2).
const (
	LoginPath    = "/auth/login"
	CallbackPath = "/auth/callback"
	LogoutPath   = "/auth/logout"
	MePath       = "/auth/me"
	// FallbackReturn is where sign-in lands when return_to is absent or
	// would leave the site.
	FallbackReturn = "/ui/"
)

// Check reports every setting NewSignIn would refuse, without contacting
// the provider, each naming its variable.
func (cfg SignInConfig) Check() error {
	var errs []error
	if cfg.ClientID == "" {
		errs = append(errs, configError("FACADE_OIDC_CLIENT_ID is required with FACADE_OIDC_ISSUER"))
	}
	if u, err := url.Parse(cfg.PublicURL); cfg.PublicURL == "" || err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		errs = append(errs, configError("FACADE_PUBLIC_URL (an absolute http or https URL) is required with FACADE_OIDC_ISSUER: the redirect URI is built from it"))
	}
	return errors.Join(errs...)
}

// Origin is the service's public origin, where the session cookie counts.
func (s *SignIn) Origin() string { return s.origin }

var errProviderRefused = errors.New("the provider refused")

// SignInFailure says in words, for the person who tried, why a sign-in
// (facade.ErrSignInFailed) did not complete: fixed sentences, never a library's
// text.
func SignInFailure(err error) string {
	switch {
	case errors.Is(err, errNoFlow):
		return "This sign-in was not started in this browser, or it was already used (for example by going back to it). Nothing was changed."
	case errors.Is(err, errFlowExpired):
		return "The sign-in took more than 10 minutes, so it was stopped. Nothing was changed."
	case errors.Is(err, errProviderRefused):
		return "Your organization's sign-in did not sign you in (it was cancelled or refused there)."
	case errors.Is(err, errNoUser):
		return "Your organization's sign-in did not say who you are in a way this service can use. Ask the people who run it."
	}
	return "The answer of your organization's sign-in could not be verified, so you were not signed in."
}

// Result is what a sign-in route answers, for the HTTP layer to write:
// the cookies to set (also with an error: a used sign-in cookie is removed
// whatever the outcome), then a redirect to Redirect (Status 302 or 303),
// a JSON Body (200), or nothing (204).
type Result struct {
	Cookies  []*http.Cookie
	Status   int
	Redirect string
	Body     any
}

// Login starts a sign-in: GET /auth/login?return_to=<path>. It seals a new
// state, nonce and PKCE verifier into a sign-in cookie of its own, named
// after the state, so several sign-ins may be in progress in one browser
// (tabs) without one disturbing another, and sends the browser to the
// provider.
func (s *SignIn) Login(r *http.Request) (Result, error) {
	f := flow{
		State: randomToken(), Nonce: randomToken(), Verifier: oauth2.GenerateVerifier(),
		ReturnTo: SafeReturnTo(r.URL.Query().Get("return_to")),
	}
	c, err := s.sessions.startFlow(f)
	if err != nil {
		return Result{}, facade.Wrap(facade.ErrInternal, err)
	}
	cookies := append(s.sessions.oldFlows(r), c)
	opts := []oauth2.AuthCodeOption{oidc.Nonce(f.Nonce), oauth2.S256ChallengeOption(f.Verifier)}
	if slices.Contains(s.cfg.Scopes, oidc.ScopeOfflineAccess) {
		// OpenID Connect Core §11: a provider may ignore offline_access
		// unless the request also asks for consent.
		opts = append(opts, oauth2.SetAuthURLParam("prompt", "consent"))
	}
	to := s.oauth.AuthCodeURL(f.State, opts...)
	return Result{Cookies: cookies, Status: http.StatusFound, Redirect: to}, nil
}

// Callback completes a sign-in: GET /auth/callback?code=&state=. Every
// check must pass (this browser's own sign-in cookie for that state, the
// code exchange with the PKCE verifier, the ID token's signature, issuer,
// audience and expiry, the nonce); then a new session replaces whatever
// the browser held, and the browser goes back to return_to. client is
// the caller's address, kept with the session.
func (s *SignIn) Callback(r *http.Request, client string) (Result, error) {
	p, idt, raw, rt, f, used, err := s.complete(r)
	res := Result{Cookies: used}
	if err != nil {
		s.cfg.Log.InfoContext(r.Context(), "sign-in refused", "reason", err.Error())
		return res, facade.Wrap(facade.ErrSignInFailed, err)
	}
	var sid struct {
		SID string `json:"sid"`
	}
	_ = idt.Claims(&sid) // verified already; a sid that is not a string is none
	ps := ProviderSession{IDToken: raw, Sub: idt.Subject, SID: sid.SID, RefreshToken: rt}
	_, cookies, err := s.sessions.Issue(r.Context(), p, idt.Expiry, ps, client)
	if err != nil {
		if errors.Is(err, facade.ErrStoreUnavailable) {
			return res, err
		}
		return res, facade.Wrap(facade.ErrInternal, err)
	}
	s.cfg.Log.InfoContext(r.Context(), "signed in", "principal", p.ID, "groups", len(p.Groups))
	if p.GroupsIncomplete {
		warnOverage(r.Context(), s.cfg.Log, p.ID)
	}
	res.Cookies = append(res.Cookies, cookies...)
	res.Status, res.Redirect = http.StatusSeeOther, s.cfg.PublicURL+f.ReturnTo
	return res, nil
}

func (s *SignIn) complete(r *http.Request) (p facade.Principal, idt *oidc.IDToken, raw, rt string, f flow, used []*http.Cookie, err error) {
	f, used, err = s.sessions.takeFlow(r, r.URL.Query().Get("state"))
	if err != nil {
		return p, nil, "", "", f, used, err
	}
	p, idt, raw, rt, err = s.verify(r, f)
	return p, idt, raw, rt, f, used, err
}

func (s *SignIn) verify(r *http.Request, f flow) (facade.Principal, *oidc.IDToken, string, string, error) {
	var none facade.Principal
	q := r.URL.Query()
	if !equal(f.State, q.Get("state")) {
		return none, nil, "", "", errors.New("state does not match this browser's sign-in")
	}
	if e := q.Get("error"); e != "" {
		return none, nil, "", "", fmt.Errorf("%w: %s", errProviderRefused, truncate(e, 64))
	}
	code := q.Get("code")
	if code == "" {
		return none, nil, "", "", errors.New("no code")
	}
	ctx, cancel := context.WithTimeout(oidc.ClientContext(r.Context(), s.cfg.HTTPClient), 15*time.Second)
	defer cancel()
	tok, err := s.oauth.Exchange(ctx, code, oauth2.VerifierOption(f.Verifier))
	if err != nil {
		s.countProvider("exchange", err)
		return none, nil, "", "", errors.New("code exchange: " + err.Error())
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		err = errors.New("no ID token in the provider's answer")
		s.countProvider("exchange", err)
		return none, nil, "", "", err
	}
	idt, err := s.verifier.Verify(s.ctx, raw)
	s.countProvider("exchange", err)
	if err != nil {
		return none, nil, "", "", errors.New("ID token: " + err.Error())
	}
	if !equal(f.Nonce, idt.Nonce) {
		return none, nil, "", "", errors.New("ID token: nonce does not match this sign-in")
	}
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		return none, nil, "", "", err
	}
	if azp, ok := claims["azp"].(string); len(idt.Audience) > 1 && (!ok || azp != s.cfg.ClientID) {
		// OpenID Connect Core 3.1.3.7: with several audiences, the
		// authorized party must be us.
		return none, nil, "", "", errors.New("ID token: authorized party is not this client")
	}
	p, err := s.cfg.Claims.principal(claims)
	return p, idt, raw, tok.RefreshToken, err
}

// Logout ends the session: POST /auth/logout, from the service's own page
// only (same origin, and the session's X-XSRF-TOKEN while the session is
// current), so another site cannot sign a person out. It deletes the
// session in Redis (a copy of the cookie is refused afterwards, on every
// instance), clears the cookies and, when the provider offers an
// end_session_endpoint, answers 200 with {"end_session_url": ...} for the
// page to visit (the provider then ends its own session and returns to
// /ui/); otherwise 204.
func (s *SignIn) Logout(r *http.Request) (Result, error) {
	if !SameOrigin(r, s.origin) {
		return Result{}, facade.ErrXSRF
	}
	ss := s.sessions
	var hint string
	sid, ok, err := ss.sessionID(r)
	if ok && err == nil {
		rec, err := ss.load(r.Context(), sid)
		switch {
		case errors.Is(err, facade.ErrStoreUnavailable):
			return Result{}, err
		case err == nil:
			// The session's own token decides, as on every other change.
			if err := CheckXSRF(r, Identity{Via: ViaSession, xsrf: rec.XSRF}); err != nil {
				return Result{}, err
			}
			if err := ss.remove(r.Context(), sid, rec.Sub); err != nil {
				return Result{}, err
			}
			hint = rec.IDToken
		}
	}
	if hint == "" {
		// No current session: the header rule alone.
		if err := CheckXSRF(r, Identity{}); err != nil {
			return Result{}, err
		}
	}
	res := Result{Cookies: ss.cleared(), Status: http.StatusNoContent}
	if s.endSession == "" {
		return res, nil
	}
	q := url.Values{"client_id": {s.cfg.ClientID}, "post_logout_redirect_uri": {s.cfg.PublicURL + FallbackReturn}}
	if hint != "" {
		q.Set("id_token_hint", hint)
	}
	sep := "?"
	if strings.Contains(s.endSession, "?") {
		sep = "&"
	}
	res.Status, res.Body = http.StatusOK, map[string]string{"end_session_url": s.endSession + sep + q.Encode()}
	return res, nil
}

// SafeReturnTo keeps return_to only when it is a path of this site:
// starting with one "/", no scheme or host, no backslash (browsers read
// "/\evil.example" as "//evil.example"), no encoded slash or backslash
// that a later decoding could turn into one, no control characters or
// spaces. Anything else is FallbackReturn.
func SafeReturnTo(v string) string {
	if len(v) < 1 || len(v) > 2048 || v[0] != '/' {
		return FallbackReturn
	}
	lower := strings.ToLower(v)
	if strings.ContainsAny(v, "\\") || strings.Contains(lower, "%2f") || strings.Contains(lower, "%5c") {
		return FallbackReturn
	}
	for i := 0; i < len(v); i++ {
		if v[i] <= 0x20 || v[i] == 0x7f {
			return FallbackReturn
		}
	}
	u, err := url.Parse(v)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || !strings.HasPrefix(u.Path, "/") {
		return FallbackReturn
	}
	return v
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
