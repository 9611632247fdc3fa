package auth_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/auth"
	"github.com/facade-dev/facade/auth/demoidp"
	"github.com/facade-dev/facade/internal/testclock"
)

// people are the provider's demo people in these tests.
var people = []demoidp.Person{
	{Subject: "u-bob", Username: "bob", Name: "Bob", Role: "professor", Groups: []string{"english-staff", "graders"}, About: "professor"},
	{Subject: "u-alice", Username: "alice", Name: "Alice", Role: "student", About: "student"},
	{Subject: "u-mallory", Username: "mallory", Name: "Mallory", Role: "student", About: "the attacker"},
}

// idp is a real embedded OpenID provider on a loopback port.
type idp struct {
	url string
	*demoidp.Provider
}

// startIDP serves a provider knowing clients "facade" and "other", both
// redirecting to the relying party at rpURL.
func startIDP(t *testing.T, rpURL string) *idp {
	t.Helper()
	var h http.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	clients := []demoidp.Client{}
	for _, id := range []string{"facade", "other"} {
		clients = append(clients, demoidp.Client{ID: id, RedirectURIs: []string{rpURL + "/auth/callback"},
			PostLogoutURIs: []string{rpURL + "/ui/"}})
	}
	p, err := demoidp.New(demoidp.Config{Issuer: srv.URL, People: people, Clients: clients})
	if err != nil {
		t.Fatal(err)
	}
	h = p
	return &idp{url: srv.URL, Provider: p}
}

// rp is a relying party (SignIn and Sessions) served on a loopback port
// with a protected /whoami, and the provider it signs in at.
type rp struct {
	t        *testing.T
	url      string
	idp      *idp
	clock    *testclock.Clock
	sessions *auth.Sessions
	signin   *auth.SignIn
	swap     *tokenSwap
	keys     [][]byte
}

type rpOption func(*auth.SignInConfig, *auth.SessionConfig)

func withClientID(id string) rpOption {
	return func(c *auth.SignInConfig, _ *auth.SessionConfig) { c.ClientID = id }
}

func withKeys(keys ...[]byte) rpOption {
	return func(_ *auth.SignInConfig, s *auth.SessionConfig) { s.Keys = keys }
}

func withLifetime(d time.Duration) rpOption {
	return func(_ *auth.SignInConfig, s *auth.SessionConfig) { s.Lifetime = d }
}

var testKey = bytes.Repeat([]byte{7}, 32)

// startRP starts a provider and a relying party signing in at it. Its
// clock starts at the machine's time (the provider signs with it).
func startRP(t *testing.T, opts ...rpOption) *rp {
	t.Helper()
	var h http.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	p := &rp{t: t, url: srv.URL, idp: startIDP(t, srv.URL), clock: testclock.New(), swap: &tokenSwap{}}
	p.clock.Advance(time.Since(p.clock.Now()))
	sc := auth.SessionConfig{Keys: [][]byte{testKey}, Now: p.clock.Now}
	cfg := auth.SignInConfig{
		Issuer: p.idp.url, ClientID: "facade", PublicURL: srv.URL, Now: p.clock.Now,
		Claims:     auth.Claims{User: "preferred_username"},
		HTTPClient: &http.Client{Transport: p.swap, Timeout: 10 * time.Second},
	}
	for _, o := range opts {
		o(&cfg, &sc)
	}
	var err error
	if p.sessions, err = auth.NewSessions(sc); err != nil {
		t.Fatal(err)
	}
	p.keys = sc.Keys
	cfg.Sessions = p.sessions
	if p.signin, err = auth.NewSignIn(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /auth/login", handle(p.signin.Login))
	mux.HandleFunc("GET /auth/callback", handle(p.signin.Callback))
	mux.HandleFunc("POST /auth/logout", handle(p.signin.Logout))
	mux.HandleFunc("GET /whoami", p.whoami)
	mux.HandleFunc("POST /change", p.change)
	h = mux
	return p
}

// whoami stands for an API route: the session if the request may use it.
func (p *rp) whoami(w http.ResponseWriter, r *http.Request) {
	id, ok, err := p.open(r)
	if err != nil || !ok {
		fail(w, r, cmp(err, errors.New("no session")))
		return
	}
	_ = auth.Me(w, r.WithContext(auth.WithIdentity(r.Context(), id)))
}

// handle answers a handler's error as the HTTP layer would (fail).
func handle(h func(http.ResponseWriter, *http.Request) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			fail(w, r, err)
		}
	}
}

