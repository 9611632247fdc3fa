package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/facade-dev/facade/internal/testkit/testlog"
	"github.com/facade-dev/facade/internal/testkit/testoidc"
	"github.com/facade-dev/facade/internal/testkit/testredis"
	"github.com/facade-dev/facade/internal/testkit/testsignin"
)

// entraIDs are n group ids as Microsoft Entra sends them: object ids of
// 36 characters.
func entraIDs(n int) []string {
	g := make([]string, n)
	for i := range g {
		g[i] = fmt.Sprintf("%08x-4b1e-4c2a-9d3f-%012x", i*2654435761, i)
	}
	return g
}

// TestSignInAtARealProvider runs `facade serve` against npm's
// oidc-provider (OpenID Certified, internal/testkit/testoidc), an identity
// provider independent of the embedded one, on a real Redis, and signs
// people in through its own login and consent pages: 200 groups of 36
// characters (Entra's most), group names as GitHub, Dex and LDAP send
// them (acme:payments, team-a/admins, Domain Users) granting through
// policy lines, a role from a group, two sign-ins in one browser, a
// logout after which a copy of the cookie is refused, and `facade
// sessions revoke` from the command line while a browser is signed in.
func TestSignInAtARealProvider(t *testing.T) {
	addr := freeAddr(t)
	base := "http://" + addr
	entra := entraIDs(200)
	p := testoidc.Start(t, testoidc.Config{
		ClientID: "facade", ClientSecret: "facade-secret-for-tests",
		RedirectURI: base + "/auth/callback", PostLogoutURI: base + "/ui/",
		Accounts: map[string]testoidc.Account{
			"erin":  {PreferredUsername: "erin", Role: "developer", Groups: entra},
			"lee":   {PreferredUsername: "lee", Groups: []string{"acme:payments", "team-a/admins", "Domain Users"}},
			"grace": {PreferredUsername: "grace", Groups: []string{"english-graders"}}, // no role claim
		},
	})
	dir := t.TempDir()
	shipped, err := os.ReadFile("../../policy.csv")
	if err != nil {
		t.Fatal(err)
	}
	policy := string(shipped) + strings.Join([]string{"",
		"p, group:acme:payments, account:1001, view_account",
		"p, group:team-a/admins, account:2002, view_account",
		`p, "group:Domain Users", project:PROJ, view`,
		"p, group:" + entra[199] + ", project:PROJ, view",
		"g, group:english-graders, role:professor",
		"p, group:english-graders, class:english-101, view", ""}, "\n")
	if err := os.WriteFile(filepath.Join(dir, "policy.csv"), []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}
	redisURL := testredis.URL(t)
	env := settingsFrom(map[string]string{
		"FACADE_REDIS_URL": redisURL, "FACADE_JWT_SECRET": secret, "FACADE_ADDR": addr,
		"FACADE_PUBLIC_URL": base, "FACADE_OIDC_ISSUER": p.URL, "FACADE_OIDC_CLIENT_ID": "facade",
		"FACADE_OIDC_CLIENT_SECRET": "facade-secret-for-tests", "FACADE_OIDC_SCOPES": "openid profile groups role",
		"FACADE_OIDC_USER_CLAIM": "preferred_username",
		"FACADE_SESSION_KEYS":    testSessionKey,
		"FACADE_MODEL":           "../../model.conf", "FACADE_POLICY": filepath.Join(dir, "policy.csv"),
		"FACADE_DRAIN_DELAY": "0s",
	})
	seedFile := filepath.Join(dir, "seed.json")
	_ = os.WriteFile(seedFile, []byte(`{"accounts": [{"id": "1001", "owner": "acme", "currency": "EUR", "balance": "250.00"},
		{"id": "2002", "owner": "team-a", "currency": "EUR", "balance": "10.00"}]}`), 0o644)
	if code, out, errOut := runCmd(env, "seed", "--file", seedFile); code != 0 {
		t.Fatalf("seed: %d %s %s", code, out, errOut)
	}
	var logs testlog.Buffer
	startServe(t, env, base, &logs)

	signIn := func(b *testsignin.Browser, login, returnTo string) {
		t.Helper()
		cb := p.SignIn(b, b.StartSignIn(base, returnTo), login)
		if resp := b.Get(cb.String()); resp.StatusCode != http.StatusSeeOther {
			body, _ := io.ReadAll(resp.Body)
			t.Fatalf("%s's callback: %d %s\n%s", login, resp.StatusCode, body, logs.String())
		}
	}
	type me struct {
		SignedIn bool     `json:"signed_in"`
		Reason   string   `json:"reason"`
		Sub      string   `json:"sub"`
		Groups   []string `json:"groups"`
		Has      struct{ Accounts, Classes, Builds bool }
		XSRF     string `json:"xsrf_token"`
	}
	get := func(b *testsignin.Browser, path string) (int, string) {
		resp := b.Do(http.MethodGet, base+path, http.Header{"Sec-Fetch-Site": {"same-origin"}}, nil)
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	whoami := func(b *testsignin.Browser) me {
		t.Helper()
		status, body := get(b, "/auth/me")
		var m me
		if status != 200 || json.Unmarshal([]byte(body), &m) != nil {
			t.Fatalf("/auth/me: %d %s", status, body)
		}
		return m
	}

	// 200 groups of 36 characters: every one kept, the last one grants.
	erin := testsignin.NewBrowser(t)
	signIn(erin, "erin", "/ui/")
	if m := whoami(erin); !m.SignedIn || len(m.Groups) != 200 || m.Groups[199] != entra[199] || !m.Has.Builds {
		t.Fatalf("erin in 200 groups: signed in %v, %d groups, has %+v", m.SignedIn, len(m.Groups), m.Has)
	}
	if n := len(erin.Cookie(base, "facade-session").Value); n > 300 {
		t.Errorf("the session cookie is %d bytes", n)
	}

	// Group names with ':', '/' and a space grant through their lines.
	lee := testsignin.NewBrowser(t)
	signIn(lee, "lee", "/ui/")
	if m := whoami(lee); strings.Join(m.Groups, "|") != "acme:payments|team-a/admins|Domain Users" || !m.Has.Accounts || !m.Has.Builds {
		t.Fatalf("lee: %+v", m)
	}
	for _, acct := range []string{"1001", "2002"} {
		if status, body := get(lee, "/rs/account/"+acct+"/balance"); status != 200 {
			t.Errorf("lee on account %s through a group: %d %s", acct, status, body)
		}
	}

	// A role from a group, for a provider that sends no role claim.
	grace := testsignin.NewBrowser(t)
	signIn(grace, "grace", "/ui/")
	if status, body := get(grace, "/class"); status != 200 || !strings.Contains(body, `"english-101"`) {
		t.Errorf("grace, a professor by group: %d %s", status, body)
	}

	// Two tabs: two sign-ins in progress in one browser both complete.
	tabs := testsignin.NewBrowser(t)
	first, second := tabs.StartSignIn(base, "/ui/#/grades"), tabs.StartSignIn(base, "/ui/#/builds")
	cb1, cb2 := p.SignIn(tabs, first, "lee"), p.SignIn(tabs, second, "lee")
	for name, cb := range map[string]*url.URL{"first tab": cb1, "second tab": cb2} {
		if resp := tabs.Get(cb.String()); resp.StatusCode != http.StatusSeeOther {
			t.Errorf("%s's callback: %d", name, resp.StatusCode)
		}
	}

	// Logout: a copy of the cookie taken before is refused afterwards.
	copied := erin.Cookie(base, "facade-session")
	resp := erin.Do(http.MethodPost, base+"/auth/logout", http.Header{"Sec-Fetch-Site": {"same-origin"}, "X-Xsrf-Token": {whoami(erin).XSRF}}, nil)
	var out struct {
		EndSessionURL string `json:"end_session_url"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&out)
	if resp.StatusCode != 200 || !strings.HasPrefix(out.EndSessionURL, p.URL) {
		t.Fatalf("logout: %d %+v", resp.StatusCode, out)
	}
	thief := testsignin.NewBrowser(t)
	thief.SetCookie(base, copied)
	if m := whoami(thief); m.SignedIn || m.Reason != "session-expired" {
		t.Errorf("the copied cookie after logout: %+v", m)
	}

	// Revoke from the command line while lee is signed in: three sessions
	// (lee's browser, and one per tab in the other, the first of which
	// the second replaced in that browser's cookie).
	if code, out, _ := runCmd(env, "sessions", "list", "--sub", "lee"); code != 0 || !strings.Contains(out, "3 session(s) of lee") {
		t.Errorf("sessions list: %d %s", code, out)
	}
	if code, out, errOut := runCmd(env, "sessions", "revoke", "--sub", "lee"); code != 0 || !strings.Contains(out, "revoked 3 session(s) of lee") {
		t.Fatalf("sessions revoke: %d %s %s", code, out, errOut)
	}
	for name, b := range map[string]*testsignin.Browser{"lee": lee, "lee's tabs": tabs} {
		if status, body := get(b, "/rs/account/1001/balance"); status != 401 || !strings.Contains(body, "session-expired") {
			t.Errorf("%s after revoke: %d %s", name, status, body)
		}
	}
	if m := whoami(grace); !m.SignedIn {
		t.Errorf("grace after lee's revoke: %+v", m)
	}
}

// waitHealthy waits for `facade serve` at base to answer /healthz.
// startServe runs `facade serve` with env, its log lines into logs, and
// waits until base answers /healthz. stop ends serve (as SIGTERM does) and
// returns what serve returned; the test's cleanup calls it too.
func startServe(t *testing.T, env func(string) string, base string, logs *testlog.Buffer) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cmdServe(ctx, nil, env, io.Discard, logs) }()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() {
			cancel()
			err = <-done
		})
		return err
	}
	t.Cleanup(func() { stop() })
	waitHealthy(t, base, logs)
	return stop
}

func waitHealthy(t *testing.T, base string, logs *testlog.Buffer) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		res, err := http.Get(base + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not come up: %v\n%s", err, logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
