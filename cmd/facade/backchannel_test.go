package main

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/facade-dev/facade/internal/testkit/testlog"
	"github.com/facade-dev/facade/internal/testkit/testoidc"
	"github.com/facade-dev/facade/internal/testkit/testredis"
	"github.com/facade-dev/facade/internal/testkit/testsignin"
)

// privateJWKS is key as the provider's signing key set (kid "k1").
func privateJWKS(key *rsa.PrivateKey) json.RawMessage {
	key.Precompute()
	b := func(i *big.Int) string { return base64.RawURLEncoding.EncodeToString(i.Bytes()) }
	k := map[string]string{
		"kty": "RSA", "kid": "k1", "use": "sig", "alg": "RS256",
		"n": b(key.N), "e": b(big.NewInt(int64(key.E))), "d": b(key.D),
		"p": b(key.Primes[0]), "q": b(key.Primes[1]),
		"dp": b(key.Precomputed.Dp), "dq": b(key.Precomputed.Dq), "qi": b(key.Precomputed.Qinv),
	}
	out, _ := json.Marshal(map[string]any{"keys": []any{k}})
	return out
}

// TestBackchannelLogoutAtARealProvider: npm's oidc-provider sends a
// logout token when a person signs out there; `facade serve` (two
// instances on one Redis: the provider calls the second, the person uses
// the first) ends that provider session's facade session on every
// instance, and only that one, though the principal comes from
// preferred_username rather than the provider's sub. Logout tokens signed
// with another key, for another audience or issuer, with a nonce, without
// the event, too old, or naming no one end nothing (400
// {"error":"invalid_request"}); a valid one naming only the sub ends
// every session of the person; sent again, it is refused.
func TestBackchannelLogoutAtARealProvider(t *testing.T) {
	addrA, addrB := freeAddr(t), freeAddr(t)
	base, baseB := "http://"+addrA, "http://"+addrB
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p := testoidc.Start(t, testoidc.Config{
		ClientID: "facade", ClientSecret: "facade-secret-for-tests",
		RedirectURI: base + "/auth/callback", PostLogoutURI: base + "/ui/",
		BackchannelLogoutURI: baseB + "/auth/backchannel-logout",
		JWKS:                 privateJWKS(key),
		Accounts:             map[string]testoidc.Account{"u-17": {PreferredUsername: "nora", Role: "student"}},
	})
	redisURL := testredis.URL(t)
	settings := map[string]string{
		"FACADE_REDIS_URL": redisURL, "FACADE_JWT_SECRET": secret,
		"FACADE_PUBLIC_URL": base, "FACADE_OIDC_ISSUER": p.URL, "FACADE_OIDC_CLIENT_ID": "facade",
		"FACADE_OIDC_CLIENT_SECRET": "facade-secret-for-tests", "FACADE_OIDC_SCOPES": "openid profile role",
		"FACADE_OIDC_USER_CLAIM": "preferred_username",
		"FACADE_SESSION_KEYS":    testSessionKey,
		"FACADE_MODEL":           "../../model.conf", "FACADE_POLICY": "../../policy.csv",
		"FACADE_DRAIN_DELAY": "0s",
	}
	var logs testlog.Buffer
	for _, addr := range []string{addrA, addrB} {
		settings["FACADE_ADDR"] = addr
		startServe(t, settingsFrom(settings), "http://"+addr, &logs)
	}

	signIn := func(login string) *testsignin.Browser {
		t.Helper()
		b := testsignin.NewBrowser(t)
		cb := p.SignIn(b, b.StartSignIn(base, "/ui/"), login)
		if resp := b.Get(cb.String()); resp.StatusCode != http.StatusSeeOther {
			body, _ := io.ReadAll(resp.Body)
			t.Fatalf("%s's callback: %d %s\n%s", login, resp.StatusCode, body, logs.String())
		}
		return b
	}
	signedIn := func(b *testsignin.Browser) bool {
		t.Helper()
		resp := b.Do(http.MethodGet, base+"/auth/me", http.Header{"Sec-Fetch-Site": {"same-origin"}}, nil)
		var m struct {
			SignedIn bool   `json:"signed_in"`
			Sub      string `json:"sub"`
		}
		if json.NewDecoder(resp.Body).Decode(&m) != nil || (m.SignedIn && m.Sub != "nora") {
			t.Fatalf("/auth/me: %d %+v", resp.StatusCode, m)
		}
		return m.SignedIn
	}

	laptop, phone := signIn("u-17"), signIn("u-17")
	if !signedIn(laptop) || !signedIn(phone) {
		t.Fatal("nora is not signed in on both")
	}
	// Nora signs out at the provider on her laptop: the provider tells
	// instance B, and instance A refuses the laptop's session at once.
	p.EndSession(laptop)
	for i := 0; i < 100 && !strings.Contains(p.Output(), "backchannel "); i++ {
		time.Sleep(50 * time.Millisecond) // its line may still be on the way through the pipe
	}
	if !strings.Contains(p.Output(), "backchannel sent: u-17") {
		t.Fatalf("the provider sent no logout token:\n%s\n%s", p.Output(), logs.String())
	}
	if signedIn(laptop) {
		t.Errorf("the laptop's session outlived the provider's logout\n%s", logs.String())
	}
	if !signedIn(phone) {
		t.Fatal("the phone's session (another provider session) ended too")
	}

	post := func(form url.Values, contentType string) (int, string) {
		t.Helper()
		body := form.Encode()
		req, _ := http.NewRequest(http.MethodPost, baseB+"/auth/backchannel-logout", strings.NewReader(body))
		req.Header.Set("Content-Type", contentType)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
			t.Errorf("Cache-Control %q", cc)
		}
		return resp.StatusCode, string(b)
	}
	now := time.Now()
	claims := func(change ...any) jwt.MapClaims {
		c := jwt.MapClaims{"iss": p.URL, "aud": "facade", "iat": now.Unix(), "exp": now.Add(2 * time.Minute).Unix(),
			"jti": "jti-" + base64.RawURLEncoding.EncodeToString([]byte(time.Now().String())), "sub": "u-17",
			"events": map[string]any{"http://schemas.openid.net/event/backchannel-logout": map[string]any{}}}
		for i := 0; i+1 < len(change); i += 2 {
			if change[i+1] == nil {
				delete(c, change[i].(string))
			} else {
				c[change[i].(string)] = change[i+1]
			}
		}
		return c
	}
	signed := func(k *rsa.PrivateKey, c jwt.MapClaims) string {
		tok := jwt.NewWithClaims(jwt.SigningMethodRS256, c)
		tok.Header["kid"] = "k1"
		tok.Header["typ"] = "logout+jwt"
		s, err := tok.SignedString(k)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	forged := map[string]string{
		"another key":            signed(other, claims()),
		"another audience":       signed(key, claims("aud", "someone-else")),
		"another issuer":         signed(key, claims("iss", "https://evil.example")),
		"a nonce":                signed(key, claims("nonce", "n-1")),
		"no events":              signed(key, claims("events", nil)),
		"another event":          signed(key, claims("events", map[string]any{"http://schemas.openid.net/event/other": map[string]any{}})),
		"issued 10 minutes ago":  signed(key, claims("iat", now.Add(-10*time.Minute).Unix(), "exp", now.Add(time.Minute).Unix())),
		"expired":                signed(key, claims("exp", now.Add(-2*time.Minute).Unix())),
		"no iat":                 signed(key, claims("iat", nil)),
		"no jti":                 signed(key, claims("jti", nil)),
		"neither sub nor sid":    signed(key, claims("sub", nil)),
		"an altered valid token": signed(key, claims())[:40] + "x" + signed(key, claims())[41:],
		"alg none":               unsignedJWT(claims()),
	}
	for name, tok := range forged {
		if status, body := post(url.Values{"logout_token": {tok}}, "application/x-www-form-urlencoded"); status != 400 || body != `{"error":"invalid_request"}`+"\n" {
			t.Errorf("%s: %d %q", name, status, body)
		}
	}
	good := signed(key, claims())
	if status, body := post(url.Values{"logout_token": {good}}, "application/json"); status != 400 {
		t.Errorf("a JSON body: %d %s", status, body)
	}
	if status, _ := post(url.Values{"token": {good}}, "application/x-www-form-urlencoded"); status != 400 {
		t.Errorf("no logout_token field: %d", status)
	}
	if !signedIn(phone) {
		t.Fatal("a forged logout token ended the phone's session")
	}
	// A valid token naming only the provider's sub ends all of nora's
	// sessions; the same token again is a replay.
	if status, body := post(url.Values{"logout_token": {good}}, "application/x-www-form-urlencoded"); status != 200 {
		t.Fatalf("valid logout token: %d %s\n%s", status, body, logs.String())
	}
	if signedIn(phone) {
		t.Error("the phone's session outlived a logout token naming nora's provider sub")
	}
	if status, _ := post(url.Values{"logout_token": {good}}, "application/x-www-form-urlencoded"); status != 400 {
		t.Errorf("a replayed logout token: %d", status)
	}
}

// unsignedJWT is an alg:none token.
func unsignedJWT(c jwt.MapClaims) string {
	h := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"logout+jwt","kid":"k1"}`))
	b, _ := json.Marshal(c)
	return h + "." + base64.RawURLEncoding.EncodeToString(b) + "."
}
