package server_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/auth"
)

// keyProvider is an OpenID provider reduced to what a relying party reads
// before anyone signs in (discovery and keys), signing with key: the
// test is the provider, and signs its logout tokens.
func keyProvider(key *rsa.PrivateKey) func(issuer string) http.Handler {
	return func(issuer string) http.Handler {
		mux := http.NewServeMux()
		mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
			_ = json.NewEncoder(w).Encode(map[string]any{
				"issuer": issuer, "authorization_endpoint": issuer + "/authorize", "token_endpoint": issuer + "/token",
				"jwks_uri": issuer + "/keys", "id_token_signing_alg_values_supported": []string{"RS256"},
				"response_types_supported": []string{"code"}, "subject_types_supported": []string{"public"},
				"backchannel_logout_supported": true, "backchannel_logout_session_supported": true,
			})
		})
		mux.HandleFunc("/keys", func(w http.ResponseWriter, _ *http.Request) {
			b := func(i *big.Int) string { return base64.RawURLEncoding.EncodeToString(i.Bytes()) }
			_ = json.NewEncoder(w).Encode(map[string]any{"keys": []any{map[string]string{
				"kty": "RSA", "kid": "k1", "use": "sig", "alg": "RS256", "n": b(key.N), "e": b(big.NewInt(int64(key.E)))}}})
		})
		return mux
	}
}

// TestBackchannelLogoutEndsTheSessionsItNames: the route takes a logout
// token without cookie or anti-forgery header, ends the session of that
// provider sid and no other (200, Cache-Control: no-store), and refuses
// an invalid one with 400 {"error":"invalid_request"}, ending nothing.
func TestBackchannelLogoutEndsTheSessionsItNames(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	si := &signInEnv{provider: keyProvider(key)}
	e := newEnv(t, withSignIn(si))
	open := func(sid string) *http.Cookie {
		_, cookies, err := si.sessions.Issue(context.Background(), facade.Principal{ID: "nora"}, time.Time{},
			auth.ProviderSession{Sub: "u-17", SID: sid}, "")
		if err != nil {
			t.Fatal(err)
		}
		return cookies[0]
	}
	laptop, phone := open("sid-laptop"), open("sid-phone")
	signedIn := func(c *http.Cookie) bool {
		r := e.do(req{method: "GET", path: "/auth/me", header: map[string]string{"Cookie": c.Name + "=" + c.Value, "Sec-Fetch-Site": "same-origin"}})
		return strings.Contains(r.body, `"signed_in":true`)
	}
	if !signedIn(laptop) || !signedIn(phone) {
		t.Fatal("sessions not open")
	}
	logout := func(c jwt.MapClaims) resp {
		tok := jwt.NewWithClaims(jwt.SigningMethodRS256, c)
		tok.Header["kid"] = "k1"
		raw, err := tok.SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return e.do(req{method: "POST", path: "/auth/backchannel-logout", body: url.Values{"logout_token": {raw}}.Encode(),
			header: map[string]string{"Content-Type": "application/x-www-form-urlencoded", "X-XSRF-TOKEN": ""}})
	}
	now := time.Now()
	claims := jwt.MapClaims{"iss": si.issuer, "aud": "facade", "iat": now.Unix(), "jti": "j-1", "sub": "u-17", "sid": "sid-laptop",
		"events": map[string]any{"http://schemas.openid.net/event/backchannel-logout": map[string]any{}}}
	bad := jwt.MapClaims{}
	for k, v := range claims {
		bad[k] = v
	}
	bad["nonce"], bad["jti"] = "n", "j-0"
	if r := logout(bad); r.status != 400 || strings.TrimSpace(r.body) != `{"error":"invalid_request"}` || !signedIn(laptop) {
		t.Errorf("a logout token with a nonce: %d %s", r.status, r.body)
	}
	r := logout(claims)
	if r.status != 200 || r.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("logout token: %d %v %s", r.status, r.header, r.body)
	}
	if signedIn(laptop) || !signedIn(phone) {
		t.Errorf("after the laptop's provider session ended: laptop %v, phone %v (want false, true)", signedIn(laptop), signedIn(phone))
	}
	if r := logout(claims); r.status != 400 {
		t.Errorf("the same logout token again: %d", r.status)
	}
}
