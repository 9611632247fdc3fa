package server_test

import (
	"strings"
	"testing"
)

// TestMeAnswersTheCheckedPrincipal: /auth/me says who the token belongs
// to, and nothing without a valid token.
func TestMeAnswersTheCheckedPrincipal(t *testing.T) {
	e := newEnv(t)
	r := e.do(req{method: "GET", path: "/auth/me", token: token(t, "bob", "professor")})
	if r.status != 200 || !strings.Contains(r.body, `"sub":"bob"`) || !strings.Contains(r.body, `"role":"professor"`) {
		t.Fatalf("/auth/me: %d %s", r.status, r.body)
	}
	if r := e.do(req{method: "HEAD", path: "/auth/me", token: token(t, "bob", "professor")}); r.status != 200 {
		t.Errorf("HEAD /auth/me: %d", r.status)
	}
	for _, tok := range []string{"", "not-a-token", token(t, "bob", "professor") + "x"} {
		if r := e.do(req{method: "GET", path: "/auth/me", token: tok}); r.status != 401 {
			t.Errorf("/auth/me with token %q: %d, want 401", tok, r.status)
		}
	}
}
