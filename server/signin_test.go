package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade/auth"
	"github.com/facade-dev/facade/auth/demoidp"
	"github.com/facade-dev/facade/internal/testkit/testclock"
	"github.com/facade-dev/facade/internal/testkit/testsignin"
)

// signInEnv is browser sign-in for a test server: the embedded provider
// with these people, and the sessions' clock.
type signInEnv struct {
	clock  *testclock.Clock
	issuer string
	// sessions is the server's, for ops' list and revoke.
	sessions *auth.Sessions
	// idTokenLifetime is the provider's (zero: its one hour), which a
	// session never outlives.
	idTokenLifetime time.Duration
	// count, when set, counts the commands the sessions send to Redis.
	count *commandCount
	// provider, when set, serves the provider at issuer instead of the
	// embedded one (a test that signs as the provider itself).
	provider func(issuer string) http.Handler
}

// withSignIn turns browser sign-in on, at a real embedded provider whose
// people are the test policy's (ID token sub = preferred_username here).
func withSignIn(si *signInEnv) envOption { return func(c *envConfig) { c.signIn = si } }

var signInPeople = []demoidp.Person{
	{Subject: "bob", Username: "bob", Name: "Bob", Role: "professor", Groups: []string{"english-staff"}},
	{Subject: "erin", Username: "erin", Name: "Erin", Role: "professor"},
	{Subject: "alice", Username: "alice", Name: "Alice", Role: "student"},
	{Subject: "carol", Username: "carol", Name: "Carol", Role: "developer"},
}

func (si *signInEnv) start(t testing.TB, publicURL string, log *slog.Logger, rdb redis.UniversalClient) (*auth.SignIn, *auth.Sessions) {
	t.Helper()
	var h http.Handler
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(idp.Close)
	if si.provider != nil {
		h = si.provider(idp.URL)
	} else {
		p, err := demoidp.New(demoidp.Config{Issuer: idp.URL, People: signInPeople, Clients: []demoidp.Client{{
			ID: "facade", RedirectURIs: []string{publicURL + auth.CallbackPath}, PostLogoutURIs: []string{publicURL + "/ui/"},
			IDTokenLifetime: si.idTokenLifetime,
		}}})
		if err != nil {
			t.Fatal(err)
		}
		h = p
	}
	si.issuer = idp.URL
	si.clock = testclock.New()
	si.clock.Advance(time.Since(si.clock.Now())) // the provider signs on the machine's clock
	if si.count != nil {
		counted := redis.NewClient(rdb.(*redis.Client).Options())
		counted.AddHook(si.count)
		t.Cleanup(func() { _ = counted.Close() })
		rdb = counted
	}
	sessions, err := auth.NewSessions(rdb, auth.SessionConfig{Keys: [][]byte{bytes.Repeat([]byte{9}, 32)}, Now: si.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	si.sessions = sessions
	signin, err := auth.NewSignIn(context.Background(), sessions, auth.SignInConfig{
		Issuer: idp.URL, ClientID: "facade", PublicURL: publicURL, Now: si.clock.Now, Log: log,
	})
	if err != nil {
		t.Fatal(err)
	}
	return signin, sessions
}

// signedIn is a browser signed in as person at e.
func signedIn(t *testing.T, e *env, person string) *testsignin.Browser {
	t.Helper()
	b := testsignin.NewBrowser(t)
	if resp := b.SignIn(e.url, person, "/ui/"); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in as %s: %d", person, resp.StatusCode)
	}
	return b
}

// fromPage sends one request from b's page (same origin unless header says
// otherwise), with b's cookies, and returns status, code or body.
func fromPage(t *testing.T, e *env, b *testsignin.Browser, method, path string, header http.Header, body string) (int, string) {
	t.Helper()
	h := http.Header{"Sec-Fetch-Site": {"same-origin"}}
	for k, v := range header {
		if len(v) == 1 && v[0] == "" {
			h.Del(k) // as a browser that does not send it
			continue
		}
		h[k] = v
	}
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
		h.Set("Content-Type", "application/json")
	}
	req, _ := http.NewRequest(method, e.url+path, r)
	req.Header = h
	res, err := b.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	checkAgainstOpenAPI(t, req, body, resp{status: res.StatusCode, header: res.Header, body: string(out)})
	if res.StatusCode >= 400 {
		return res.StatusCode, problemCode(out)
	}
	return res.StatusCode, string(out)
}

// problemCode is a problem body's wire code.
func problemCode(body []byte) string {
	var p struct{ Code string }
	_ = json.Unmarshal(body, &p)
	return p.Code
}

