package auth_test

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/facade-dev/facade/internal/testkit/testsignin"
)

// TestSignInAtTheProvider: the whole flow against the embedded provider
// sets a session for the person chosen there, with the cookie attributes
// of docs/contract.md §2, and lands on return_to.
func TestSignInAtTheProvider(t *testing.T) {
	p := startRP(t)
	b := testsignin.NewBrowser(t)
	authorize := b.StartSignIn(p.url, "/ui/#grades")
	q := authorize.Query()
	if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("nonce") == "" || q.Get("state") == "" {
		t.Fatalf("authorize request lacks PKCE S256, nonce or state: %s", authorize)
	}
	resp := b.Get(b.AtProvider(authorize, "u-bob").String())
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != p.url+"/ui/#grades" {
		t.Fatalf("callback: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	var session, xsrf *http.Cookie
	for _, c := range resp.Cookies() {
		switch c.Name {
		case p.sessions.SessionCookie():
			session = c
		case "XSRF-TOKEN":
			xsrf = c
		}
	}
	if session == nil || !session.HttpOnly || session.SameSite != http.SameSiteLaxMode || session.Path != "/" || session.Secure {
		t.Fatalf("session cookie on plain-http loopback: %+v", session)
	}
	if xsrf == nil || xsrf.HttpOnly || xsrf.Value == "" || xsrf.Path != "/" {
		t.Fatalf("XSRF-TOKEN cookie must be readable by the page: %+v", xsrf)
	}
	if strings.Contains(session.Value, "bob") || len(session.Value) > 4096 {
		t.Fatalf("the session cookie is not sealed, or too long: %d bytes", len(session.Value))
	}
	me := b.Do(http.MethodGet, p.url+"/whoami", http.Header{"Sec-Fetch-Site": {"same-origin"}}, nil)
	var got struct {
		Sub, Role string
		Groups    []string
	}
	body, _ := io.ReadAll(me.Body)
	_ = json.Unmarshal(body, &got)
	if got.Sub != "bob" || got.Role != "professor" || strings.Join(got.Groups, ",") != "english-staff,graders" {
		t.Fatalf("/auth/me after sign-in: %s", body)
	}
	var raw map[string]any
	_ = json.Unmarshal(body, &raw)
	if raw["via"] != "session" || raw["expires_at"] == "" {
		t.Fatalf("/auth/me: %s", body)
	}
}

// TestCallbackRefusesWhatThisBrowserDidNotStart: state missing or wrong,
// no sign-in cookie at all (login CSRF: an attacker's own code and state
// sent to the victim's browser), or another sign-in's cookie.
func TestCallbackRefusesWhatThisBrowserDidNotStart(t *testing.T) {
	p := startRP(t)

	attacker := testsignin.NewBrowser(t)
	cb := attacker.AtProvider(attacker.StartSignIn(p.url, "/ui/"), "u-mallory")

	cases := map[string]func(*testsignin.Browser) string{
		"no sign-in cookie (login CSRF)": func(*testsignin.Browser) string { return cb.String() },
		"the victim's own sign-in, the attacker's code and state": func(v *testsignin.Browser) string {
			v.StartSignIn(p.url, "/ui/")
			return cb.String()
		},
		"state missing": func(v *testsignin.Browser) string {
			v.StartSignIn(p.url, "/ui/")
			q := cb.Query()
			q.Del("state")
			return p.url + "/auth/callback?" + q.Encode()
		},
		"state wrong": func(v *testsignin.Browser) string {
			a := v.StartSignIn(p.url, "/ui/")
			c := v.AtProvider(a, "u-alice")
			q := c.Query()
			q.Set("state", q.Get("state")+"x")
			return p.url + "/auth/callback?" + q.Encode()
		},
		"provider error": func(v *testsignin.Browser) string {
			a := v.StartSignIn(p.url, "/ui/")
			return p.url + "/auth/callback?error=access_denied&state=" + a.Query().Get("state")
		},
	}
	for name, callback := range cases {
		t.Run(name, func(t *testing.T) {
			victim := testsignin.NewBrowser(t)
			resp := victim.Get(callback(victim))
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusBadRequest || strings.TrimSpace(string(body)) != "signin_failed" {
				t.Fatalf("callback answered %d %s", resp.StatusCode, body)
			}
			if status, who := me(victim, p); status == http.StatusOK {
				t.Fatalf("the victim is signed in as %s", who)
			}
		})
	}
	// The attacker's own flow still works in the attacker's browser: the
	// refusals above were about whose browser, not a broken code.
	if resp := attacker.Get(cb.String()); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("the attacker's own callback: %d", resp.StatusCode)
	}
}

// TestReplayedCodeIsRefused: the callback request, sign-in cookie
// included, captured and sent again after it was used.
func TestReplayedCodeIsRefused(t *testing.T) {
	p := startRP(t)
	b := testsignin.NewBrowser(t)
	cb := b.AtProvider(b.StartSignIn(p.url, "/ui/"), "u-alice")
	flowCookie := flowCookieOf(t, b, p.url)
	if resp := b.Get(cb.String()); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("first use: %d", resp.StatusCode)
	}
	thief := testsignin.NewBrowser(t)
	thief.SetCookie(p.url, flowCookie)
	resp := thief.Get(cb.String())
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("replayed code: %d", resp.StatusCode)
	}
	if status, who := me(thief, p); status == http.StatusOK {
		t.Fatalf("a replayed code signed in %s", who)
	}
}

