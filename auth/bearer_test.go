package auth_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/auth"
	"github.com/facade-dev/facade/internal/testkit/testclock"
)

var bearerSecret = []byte("0123456789abcdef0123456789abcdef") // 32 bytes, the shortest allowed

// hs256 signs claims with bearerSecret, as a caller's token issuer would.
func hs256(t *testing.T, claims jwt.MapClaims) string {
	t.Helper()
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(bearerSecret)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestBearerTokenLifetimeLimit: FACADE_JWT_MAX_LIFETIME (docs/contract.md
// §2) lets a token valid for exactly the limit through and refuses one a
// second longer, counted from iat, or from now when iat is absent.
func TestBearerTokenLifetimeLimit(t *testing.T) {
	clock := testclock.New()
	tokens, err := auth.NewTokens(context.Background(), auth.TokenConfig{Secret: bearerSecret, MaxLifetime: 2 * time.Hour, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	now := clock.Now()
	for _, c := range []struct {
		name   string
		claims jwt.MapClaims
		want   error // nil: accepted
	}{
		{"exactly the limit from iat", jwt.MapClaims{"sub": "alice", "iat": now.Unix(), "exp": now.Add(2 * time.Hour).Unix()}, nil},
		{"a second past the limit from iat", jwt.MapClaims{"sub": "alice", "iat": now.Unix(), "exp": now.Add(2*time.Hour + time.Second).Unix()}, facade.ErrTokenLifetimeTooLong},
		{"issued an hour ago, 2h30 in all", jwt.MapClaims{"sub": "alice", "iat": now.Add(-time.Hour).Unix(), "exp": now.Add(90 * time.Minute).Unix()}, facade.ErrTokenLifetimeTooLong},
		{"exactly the limit from now", jwt.MapClaims{"sub": "alice", "exp": now.Add(2 * time.Hour).Unix()}, nil},
		{"a second past the limit from now", jwt.MapClaims{"sub": "alice", "exp": now.Add(2*time.Hour + time.Second).Unix()}, facade.ErrTokenLifetimeTooLong},
	} {
		id, err := tokens.Identity(context.Background(), hs256(t, c.claims))
		switch {
		case c.want == nil && (err != nil || id.Principal.ID != "alice"):
			t.Errorf("%s: refused (%v), want alice", c.name, err)
		case c.want != nil && !errors.Is(err, c.want):
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}

// TestBearerSecretOf32BytesAtLeast: FACADE_JWT_SECRET must be at least 32
// bytes; a start-up with 31 is refused, with 32 it runs.
func TestBearerSecretOf32BytesAtLeast(t *testing.T) {
	if _, err := auth.NewTokens(context.Background(), auth.TokenConfig{Secret: bearerSecret}); err != nil {
		t.Errorf("32-byte secret refused: %v", err)
	}
	if _, err := auth.NewTokens(context.Background(), auth.TokenConfig{Secret: bearerSecret[:31]}); err == nil {
		t.Error("31-byte secret accepted")
	}
}

// TestAuthorizationHeaderEdges: "Bearer " in any case, then a token of 1
// character or more: one past 12 KiB was still sent (Identity refuses it
// as malformed, never as missing).
func TestAuthorizationHeaderEdges(t *testing.T) {
	for _, c := range []struct {
		name, header string
		ok           bool
	}{
		{"one character", "Bearer x", true},
		{"any case", "bEARER x", true},
		{"12 KiB", "Bearer " + strings.Repeat("x", 12<<10), true},
		{"one past 12 KiB", "Bearer " + strings.Repeat("x", 12<<10+1), true},
		{"nothing after the scheme", "Bearer ", false},
		{"only spaces after the scheme", "Bearer   ", false},
		{"another scheme", "Basic eDp5", false},
	} {
		if tok, ok := auth.BearerToken(c.header); ok != c.ok || (ok && tok != strings.TrimPrefix(strings.ToLower(c.header), "bearer ")) {
			t.Errorf("%s: a token of %d characters, ok=%v; want ok=%v", c.name, len(tok), ok, c.ok)
		}
	}
}

// TestTokenNamesAreBounded: the user claim and each group are 1 to 256
// characters without control characters; a token breaking the user rule
// is malformed, a bad group is left out. A token with Microsoft Entra's
// 200 group ids (36 characters each, about 10 KB) is read whole.
func TestTokenNamesAreBounded(t *testing.T) {
	tokens, err := auth.NewTokens(context.Background(), auth.TokenConfig{Secret: bearerSecret})
	if err != nil {
		t.Fatal(err)
	}
	exp := time.Now().Add(time.Hour).Unix()
	identity := func(claims jwt.MapClaims) (auth.Identity, error) {
		claims["exp"] = exp
		return tokens.Identity(context.Background(), hs256(t, claims))
	}
	for _, c := range []struct {
		name, sub string
		ok        bool
	}{
		{"256 characters", strings.Repeat("a", 256), true},
		{"257 characters", strings.Repeat("a", 257), false},
		{"a space", "alice smith", true},
		{"the last control character", "alice\x1f", false},
		{"DEL", "alice\x7f", false},
		{"a tilde", "alice~", true},
	} {
		id, err := identity(jwt.MapClaims{"sub": c.sub})
		if c.ok && (err != nil || id.Principal.ID != c.sub) {
			t.Errorf("sub with %s: refused (%v)", c.name, err)
		}
		if !c.ok && !errors.Is(err, facade.ErrTokenMalformed) {
			t.Errorf("sub with %s: %v, want token_malformed", c.name, err)
		}
	}

	groups := make([]any, 0, 201)
	groups = append(groups, "bad\x00group")
	for i := range 200 {
		groups = append(groups, fmt.Sprintf("%08x-0f3d-4e6a-9b7c-2d1f0e9a8b7c", i))
	}
	id, err := identity(jwt.MapClaims{"sub": "bob", "groups": groups})
	if err != nil {
		t.Fatalf("a token with 200 Entra group ids: %v", err)
	}
	if got := id.Principal.Groups; len(got) != 200 || got[0] != groups[1] || got[199] != groups[200] {
		t.Errorf("groups kept: %d, want the 200 usable ones in order", len(got))
	}
}

// TestBearerTokenClockSkewLeeway: 10 s of clock skew between the token's
// issuer and the service are absorbed (docs/contract.md §2): a token
// issued 5 s "in the future" or expired 5 s ago is accepted, one expired
// 11 s ago is refused as expired; and the default FACADE_JWT_MAX_LIFETIME
// (24 h) lets a day-long token through.
func TestBearerTokenClockSkewLeeway(t *testing.T) {
	clock := testclock.New()
	tokens, err := auth.NewTokens(context.Background(), auth.TokenConfig{Secret: bearerSecret, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	now := clock.Now()
	for _, c := range []struct {
		name     string
		iat, exp time.Time
		want     error // nil: accepted
	}{
		{"issued 5 s ahead of our clock", now.Add(5 * time.Second), now.Add(time.Hour), nil},
		{"expired 5 s ago", now.Add(-time.Hour), now.Add(-5 * time.Second), nil},
		{"expired 11 s ago", now.Add(-time.Hour), now.Add(-11 * time.Second), facade.ErrTokenExpired},
		{"valid for the default 24 h", now, now.Add(24 * time.Hour), nil},
		{"valid for 24 h and a second", now, now.Add(24*time.Hour + time.Second), facade.ErrTokenLifetimeTooLong},
	} {
		_, err := tokens.Identity(context.Background(), hs256(t, jwt.MapClaims{"sub": "alice", "iat": c.iat.Unix(), "exp": c.exp.Unix()}))
		if (c.want == nil && err != nil) || (c.want != nil && !errors.Is(err, c.want)) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}

// TestMintedTokensCarryTheRoleAsked: `facade token --role` mints a token
// whose role claim the service reads back; without --role, no role.
func TestMintedTokensCarryTheRoleAsked(t *testing.T) {
	tokens, err := auth.NewTokens(context.Background(), auth.TokenConfig{Secret: bearerSecret})
	if err != nil {
		t.Fatal(err)
	}
	for _, role := range []string{"professor", ""} {
		tok, err := auth.Mint(bearerSecret, "bob", role, auth.Claims{}, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if id, err := tokens.Identity(context.Background(), tok); err != nil || id.Principal.ID != "bob" || id.Principal.Role != role {
			t.Errorf("minted with role %q: %+v, %v", role, id.Principal, err)
		}
	}
}

// TestMintReadsTheInjectedClock: a token minted on a clock an hour behind
// the machine's is already expired for a reader on the machine's clock,
// and valid for one on the same clock.
func TestMintReadsTheInjectedClock(t *testing.T) {
	clock := testclock.New() // 2023, long before the machine's time
	tok, err := auth.Mint(bearerSecret, "bob", "professor", auth.Claims{}, time.Hour, auth.WithNow(clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	machine, err := auth.NewTokens(context.Background(), auth.TokenConfig{Secret: bearerSecret})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := machine.Identity(context.Background(), tok); !errors.Is(err, facade.ErrTokenExpired) {
		t.Errorf("on the machine's clock: %v, want ErrTokenExpired", err)
	}
	same, err := auth.NewTokens(context.Background(), auth.TokenConfig{Secret: bearerSecret, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	if id, err := same.Identity(context.Background(), tok); err != nil || id.Principal.ID != "bob" {
		t.Errorf("on the minting clock: %+v, %v", id.Principal, err)
	}
}

// TestGroupNamesAsProvidersSendThem: names with ':', '/', spaces and
// non-ASCII letters are kept as sent; one with a control character (C0,
// DEL, C1) or a format character is dropped whole, never rewritten into
// another name; order is kept.
func TestGroupNamesAsProvidersSendThem(t *testing.T) {
	tokens, err := auth.NewTokens(context.Background(), auth.TokenConfig{Secret: bearerSecret})
	if err != nil {
		t.Fatal(err)
	}
	sent := []any{"acme:payments", "bad\nname", "team-a/admins", "del\x7fname", "Domain Users", "c1\u0085name",
		"zero\u200bwidth", "Équipe Ventes", strings.Repeat("x", 257), 42}
	tok := hs256(t, jwt.MapClaims{"sub": "bob", "groups": sent, "exp": time.Now().Add(time.Hour).Unix()})
	id, err := tokens.Identity(context.Background(), tok)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(id.Principal.Groups, "|"); got != "acme:payments|team-a/admins|Domain Users|Équipe Ventes" {
		t.Fatalf("groups kept: %q", got)
	}
}
