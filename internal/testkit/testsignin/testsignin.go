// Package testsignin is a scripted browser for sign-in tests: a cookie
// jar, redirects followed one hop at a time so each can be inspected, and
// the steps of signing in at the embedded provider (auth/demoidp) by its
// sign-in page. It speaks plain HTTP as a browser would; the tests that
// need a real browser use internal/testkit/testbrowser.
package testsignin

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

// Browser is one person's browser: a cookie jar, redirects followed by
// hand so each hop can be seen.
type Browser struct {
	T      testing.TB
	Client *http.Client
	Jar    *cookiejar.Jar
}

// NewBrowser starts with no cookies.
func NewBrowser(t testing.TB) *Browser {
	jar, _ := cookiejar.New(nil)
	return &Browser{T: t, Jar: jar, Client: &http.Client{
		Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// Do sends a request as this browser's own page would (same origin).
func (b *Browser) Do(method, u string, header http.Header, form url.Values) *http.Response {
	b.T.Helper()
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
	resp, err := b.Client.Do(req)
	if err != nil {
		b.T.Fatalf("%s %s: %v", method, u, err)
	}
	b.T.Cleanup(func() { resp.Body.Close() })
	return resp
}

// Get is a GET of u.
func (b *Browser) Get(u string) *http.Response { return b.Do(http.MethodGet, u, nil, nil) }

// StartSignIn visits base's /auth/login and returns the provider's authorize URL.
func (b *Browser) StartSignIn(base, returnTo string) *url.URL {
	b.T.Helper()
	resp := b.Get(base + "/auth/login?return_to=" + url.QueryEscape(returnTo))
	if resp.StatusCode != http.StatusFound {
		b.T.Fatalf("/auth/login: %d", resp.StatusCode)
	}
	u, _ := url.Parse(resp.Header.Get("Location"))
	return u
}

// AtProvider follows the authorize URL to the provider's sign-in page,
// picks person, and returns the callback URL the provider sends back to.
func (b *Browser) AtProvider(authorize *url.URL, person string) *url.URL {
	b.T.Helper()
	resp := b.Get(authorize.String())
	if resp.StatusCode != http.StatusFound && resp.StatusCode != http.StatusSeeOther {
		body, _ := io.ReadAll(resp.Body)
		b.T.Fatalf("authorize: %d %s", resp.StatusCode, body)
	}
	login, _ := authorize.Parse(resp.Header.Get("Location"))
	page := b.Get(login.String())
	if page.StatusCode != http.StatusOK {
		b.T.Fatalf("sign-in page: %d", page.StatusCode)
	}
	resp = b.Do(http.MethodPost, login.Scheme+"://"+login.Host+"/login", nil,
		url.Values{"id": {login.Query().Get("authRequestID")}, "person": {person}})
	next, _ := login.Parse(resp.Header.Get("Location"))
	resp = b.Get(next.String()) // the provider's authorize callback
	cb, _ := next.Parse(resp.Header.Get("Location"))
	if cb.Query().Get("code") == "" {
		b.T.Fatalf("the provider did not send a code: %s (%d)", cb, resp.StatusCode)
	}
	return cb
}

// SignIn runs the whole flow at base and returns the callback's answer.
func (b *Browser) SignIn(base, person, returnTo string) *http.Response {
	b.T.Helper()
	return b.Get(b.AtProvider(b.StartSignIn(base, returnTo), person).String())
}

// Cookie is the cookie name the browser holds for base.
func (b *Browser) Cookie(base, name string) *http.Cookie {
	u, _ := url.Parse(base)
	for _, c := range b.Jar.Cookies(u) {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// SetCookie stores c for base, as a script or another site could.
func (b *Browser) SetCookie(base string, c *http.Cookie) {
	u, _ := url.Parse(base)
	b.Jar.SetCookies(u, []*http.Cookie{c})
}

// IDToken is a real ID token from the provider at issuer for clientID and nonce,
// obtained by a flow of its own (PKCE, as any client of it).
func IDToken(t testing.TB, issuer, clientID, redirect, person, nonce string) string {
	t.Helper()
	b := NewBrowser(t)
	verifier := "test-verifier-0123456789-0123456789-0123456789"
	q := url.Values{
		"client_id": {clientID}, "redirect_uri": {redirect}, "response_type": {"code"},
		"scope": {"openid profile"}, "state": {"s"}, "nonce": {nonce},
		"code_challenge": {oauth2.S256ChallengeFromVerifier(verifier)}, "code_challenge_method": {"S256"},
	}
	authorize, _ := url.Parse(issuer + "/authorize?" + q.Encode())
	cb := b.AtProvider(authorize, person)
	resp, err := http.PostForm(issuer+"/oauth/token", url.Values{
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
