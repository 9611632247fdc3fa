package auth_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/auth"
	"github.com/facade-dev/facade/auth/demoidp"
	"github.com/facade-dev/facade/internal/testkit/testclock"
	"github.com/facade-dev/facade/internal/testkit/testredis"
	"github.com/facade-dev/facade/internal/testkit/testsignin"
)

// people are the provider's demo people in these tests.
var people = []demoidp.Person{
	{Subject: "u-bob", Username: "bob", Name: "Bob", Role: "professor", Groups: []string{"english-staff", "graders"}, About: "professor"},
	{Subject: "u-alice", Username: "alice", Name: "Alice", Role: "student", About: "student"},
	{Subject: "u-mallory", Username: "mallory", Name: "Mallory", Role: "student", About: "the attacker"},
	{Subject: "u-gina", Username: "gina", Name: "Gina", Role: "professor", Groups: manyGroups(48), About: "in many groups"},
	{Subject: "u-entra", Username: "entra", Name: "Entra", Role: "developer", Groups: entraGroups(200), About: "in 200 Entra groups"},
}

// entraGroups names n groups as Microsoft Entra does: object ids, 36
// characters each.
func entraGroups(n int) []string {
	g := make([]string, n)
	for i := range g {
		g[i] = fmt.Sprintf("%08x-4b1e-4c2a-9d3f-%012x", i, i*7919)
	}
	return g
}

// manyGroups names n groups of 24 characters: enough that a session
// cookie holding the ID token as well would pass the 4 KiB cookie limit.
func manyGroups(n int) []string {
	g := make([]string, n)
	for i := range g {
		g[i] = fmt.Sprintf("department-group-%07d", i)
	}
	return g
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
	rdb      *redis.Client
}

// rpSetup is what startRP builds the relying party from.
type rpSetup struct {
	signin   auth.SignInConfig
	sessions auth.SessionConfig
	rdb      *redis.Client // nil: a fresh test Redis
}

type rpOption func(*rpSetup)

func withClientID(id string) rpOption {
	return func(s *rpSetup) { s.signin.ClientID = id }
}

func withKeys(keys ...[]byte) rpOption {
	return func(s *rpSetup) { s.sessions.Keys = keys }
}

func withIdle(d time.Duration) rpOption {
	return func(s *rpSetup) { s.sessions.Idle = d }
}

// withStore keeps the sessions in rdb (another relying party's, to open
// its cookies with other keys).
func withStore(rdb *redis.Client) rpOption {
	return func(s *rpSetup) { s.rdb = rdb }
}

func withLifetime(d time.Duration) rpOption {
	return func(s *rpSetup) { s.sessions.Lifetime = d }
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
	setup := rpSetup{
		sessions: auth.SessionConfig{Keys: [][]byte{testKey}, Now: p.clock.Now},
		signin: auth.SignInConfig{
			Issuer: p.idp.url, ClientID: "facade", PublicURL: srv.URL, Now: p.clock.Now,
			Claims:     auth.Claims{User: "preferred_username"},
			HTTPClient: &http.Client{Transport: p.swap, Timeout: 10 * time.Second},
		},
	}
	for _, o := range opts {
		o(&setup)
	}
	if setup.rdb == nil {
		setup.rdb = testredis.Client(t)
	}
	p.rdb = setup.rdb
	var err error
	if p.sessions, err = auth.NewSessions(p.rdb, setup.sessions); err != nil {
		t.Fatal(err)
	}
	p.keys = setup.sessions.Keys
	if p.signin, err = auth.NewSignIn(context.Background(), p.sessions, setup.signin); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /auth/login", handle(p.signin.Login))
	mux.HandleFunc("GET /auth/callback", handle(func(r *http.Request) (auth.Result, error) { return p.signin.Callback(r, "192.0.2.1") }))
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
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"sub": id.Principal.ID, "role": id.Principal.Role,
		"groups": id.Principal.Groups, "expires_at": id.ExpiresAt.UTC().Format(time.RFC3339), "via": id.Via})
}

// handle writes a route's Result, or its error as the HTTP layer would
// (fail), as package server does.
func handle(h func(*http.Request) (auth.Result, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		res, err := h(r)
		for _, c := range res.Cookies {
			http.SetCookie(w, c)
		}
		switch {
		case err != nil:
			fail(w, r, err)
		case res.Redirect != "":
			http.Redirect(w, r, res.Redirect, res.Status)
		case res.Body != nil:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(res.Status)
			_ = json.NewEncoder(w).Encode(res.Body)
		default:
			w.WriteHeader(res.Status)
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
	return p.sessions.Open(r.Context(), r, "192.0.2.1")
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
		facade.ErrSignInFailed.Code: 400, facade.ErrSessionExpired.Code: 401, facade.ErrSessionInvalid.Code: 401,
		facade.ErrXSRF.Code: 403, facade.ErrStoreUnavailable.Code: 503,
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

// me reads /whoami as b's page of p: the code of a refusal, or sub.
func me(b *testsignin.Browser, p *rp) (int, string) {
	b.T.Helper()
	resp := b.Do(http.MethodGet, p.url+"/whoami", http.Header{"Sec-Fetch-Site": {"same-origin"}}, nil)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, strings.TrimSpace(string(body))
	}
	var me struct{ Sub string }
	_ = json.Unmarshal(body, &me)
	return resp.StatusCode, me.Sub
}

func TestMain(m *testing.M) { testredis.Main(m) }

// flowCookieOf is b's one sign-in (flow) cookie at url.
func flowCookieOf(t *testing.T, b *testsignin.Browser, url string) *http.Cookie {
	t.Helper()
	for _, c := range b.Jar.Cookies(mustURL(url)) {
		if strings.HasPrefix(c.Name, "facade-signin-") {
			return &http.Cookie{Name: c.Name, Value: c.Value, Path: "/"}
		}
	}
	t.Fatal("no sign-in cookie")
	return nil
}
