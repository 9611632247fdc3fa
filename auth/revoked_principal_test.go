package auth_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/auth"
	"github.com/facade-dev/facade/internal/testkit/testclock"
	"github.com/facade-dev/facade/internal/testkit/testlog"
	"github.com/facade-dev/facade/internal/testkit/testredis"
)

// TestRevokedPrincipalsTokensRefusedOnEveryInstance: after
// auth.RevokeTokens (what `facade sessions revoke` runs), two instances
// on one real Redis refuse the principal's tokens issued before it as
// token-expired: one that never saw the token at once, one that verified
// it in the last minute once its cache entry ends. Another principal's
// tokens, and the principal's tokens issued more than the clock leeway
// (10 s) afterwards, still work; a token without iat cannot show it came
// afterwards. The record outlives
// every token it refuses, and no longer.
func TestRevokedPrincipalsTokensRefusedOnEveryInstance(t *testing.T) {
	rdb := testredis.Client(t)
	clock := testclock.New()
	const maxLifetime = 2 * time.Hour
	instance := func() *auth.Tokens {
		v, err := auth.NewTokens(context.Background(), auth.TokenConfig{Secret: bearerSecret, Redis: rdb, Now: clock.Now, MaxLifetime: maxLifetime})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	a, b := instance(), instance()
	mint := func(sub string) string {
		tok, err := auth.Mint(bearerSecret, sub, "student", auth.Claims{}, time.Hour, auth.WithNow(clock.Now))
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	ctx := context.Background()
	accepts := func(v *auth.Tokens, tok string) bool {
		_, err := v.Identity(ctx, tok)
		if err != nil && !errors.Is(err, facade.ErrTokenExpired) {
			t.Fatalf("refused for another reason: %v", err)
		}
		return err == nil
	}
	alice, bob := mint("alice"), mint("bob")
	if !accepts(a, alice) || !accepts(a, bob) {
		t.Fatal("tokens refused before any revocation")
	}
	clock.Advance(20 * time.Second)
	if err := auth.RevokeTokens(ctx, rdb, "alice", clock.Now(), maxLifetime); err != nil {
		t.Fatal(err)
	}
	if accepts(b, alice) {
		t.Error("the other instance accepts alice's token issued before her revocation")
	}
	if !accepts(a, alice) {
		t.Error("the instance that verified alice's token 20 s ago refuses it already: its cache should hold it up to a minute")
	}
	clock.Advance(5 * time.Second)
	if skewed := mint("alice"); accepts(b, skewed) {
		t.Error("alice's token issued 5 s after her revocation accepted: an issuer's clock 10 s ahead would have stamped a revoked token so")
	}
	clock.Advance(36 * time.Second) // past a's cache entry
	if accepts(a, alice) {
		t.Error("alice's revoked token still accepted a minute after her revocation")
	}
	if !accepts(a, bob) || !accepts(b, bob) {
		t.Error("bob's token refused after alice's revocation")
	}
	clock.Advance(time.Second) // 42 s after the revocation: past the leeway
	later := mint("alice")
	if !accepts(a, later) || !accepts(b, later) {
		t.Error("alice's token issued after her revocation refused")
	}
	now := clock.Now()
	noIat, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "alice", "exp": now.Add(time.Hour).Unix()}).SignedString(bearerSecret)
	if accepts(b, noIat) {
		t.Error("alice's token without iat accepted while her revocation stands")
	}
	keys, err := rdb.Keys(ctx, "facade:token:revoked:*").Result()
	if err != nil || len(keys) != 1 {
		t.Fatalf("revocation records %v (%v), want alice's", keys, err)
	}
	if ttl := rdb.TTL(ctx, keys[0]).Val(); ttl <= maxLifetime || ttl > maxLifetime+time.Minute {
		t.Errorf("the record lives %s: want FACADE_JWT_MAX_LIFETIME (%s) plus the leeway", ttl, maxLifetime)
	}
}

// TestRevocationListDownAcceptsTokens: with Redis stopped, tokens are
// verified as before revocation existed (the data behind the routes
// answers 503 by itself) and the outage is one log line, not one per
// token.
func TestRevocationListDownAcceptsTokens(t *testing.T) {
	srv := testredis.Start(t, testredis.Options{})
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1, DialerRetries: 1})
	t.Cleanup(func() { _ = rdb.Close() })
	var logs testlog.Buffer
	v, err := auth.NewTokens(context.Background(), auth.TokenConfig{Secret: bearerSecret, Redis: rdb, Log: slog.New(slog.NewJSONHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	for _, sub := range []string{"alice", "bob", "carol"} {
		tok, _ := auth.Mint(bearerSecret, sub, "", auth.Claims{}, time.Hour)
		if _, err := v.Identity(context.Background(), tok); err != nil {
			t.Errorf("%s's token refused with Redis down: %v", sub, err)
		}
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	var m map[string]any
	if len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &m) != nil || !strings.Contains(m["msg"].(string), "token revocation list (Redis) unavailable") {
		t.Errorf("want one line for the outage:\n%s", logs.String())
	}
}
