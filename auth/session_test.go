package auth_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/facade-dev/facade/auth"
	"github.com/facade-dev/facade/internal/testkit/testsignin"
)

var (
	oldKey = bytes.Repeat([]byte{1}, 32)
	newKey = bytes.Repeat([]byte{2}, 32)
)

// TestSessionCookiesThatDoNotOpen: tampered, forged with another key,
// sealed by a key rotated out, or a sign-in cookie passed off as a
// session: session_invalid. A rotated key still in the list opens.
func TestSessionCookiesThatDoNotOpen(t *testing.T) {
	p := startRP(t, withKeys(oldKey))
	b := testsignin.NewBrowser(t)
	b.SignIn(p.url, "u-bob", "/ui/")
	sealed := b.Cookie(p.url, "facade-session").Value

	with := func(value string, keys ...[]byte) (int, string) {
		q := startRP(t, withKeys(keys...), withStore(p.rdb))
		v := testsignin.NewBrowser(t)
		v.SetCookie(q.url, &http.Cookie{Name: "facade-session", Value: value})
		return me(v, q)
	}
	if status, who := with(sealed, newKey, oldKey); status != http.StatusOK || who != "bob" {
		t.Fatalf("a session sealed by a key still listed (second) does not open: %d %s", status, who)
	}
	tampered := []byte(sealed)
	tampered[len(tampered)/2] ^= 1
	forger := startRP(t, withKeys(newKey), withStore(p.rdb))
	f := testsignin.NewBrowser(t)
	f.SignIn(forger.url, "u-mallory", "/ui/")
	for name, c := range map[string]struct {
		value string
		keys  [][]byte
	}{
		"tampered":               {string(tampered), [][]byte{oldKey}},
		"rotated out":            {sealed, [][]byte{newKey}},
		"sealed by another key":  {f.Cookie(forger.url, "facade-session").Value, [][]byte{oldKey}},
		"garbage":                {"bob", [][]byte{oldKey}},
		"a sign-in in its place": {signInCookie(t, p), [][]byte{oldKey}},
	} {
		if status, code := with(c.value, c.keys...); status != http.StatusUnauthorized || code != "session_invalid" {
			t.Errorf("%s cookie: %d %s", name, status, code)
		}
	}
}

// signInCookie is a sealed sign-in (flow) cookie of p, which the same keys
// sealed but under another name.
func signInCookie(t *testing.T, p *rp) string {
	b := testsignin.NewBrowser(t)
	b.StartSignIn(p.url, "/ui/")
	return flowCookieOf(t, b, p.url).Value
}

// TestSessionExpiresAndSaysSo: a session ends at the earlier of
// FACADE_SESSION_LIFETIME and the ID token's expiry, then answers
// session_expired (so the page signs the person in again).
func TestSessionExpiresAndSaysSo(t *testing.T) {
	for name, c := range map[string]struct {
		lifetime, want time.Duration
	}{
		"the configured lifetime when shorter": {30 * time.Minute, 30 * time.Minute},
		"never beyond the ID token":            {8 * time.Hour, time.Hour},
	} {
		t.Run(name, func(t *testing.T) {
			p := startRP(t, withLifetime(c.lifetime))
			b := testsignin.NewBrowser(t)
			start := p.clock.Now()
			b.SignIn(p.url, "u-alice", "/ui/")
			resp := b.Do(http.MethodGet, p.url+"/whoami", nil, nil)
			var got struct {
				ExpiresAt time.Time `json:"expires_at"`
			}
			body, _ := io.ReadAll(resp.Body)
			_ = json.Unmarshal(body, &got)
			if d := got.ExpiresAt.Sub(start); d < c.want-5*time.Second || d > c.want+5*time.Second {
				t.Fatalf("session lasts %v, want %v (%s)", d, c.want, body)
			}
			p.clock.AdvancePast(got.ExpiresAt.Add(-2 * time.Second))
			if status, who := me(b, p); status != http.StatusOK {
				t.Fatalf("before expiry: %d %s", status, who)
			}
			p.clock.AdvancePast(got.ExpiresAt)
			if status, code := me(b, p); status != http.StatusUnauthorized || code != "session_expired" {
				t.Fatalf("after expiry: %d %s", status, code)
			}
		})
	}
}

// TestSignInStartsAFreshSession (session fixation): a session cookie an
// attacker planted before the victim signs in is replaced, and the
// attacker's anti-forgery token does not work on the victim's session.
func TestSignInStartsAFreshSession(t *testing.T) {
	p := startRP(t)
	attacker := testsignin.NewBrowser(t)
	attacker.SignIn(p.url, "u-mallory", "/ui/")
	planted, plantedXSRF := attacker.Cookie(p.url, "facade-session"), attacker.Cookie(p.url, "XSRF-TOKEN")

	victim := testsignin.NewBrowser(t)
	victim.SetCookie(p.url, planted)
	victim.SetCookie(p.url, plantedXSRF)
	if _, who := me(victim, p); who != "mallory" {
		t.Fatalf("the planted cookie: %q", who)
	}
	victim.SignIn(p.url, "u-alice", "/ui/")
	if _, who := me(victim, p); who != "alice" {
		t.Fatalf("after signing in the victim is %q", who)
	}
	if victim.Cookie(p.url, "facade-session").Value == planted.Value || victim.Cookie(p.url, "XSRF-TOKEN").Value == plantedXSRF.Value {
		t.Fatal("sign-in kept the planted session or its anti-forgery token")
	}
	victim.SetCookie(p.url, plantedXSRF)
	resp := victim.Do(http.MethodPost, p.url+"/change", http.Header{
		"X-Xsrf-Token": {plantedXSRF.Value}, "Sec-Fetch-Site": {"same-origin"},
	}, nil)
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("the attacker's anti-forgery token on the victim's session: %d", resp.StatusCode)
	}
}

