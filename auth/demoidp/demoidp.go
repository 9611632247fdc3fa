// Package demoidp is a real OpenID provider for `facade demo` and the
// tests, built on zitadel/oidc's op package (an OpenID Certified provider
// library): discovery, authorization code flow with PKCE, signed ID
// tokens, keys, userinfo, end session. Only the sign-in page and the
// in-memory storage are ours: a page that lists the demo people, each
// signed in with one click and no password. It is for trying Facade out
// and for testing its relying party against a provider that behaves like
// the organization's, never for production.
package demoidp

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	_ "embed"
	"encoding/hex"
	"errors"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// Person is one demo person the sign-in page lists.
type Person struct {
	Subject  string   // the ID token's sub: unique at this provider
	Username string   // preferred_username
	Name     string   // name, shown on the page
	About    string   // one line on the page: what this person may do
	Role     string   // the "role" claim
	Groups   []string // the "groups" claim
}

// Client is one relying party registered at the provider. Without a
// Secret it is a public client: PKCE proves it.
type Client struct {
	ID, Secret      string
	RedirectURIs    []string
	PostLogoutURIs  []string
	IDTokenLifetime time.Duration // zero: one hour
}

// Config is the provider's issuer, people and clients.
type Config struct {
	Issuer  string // e.g. http://127.0.0.1:9000, where the handler is served
	People  []Person
	Clients []Client
	Log     *slog.Logger
	// Now is the clock sign-ins and access tokens are timed by; nil means
	// time.Now. (The ID token's iat and exp come from the OIDC library,
	// which reads time.Now.)
	Now func() time.Time
}

// Provider is the http.Handler serving the provider.
type Provider struct {
	http.Handler
	store *storage
}

// New builds the provider with a fresh signing key. It takes one Config
// and no required parts, the components' shape (README, after the Layout
// table).
func New(cfg Config) (*Provider, error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	st := &storage{
		people: map[string]Person{}, clients: map[string]*client{},
		requests: map[string]*authRequest{}, codes: map[string]string{}, tokens: map[string]*token{},
		key: signingKey{id: randomHex(8), key: key}, now: cfg.Now,
	}
	for _, p := range cfg.People {
		st.people[p.Subject] = p
		st.order = append(st.order, p.Subject)
	}
	var formTargets []string
	for _, c := range cfg.Clients {
		st.clients[c.ID] = &client{c}
		for _, u := range c.RedirectURIs {
			if pu, err := url.Parse(u); err == nil {
				formTargets = append(formTargets, pu.Scheme+"://"+pu.Host)
			}
		}
	}
	var cryptoKey [32]byte
	_, _ = rand.Read(cryptoKey[:])
	provider, err := op.NewProvider(&op.Config{
		CryptoKey:                cryptoKey,
		DefaultLogoutRedirectURI: "/signed-out",
		CodeMethodS256:           true,
		AuthMethodPost:           true,
	}, st, op.StaticIssuer(cfg.Issuer), op.WithAllowInsecure(), op.WithLogger(cfg.Log))
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	apps := slices.Compact(slices.Sorted(slices.Values(formTargets)))
	pg := &loginPage{store: st, callback: op.AuthCallbackURL(provider), apps: apps,
		csp: "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; frame-ancestors 'none'; form-action 'self' " +
			strings.Join(apps, " ")}
	interceptor := op.NewIssuerInterceptor(provider.IssuerFromRequest)
	mux.HandleFunc("GET /login", pg.show)
	mux.HandleFunc("POST /login", interceptor.HandlerFunc(pg.choose))
	mux.HandleFunc("GET /login.css", pg.style)
	mux.HandleFunc("GET /favicon.svg", pg.icon)
	mux.HandleFunc("GET /favicon.ico", pg.icon) // asked for by browsers whatever a page names
	mux.HandleFunc("GET /signed-out", pg.signedOut)
	mux.Handle("/", provider)
	return &Provider{Handler: mux, store: st}, nil
}

// storage is op.Storage in memory: pending sign-ins, codes, access tokens.
type storage struct {
	mu       sync.Mutex
	people   map[string]Person
	order    []string
	clients  map[string]*client
	requests map[string]*authRequest
	codes    map[string]string // code -> request id
	tokens   map[string]*token
	key      signingKey
	now      func() time.Time
}

// maxPending bounds what strangers can make the demo keep: sign-ins
// started and never finished.
const maxPending = 10000

