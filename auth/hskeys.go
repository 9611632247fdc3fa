package auth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// HS256 keys: FACADE_JWT_SECRET holds one or several, comma-separated;
// the first signs (`facade token`, the demo), every one verifies, so a
// new key is rolled in and an old one out without a token failing on the
// way (docs/operations.md, "Rotating the JWT keys").

// KeyID is the kid of an HS256 key: the first 8 hex digits of its
// SHA-256. It names the key without giving it away, so a token can say
// which key signed it and a verifier holding several tries that one.
func KeyID(key []byte) string {
	sum := sha256.Sum256(key)
	return hex.EncodeToString(sum[:4])
}

// checkKeys says what is wrong with FACADE_JWT_SECRET's keys: each must
// hold at least 32 bytes (RFC 7518 3.2: a key as long as the hash).
func checkKeys(keys [][]byte) error {
	if len(keys) == 1 && len(keys[0]) < 32 {
		return configError("FACADE_JWT_SECRET must be at least 32 bytes")
	}
	for i, k := range keys {
		if len(k) < 32 {
			return configError(fmt.Sprintf("FACADE_JWT_SECRET key %d of %d must be at least 32 bytes", i+1, len(keys)))
		}
	}
	return nil
}

// hmacKeys finds the keys a token may verify with: the one its kid names,
// or every key when the kid names none of them (a token without one, or
// from an issuer that names its keys otherwise), as before there was a kid.
func hmacKeys(keys [][]byte) func(context.Context) jwt.Keyfunc {
	byID := make(map[string][]byte, len(keys))
	var all jwt.VerificationKeySet
	for _, k := range keys {
		byID[KeyID(k)] = k
		all.Keys = append(all.Keys, k)
	}
	kf := func(token *jwt.Token) (any, error) {
		if kid, ok := token.Header["kid"].(string); ok {
			if k, ok := byID[kid]; ok {
				return k, nil
			}
		}
		return all, nil
	}
	return func(context.Context) jwt.Keyfunc { return kf }
}

// MintOption tunes Mint.
type MintOption func(*mintOptions)

type mintOptions struct{ now func() time.Time }

// WithNow is the clock Mint reads iat and exp from; nil means time.Now
// (`facade serve` and `facade demo` pass the one clock they give all parts).
func WithNow(now func() time.Time) MintOption { return func(o *mintOptions) { o.now = now } }

// Mint signs an HS256 token for `facade token`, the demo and tests: sub
// (and the user claim, when it is another), the role claim when role is
// not empty, and the key's KeyID as kid.
func Mint(secret []byte, sub, role string, names Claims, ttl time.Duration, opts ...MintOption) (string, error) {
	o := mintOptions{}
	for _, opt := range opts {
		opt(&o)
	}
	if o.now == nil {
		o.now = time.Now
	}
	names = names.withDefaults()
	now := o.now()
	claims := jwt.MapClaims{"sub": sub, names.User: sub, "iat": now.Unix(), "exp": now.Add(ttl).Unix()}
	if role != "" {
		claims[names.Role] = role
	}
	token := jwt.NewWithClaims(jwt.SigningMethodHS256, claims)
	token.Header["kid"] = KeyID(secret)
	return token.SignedString(secret)
}
