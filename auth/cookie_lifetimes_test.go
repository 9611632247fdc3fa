package auth

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/internal/testclock"
)

// TestCookieLifetimesSentToTheBrowser: the lifetimes the browser is told
// (docs/contract.md §2, "Browser sign-in"): a session and its XSRF-TOKEN
// live the default 8 h plus 12 h of grace (so an expired session is
// answered session-expired, not token-missing), a sign-in in progress 10
// minutes, and a used sign-in cookie is deleted at once.
func TestCookieLifetimesSentToTheBrowser(t *testing.T) {
	clock := testclock.New()
	s, err := NewSessions(SessionConfig{Keys: [][]byte{make([]byte, 32)}, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	maxAge := func(rec *httptest.ResponseRecorder) map[string]int {
		out := map[string]int{}
		for _, c := range rec.Result().Cookies() {
			out[c.Name] = c.MaxAge
		}
		return out
	}

	rec := httptest.NewRecorder()
	if _, err := s.issue(rec, facade.Principal{ID: "alice"}, clock.Now().Add(24*time.Hour), ""); err != nil {
		t.Fatal(err)
	}
	const day20h = (8 + 12) * 60 * 60
	if got := maxAge(rec); got["facade-session"] != day20h || got["XSRF-TOKEN"] != day20h {
		t.Errorf("session cookies Max-Age %v, want %d (8 h + 12 h of grace)", got, day20h)
	}

	rec = httptest.NewRecorder()
	if err := s.startFlow(rec, flow{State: "s"}); err != nil {
		t.Fatal(err)
	}
	if got := maxAge(rec)["facade-signin"]; got != 600 {
		t.Errorf("sign-in cookie Max-Age %d, want 600 (10 minutes)", got)
	}

	req := httptest.NewRequest(http.MethodGet, "/auth/callback", nil)
	for _, c := range rec.Result().Cookies() {
		req.AddCookie(c)
	}
	rec = httptest.NewRecorder()
	if _, err := s.takeFlow(rec, req); err != nil {
		t.Fatal(err)
	}
	if got, ok := maxAge(rec)["facade-signin"]; !ok || got != -1 {
		t.Errorf("used sign-in cookie Max-Age %d (sent: %v), want -1 (deleted)", got, ok)
	}
}