func (s *storage) CreateAuthRequest(_ context.Context, r *oidc.AuthRequest, _ string) (op.AuthRequest, error) {
	if slices.Contains(r.Prompt, oidc.PromptNone) {
		return nil, oidc.ErrLoginRequired() // every sign-in here asks who you are
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.requests) >= maxPending {
		s.requests, s.codes = map[string]*authRequest{}, map[string]string{}
	}
	req := &authRequest{id: randomHex(16), created: s.now(), r: *r}
	s.requests[req.id] = req
	return req, nil
}

func (s *storage) AuthRequestByID(_ context.Context, id string) (op.AuthRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if req, ok := s.requests[id]; ok {
		return req, nil
	}
	return nil, errors.New("no such sign-in")
}

func (s *storage) AuthRequestByCode(ctx context.Context, code string) (op.AuthRequest, error) {
	s.mu.Lock()
	id, ok := s.codes[code]
	s.mu.Unlock()
	if !ok {
		return nil, errors.New("code unknown, used or expired")
	}
	return s.AuthRequestByID(ctx, id)
}

func (s *storage) SaveAuthCode(_ context.Context, id, code string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.codes[code] = id
	return nil
}

// DeleteAuthRequest runs once the code is exchanged: the code goes with
// it, so a replayed code finds nothing.
func (s *storage) DeleteAuthRequest(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.requests, id)
	for code, rid := range s.codes {
		if rid == id {
			delete(s.codes, code)
		}
	}
	return nil
}

func (s *storage) CreateAccessToken(_ context.Context, r op.TokenRequest) (string, time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	clientID := ""
	if ar, ok := r.(*authRequest); ok {
		clientID = ar.r.ClientID
	}
	t := &token{id: randomHex(16), client: clientID, subject: r.GetSubject(), expires: s.now().Add(5 * time.Minute)}
	s.tokens[t.id] = t
	return t.id, t.expires, nil
}

var errNoRefresh = errors.New("refresh tokens are not offered")

func (s *storage) CreateAccessAndRefreshTokens(context.Context, op.TokenRequest, string) (string, string, time.Time, error) {
	return "", "", time.Time{}, errNoRefresh
}

func (s *storage) TokenRequestByRefreshToken(context.Context, string) (op.RefreshTokenRequest, error) {
	return nil, op.ErrInvalidRefreshToken
}

func (s *storage) GetRefreshTokenInfo(context.Context, string, string) (string, string, error) {
	return "", "", op.ErrInvalidRefreshToken
}

// TerminateSession is the end session endpoint's work: this provider keeps
// no sign-in session of its own (every sign-in asks), so it revokes the
// person's access tokens for that client.
func (s *storage) TerminateSession(_ context.Context, userID, clientID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, t := range s.tokens {
		if t.subject == userID && t.client == clientID {
			delete(s.tokens, id)
		}
	}
	return nil
}

func (s *storage) RevokeToken(_ context.Context, tokenOrID, _, clientID string) *oidc.Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.tokens[tokenOrID]; ok && t.client == clientID {
		delete(s.tokens, tokenOrID)
	}
	return nil
}

func (s *storage) SigningKey(context.Context) (op.SigningKey, error) { return &s.key, nil }

func (s *storage) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.RS256}, nil
}

func (s *storage) KeySet(context.Context) ([]op.Key, error) {
	return []op.Key{publicKey{s.key}}, nil
}

func (s *storage) GetClientByClientID(_ context.Context, id string) (op.Client, error) {
	if c, ok := s.clients[id]; ok {
		return c, nil
	}
	return nil, errors.New("unknown client")
}

func (s *storage) AuthorizeClientIDSecret(_ context.Context, id, secret string) error {
	c, ok := s.clients[id]
	if !ok || c.Secret == "" || c.Secret != secret {
		return errors.New("client authentication failed")
	}
	return nil
}

func (s *storage) SetUserinfoFromScopes(context.Context, *oidc.UserInfo, string, string, []string) error {
	return nil // SetUserinfoFromRequest does it
}

// SetUserinfoFromRequest fills the ID token's claims: profile and email as
// scoped, role and groups always (they are what the relying party needs).
func (s *storage) SetUserinfoFromRequest(_ context.Context, ui *oidc.UserInfo, r op.IDTokenRequest, scopes []string) error {
	return s.userinfo(ui, r.GetSubject(), scopes)
}

