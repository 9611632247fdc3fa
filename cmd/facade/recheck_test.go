package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/facade-dev/facade/internal/testkit/testclock"
	"github.com/facade-dev/facade/internal/testkit/testlog"
	"github.com/facade-dev/facade/internal/testkit/testoidc"
	"github.com/facade-dev/facade/internal/testkit/testredis"
	"github.com/facade-dev/facade/internal/testkit/testsignin"
	"github.com/facade-dev/facade/redisdb"
)

// TestSessionsRecheckWithTheProvider: with offline_access the facade
// holds a refresh token per session (sealed in Redis, never in the
// cookie) and, on the injected clock, asks npm's oidc-provider again at
// the first request after FACADE_SESSION_RECHECK: changed groups take
// effect, a provider that cannot be reached ends nothing, and a person
// removed at the provider (the refresh refused: invalid_grant) is signed
// out.
func TestSessionsRecheckWithTheProvider(t *testing.T) {
	addr := freeAddr(t)
	base := "http://" + addr
	p := testoidc.Start(t, testoidc.Config{
		ClientID: "facade", ClientSecret: "facade-secret-for-tests",
		RedirectURI: base + "/auth/callback", PostLogoutURI: base + "/ui/",
		Accounts: map[string]testoidc.Account{
			"u-5": {PreferredUsername: "omar", Groups: []string{"first"}},
			"u-6": {PreferredUsername: "pia"},
		},
	})
	redisURL := testredis.URL(t)
	s, err := loadSettings(settingsFrom(map[string]string{
		"FACADE_REDIS_URL": redisURL, "FACADE_JWT_SECRET": secret, "FACADE_ADDR": addr,
		"FACADE_PUBLIC_URL": base, "FACADE_OIDC_ISSUER": p.URL, "FACADE_OIDC_CLIENT_ID": "facade",
		"FACADE_OIDC_CLIENT_SECRET": "facade-secret-for-tests",
		"FACADE_OIDC_SCOPES":        "openid offline_access profile groups",
		"FACADE_OIDC_USER_CLAIM":    "preferred_username",
		"FACADE_SESSION_KEYS":       testSessionKey,
		"FACADE_MODEL":              "../../model.conf", "FACADE_POLICY": "../../policy.csv",
		"FACADE_DRAIN_DELAY": "0s", "FACADE_SESSION_RECHECK": "15m",
	}))
	if err != nil {
		t.Fatal(err)
	}
	clock := testclock.New()
	clock.AdvancePast(time.Now())
	rdb, err := redisdb.Open(s.redisConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	var logs testlog.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	a, err := newApp(ctx, s, rdb, slog.New(slog.NewJSONHandler(&logs, nil)), clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.serve(ctx, nil) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	waitHealthy(t, base, &logs)

	pia := testsignin.NewBrowser(t)
	if resp := pia.Get(p.SignIn(pia, pia.StartSignIn(base, "/ui/"), "u-6").String()); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("pia's callback: %d", resp.StatusCode)
	}
	b := testsignin.NewBrowser(t)
	authorize := b.StartSignIn(base, "/ui/")
	if authorize.Query().Get("prompt") != "consent" {
		t.Errorf("asking for offline_access without prompt=consent: %s", authorize)
	}
	cb := p.SignIn(b, authorize, "u-5")
	if resp := b.Get(cb.String()); resp.StatusCode != http.StatusSeeOther {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("callback: %d %s\n%s", resp.StatusCode, body, logs.String())
	}
	type me struct {
		SignedIn bool     `json:"signed_in"`
		Reason   string   `json:"reason"`
		Groups   []string `json:"groups"`
	}
	whoamiOf := func(b *testsignin.Browser) me {
		t.Helper()
		resp := b.Do(http.MethodGet, base+"/auth/me", http.Header{"Sec-Fetch-Site": {"same-origin"}}, nil)
		var m me
		if resp.StatusCode != 200 || json.NewDecoder(resp.Body).Decode(&m) != nil {
			t.Fatalf("/auth/me: %d", resp.StatusCode)
		}
		return m
	}
	whoami := func() me { t.Helper(); return whoamiOf(b) }
	if m := whoami(); !m.SignedIn || !slices.Equal(m.Groups, []string{"first"}) {
		t.Fatalf("after sign-in: %+v", m)
	}
	// The refresh token is in Redis, sealed; the cookie holds only the id.
	keys, _ := rdb.Keys(ctx, "facade:session:id:*").Result()
	if len(keys) != 2 {
		t.Fatalf("sessions in Redis: %v", keys)
	}
	for _, k := range keys {
		record, _ := rdb.Get(ctx, k).Result()
		var rec struct {
			Refresh string `json:"rt"`
		}
		if json.Unmarshal([]byte(record), &rec) != nil || len(rec.Refresh) < 40 {
			t.Fatalf("no sealed refresh token in the record: %s", record)
		}
	}
	if c := b.Cookie(base, "facade-session"); len(c.Value) > 300 {
		t.Errorf("the session cookie grew to %d bytes", len(c.Value))
	}

	// New groups at the provider: nothing changes before the interval,
	// the first request after it brings them.
	p.SetAccount(t, "u-5", &testoidc.Account{PreferredUsername: "omar", Groups: []string{"first", "second"}})
	clock.Advance(14 * time.Minute)
	if m := whoami(); len(m.Groups) != 1 {
		t.Errorf("re-checked before the interval: %+v", m)
	}
	clock.Advance(2 * time.Minute)
	if m := whoami(); !slices.Equal(m.Groups, []string{"first", "second"}) {
		t.Errorf("after the interval: %+v\n%s\n%s", m, logs.String(), p.Output())
	}

	// Removed at the provider: the next re-check is refused, the session ends.
	p.SetAccount(t, "u-5", nil)
	clock.Advance(16 * time.Minute)
	if m := whoami(); m.SignedIn || m.Reason != "session-expired" {
		t.Errorf("a person removed at the provider is still signed in: %+v\n%s", m, logs.String())
	}

	// The provider down: pia's re-check fails, and she stays signed in.
	p.Stop()
	clock.Advance(16 * time.Minute)
	if m := whoamiOf(pia); !m.SignedIn {
		t.Errorf("a provider that is down ended pia's session: %+v", m)
	}
	if !strings.Contains(logs.String(), "session re-check failed; the session goes on") {
		t.Errorf("no warning of the failed re-check:\n%s", logs.String())
	}
}