// TestXSRFIsBoundToTheSession: an XSRF-TOKEN cookie written by a sibling
// subdomain (Domain=.example, readable and writable by every host under
// it), echoed in the header as the cookie rule alone would accept, does
// not pass on a session; nor does it block the person: the session's own
// token passes whatever XSRF-TOKEN cookie comes with it.
func TestXSRFIsBoundToTheSession(t *testing.T) {
	p := startRP(t)
	b := testsignin.NewBrowser(t)
	b.SignIn(p.url, "u-bob", "/ui/")
	own := b.Cookie(p.url, "XSRF-TOKEN")
	post := func(token string) int {
		return b.Do(http.MethodPost, p.url+"/change", http.Header{"X-Xsrf-Token": {token}, "Sec-Fetch-Site": {"same-origin"}}, nil).StatusCode
	}
	if got := post(own.Value); got != http.StatusNoContent {
		t.Fatalf("the session's own token: %d", got)
	}
	b.SetCookie(p.url, &http.Cookie{Name: "XSRF-TOKEN", Value: "planted-by-sibling", Path: "/"})
	if got := post("planted-by-sibling"); got != http.StatusForbidden {
		t.Fatalf("the sibling's cookie and header: %d", got)
	}
	if got := post(own.Value); got != http.StatusNoContent {
		t.Fatalf("the session's own token beside a planted cookie: %d", got)
	}
	b.SetCookie(p.url, own)
	if got := post(""); got != http.StatusForbidden {
		t.Fatalf("no header: %d", got)
	}
}

// TestSecureCookies: off loopback the cookies are Secure and the session's
// carries the __Host- prefix (no Domain, Path=/), so no sibling subdomain
// can set or read it.
func TestSecureCookies(t *testing.T) {
	for _, c := range []struct {
		scheme, host string
		secure       bool
	}{
		{"https", "facade.example", true}, {"http", "facade.example", true},
		{"http", "127.0.0.1", false}, {"http", "localhost", false}, {"https", "localhost", true}, {"http", "[::1]", false},
	} {
		if got := auth.SecureCookies(c.scheme, c.host); got != c.secure {
			t.Errorf("%s://%s: Secure %v", c.scheme, c.host, got)
		}
	}
	s, err := auth.NewSessions(nil, auth.SessionConfig{Keys: [][]byte{testKey}, Secure: true})
	if err != nil || s.SessionCookie() != "__Host-facade-session" {
		t.Fatalf("secure session cookie name %q", s.SessionCookie())
	}
}

