package server_test

import (
	"strings"
	"testing"
)

// TestMeAnswersTheCheckedPrincipal: /auth/me says who the token belongs
// to and what they have here; 200 signed out without a credential; 401
// for a token that was sent and is not valid.
func TestMeAnswersTheCheckedPrincipal(t *testing.T) {
	e := newEnv(t)
	r := e.do(req{method: "GET", path: "/auth/me", token: token(t, "bob", "professor")})
	if r.status != 200 || !strings.Contains(r.body, `"sub":"bob"`) || !strings.Contains(r.body, `"role":"professor"`) {
		t.Fatalf("/auth/me: %d %s", r.status, r.body)
	}
	if r := e.do(req{method: "HEAD", path: "/auth/me", token: token(t, "bob", "professor")}); r.status != 200 {
		t.Errorf("HEAD /auth/me: %d", r.status)
	}
	if r := e.do(req{method: "GET", path: "/auth/me"}); r.status != 200 || r.body != `{"signed_in":false}`+"\n" {
		t.Errorf("/auth/me signed out: %d %s", r.status, r.body)
	}
	for _, tok := range []string{"not-a-token", token(t, "bob", "professor") + "x"} {
		if r := e.do(req{method: "GET", path: "/auth/me", token: tok}); r.status != 401 {
			t.Errorf("/auth/me with token %q: %d, want 401", tok, r.status)
		}
	}
}

// TestMeSaysWhatThePrincipalHas: has.{accounts, classes, builds} follow
// the policy the harness loads, per principal, for the page's tabs.
func TestMeSaysWhatThePrincipalHas(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct{ sub, role, want string }{
		{"bob", "professor", `"has":{"accounts":false,"classes":true,"builds":false}`},
		{"alice", "student", `"has":{"accounts":true,"classes":true,"builds":false}`},
		{"nobody", "", `"has":{"accounts":false,"classes":false,"builds":false}`},
		// view on english-101 without the role grades need: said, not blank.
		{"erin", "assistant", `"has":{"accounts":false,"classes":false,"builds":false,"classes_need_role":true}`},
	} {
		r := e.do(req{method: "GET", path: "/auth/me", token: token(t, c.sub, c.role)})
		if r.status != 200 || !strings.Contains(r.body, `"signed_in":true`) || !strings.Contains(r.body, c.want) {
			t.Errorf("/auth/me for %s: %d %s, want %s", c.sub, r.status, r.body, c.want)
		}
	}
}
