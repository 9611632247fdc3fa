package auth_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/auth"
)

// TestJWTKeysRotateWithoutATokenFailing follows the rotation of
// docs/operations.md ("Rotating the JWT keys") on instances that hold the
// keys of each step: the new key added second, then put first, then the
// old one dropped. Tokens of either key verify wherever both are held,
// whoever signed them, with or without a kid; once the old key is dropped
// its tokens are refused as token-bad-signature, as any other key's.
func TestJWTKeysRotateWithoutATokenFailing(t *testing.T) {
	oldKey := []byte("old-key-of-the-rotation-test-0123456789")
	newKey := []byte("new-key-of-the-rotation-test-9876543210")
	mint := func(key []byte) string {
		tok, err := auth.Mint(key, "alice", "student", auth.Claims{}, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	noKid := func(key []byte) string { // another issuer's token: no kid
		now := time.Now()
		tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "alice", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}).SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	tokens := map[string]string{
		"old key": mint(oldKey), "new key": mint(newKey),
		"old key, no kid": noKid(oldKey), "new key, no kid": noKid(newKey),
	}
	steps := []struct {
		name   string
		keys   [][]byte
		refuse []string // the others verify
	}{
		{"before: the old key alone", [][]byte{oldKey}, []string{"new key", "new key, no kid"}},
		{"the new key added second", [][]byte{oldKey, newKey}, nil},
		{"the new key first (it signs)", [][]byte{newKey, oldKey}, nil},
		{"the old key dropped", [][]byte{newKey}, []string{"old key", "old key, no kid"}},
	}
	for _, step := range steps {
		v, err := auth.NewTokens(context.Background(), auth.TokenConfig{Secret: step.keys[0], OtherSecrets: step.keys[1:]})
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		for name, tok := range tokens {
			refused := strings.Contains(strings.Join(step.refuse, "|")+"|", name+"|")
			id, err := v.Identity(context.Background(), tok)
			switch {
			case refused && !errors.Is(err, facade.ErrTokenBadSignature):
				t.Errorf("%s: a token of the %s: %v, want token-bad-signature", step.name, name, err)
			case !refused && (err != nil || id.Principal.ID != "alice"):
				t.Errorf("%s: a token of the %s refused: %v", step.name, name, err)
			}
		}
	}
}

// TestJWTKeyIDNamesTheKey: a token's kid is the first 8 hex digits of the
// SHA-256 of the key that signed it (`facade token` and the demo set it);
// a verifier tries only the key a known kid names, and every key for a kid
// it does not know.
func TestJWTKeyIDNamesTheKey(t *testing.T) {
	a := []byte("first-key-of-the-kid-test-0123456789ab")
	b := []byte("second-key-of-the-kid-test-0123456789a")
	sum := sha256.Sum256(a)
	if got, want := auth.KeyID(a), hex.EncodeToString(sum[:])[:8]; got != want {
		t.Fatalf("KeyID %q, want %q", got, want)
	}
	tok, _ := auth.Mint(a, "alice", "", auth.Claims{}, time.Hour)
	parsed, _, err := jwt.NewParser().ParseUnverified(tok, jwt.MapClaims{})
	if err != nil || parsed.Header["kid"] != auth.KeyID(a) {
		t.Fatalf("minted token's kid %v (%v), want %s", parsed.Header["kid"], err, auth.KeyID(a))
	}
	v, err := auth.NewTokens(context.Background(), auth.TokenConfig{Secret: a, OtherSecrets: [][]byte{b}})
	if err != nil {
		t.Fatal(err)
	}
	signed := func(kid any, key []byte) string {
		now := time.Now()
		tok := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "alice", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()})
		tok.Header["kid"] = kid
		s, err := tok.SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, c := range []struct {
		name string
		tok  string
		ok   bool
	}{
		{"b's token naming b", signed(auth.KeyID(b), b), true},
		{"b's token naming a", signed(auth.KeyID(a), b), false},
		{"b's token naming a key of another issuer", signed("issuer-key-7", b), true},
		{"b's token with a number for a kid", signed(7, b), true},
	} {
		_, err := v.Identity(context.Background(), c.tok)
		if c.ok != (err == nil) || (!c.ok && !errors.Is(err, facade.ErrTokenBadSignature)) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// TestEveryJWTKeyOf32BytesAtLeast: each key of the list is held to the
// 32 bytes, and the refusal says which.
func TestEveryJWTKeyOf32BytesAtLeast(t *testing.T) {
	_, err := auth.NewTokens(context.Background(), auth.TokenConfig{Secret: bearerSecret, OtherSecrets: [][]byte{bearerSecret[:31]}})
	if err == nil || err.Error() != "FACADE_JWT_SECRET key 2 of 2 must be at least 32 bytes" {
		t.Errorf("a 31-byte second key: %v", err)
	}
	if _, err := auth.NewTokens(context.Background(), auth.TokenConfig{OtherSecrets: [][]byte{bearerSecret}, JWKSURL: "https://idp.example/jwks"}); err == nil {
		t.Error("HS256 keys beside a JWKS URL accepted")
	}
}