func (s *storage) SetUserinfoFromToken(_ context.Context, ui *oidc.UserInfo, tokenID, subject, _ string) error {
	s.mu.Lock()
	t, ok := s.tokens[tokenID]
	s.mu.Unlock()
	if !ok || t.subject != subject || s.now().After(t.expires) {
		return errors.New("token unknown or expired")
	}
	return s.userinfo(ui, subject, []string{oidc.ScopeOpenID, oidc.ScopeProfile, oidc.ScopeEmail})
}

func (s *storage) userinfo(ui *oidc.UserInfo, subject string, scopes []string) error {
	p, ok := s.people[subject]
	if !ok {
		return errors.New("unknown person")
	}
	ui.Subject = p.Subject
	if slices.Contains(scopes, oidc.ScopeProfile) {
		ui.PreferredUsername, ui.Name = p.Username, p.Name
	}
	if slices.Contains(scopes, oidc.ScopeEmail) {
		ui.Email, ui.EmailVerified = p.Username+"@demo.invalid", true
	}
	if p.Role != "" {
		ui.AppendClaims("role", p.Role)
	}
	ui.AppendClaims("groups", append([]string{}, p.Groups...))
	return nil
}

func (s *storage) SetIntrospectionFromToken(context.Context, *oidc.IntrospectionResponse, string, string, string) error {
	return errors.New("introspection is not offered")
}

func (s *storage) GetPrivateClaimsFromScopes(context.Context, string, string, []string) (map[string]any, error) {
	return nil, nil
}

func (s *storage) GetKeyByIDAndClientID(context.Context, string, string) (*jose.JSONWebKey, error) {
	return nil, errors.New("JWT profile grants are not offered")
}

func (s *storage) ValidateJWTProfileScopes(context.Context, string, []string) ([]string, error) {
	return nil, errors.New("JWT profile grants are not offered")
}

func (s *storage) Health(context.Context) error { return nil }

// signIn marks a pending sign-in as done by person.
func (s *storage) signIn(id, person string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	req, ok := s.requests[id]
	if _, known := s.people[person]; !ok || !known {
		return errors.New("unknown sign-in or person")
	}
	req.subject, req.done, req.authTime = person, true, s.now()
	return nil
}

type token struct {
	id, client, subject string
	expires             time.Time
}

type signingKey struct {
	id  string
	key *rsa.PrivateKey
}

func (k *signingKey) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k *signingKey) Key() any                                    { return k.key }
func (k *signingKey) ID() string                                  { return k.id }

type publicKey struct{ signingKey }

func (k publicKey) ID() string                         { return k.id }
func (k publicKey) Algorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k publicKey) Use() string                        { return "sig" }
func (k publicKey) Key() any                           { return &k.key.PublicKey }

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// authRequest is one pending sign-in (op.AuthRequest).
type authRequest struct {
	id       string
	created  time.Time
	r        oidc.AuthRequest
	subject  string
	done     bool
	authTime time.Time
}

func (a *authRequest) GetID() string                      { return a.id }
func (a *authRequest) GetACR() string                     { return "" }
func (a *authRequest) GetAMR() []string                   { return []string{"demo"} }
func (a *authRequest) GetAudience() []string              { return []string{a.r.ClientID} }
func (a *authRequest) GetAuthTime() time.Time             { return a.authTime }
func (a *authRequest) GetClientID() string                { return a.r.ClientID }
func (a *authRequest) GetNonce() string                   { return a.r.Nonce }
func (a *authRequest) GetRedirectURI() string             { return a.r.RedirectURI }
func (a *authRequest) GetResponseType() oidc.ResponseType { return a.r.ResponseType }
func (a *authRequest) GetResponseMode() oidc.ResponseMode { return a.r.ResponseMode }
func (a *authRequest) GetScopes() []string                { return a.r.Scopes }
func (a *authRequest) GetState() string                   { return a.r.State }
func (a *authRequest) GetSubject() string                 { return a.subject }
func (a *authRequest) Done() bool                         { return a.done }
func (a *authRequest) GetCodeChallenge() *oidc.CodeChallenge {
	if a.r.CodeChallenge == "" {
		return nil
	}
	return &oidc.CodeChallenge{Challenge: a.r.CodeChallenge, Method: a.r.CodeChallengeMethod}
}

// client is a registered relying party (op.Client).
type client struct{ Client }

