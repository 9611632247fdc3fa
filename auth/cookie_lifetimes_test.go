package auth

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/internal/testkit/testclock"
	"github.com/facade-dev/facade/internal/testkit/testredis"
)

// TestCookieLifetimesSentToTheBrowser: the lifetimes the browser is told
// (docs/contract.md §2, "Browser sign-in"): a session and its XSRF-TOKEN
// live the default 8 h plus 12 h of grace (so an expired session is
// answered session-expired, not token-missing), a sign-in in progress 10
// minutes, and a used sign-in cookie is deleted at once.
func TestCookieLifetimesSentToTheBrowser(t *testing.T) {
	clock := testclock.New()
	s, err := NewSessions(testredis.Client(t), SessionConfig{Keys: [][]byte{make([]byte, 32)}, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	maxAge := func(cookies []*http.Cookie) map[string]int {
		out := map[string]int{}
		for _, c := range cookies {
			out[c.Name] = c.MaxAge
		}
		return out
	}

	_, cookies, err := s.Issue(context.Background(), facade.Principal{ID: "alice"}, clock.Now().Add(24*time.Hour), ProviderSession{}, "")
	if err != nil {
		t.Fatal(err)
	}
	const day20h = (8 + 12) * 60 * 60
	if got := maxAge(cookies); got["facade-session"] != day20h || got["XSRF-TOKEN"] != day20h {
		t.Errorf("session cookies Max-Age %v, want %d (8 h + 12 h of grace)", got, day20h)
	}

	c, err := s.startFlow(flow{State: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "facade-signin-s" || c.MaxAge != 600 {
		t.Errorf("sign-in cookie %s Max-Age %d, want facade-signin-s for 600 s (10 minutes)", c.Name, c.MaxAge)
	}

	req := httptest.NewRequest(http.MethodGet, "/auth/callback?state=s", nil)
	req.AddCookie(c)
	_, used, err := s.takeFlow(req, "s")
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := maxAge(used)["facade-signin-s"]; !ok || got != -1 {
		t.Errorf("used sign-in cookie Max-Age %d (sent: %v), want -1 (deleted)", got, ok)
	}
}