// change stands for an unsafe API route on the session.
func (p *rp) change(w http.ResponseWriter, r *http.Request) {
	id, ok, err := p.open(r)
	if err != nil || !ok {
		fail(w, r, cmp(err, errors.New("no session")))
		return
	}
	if err := auth.CheckXSRF(r, id); err != nil {
		fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (p *rp) open(r *http.Request) (auth.Identity, bool, error) {
	if !auth.SameOrigin(r, p.signin.Origin()) {
		return auth.Identity{}, false, nil
	}
	return p.sessions.Open(r)
}

func cmp(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// fail writes the error's code with a status like the HTTP layer's.
func fail(w http.ResponseWriter, _ *http.Request, err error) {
	code := facade.CodeOf(err)
	status := map[facade.Code]int{
		auth.ErrSignInFailed.Code: 400, auth.ErrSessionExpired.Code: 401, auth.ErrSessionInvalid.Code: 401,
		auth.ErrXSRF.Code: 403,
	}[code]
	if status == 0 {
		status = 401
	}
	http.Error(w, string(code), status)
}

// tokenSwap is the relying party's transport to the provider. When idToken
// is set, it replaces the ID token in the provider's next token answer:
// what a provider under an attacker's control, or a token stolen
// elsewhere, would present.
type tokenSwap struct {
	mu      sync.Mutex
	idToken string
}

func (s *tokenSwap) set(tok string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.idToken = tok
}

func (s *tokenSwap) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil || !strings.HasSuffix(r.URL.Path, "/oauth/token") {
		return resp, err
	}
	s.mu.Lock()
	swap := s.idToken
	s.idToken = ""
	s.mu.Unlock()
	if swap == "" {
		return resp, nil
	}
	var body map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	body["id_token"] = swap
	b, _ := json.Marshal(body)
	resp.Body = io.NopCloser(bytes.NewReader(b))
	resp.ContentLength = int64(len(b))
	resp.Header.Del("Content-Length")
	return resp, nil
}

// browser is one person's browser: a cookie jar, redirects followed by
// hand so each hop can be seen.
type browser struct {
	t      *testing.T
	client *http.Client
	jar    *cookiejar.Jar
}

func newBrowser(t *testing.T) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, jar: jar, client: &http.Client{
		Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// do sends a request as this browser's own page would (same origin).
func (b *browser) do(method, u string, header http.Header, form url.Values) *http.Response {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, u, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := b.client.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, u, err)
	}
	b.t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func (b *browser) get(u string) *http.Response { return b.do(http.MethodGet, u, nil, nil) }

// startSignIn visits /auth/login and returns the provider's authorize URL.
func (b *browser) startSignIn(p *rp, returnTo string) *url.URL {
	b.t.Helper()
	resp := b.get(p.url + "/auth/login?return_to=" + url.QueryEscape(returnTo))
	if resp.StatusCode != http.StatusFound {
		b.t.Fatalf("/auth/login: %d", resp.StatusCode)
	}
	u, _ := url.Parse(resp.Header.Get("Location"))
	return u
}

// atProvider follows the authorize URL to the provider's sign-in page,
// picks person, and returns the callback URL the provider sends back to.
func (b *browser) atProvider(authorize *url.URL, person string) *url.URL {
	b.t.Helper()
	resp := b.get(authorize.String())
	if resp.StatusCode != http.StatusFound && resp.StatusCode != http.StatusSeeOther {
		body, _ := io.ReadAll(resp.Body)
		b.t.Fatalf("authorize: %d %s", resp.StatusCode, body)
	}
	login, _ := authorize.Parse(resp.Header.Get("Location"))
	page := b.get(login.String())
	if page.StatusCode != http.StatusOK {
		b.t.Fatalf("sign-in page: %d", page.StatusCode)
	}
	resp = b.do(http.MethodPost, login.Scheme+"://"+login.Host+"/login", nil,
		url.Values{"id": {login.Query().Get("authRequestID")}, "person": {person}})
	next, _ := login.Parse(resp.Header.Get("Location"))
	resp = b.get(next.String()) // the provider's authorize callback
	cb, _ := next.Parse(resp.Header.Get("Location"))
	if cb.Query().Get("code") == "" {
		b.t.Fatalf("the provider did not send a code: %s (%d)", cb, resp.StatusCode)
	}
	return cb
}

// signIn runs the whole flow and returns the callback's answer.
func (b *browser) signIn(p *rp, person, returnTo string) *http.Response {
	b.t.Helper()
	return b.get(b.atProvider(b.startSignIn(p, returnTo), person).String())
}

func (b *browser) cookie(p *rp, name string) *http.Cookie {
	u, _ := url.Parse(p.url)
	for _, c := range b.jar.Cookies(u) {
		if c.Name == name {
			return c
		}
	}
	return nil
}

func (b *browser) setCookie(p *rp, c *http.Cookie) {
	u, _ := url.Parse(p.url)
	b.jar.SetCookies(u, []*http.Cookie{c})
}

// me reads /whoami as this browser's page: the code of a refusal, or sub.
func (b *browser) me(p *rp) (int, string) {
	b.t.Helper()
	resp := b.do(http.MethodGet, p.url+"/whoami", http.Header{"Sec-Fetch-Site": {"same-origin"}}, nil)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, strings.TrimSpace(string(body))
	}
	var me struct{ Sub string }
	_ = json.Unmarshal(body, &me)
	return resp.StatusCode, me.Sub
}

// idToken is a real ID token from provider i for clientID and nonce,
// obtained by a flow of its own (PKCE, as any client of it).
func idToken(t *testing.T, i *idp, clientID, redirect, person, nonce string) string {
	t.Helper()
	b := newBrowser(t)
	verifier := "test-verifier-0123456789-0123456789-0123456789"
	q := url.Values{
		"client_id": {clientID}, "redirect_uri": {redirect}, "response_type": {"code"},
		"scope": {"openid profile"}, "state": {"s"}, "nonce": {nonce},
		"code_challenge": {oauth2.S256ChallengeFromVerifier(verifier)}, "code_challenge_method": {"S256"},
	}
	authorize, _ := url.Parse(i.url + "/authorize?" + q.Encode())
	cb := b.atProvider(authorize, person)
	resp, err := http.PostForm(i.url+"/oauth/token", url.Values{
		"grant_type": {"authorization_code"}, "code": {cb.Query().Get("code")}, "redirect_uri": {redirect},
		"client_id": {clientID}, "code_verifier": {verifier},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		IDToken string `json:"id_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || tok.IDToken == "" {
		t.Fatalf("no ID token from the provider: %v", err)
	}
	return tok.IDToken
}