func (c *client) GetID() string                       { return c.ID }
func (c *client) RedirectURIs() []string              { return c.Client.RedirectURIs }
func (c *client) PostLogoutRedirectURIs() []string    { return c.PostLogoutURIs }
func (c *client) ApplicationType() op.ApplicationType { return op.ApplicationTypeWeb }
func (c *client) AuthMethod() oidc.AuthMethod {
	if c.Secret == "" {
		return oidc.AuthMethodNone
	}
	return oidc.AuthMethodPost
}
func (c *client) ResponseTypes() []oidc.ResponseType {
	return []oidc.ResponseType{oidc.ResponseTypeCode}
}
func (c *client) GrantTypes() []oidc.GrantType        { return []oidc.GrantType{oidc.GrantTypeCode} }
func (c *client) LoginURL(id string) string           { return "/login?authRequestID=" + url.QueryEscape(id) }
func (c *client) AccessTokenType() op.AccessTokenType { return op.AccessTokenTypeBearer }
func (c *client) IDTokenLifetime() time.Duration {
	if c.Client.IDTokenLifetime > 0 {
		return c.Client.IDTokenLifetime
	}
	return time.Hour
}

// DevMode allows http redirect URIs: the demo runs on loopback.
func (c *client) DevMode() bool { return true }
func (c *client) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (c *client) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (c *client) IsScopeAllowed(string) bool           { return false }
func (c *client) IDTokenUserinfoClaimsAssertion() bool { return true }
func (c *client) ClockSkew() time.Duration             { return 0 }

// loginPage is the provider's sign-in page: every demo person, one button
// each. It works with no script and under a strict CSP.
type loginPage struct {
	store    *storage
	callback func(context.Context, string) string
	csp      string
	apps     []string // the origins of the applications it signs in to
}

//go:embed login.html
var loginHTML string

//go:embed login.css
var loginCSS []byte

// faviconSVG is the icon every page names: without one a browser asks
// for /favicon.ico and logs the miss in the console.
//
//go:embed favicon.svg
var faviconSVG []byte

var loginTemplate = template.Must(template.New("login").Parse(loginHTML))

func (l *loginPage) headers(w http.ResponseWriter, contentType string) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Content-Security-Policy", l.csp)
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
}

func (l *loginPage) show(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("authRequestID")
	if _, err := l.store.AuthRequestByID(r.Context(), id); err != nil {
		l.deadEnd(w, http.StatusBadRequest, "This sign-in has expired or is unknown", "Start again from the application: its sign-in brings you back here.")
		return
	}
	var people []Person
	for _, k := range l.store.order {
		people = append(people, l.store.people[k])
	}
	l.headers(w, "text/html; charset=utf-8")
	_ = loginTemplate.Execute(w, struct {
		ID     string
		People []Person
	}{id, people})
}

func (l *loginPage) choose(w http.ResponseWriter, r *http.Request) {
	id := r.PostFormValue("id")
	if err := l.store.signIn(id, r.PostFormValue("person")); err != nil {
		l.deadEnd(w, http.StatusBadRequest, "This sign-in has expired or is unknown", "Start again from the application: its sign-in brings you back here.")
		return
	}
	http.Redirect(w, r, l.callback(r.Context(), id), http.StatusSeeOther)
}

func (l *loginPage) style(w http.ResponseWriter, _ *http.Request) {
	l.headers(w, "text/css; charset=utf-8")
	_, _ = w.Write(loginCSS)
}

func (l *loginPage) icon(w http.ResponseWriter, _ *http.Request) {
	l.headers(w, "image/svg+xml")
	_, _ = w.Write(faviconSVG)
}

func (l *loginPage) signedOut(w http.ResponseWriter, _ *http.Request) {
	l.deadEnd(w, http.StatusOK, "Signed out of the demo provider", "You are signed out of the application and of this provider.")
}

// deadEndTemplate is a page where a person's way through the provider
// ends: it says what happened and links back to each application, so
// nobody is left on a bare sentence.
var deadEndTemplate = template.Must(template.New("end").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>{{.Title}}: Facade demo identity provider</title>
<link rel="stylesheet" href="/login.css">
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
</head>
<body>
<main>
  <h1>{{.Title}}</h1>
  <p>{{.Next}}</p>
  <ul>{{range .Apps}}
    <li><a id="back" href="{{.}}/ui/">Back to Facade ({{.}})</a></li>{{end}}
  </ul>
</main>
</body>
</html>
`))

func (l *loginPage) deadEnd(w http.ResponseWriter, status int, title, next string) {
	l.headers(w, "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = deadEndTemplate.Execute(w, struct {
		Title, Next string
		Apps        []string
	}{title, next, l.apps})
}