// TestParseKeys: FACADE_SESSION_KEYS entries are base64 of 32 bytes.
func TestParseKeys(t *testing.T) {
	good := "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE="
	if keys, err := auth.ParseKeys([]string{good, "AgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgI"}); err != nil || len(keys) != 2 || keys[0][0] != 1 || keys[1][0] != 2 {
		t.Fatalf("%v %v", keys, err)
	}
	for _, bad := range []string{"c2hvcnQ=", "not base64 at all!", good + good} {
		if _, err := auth.ParseKeys([]string{bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestLogout: a same-origin POST with the session's token clears the
// cookies and hands the page the provider's end-session URL; forged from
// another site, or without the token, it changes nothing.
func TestLogout(t *testing.T) {
	p := startRP(t)
	b := testsignin.NewBrowser(t)
	b.SignIn(p.url, "u-bob", "/ui/")
	xsrf := b.Cookie(p.url, "XSRF-TOKEN").Value

	for name, h := range map[string]http.Header{
		"cross-site form post":            {"Sec-Fetch-Site": {"cross-site"}, "Origin": {"https://evil.example"}},
		"cross-site with a guessed token": {"Sec-Fetch-Site": {"cross-site"}, "X-Xsrf-Token": {xsrf}},
		"sibling subdomain":               {"Sec-Fetch-Site": {"same-site"}, "X-Xsrf-Token": {xsrf}},
		"old browser, foreign Origin":     {"Origin": {"https://evil.example"}, "X-Xsrf-Token": {xsrf}},
		"same origin without the token":   {"Sec-Fetch-Site": {"same-origin"}},
		"same origin, planted token":      {"Sec-Fetch-Site": {"same-origin"}, "X-Xsrf-Token": {"planted"}},
	} {
		if resp := b.Do(http.MethodPost, p.url+"/auth/logout", h, nil); resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s: logout answered %d", name, resp.StatusCode)
		}
		if _, who := me(b, p); who != "bob" {
			t.Fatalf("%s: signed out", name)
		}
	}

	resp := b.Do(http.MethodPost, p.url+"/auth/logout", http.Header{"Sec-Fetch-Site": {"same-origin"}, "X-Xsrf-Token": {xsrf}}, nil)
	var out struct {
		EndSessionURL string `json:"end_session_url"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&out)
	if resp.StatusCode != http.StatusOK || out.EndSessionURL == "" {
		t.Fatalf("logout: %d %+v", resp.StatusCode, out)
	}
	// The session kept the ID token as the hint, so the provider ends its
	// own session without asking the person which one.
	if u, err := url.Parse(out.EndSessionURL); err != nil || u.Query().Get("id_token_hint") == "" {
		t.Fatalf("end-session URL %q carries no id_token_hint", out.EndSessionURL)
	}
	if status, _ := me(b, p); status != http.StatusUnauthorized || b.Cookie(p.url, "facade-session") != nil || b.Cookie(p.url, "XSRF-TOKEN") != nil {
		t.Fatalf("after logout: %d, cookies %v", status, b.Jar.Cookies(mustURL(p.url)))
	}
	// The provider ends its session and sends the browser back to the page.
	end := b.Get(out.EndSessionURL)
	if loc := end.Header.Get("Location"); end.StatusCode/100 != 3 || loc != p.url+"/ui/" {
		t.Fatalf("end session at the provider: %d to %q", end.StatusCode, loc)
	}
}

func mustURL(s string) *url.URL {
	u, _ := url.Parse(s)
	return u
}

// TestParseKeysTakesBothAlphabetsAndNamesTheBadEntry: a key from
// `openssl rand -base64 32` (standard alphabet, "+" and "/") and one in
// the URL alphabet ("-" and "_") are both accepted, each as its 32 bytes;
// a bad entry is named by its position, counted from 1 as ops list them.
func TestParseKeysTakesBothAlphabetsAndNamesTheBadEntry(t *testing.T) {
	raw := make([]byte, 32)
	for i := range raw {
		raw[i] = 0xfb // base64 "+/" in the standard alphabet, "-_" in the URL one
	}
	std, urlKey := base64.StdEncoding.EncodeToString(raw), base64.RawURLEncoding.EncodeToString(raw)
	if !strings.ContainsAny(std, "+/") || !strings.ContainsAny(urlKey, "-_") {
		t.Fatalf("keys %q %q do not exercise both alphabets", std, urlKey)
	}
	keys, err := auth.ParseKeys([]string{std, urlKey})
	if err != nil || len(keys) != 2 || !bytes.Equal(keys[0], raw) || !bytes.Equal(keys[1], raw) {
		t.Fatalf("ParseKeys(%q, %q) = %x, %v", std, urlKey, keys, err)
	}
	_, err = auth.ParseKeys([]string{std, "c2hvcnQ="})
	if err == nil || !strings.Contains(err.Error(), "entry 2 ") {
		t.Fatalf("a bad second entry: %v, want it named entry 2", err)
	}
}

// TestSessionHoldsAnyNumberOfGroups: a person in 200 groups of 36
// characters (what Microsoft Entra sends before it switches to an overage
// claim) signs in with every group, the cookie stays small (it holds the
// session id only), and the session keeps the ID token as the logout hint.
func TestSessionHoldsAnyNumberOfGroups(t *testing.T) {
	p := startRP(t)
	b := testsignin.NewBrowser(t)
	if resp := b.SignIn(p.url, "u-entra", "/ui/"); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in in 200 groups: %d", resp.StatusCode)
	}
	if n := len(b.Cookie(p.url, "facade-session").Value); n > 300 {
		t.Errorf("the session cookie is %d bytes; it should hold the sealed id alone", n)
	}
	whoami := b.Do(http.MethodGet, p.url+"/whoami", http.Header{"Sec-Fetch-Site": {"same-origin"}}, nil)
	var id struct {
		Sub    string
		Groups []string
	}
	_ = json.NewDecoder(whoami.Body).Decode(&id)
	if whoami.StatusCode != http.StatusOK || id.Sub != "entra" || len(id.Groups) != 200 || id.Groups[199] != entraGroups(200)[199] {
		t.Fatalf("a person in 200 groups: %d, %q in %d groups; want entra in all 200", whoami.StatusCode, id.Sub, len(id.Groups))
	}
	xsrf := b.Cookie(p.url, "XSRF-TOKEN").Value
	resp := b.Do(http.MethodPost, p.url+"/auth/logout", http.Header{"Sec-Fetch-Site": {"same-origin"}, "X-Xsrf-Token": {xsrf}}, nil)
	var out struct {
		EndSessionURL string `json:"end_session_url"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&out)
	if u, err := url.Parse(out.EndSessionURL); resp.StatusCode != http.StatusOK || err != nil || !u.Query().Has("id_token_hint") {
		t.Fatalf("logout: %d %q; want an end-session URL with the ID token as hint", resp.StatusCode, out.EndSessionURL)
	}
}
