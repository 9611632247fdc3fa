package auth

import (
	"testing"
	"time"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/internal/testkit/testclock"
)

func TestTokenCacheHonoursExpiryAndBound(t *testing.T) {
	clock := testclock.New()
	c := newTokenCache(clock.Now)
	now := clock.Now()
	alice := Identity{Principal: facade.Principal{ID: "alice", Role: "student"}, Via: ViaBearer}

	c.put("short-lived", alice, now.Add(5*time.Second))
	c.put("long-lived", alice, now.Add(time.Hour))
	if p, ok := c.get("short-lived"); !ok || p.Principal.Key() != alice.Principal.Key() {
		t.Fatal("fresh token not remembered")
	}
	clock.Advance(6 * time.Second)
	if _, ok := c.get("short-lived"); ok {
		t.Fatal("a token past its own expiry was served from the cache")
	}
	if _, ok := c.get("long-lived"); !ok {
		t.Fatal("long-lived token dropped early")
	}
	clock.Advance(tokenCacheTTL)
	now = clock.Now()
	if _, ok := c.get("long-lived"); ok {
		t.Fatal("an entry outlived the cache TTL (a JWKS key rotation would not be seen)")
	}
	if _, ok := c.get("never-seen"); ok {
		t.Fatal("unknown token found")
	}

	c.max = 3
	for _, k := range []string{"a", "b", "c", "d"} {
		c.put(k, alice, now.Add(time.Hour))
	}
	if len(c.entries) > c.max {
		t.Fatalf("cache holds %d entries, bound is %d", len(c.entries), c.max)
	}
	if _, ok := c.get("d"); !ok {
		t.Fatal("latest entry lost after the reset")
	}
}

// TestTokenCacheNeverHoldsMoreThanItsBound: however the entries arrive,
// the cache holds at most max of them (8192 in service), so a flood of
// distinct valid tokens costs bounded memory.
func TestTokenCacheNeverHoldsMoreThanItsBound(t *testing.T) {
	clock := testclock.New()
	c := newTokenCache(clock.Now)
	c.max = 3
	alice := Identity{Principal: facade.Principal{ID: "alice"}, Via: ViaBearer}
	for i, k := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		c.put(k, alice, clock.Now().Add(time.Hour))
		if len(c.entries) > c.max {
			t.Fatalf("after %d tokens the cache holds %d entries, bound is %d", i+1, len(c.entries), c.max)
		}
	}
}
