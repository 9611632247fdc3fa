package server_test

import (
	"context"
	"io"
	"maps"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade/internal/testkit/testredis"
	"github.com/facade-dev/facade/internal/testkit/testsignin"
)

// commandCount is a go-redis hook counting the commands sent, by name.
type commandCount struct {
	mu   sync.Mutex
	seen map[string]int
}

func (c *commandCount) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *commandCount) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.add(cmd)
		return next(ctx, cmd)
	}
}
func (c *commandCount) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			c.add(cmd)
		}
		return next(ctx, cmds)
	}
}
func (c *commandCount) add(cmd redis.Cmder) {
	switch name := strings.ToLower(cmd.Name()); name {
	case "hello", "select", "client", "auth", "ping": // a new connection's own
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen = map[string]int{}
	}
	c.seen[strings.ToLower(cmd.Name())]++
}

// take returns the counts since the last take.
func (c *commandCount) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.seen
	c.seen = nil
	if out == nil {
		out = map[string]int{}
	}
	return out
}

// TestLogoutEndsTheSessionEverywhere: a copy of the session cookie (and
// its anti-forgery token) taken before POST /auth/logout is refused
// afterwards, on the API (401 session-expired) and for a transfer; on a
// second server sharing the Redis (another instance) too; /auth/me says
// signed out with the reason.
func TestLogoutEndsTheSessionEverywhere(t *testing.T) {
	rdb := testredis.Client(t)
	si := &signInEnv{}
	e := newEnv(t, withSignIn(si), withPageOrigin(), withRedis(rdb))
	seedAccounts(t, e)
	b := signedIn(t, e, "alice")
	copied := b.Cookie(e.url, "facade-session")
	xsrf := b.Cookie(e.url, "XSRF-TOKEN").Value
	if status, body := fromPage(t, e, b, http.MethodGet, "/rs/account/1001/balance", nil, ""); status != 200 {
		t.Fatalf("before logout: %d %s", status, body)
	}
	if status, _ := fromPage(t, e, b, http.MethodPost, "/auth/logout", http.Header{"X-Xsrf-Token": {xsrf}}, ""); status != 200 {
		t.Fatalf("logout: %d", status)
	}
	thief := testsignin.NewBrowser(t)
	thief.SetCookie(e.url, copied)
	thief.SetCookie(e.url, &http.Cookie{Name: "XSRF-TOKEN", Value: xsrf, Path: "/"})
	if status, code := fromPage(t, e, thief, http.MethodGet, "/rs/account/1001/balance", nil, ""); status != 401 || code != "session-expired" {
		t.Errorf("the copied cookie after logout: %d %s", status, code)
	}
	if status, code := fromPage(t, e, thief, http.MethodPost, "/rs/transfer/from/1001/to/2002/amount/1", http.Header{"X-Xsrf-Token": {xsrf}}, ""); status != 401 || code != "session-expired" {
		t.Errorf("a transfer on the copied cookie after logout: %d %s", status, code)
	}
	if status, body := fromPage(t, e, thief, http.MethodGet, "/auth/me", nil, ""); status != 200 || !strings.Contains(body, `"signed_in":false,"reason":"session-expired"`) {
		t.Errorf("/auth/me on the copied cookie: %d %s", status, body)
	}
}

// TestSessionEndsWhenIdleAndAtItsLifetime: FACADE_SESSION_IDLE (1 h)
// slides with use; FACADE_SESSION_LIFETIME (8 h) ends the session however
// busy it is.
func TestSessionEndsWhenIdleAndAtItsLifetime(t *testing.T) {
	si := &signInEnv{idTokenLifetime: 24 * time.Hour}
	e := newEnv(t, withSignIn(si), withPageOrigin())
	b := signedIn(t, e, "alice")
	get := func() (int, string) { return fromPage(t, e, b, http.MethodGet, "/auth/me", nil, "") }
	// Used every 50 minutes: alive until the eighth hour.
	for used := time.Duration(0); used+50*time.Minute < 8*time.Hour; used += 50 * time.Minute {
		si.clock.Advance(50 * time.Minute)
		if status, body := get(); status != 200 || !strings.Contains(body, `"signed_in":true`) {
			t.Fatalf("used again after 50 min (at %v): %d %s", used+50*time.Minute, status, body)
		}
	}
	si.clock.Advance(50 * time.Minute)
	if _, body := get(); !strings.Contains(body, `"reason":"session-expired"`) {
		t.Fatalf("past its 8 h lifetime: %s", body)
	}

	idle := signedIn(t, e, "bob")
	si.clock.Advance(59 * time.Minute)
	if _, body := fromPage(t, e, idle, http.MethodGet, "/auth/me", nil, ""); !strings.Contains(body, `"signed_in":true`) {
		t.Fatalf("after 59 min unused: %s", body)
	}
	si.clock.Advance(time.Hour)
	if status, code := fromPage(t, e, idle, http.MethodGet, "/rs/account", nil, ""); status != 401 || code != "session-expired" {
		t.Fatalf("after an hour unused: %d %s", status, code)
	}
}

