package server_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/facade-dev/facade/server"
)

var hs256 = jwt.SigningMethodHS256

const time2h = 2 * time.Hour

func sign(t testing.TB, method jwt.SigningMethod, key any, kid string, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, claims)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func claims(sub string, exp time.Duration, extra ...any) jwt.MapClaims {
	c := jwt.MapClaims{"sub": sub, "role": "student", "exp": time.Now().Add(exp).Unix()}
	for i := 0; i+1 < len(extra); i += 2 {
		c[extra[i].(string)] = extra[i+1]
	}
	return c
}

// unsigned builds an alg:none token by hand.
func unsigned(c jwt.MapClaims) string {
	h := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`))
	b, _ := json.Marshal(c)
	return h + "." + base64.RawURLEncoding.EncodeToString(b) + "."
}

// assert401 sends tok and wants a 401 whose code is want, with the
// challenge RFC 6750 §3 prescribes: the bare scheme when no token was
// sent, else error="invalid_token" and the code's fixed sentence (the
// body's detail), never the parser's text.
func assert401(t *testing.T, e *env, name, tok, want string) {
	t.Helper()
	r := e.do(req{method: "GET", path: "/student/alice/english/grade", token: tok})
	if r.status != http.StatusUnauthorized {
		t.Errorf("%s: status %d, want 401", name, r.status)
		return
	}
	p := r.problem(t)
	challenge := "Bearer"
	if want != "token-missing" {
		challenge = `Bearer error="invalid_token", error_description="` + p["detail"].(string) + `"`
	}
	if p["code"] != want || r.header.Get("WWW-Authenticate") != challenge {
		t.Errorf("%s: code %v, WWW-Authenticate %q; want %s, %q", name, p["code"], r.header.Get("WWW-Authenticate"), want, challenge)
	}
}

// refused is a token and the code its 401 must carry.
type refused struct{ tok, code string }

func TestHS256Authentication(t *testing.T) {
	e := newEnv(t)
	seedGrades(t, e)
	other := []byte("another-secret-that-is-at-least-32-bytes!!")
	cases := map[string]refused{
		"empty":           {"", "token-missing"},
		"malformed":       {"not.a.jwt", "token-malformed"},
		"garbage":         {"eyJhbGciOiJIUzI1NiJ9.bad.bad", "token-malformed"},
		"expired":         {sign(t, jwt.SigningMethodHS256, testSecret, "", claims("alice", -time.Hour)), "token-expired"},
		"alg none":        {unsigned(claims("alice", time.Hour)), "token-bad-signature"},
		"wrong key":       {sign(t, jwt.SigningMethodHS256, other, "", claims("alice", time.Hour)), "token-bad-signature"},
		"HS512":           {sign(t, jwt.SigningMethodHS512, testSecret, "", claims("alice", time.Hour)), "token-bad-signature"},
		"no exp":          {sign(t, jwt.SigningMethodHS256, testSecret, "", jwt.MapClaims{"sub": "alice", "role": "student"}), "token-malformed"},
		"no sub":          {sign(t, jwt.SigningMethodHS256, testSecret, "", jwt.MapClaims{"role": "student", "exp": time.Now().Add(time.Hour).Unix()}), "token-malformed"},
		"numeric sub":     {sign(t, jwt.SigningMethodHS256, testSecret, "", claims("alice", time.Hour, "sub", 42)), "token-malformed"},
		"not yet valid":   {sign(t, jwt.SigningMethodHS256, testSecret, "", claims("alice", time.Hour, "nbf", time.Now().Add(time.Hour).Unix())), "token-not-yet-valid"},
		"tampered claims": {tamper(sign(t, jwt.SigningMethodHS256, testSecret, "", claims("alice", time.Hour))), "token-bad-signature"},
	}
	for _, name := range sortedKeys(cases) {
		assert401(t, e, name, cases[name].tok, cases[name].code)
	}
	// Non-bearer schemes and a missing header are 401 too.
	for _, h := range []string{"", "Basic YWxpY2U6cHc=", "Bearer", "Token " + token(t, "alice", "student")} {
		r := e.do(req{method: "GET", path: "/student/alice/english/grade", header: map[string]string{"Authorization": h}})
		if r.status != 401 {
			t.Errorf("Authorization %q: %d", h, r.status)
		}
	}
	ok := sign(t, jwt.SigningMethodHS256, testSecret, "", claims("alice", time.Hour))
	if r := e.do(req{method: "GET", path: "/student/alice/english/grade", token: ok}); r.status != 200 {
		t.Fatalf("valid token: %d %s", r.status, r.body)
	}
	// The role claim name is configurable; a token without a role is a
	// principal without one (403 on grades, not 401).
	if r := e.do(req{method: "GET", path: "/student/alice/english/grade", token: token(t, "alice", "")}); r.status != 403 {
		t.Fatalf("no role: %d", r.status)
	}
}

// tamper changes the payload's sub without re-signing.
func tamper(tok string) string {
	parts := strings.Split(tok, ".")
	b, _ := json.Marshal(claims("dave", time.Hour))
	parts[1] = base64.RawURLEncoding.EncodeToString(b)
	return strings.Join(parts, ".")
}

func TestRoleClaimIsConfigurable(t *testing.T) {
	e := newEnv(t, withAuth(server.AuthConfig{Secret: testSecret, RoleClaim: "https://facade/role"}))
	seedGrades(t, e)
	tok := sign(t, jwt.SigningMethodHS256, testSecret, "", jwt.MapClaims{"sub": "alice", "https://facade/role": "student", "exp": time.Now().Add(time.Hour).Unix()})
	if r := e.do(req{method: "GET", path: "/student/alice/english/grade", token: tok}); r.status != 200 {
		t.Fatalf("custom role claim: %d", r.status)
	}
	// "role" is just another claim now.
	if r := e.do(req{method: "GET", path: "/student/alice/english/grade", token: token(t, "alice", "student")}); r.status != 403 {
		t.Fatalf("default claim name with custom setting: %d", r.status)
	}
}

// jwksServer serves an RSA and an EC public key as a JWKS, plus
// jwksEncKey under kid "enc1" with "use": "enc" (for encryption, never for
// signatures) and jwksPlainKey under kid "plain1" with no "use".
func jwksServer(t *testing.T) (*httptest.Server, *rsa.PrivateKey, *ecdsa.PrivateKey) {
	t.Helper()
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	ek, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	b64 := func(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
	pad := func(i *big.Int) []byte { b := make([]byte, 32); return i.FillBytes(b) }
	rsaJWK := func(k *rsa.PrivateKey, kid, use string) map[string]string {
		m := map[string]string{"kty": "RSA", "kid": kid, "n": b64(k.N.Bytes()), "e": b64(big.NewInt(int64(k.E)).Bytes())}
		if use != "" {
			m["use"] = use
		}
		return m
	}
	signing := rsaJWK(rk, "rsa1", "sig")
	signing["alg"] = "RS256"
	set := map[string]any{"keys": []map[string]string{
		signing,
		{"kty": "EC", "kid": "ec1", "use": "sig", "alg": "ES256", "crv": "P-256", "x": b64(pad(ek.X)), "y": b64(pad(ek.Y))},
		rsaJWK(jwksEncKey, "enc1", "enc"),
		rsaJWK(jwksPlainKey, "plain1", ""),
	}}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(set)
	}))
	t.Cleanup(ts.Close)
	return ts, rk, ek
}

var (
	jwksEncKey, _   = rsa.GenerateKey(rand.Reader, 2048)
	jwksPlainKey, _ = rsa.GenerateKey(rand.Reader, 2048)
)

func TestJWKSAuthentication(t *testing.T) {
	ts, rk, ek := jwksServer(t)
	e := newEnv(t, withAuth(server.AuthConfig{JWKSURL: ts.URL, Issuer: "https://idp.example", Audience: "facade"}))
	seedGrades(t, e)
	good := func(extra ...any) jwt.MapClaims {
		return claims("alice", time.Hour, append([]any{"iss", "https://idp.example", "aud", "facade"}, extra...)...)
	}
	otherRSA, _ := rsa.GenerateKey(rand.Reader, 2048)
	for name, tok := range map[string]string{
		"RS256":                      sign(t, jwt.SigningMethodRS256, rk, "rsa1", good()),
		"ES256":                      sign(t, jwt.SigningMethodES256, ek, "ec1", good()),
		"key without use":            sign(t, jwt.SigningMethodRS256, jwksPlainKey, "plain1", good()),
		"no kid, signing key in set": sign(t, jwt.SigningMethodRS256, rk, "", good()),
	} {
		if r := e.do(req{method: "GET", path: "/student/alice/english/grade", token: tok}); r.status != 200 {
			t.Errorf("%s: %d %s", name, r.status, r.body)
		}
	}
	bad := map[string]refused{
		"HS256 in JWKS mode":     {sign(t, jwt.SigningMethodHS256, testSecret, "rsa1", good()), "token-bad-signature"},
		"HS256 keyed with n":     {sign(t, jwt.SigningMethodHS256, rk.N.Bytes(), "rsa1", good()), "token-bad-signature"},
		"alg none":               {unsigned(good()), "token-bad-signature"},
		"wrong issuer":           {sign(t, jwt.SigningMethodRS256, rk, "rsa1", good("iss", "https://evil.example")), "token-wrong-issuer"},
		"wrong audience":         {sign(t, jwt.SigningMethodRS256, rk, "rsa1", good("aud", "other")), "token-wrong-audience"},
		"no issuer":              {sign(t, jwt.SigningMethodRS256, rk, "rsa1", claims("alice", time.Hour, "aud", "facade")), "token-malformed"},
		"expired":                {sign(t, jwt.SigningMethodRS256, rk, "rsa1", claims("alice", -time.Hour, "iss", "https://idp.example", "aud", "facade")), "token-expired"},
		"unknown signing key":    {sign(t, jwt.SigningMethodRS256, otherRSA, "rsa1", good()), "token-bad-signature"},
		"unknown kid":            {sign(t, jwt.SigningMethodRS256, otherRSA, "nope", good()), "token-bad-signature"},
		"RS256 with EC kid":      {sign(t, jwt.SigningMethodRS256, rk, "ec1", good()), "token-bad-signature"},
		"encryption key":         {sign(t, jwt.SigningMethodRS256, jwksEncKey, "enc1", good()), "token-bad-signature"},
		"encryption key, no kid": {sign(t, jwt.SigningMethodRS256, jwksEncKey, "", good()), "token-bad-signature"},
		"unknown crit":           {withCrit(t, jwt.SigningMethodRS256, rk, "rsa1", good()), "token-malformed"},
	}
	for _, name := range sortedKeys(bad) {
		assert401(t, e, name, bad[name].tok, bad[name].code)
	}
}

func TestAuthenticatorConfiguration(t *testing.T) {
	cases := map[string]server.AuthConfig{
		"nothing":          {},
		"short secret":     {Secret: []byte("short")},
		"both modes":       {Secret: testSecret, JWKSURL: "http://127.0.0.1:1/jwks"},
		"JWKS without iss": {JWKSURL: "http://127.0.0.1:1/jwks", Audience: "a"},
		"JWKS without aud": {JWKSURL: "http://127.0.0.1:1/jwks", Issuer: "i"},
	}
	for name, c := range cases {
		if _, err := server.NewAuthenticator(t.Context(), c); err == nil || !strings.Contains(err.Error(), "FACADE_") {
			t.Errorf("%s: err %v, want one naming the setting", name, err)
		}
	}
}

// withCrit signs claims with a "crit" header naming an extension.
func withCrit(t testing.TB, method jwt.SigningMethod, key any, kid string, c jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, c)
	tok.Header["crit"] = []string{"exp-ext"}
	tok.Header["exp-ext"] = true
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestTokenTimeAndExtensionRules: iat in the future past the leeway,
// lifetimes over FACADE_JWT_MAX_LIFETIME and critical extensions are
// refused; what is within the rules passes.
func TestTokenTimeAndExtensionRules(t *testing.T) {
	e := newEnv(t, withAuth(server.AuthConfig{Secret: testSecret, MaxLifetime: 2 * time.Hour}))
	seedGrades(t, e)
	now := time.Now()
	hs := func(extra ...any) string { return sign(t, hs256, testSecret, "", claims("alice", time.Hour, extra...)) }
	for name, c := range map[string]refused{
		"iat a minute ahead":         {hs("iat", now.Add(time.Minute).Unix()), "token-not-yet-valid"},
		"iat a year ahead":           {hs("iat", now.AddDate(1, 0, 0).Unix()), "token-not-yet-valid"},
		"valid for 50 years":         {sign(t, hs256, testSecret, "", claims("alice", 50*365*24*time.Hour, "iat", now.Unix())), "token-lifetime-too-long"},
		"3h without iat":             {sign(t, hs256, testSecret, "", claims("alice", 3*time.Hour)), "token-lifetime-too-long"},
		"3h lifetime, issued 2h ago": {sign(t, hs256, testSecret, "", claims("alice", time.Hour, "iat", now.Add(-2*time.Hour).Unix())), "token-lifetime-too-long"},
		"crit extension":             {withCrit(t, hs256, testSecret, "", claims("alice", time.Hour)), "token-malformed"},
		"empty crit":                 {withCritValue(t, []string{}), "token-malformed"},
	} {
		assert401(t, e, name, c.tok, c.code)
	}
	for name, tok := range map[string]string{
		"iat within the leeway": hs("iat", now.Add(5*time.Second).Unix()),
		"2h lifetime":           sign(t, hs256, testSecret, "", claims("alice", 2*time.Hour-time.Minute, "iat", now.Unix())),
		"no iat, 1h left":       hs(),
	} {
		if r := e.do(req{method: "GET", path: "/student/alice/english/grade", token: tok}); r.status != 200 {
			t.Errorf("%s: %d", name, r.status)
		}
	}
	// The default limit is a day.
	d := newEnv(t)
	seedGrades(t, d)
	assert401(t, d, "25h by default", sign(t, hs256, testSecret, "", claims("alice", 25*time.Hour, "iat", now.Unix())), "token-lifetime-too-long")
	if r := d.do(req{method: "GET", path: "/student/alice/english/grade", token: sign(t, hs256, testSecret, "", claims("alice", 23*time.Hour, "iat", now.Unix()))}); r.status != 200 {
		t.Errorf("23h token by default: %d", r.status)
	}
}

func withCritValue(t testing.TB, crit any) string {
	t.Helper()
	tok := jwt.NewWithClaims(hs256, claims("alice", time.Hour))
	tok.Header["crit"] = crit
	s, err := tok.SignedString(testSecret)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSubWithControlCharactersIsRefused(t *testing.T) {
	e := newEnv(t)
	tok := sign(t, jwt.SigningMethodHS256, testSecret, "", jwt.MapClaims{"sub": "alice\x00x", "role": "student", "exp": time.Now().Add(time.Hour).Unix()})
	if r := e.do(req{method: "GET", path: "/student/alice/english/grade", token: tok}); r.status != 401 {
		t.Fatalf("sub with NUL: %d", r.status)
	}
}
