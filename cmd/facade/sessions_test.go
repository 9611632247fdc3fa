package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/auth"
	"github.com/facade-dev/facade/internal/testkit/testlog"
	"github.com/facade-dev/facade/internal/testkit/testredis"
)

// TestSessionsCommand: `facade sessions list --sub` shows a principal's
// sessions (created, last used, end, client address; never an id);
// `revoke` ends them all, so the server's next open of their cookies is
// session-expired; another principal's session is untouched.
func TestSessionsCommand(t *testing.T) {
	url := testredis.URL(t)
	opts, _ := redis.ParseURL(url)
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { _ = rdb.Close() })
	sessions, err := auth.NewSessions(rdb, auth.SessionConfig{Keys: [][]byte{bytes.Repeat([]byte{3}, 32)}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	issue := func(sub, client string) *http.Request {
		_, cookies, err := sessions.Issue(ctx, facade.Principal{ID: sub}, time.Time{}, auth.ProviderSession{}, client)
		if err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequest(http.MethodGet, "/auth/me", nil)
		r.AddCookie(cookies[0])
		return r
	}
	laptop, phone, other := issue("bob@example.org", "192.0.2.7"), issue("bob@example.org", "198.51.100.9"), issue("alice", "192.0.2.8")
	env := settingsFrom(map[string]string{"FACADE_REDIS_URL": url})

	code, out, errOut := runCmd(env, "sessions", "list", "--sub", "bob@example.org")
	if code != 0 || !strings.Contains(out, "192.0.2.7") || !strings.Contains(out, "198.51.100.9") || !strings.Contains(out, "2 session(s) of bob@example.org") {
		t.Fatalf("list: %d %q %q", code, out, errOut)
	}
	if strings.Contains(out, "192.0.2.8") {
		t.Fatalf("list shows another principal's session: %q", out)
	}
	if code, out, _ := runCmd(env, "sessions", "revoke", "--sub", "bob@example.org"); code != 0 || !strings.Contains(out, "revoked 2 session(s)") {
		t.Fatalf("revoke: %d %q", code, out)
	}
	for name, r := range map[string]*http.Request{"laptop": laptop, "phone": phone} {
		if _, _, err := sessions.Open(ctx, r, ""); err != facade.ErrSessionExpired {
			t.Errorf("bob's %s after revoke: %v", name, err)
		}
	}
	if id, _, err := sessions.Open(ctx, other, ""); err != nil || id.Principal.ID != "alice" {
		t.Errorf("alice after bob's revoke: %v %v", id, err)
	}
	if code, _, errOut := runCmd(env, "sessions", "list"); code != 2 || !strings.Contains(errOut, "--sub is required") {
		t.Errorf("list without --sub: %d %q", code, errOut)
	}
	if code, _, errOut := runCmd(env, "sessions", "drop", "--sub", "x"); code != 2 || !strings.Contains(errOut, "unknown sessions command") {
		t.Errorf("an unknown verb: %d %q", code, errOut)
	}
}

// TestSessionsRevokeRefusesBearerTokens: `facade sessions revoke --sub`
// also refuses the principal's bearer tokens issued before it at a
// running serve (a token it never verified at once: 401 token-expired);
// another principal's token still works.
func TestSessionsRevokeRefusesBearerTokens(t *testing.T) {
	redisURL := testredis.URL(t)
	addr := freeAddr(t)
	vars := map[string]string{"FACADE_REDIS_URL": redisURL, "FACADE_JWT_SECRET": secret, "FACADE_ADDR": addr,
		"FACADE_MODEL": "../../model.conf", "FACADE_POLICY": "../../policy.csv", "FACADE_DRAIN_DELAY": "0"}
	var logs testlog.Buffer
	startServe(t, settingsFrom(vars), "http://"+addr, &logs)
	me := func(tok string) (int, string) {
		r, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/auth/me", nil)
		r.Header.Set("Authorization", "Bearer "+tok)
		res, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var body struct{ Code string }
		_ = json.NewDecoder(res.Body).Decode(&body)
		return res.StatusCode, body.Code
	}
	bobUsed, _ := auth.Mint([]byte(secret), "bob", "professor", auth.Claims{}, time.Hour)
	bobUnused, _ := auth.Mint([]byte(secret), "bob", "professor", auth.Claims{}, 2*time.Hour)
	alice, _ := auth.Mint([]byte(secret), "alice", "student", auth.Claims{}, time.Hour)
	if status, _ := me(bobUsed); status != http.StatusOK {
		t.Fatalf("bob's token before the revocation: %d", status)
	}
	code, out, errOut := runCmd(settingsFrom(vars), "sessions", "revoke", "--sub", "bob")
	if code != 0 || !strings.Contains(out, "refused bob's bearer tokens issued until") {
		t.Fatalf("revoke: %d %q %q", code, out, errOut)
	}
	if status, code := me(bobUnused); status != http.StatusUnauthorized || code != "token-expired" {
		t.Errorf("bob's token issued before the revocation: %d %s, want 401 token-expired", status, code)
	}
	if status, _ := me(alice); status != http.StatusOK {
		t.Errorf("alice's token after bob's revocation: %d", status)
	}
}
