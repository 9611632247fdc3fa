package auth

import (
	"crypto/sha256"
	"sync"
	"time"
)

// tokenCache remembers tokens that verified, so a client sending the same
// bearer token on every call pays for the signature check and claim
// decoding once per minute instead of on every request, where they are a
// large share of a cached read's CPU (docs/performance.md, "auth"). Only
// verified tokens enter; an entry lives until the token expires or
// tokenCacheTTL, whichever is first, so a key removed from a JWKS stops
// working within that time.
//
// The zero value is not usable; use newTokenCache.
type tokenCache struct {
	mu      sync.RWMutex
	entries map[[sha256.Size]byte]cachedToken
	max     int
	now     func() time.Time
}

type cachedToken struct {
	id      Identity
	expires time.Time
}

const (
	tokenCacheTTL     = time.Minute
	tokenCacheEntries = 8192
)

func newTokenCache(now func() time.Time) *tokenCache {
	return &tokenCache{entries: map[[sha256.Size]byte]cachedToken{}, max: tokenCacheEntries, now: now}
}

func (c *tokenCache) get(raw string) (Identity, bool) {
	k := tokenKey(raw)
	c.mu.RLock()
	e, ok := c.entries[k]
	c.mu.RUnlock()
	if !ok || !c.now().Before(e.expires) {
		return Identity{}, false
	}
	return e.id, true
}

// put stores id for raw until exp (the token's own expiry) or the TTL.
// When full, the map is dropped wholesale: simple, bounded, and refilled by
// the next requests at the cost of one verification each.
func (c *tokenCache) put(raw string, id Identity, exp time.Time) {
	until := c.now().Add(tokenCacheTTL)
	if exp.Before(until) {
		until = exp
	}
	k := tokenKey(raw)
	c.mu.Lock()
	if len(c.entries) >= c.max {
		c.entries = make(map[[sha256.Size]byte]cachedToken, c.max)
	}
	c.entries[k] = cachedToken{id: id, expires: until}
	c.mu.Unlock()
}

// tokenKey is the cache's key for raw: its SHA-256, so the cache never
// holds a token. A token up to 1 KiB is hashed from a copy on the stack,
// so that looking a token up does not allocate ([]byte(raw) would).
func tokenKey(raw string) [sha256.Size]byte {
	if len(raw) <= 1024 {
		var buf [1024]byte
		return sha256.Sum256(append(buf[:0], raw...))
	}
	return sha256.Sum256([]byte(raw))
}
