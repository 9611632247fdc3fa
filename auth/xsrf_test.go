package auth_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/facade-dev/facade/auth"
)

// TestSessionCookieCountsOnlyFromOurOrigin: which requests may use the
// session cookie (docs/contract.md §2): the service's own pages, and
// navigations the person started; never another site, a sibling
// subdomain, or another port.
func TestSessionCookieCountsOnlyFromOurOrigin(t *testing.T) {
	const ours = "https://facade.example"
	for _, c := range []struct {
		name, method, site, origin string
		want                       bool
	}{
		{"the page's own call", "GET", "same-origin", "", true},
		{"the page's own change", "POST", "same-origin", ours, true},
		{"typed address or bookmark", "GET", "none", "", true},
		{"unsafe with no initiator", "POST", "none", "", false},
		{"another site's page", "GET", "cross-site", "https://evil.example", false},
		{"another site's form", "POST", "cross-site", "https://evil.example", false},
		{"a sibling subdomain", "GET", "same-site", "https://intranet.facade.example", false},
		{"old browser, our Origin", "POST", "", ours, true},
		{"old browser, foreign Origin", "POST", "", "https://evil.example", false},
		{"old browser, opaque Origin", "POST", "", "null", false},
		{"no browser signals (curl)", "GET", "", "", true},
	} {
		r := httptest.NewRequest(c.method, "/x", nil)
		if c.site != "" {
			r.Header.Set("Sec-Fetch-Site", c.site)
		}
		if c.origin != "" {
			r.Header.Set("Origin", c.origin)
		}
		if got := auth.SameOrigin(r, ours); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestBearerCallersKeepTheHeaderRule: without a session, an unsafe request
// needs 1-256 visible ASCII characters in X-XSRF-TOKEN, equal to the
// XSRF-TOKEN cookie when one is sent; safe methods need nothing.
func TestBearerCallersKeepTheHeaderRule(t *testing.T) {
	bearer := auth.Identity{Via: auth.ViaBearer}
	for _, c := range []struct {
		name, method, header, cookie string
		ok                           bool
	}{
		{"GET needs nothing", "GET", "", "", true},
		{"POST with any token", "POST", "demo", "", true},
		{"POST without", "POST", "", "", false},
		{"PUT with a space", "PUT", "a b", "", false},
		{"DELETE too long", "DELETE", string(make([]byte, 257)), "", false},
		{"cookie and header equal", "POST", "abc", "abc", true},
		{"cookie and header differ", "POST", "abc", "abd", false},
	} {
		r := httptest.NewRequest(c.method, "/x", nil)
		if c.header != "" {
			r.Header.Set("X-XSRF-TOKEN", c.header)
		}
		if c.cookie != "" {
			r.AddCookie(&http.Cookie{Name: "XSRF-TOKEN", Value: c.cookie})
		}
		if err := auth.CheckXSRF(r, bearer); (err == nil) != c.ok {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// TestXSRFTokenAlphabetEdges: the header's alphabet is exactly the visible
// ASCII characters "!" (0x21) to "~" (0x7e), and its length exactly 1 to
// 256 (docs/contract.md §2, "Anti-forgery"): a client whose token sits on
// an edge is let through, one just past it is refused.
func TestXSRFTokenAlphabetEdges(t *testing.T) {
	bearer := auth.Identity{Via: auth.ViaBearer}
	long := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = 'a'
		}
		return string(b)
	}
	for _, c := range []struct {
		name, method, header string
		ok                   bool
	}{
		{"lowest visible character", "POST", "!", true},
		{"highest visible character", "POST", "~", true},
		{"DEL after the highest", "POST", "a\x7f", false},
		{"a byte above ASCII", "POST", "a\xc3\xa9", false},
		{"a tab below the lowest", "POST", "a\tb", false},
		{"256 characters", "POST", long(256), true},
		{"257 characters", "POST", long(257), false},
		{"HEAD needs nothing", "HEAD", "", true},
		{"OPTIONS needs nothing", "OPTIONS", "", true},
		{"PATCH needs the header", "PATCH", "", false},
	} {
		r := httptest.NewRequest(c.method, "/x", nil)
		if c.header != "" {
			r.Header.Set("X-XSRF-TOKEN", c.header)
		}
		if err := auth.CheckXSRF(r, bearer); (err == nil) != c.ok {
			t.Errorf("%s: %v, want ok=%v", c.name, err, c.ok)
		}
	}
}