// TestSessionsAndBearerTokensSideBySide: a browser signed in at the
// provider uses the API with its session cookie; bearer tokens keep
// working on the same server; /auth/me says which.
func TestSessionsAndBearerTokensSideBySide(t *testing.T) {
	e := newEnv(t, withSignIn(&signInEnv{}))
	seedGrades(t, e)
	b := signedIn(t, e, "bob")
	// The sign-in's own line names its request, as every line logged
	// during a request does.
	signedInLine := ""
	for line := range strings.SplitSeq(e.logs.String(), "\n") {
		if strings.Contains(line, `"msg":"signed in"`) {
			signedInLine = line
		}
	}
	if !strings.Contains(signedInLine, `"principal":"bob"`) || !strings.Contains(signedInLine, `"request_id":"`) || strings.Contains(signedInLine, `"request_id":""`) {
		t.Errorf("the sign-in's log line: %q", signedInLine)
	}

	status, body := fromPage(t, e, b, http.MethodGet, "/auth/me", nil, "")
	var me map[string]any
	_ = json.Unmarshal([]byte(body), &me)
	if status != 200 || me["sub"] != "bob" || me["role"] != "professor" || me["via"] != "session" || me["expires_at"] == "" {
		t.Fatalf("/auth/me on the session: %d %s", status, body)
	}
	if groups, _ := me["groups"].([]any); len(groups) != 1 || groups[0] != "english-staff" {
		t.Fatalf("groups from the ID token: %v", me["groups"])
	}
	if status, body := fromPage(t, e, b, http.MethodGet, "/student/alice/english/grade", nil, ""); status != 200 || !strings.Contains(body, `"B"`) {
		t.Fatalf("a grade on the session: %d %s", status, body)
	}

	r := e.do(req{method: "GET", path: "/auth/me", token: token(t, "carol", "developer")})
	if r.status != 200 || !strings.Contains(r.body, `"via":"bearer"`) || !strings.Contains(r.body, `"sub":"carol"`) {
		t.Fatalf("/auth/me with a bearer token: %d %s", r.status, r.body)
	}
	// A bearer token sent with a session cookie decides: the token is what
	// the client chose to present.
	status, body = fromPage(t, e, b, http.MethodGet, "/auth/me", http.Header{"Authorization": {"Bearer " + token(t, "carol", "developer")}}, "")
	if status != 200 || !strings.Contains(body, `"sub":"carol"`) {
		t.Fatalf("bearer with a session cookie: %d %s", status, body)
	}
}

// TestSessionCookieIgnoredFromOtherOrigins: the cookie counts only on
// requests from the service's own pages; another site's page, a sibling
// subdomain or an old browser's foreign Origin is a caller without
// credentials. Pre-flights never read it.
func TestSessionCookieIgnoredFromOtherOrigins(t *testing.T) {
	e := newEnv(t, withSignIn(&signInEnv{}), withWriteOrigins("https://app.example"))
	seedGrades(t, e)
	b := signedIn(t, e, "bob")
	for name, h := range map[string]http.Header{
		"cross-site":           {"Sec-Fetch-Site": {"cross-site"}, "Origin": {"https://evil.example"}},
		"sibling subdomain":    {"Sec-Fetch-Site": {"same-site"}, "Origin": {"https://intranet.example"}},
		"allowed write origin": {"Sec-Fetch-Site": {"cross-site"}, "Origin": {"https://app.example"}},
		"old browser":          {"Sec-Fetch-Site": {""}, "Origin": {"https://app.example"}},
	} {
		if status, code := fromPage(t, e, b, http.MethodGet, "/student/alice/english/grade", h, ""); status != 401 || code != "token-missing" {
			t.Errorf("%s: %d %s", name, status, code)
		}
	}
	// A pre-flight with a broken session cookie is answered by CORS alone.
	b.SetCookie(e.url, &http.Cookie{Name: "facade-session", Value: "tampered"})
	status, _ := fromPage(t, e, b, http.MethodOptions, "/student/alice/english/grade", http.Header{
		"Sec-Fetch-Site": {"cross-site"}, "Origin": {"https://app.example"}, "Access-Control-Request-Method": {"PUT"},
	}, "")
	if status != http.StatusNoContent {
		t.Fatalf("pre-flight with a tampered session cookie: %d", status)
	}
	if status, code := fromPage(t, e, b, http.MethodGet, "/rs/account", nil, ""); status != 401 || code != "session-invalid" {
		t.Fatalf("the tampered cookie on a same-origin call: %d %s", status, code)
	}
	if status, body := fromPage(t, e, b, http.MethodGet, "/auth/me", nil, ""); status != 200 || body != `{"signed_in":false,"sign_in":"/auth/login"}`+"\n" {
		t.Fatalf("/auth/me with a tampered cookie: %d %s", status, body)
	}
}