// TestForeignIDTokensAreRefused: the provider's token answer carries an ID
// token that is not for this sign-in: from another issuer, for another
// client, for another nonce, unsigned (alg none), expired.
func TestForeignIDTokensAreRefused(t *testing.T) {
	p := startRP(t)
	other := startIDP(t, p.url)
	redirect := p.url + "/auth/callback"

	cases := map[string]func(nonce string) string{
		"another issuer": func(nonce string) string {
			return testsignin.IDToken(t, other.url, "facade", redirect, "u-alice", nonce)
		},
		"another audience": func(nonce string) string {
			return testsignin.IDToken(t, p.idp.url, "other", redirect, "u-alice", nonce)
		},
		"another nonce": func(string) string {
			return testsignin.IDToken(t, p.idp.url, "facade", redirect, "u-alice", "someone-elses-nonce")
		},
		"alg none": func(nonce string) string {
			return unsigned(testsignin.IDToken(t, p.idp.url, "facade", redirect, "u-alice", nonce))
		},
		"signature of another key": func(nonce string) string {
			good := testsignin.IDToken(t, p.idp.url, "facade", redirect, "u-alice", nonce)
			forged := testsignin.IDToken(t, other.url, "facade", redirect, "u-mallory", nonce)
			parts, f := strings.Split(good, "."), strings.Split(forged, ".")
			return parts[0] + "." + parts[1] + "." + f[2]
		},
	}
	for name, token := range cases {
		t.Run(name, func(t *testing.T) {
			b := testsignin.NewBrowser(t)
			authorize := b.StartSignIn(p.url, "/ui/")
			p.swap.set(token(authorize.Query().Get("nonce")))
			resp := b.Get(b.AtProvider(authorize, "u-bob").String())
			if resp.StatusCode != http.StatusBadRequest {
				t.Fatalf("callback with a foreign ID token: %d", resp.StatusCode)
			}
			if status, who := me(b, p); status == http.StatusOK {
				t.Fatalf("signed in as %s", who)
			}
		})
	}

	t.Run("a genuine token swapped in is accepted", func(t *testing.T) {
		// The swap itself is not what the cases above were refused for.
		b := testsignin.NewBrowser(t)
		authorize := b.StartSignIn(p.url, "/ui/")
		p.swap.set(testsignin.IDToken(t, p.idp.url, "facade", redirect, "u-alice", authorize.Query().Get("nonce")))
		if resp := b.Get(b.AtProvider(authorize, "u-bob").String()); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("callback: %d", resp.StatusCode)
		}
		if _, who := me(b, p); who != "alice" {
			t.Fatalf("signed in as %q, want alice (the swapped token's person)", who)
		}
	})

	t.Run("expired", func(t *testing.T) {
		b := testsignin.NewBrowser(t)
		p.clock.Advance(2 * time.Hour) // past the provider's one-hour ID tokens
		resp := b.SignIn(p.url, "u-bob", "/ui/")
		if resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("callback with an expired ID token: %d", resp.StatusCode)
		}
	})
}

// unsigned rewrites a token's header to alg "none" and drops the signature.
func unsigned(tok string) string {
	parts := strings.Split(tok, ".")
	header := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`))
	return header + "." + parts[1] + "."
}

// TestReturnToStaysOnTheSite: return_to values that would leave the site
// land on /ui/; paths of the site are kept.
func TestReturnToStaysOnTheSite(t *testing.T) {
	p := startRP(t)
	for _, rt := range []string{
		"//evil.example", "https://evil.example", "/\\evil.example", "\\\\evil.example",
		"%2F%2Fevil.example", "/%2F%2Fevil.example", "/%5Cevil.example", "https:%2F%2Fevil.example",
		"//evil.example/ui/", "javascript:alert(1)", "ui/", "", "/ui/\r\nSet-Cookie: x=y", " /ui/",
	} {
		t.Run(url.QueryEscape(rt), func(t *testing.T) {
			b := testsignin.NewBrowser(t)
			resp := b.SignIn(p.url, "u-alice", rt)
			if got := resp.Header.Get("Location"); got != p.url+"/ui/" {
				t.Fatalf("return_to %q led to %q", rt, got)
			}
		})
	}
	b := testsignin.NewBrowser(t)
	if got := b.SignIn(p.url, "u-alice", "/ui/?view=grades#class").Header.Get("Location"); got != p.url+"/ui/?view=grades#class" {
		t.Fatalf("a path of the site was not kept: %q", got)
	}
}

// TestSignInsInProgressAreBounded: a browser keeps at most 5 sign-ins in
// progress (each a cookie sent with every request): starting more drops
// the oldest, and the newest still completes.
func TestSignInsInProgressAreBounded(t *testing.T) {
	p := startRP(t)
	b := testsignin.NewBrowser(t)
	var last *url.URL
	for range 8 {
		last = b.StartSignIn(p.url, "/ui/")
		p.clock.Advance(time.Second) // the oldest is the one that expires first
	}
	n := 0
	for _, c := range b.Jar.Cookies(mustURL(p.url)) {
		if strings.HasPrefix(c.Name, "facade-signin-") {
			n++
		}
	}
	if n != 5 {
		t.Fatalf("%d sign-in cookies after 8 sign-ins started; want 5", n)
	}
	if resp := b.Get(b.AtProvider(last, "u-alice").String()); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("the newest sign-in: %d", resp.StatusCode)
	}
}