// TestSessionRequestCostsOneRedisRead: a request on the session reads its
// record once (GET) and writes nothing while the last-used time is under
// a minute old; then one optimistic transaction slides it: the record read
// again under WATCH and written in MULTI/EXEC, so a re-check that landed
// since is kept (auth's TestARequestThatReadBeforeTheRecheckDoesNotUndoIt).
func TestSessionRequestCostsOneRedisRead(t *testing.T) {
	si := &signInEnv{count: &commandCount{}}
	e := newEnv(t, withSignIn(si), withPageOrigin())
	b := signedIn(t, e, "bob")
	si.count.take()
	for range 10 {
		si.clock.Advance(5 * time.Second)
		if status, _ := fromPage(t, e, b, http.MethodGet, "/auth/me", nil, ""); status != 200 {
			t.Fatalf("/auth/me: %d", status)
		}
	}
	if got := si.count.take(); len(got) != 1 || got["get"] != 10 {
		t.Fatalf("10 requests within a minute sent %v; want 10 GETs and nothing else", got)
	}
	si.clock.Advance(time.Minute)
	fromPage(t, e, b, http.MethodGet, "/auth/me", nil, "")
	want := map[string]int{"get": 2, "watch": 1, "multi": 1, "set": 1, "exec": 1}
	if got := si.count.take(); !maps.Equal(got, want) {
		t.Fatalf("a request a minute later sent %v; want %v", got, want)
	}
}

// TestSessionStoreDownIsUnavailableNotSignedOut: with Redis unreachable,
// a request on the session answers 503 with Retry-After, /auth/me
// included (never 500, never "signed out").
func TestSessionStoreDownIsUnavailableNotSignedOut(t *testing.T) {
	store := testredis.Start(t, testredis.Options{})
	e := newEnv(t, withSignIn(&signInEnv{}), withPageOrigin(), withRedis(store.Client(t)))
	b := signedIn(t, e, "bob")
	store.Stop()
	for _, path := range []string{"/auth/me", "/class"} {
		resp := b.Do(http.MethodGet, e.url+path, http.Header{"Sec-Fetch-Site": {"same-origin"}}, nil)
		body := readBody(t, resp)
		if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || !strings.Contains(body, `"store-unavailable"`) {
			t.Errorf("%s with Redis down: %d Retry-After %q %s", path, resp.StatusCode, resp.Header.Get("Retry-After"), body)
		}
	}
}

// TestRevokeEndsEverySessionOfOnePrincipal: `facade sessions revoke --sub`
// (Sessions.Revoke) ends all of bob's sessions at once and nobody else's;
// `list` shows them (created, last used, client address) before.
func TestRevokeEndsEverySessionOfOnePrincipal(t *testing.T) {
	si := &signInEnv{}
	e := newEnv(t, withSignIn(si), withPageOrigin())
	laptop, phone, alice := signedIn(t, e, "bob"), signedIn(t, e, "bob"), signedIn(t, e, "alice")
	ctx := context.Background()
	list, err := si.sessions.List(ctx, "bob")
	if err != nil || len(list) != 2 {
		t.Fatalf("bob's sessions: %+v %v", list, err)
	}
	for _, s := range list {
		if net.ParseIP(s.Client) == nil || s.Created.IsZero() || s.LastUsed.IsZero() || !s.Expires.After(s.Created) {
			t.Errorf("a listed session: %+v", s)
		}
	}
	if n, err := si.sessions.Revoke(ctx, "bob"); err != nil || n != 2 {
		t.Fatalf("revoke bob: %d %v", n, err)
	}
	for name, br := range map[string]*testsignin.Browser{"laptop": laptop, "phone": phone} {
		if status, code := fromPage(t, e, br, http.MethodGet, "/class", nil, ""); status != 401 || code != "session-expired" {
			t.Errorf("bob's %s after revoke: %d %s", name, status, code)
		}
	}
	if status, body := fromPage(t, e, alice, http.MethodGet, "/auth/me", nil, ""); status != 200 || !strings.Contains(body, `"sub":"alice"`) {
		t.Errorf("alice after bob's revoke: %d %s", status, body)
	}
	if list, _ := si.sessions.List(ctx, "bob"); len(list) != 0 {
		t.Errorf("bob's sessions after revoke: %+v", list)
	}
}

// TestTwoTabsSignInAtOnce: a second sign-in started in the same browser
// (another tab) while the first is at the provider disturbs nothing: both
// callbacks complete, each with its own state.
func TestTwoTabsSignInAtOnce(t *testing.T) {
	e := newEnv(t, withSignIn(&signInEnv{}), withPageOrigin())
	b := testsignin.NewBrowser(t)
	first := b.StartSignIn(e.url, "/ui/#/grades")
	second := b.StartSignIn(e.url, "/ui/#/builds")
	if first.Query().Get("state") == second.Query().Get("state") {
		t.Fatal("two sign-ins share a state")
	}
	cb1, cb2 := b.AtProvider(first, "bob"), b.AtProvider(second, "bob")
	for name, cb := range map[string]string{"first tab": cb1.RequestURI(), "second tab": cb2.RequestURI()} {
		if status, _ := fromPage(t, e, b, http.MethodGet, cb, nil, ""); status != http.StatusSeeOther {
			t.Errorf("%s's callback: %d", name, status)
		}
	}
}

func readBody(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