// TestSessionWritesNeedTheSessionsXSRFToken: a change on the session needs
// the X-XSRF-TOKEN issued with it; any other value, or a cookie planted by
// a sibling subdomain echoed in the header, is 403 before anything is
// written.
func TestSessionWritesNeedTheSessionsXSRFToken(t *testing.T) {
	e := newEnv(t, withSignIn(&signInEnv{}), withPageOrigin())
	seedGrades(t, e)
	b := signedIn(t, e, "bob")
	own := b.Cookie(e.url, "XSRF-TOKEN")
	put := func(xsrf string) (int, string) {
		return fromPage(t, e, b, http.MethodPut, "/student/alice/english/grade", http.Header{"X-Xsrf-Token": {xsrf}}, `{"grade":"A"}`)
	}
	if status, code := put("t0k3n"); status != 403 || code != "xsrf" {
		t.Fatalf("a made-up token on the session: %d %s", status, code)
	}
	b.SetCookie(e.url, &http.Cookie{Name: "XSRF-TOKEN", Value: "planted", Path: "/"})
	if status, code := put("planted"); status != 403 || code != "xsrf" {
		t.Fatalf("a sibling's planted cookie: %d %s", status, code)
	}
	b.SetCookie(e.url, own)
	if status, body := put(own.Value); status != 200 || !strings.Contains(body, `"A"`) {
		t.Fatalf("the session's own token: %d %s", status, body)
	}
}

// TestExpiredSessionAnswersSessionExpired: past its end, the session
// answers 401 session_expired (with WWW-Authenticate) on the API, which
// the page turns into signing in again, and /auth/me answers 200 signed
// out with that reason (a signed-out page logs no error).
func TestExpiredSessionAnswersSessionExpired(t *testing.T) {
	si := &signInEnv{}
	e := newEnv(t, withSignIn(si))
	b := signedIn(t, e, "alice")
	si.clock.Advance(8*time.Hour + time.Second)
	sealed := b.Cookie(e.url, "facade-session").Value
	if r := e.do(req{method: "GET", path: "/rs/account", header: map[string]string{"Cookie": "facade-session=" + sealed}}); r.status != 401 || r.problem(t)["code"] != "session-expired" {
		t.Fatalf("expired session through the harness: %d %s", r.status, r.body)
	}
	if r := e.do(req{method: "GET", path: "/auth/me", header: map[string]string{"Cookie": "facade-session=" + sealed}}); r.status != 200 || r.body != `{"signed_in":false,"reason":"session-expired","sign_in":"/auth/login"}`+"\n" {
		t.Fatalf("/auth/me on an expired session: %d %s", r.status, r.body)
	}
	if r := e.do(req{method: "GET", path: "/rs/account", header: map[string]string{"Cookie": "facade-session=x" + sealed}}); r.status != 401 || r.problem(t)["code"] != "session-invalid" {
		t.Fatalf("tampered session: %d %s", r.status, r.body)
	}
	req, _ := http.NewRequest(http.MethodGet, e.url+"/rs/account", nil)
	resp, err := b.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if code := problemCode(body); resp.StatusCode != 401 || code != "session-expired" || resp.Header.Get("WWW-Authenticate") == "" {
		t.Fatalf("expired session: %d %q %q", resp.StatusCode, code, resp.Header.Get("WWW-Authenticate"))
	}
}

// TestSignInRoutesNeedNoCredential: /auth/login redirects anyone to the
// provider; a callback nobody started is 400 signin_failed; a logout
// from another site is refused before it clears anything.
func TestSignInRoutesNeedNoCredential(t *testing.T) {
	si := &signInEnv{}
	e := newEnv(t, withSignIn(si))
	r := e.do(req{method: "GET", path: "/auth/login?return_to=%2F%2Fevil.example"})
	if r.status != http.StatusFound || !strings.HasPrefix(r.header.Get("Location"), si.issuer+"/authorize?") {
		t.Fatalf("/auth/login: %d %q", r.status, r.header.Get("Location"))
	}
	if r := e.do(req{method: "GET", path: "/auth/callback?code=x&state=y"}); r.status != 400 || problemCode([]byte(r.body)) != "signin-failed" {
		t.Fatalf("/auth/callback nobody started: %d %s", r.status, r.body)
	}
	b := testsignin.NewBrowser(t)
	cb := b.AtProvider(b.StartSignIn(e.url, "/ui/"), "bob")
	if status, _ := fromPage(t, e, b, http.MethodGet, cb.RequestURI(), nil, ""); status != http.StatusSeeOther {
		t.Fatalf("callback: %d", status)
	}
	if r := e.do(req{method: "HEAD", path: "/auth/me", token: token(t, "carol", "")}); r.status != 200 {
		t.Fatalf("HEAD /auth/me: %d", r.status)
	}
	xsrf := b.Cookie(e.url, "XSRF-TOKEN").Value
	if status, _ := fromPage(t, e, b, http.MethodPost, "/auth/logout", http.Header{"Sec-Fetch-Site": {"cross-site"}, "X-Xsrf-Token": {xsrf}}, ""); status != 403 {
		t.Fatalf("logout from another site: %d", status)
	}
	status, body := fromPage(t, e, b, http.MethodPost, "/auth/logout", http.Header{"X-Xsrf-Token": {xsrf}}, "")
	if status != 200 || !strings.Contains(body, si.issuer+"/end_session?") {
		t.Fatalf("logout: %d %s", status, body)
	}
	if status, body := fromPage(t, e, b, http.MethodGet, "/auth/me", nil, ""); status != 200 || !strings.Contains(body, `"signed_in":false`) {
		t.Fatalf("after logout: %d %s", status, body)
	}
}
