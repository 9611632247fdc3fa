package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/auth"
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
