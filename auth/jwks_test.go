package auth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/auth"
)

// jwksKeys is an organization's key set: an RS256 and an ES256 signing
// key, an encryption key ("use": "enc") and an RSA key with no "use".
type jwksKeys struct {
	rsa, enc, plain *rsa.PrivateKey
	ec              *ecdsa.PrivateKey
}

// startJWKS serves keys as a JWKS document, as an identity provider does.
func startJWKS(t *testing.T) (string, jwksKeys) {
	t.Helper()
	var k jwksKeys
	for _, p := range []**rsa.PrivateKey{&k.rsa, &k.enc, &k.plain} {
		key, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			t.Fatal(err)
		}
		*p = key
	}
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	k.ec = ec
	b64 := func(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
	pad := func(i *big.Int) []byte { return i.FillBytes(make([]byte, 32)) }
	rsaJWK := func(key *rsa.PrivateKey, kid, use, alg string) map[string]string {
		m := map[string]string{"kty": "RSA", "kid": kid, "n": b64(key.N.Bytes()), "e": b64(big.NewInt(int64(key.E)).Bytes())}
		if use != "" {
			m["use"] = use
		}
		if alg != "" {
			m["alg"] = alg
		}
		return m
	}
	set := map[string]any{"keys": []map[string]string{
		rsaJWK(k.rsa, "rsa1", "sig", "RS256"),
		{"kty": "EC", "kid": "ec1", "use": "sig", "alg": "ES256", "crv": "P-256", "x": b64(pad(ec.X)), "y": b64(pad(ec.Y))},
		rsaJWK(k.enc, "enc1", "enc", ""),
		rsaJWK(k.plain, "plain1", "", ""),
	}}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(set)
	}))
	t.Cleanup(ts.Close)
	return ts.URL, k
}

func signWith(t *testing.T, method jwt.SigningMethod, key any, kid any, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, claims)
	if kid != nil {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestJWKSTokensVerifyOnlyWithSigningKeysOfTheirAlgorithm: in JWKS mode
// (docs/contract.md §2) a token verifies with the key its kid names, or
// without a kid with any key of the set, but only with a key meant for
// signatures ("use" absent or "sig") whose "alg", when given, is the
// token's; issuer and audience must be the configured ones.
func TestJWKSTokensVerifyOnlyWithSigningKeysOfTheirAlgorithm(t *testing.T) {
	url, k := startJWKS(t)
	tokens, err := auth.NewTokens(t.Context(), auth.TokenConfig{JWKSURL: url, Issuer: "https://idp.example", Audience: "facade"})
	if err != nil {
		t.Fatal(err)
	}
	good := func() jwt.MapClaims {
		return jwt.MapClaims{"sub": "alice", "iss": "https://idp.example", "aud": "facade", "exp": time.Now().Add(time.Hour).Unix()}
	}
	for name, tok := range map[string]string{
		"RS256 by kid":               signWith(t, jwt.SigningMethodRS256, k.rsa, "rsa1", good()),
		"ES256 by kid":               signWith(t, jwt.SigningMethodES256, k.ec, "ec1", good()),
		"a key without use":          signWith(t, jwt.SigningMethodRS256, k.plain, "plain1", good()),
		"no kid, signing key in set": signWith(t, jwt.SigningMethodRS256, k.rsa, nil, good()),
	} {
		if id, err := tokens.Identity(context.Background(), tok); err != nil || id.Principal.ID != "alice" {
			t.Errorf("%s: refused: %v", name, err)
		}
	}
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	wrongIss, wrongAud := good(), good()
	wrongIss["iss"], wrongAud["aud"] = "https://evil.example", "other"
	for name, c := range map[string]struct {
		tok  string
		want *facade.Error
	}{
		"a key of another set":         {signWith(t, jwt.SigningMethodRS256, other, "rsa1", good()), facade.ErrTokenBadSignature},
		"an unknown kid":               {signWith(t, jwt.SigningMethodRS256, other, "nope", good()), facade.ErrTokenBadSignature},
		"a kid that is not a string":   {signWith(t, jwt.SigningMethodRS256, k.rsa, 7, good()), facade.ErrTokenBadSignature},
		"RS256 under the EC key's kid": {signWith(t, jwt.SigningMethodRS256, k.rsa, "ec1", good()), facade.ErrTokenBadSignature},
		"the encryption key":           {signWith(t, jwt.SigningMethodRS256, k.enc, "enc1", good()), facade.ErrTokenBadSignature},
		"the encryption key, no kid":   {signWith(t, jwt.SigningMethodRS256, k.enc, nil, good()), facade.ErrTokenBadSignature},
		"HS256 in JWKS mode":           {signWith(t, jwt.SigningMethodHS256, bearerSecret, "rsa1", good()), facade.ErrTokenBadSignature},
		"another issuer":               {signWith(t, jwt.SigningMethodRS256, k.rsa, "rsa1", wrongIss), facade.ErrTokenWrongIssuer},
		"another audience":             {signWith(t, jwt.SigningMethodRS256, k.rsa, "rsa1", wrongAud), facade.ErrTokenWrongAudience},
	} {
		if _, err := tokens.Identity(context.Background(), c.tok); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %s", name, err, c.want.Code)
		}
	}
}

// TestTokenConfigNamesEachProblem: a start-up with token settings that
// cannot work is refused, naming the setting to fix.
func TestTokenConfigNamesEachProblem(t *testing.T) {
	for name, c := range map[string]struct {
		cfg  auth.TokenConfig
		want []string
	}{
		"nothing":           {auth.TokenConfig{}, []string{"FACADE_JWT_SECRET (or FACADE_JWKS_URL) is required"}},
		"a short secret":    {auth.TokenConfig{Secret: []byte("short")}, []string{"at least 32 bytes"}},
		"both modes":        {auth.TokenConfig{Secret: bearerSecret, JWKSURL: "http://127.0.0.1:1/jwks"}, []string{"only one of"}},
		"JWKS without iss":  {auth.TokenConfig{JWKSURL: "http://127.0.0.1:1/jwks", Audience: "a"}, []string{"FACADE_JWT_ISSUER"}},
		"JWKS without aud":  {auth.TokenConfig{JWKSURL: "http://127.0.0.1:1/jwks", Issuer: "i"}, []string{"FACADE_JWT_AUDIENCE"}},
		"JWKS with neither": {auth.TokenConfig{JWKSURL: "http://127.0.0.1:1/jwks"}, []string{"FACADE_JWT_ISSUER", "FACADE_JWT_AUDIENCE"}},
	} {
		err := c.cfg.Check()
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v, want it to say %q", name, err, w)
			}
		}
	}
	if err := (auth.TokenConfig{JWKSURL: "http://127.0.0.1:1/jwks", Issuer: "i", Audience: "a"}).Check(); err != nil {
		t.Errorf("a complete JWKS configuration refused: %v", err)
	}
}
