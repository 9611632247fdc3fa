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
