package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/auth"
)

// TestTokenSignsWithTheFirstKey: with FACADE_JWT_SECRET holding two keys,
// `facade token` signs with the first and names it in the kid; a service
// holding the keys in either order accepts the token, one holding only the
// other key refuses it as token-bad-signature.
func TestTokenSignsWithTheFirstKey(t *testing.T) {
	const newKey, oldKey = "the-new-key-of-the-rotation-0123456789", "the-old-key-of-the-rotation-9876543210"
	code, out, stderr := runCmd(settingsFrom(map[string]string{"FACADE_JWT_SECRET": newKey + "," + oldKey}),
		"token", "--sub", "alice", "--role", "student")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	tok := strings.TrimSpace(out)
	parsed, _, err := jwt.NewParser().ParseUnverified(tok, jwt.MapClaims{})
	if err != nil || parsed.Header["kid"] != auth.KeyID([]byte(newKey)) {
		t.Fatalf("kid %v (%v), want the first key's %s", parsed.Header["kid"], err, auth.KeyID([]byte(newKey)))
	}
	for secret, ok := range map[string]bool{newKey + "," + oldKey: true, oldKey + "," + newKey: true, newKey: true, oldKey: false} {
		s, err := loadSettings(settingsFrom(map[string]string{"FACADE_JWT_SECRET": secret}))
		if err != nil {
			t.Fatal(err)
		}
		tokens, err := auth.NewTokens(context.Background(), s.authConfig(nil))
		if err != nil {
			t.Fatal(err)
		}
		_, err = tokens.Identity(context.Background(), tok)
		if ok != (err == nil) || (!ok && !errors.Is(err, facade.ErrTokenBadSignature)) {
			t.Errorf("FACADE_JWT_SECRET with %d key(s) (%.7s...): %v", strings.Count(secret, ",")+1, secret, err)
		}
	}
}
