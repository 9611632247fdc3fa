package server_test

import (
	"strings"
	"testing"

	"github.com/facade-dev/facade/web"
)

// TestPageIsServedWithItsOwnPolicy: the page's files need no token and
// carry the page's CSP; the API keeps its own; nothing else is public.
func TestPageIsServedWithItsOwnPolicy(t *testing.T) {
	e := newEnv(t)
	files := map[string]string{
		"/ui/":                   "text/html; charset=utf-8",
		"/ui/js/main.js":         "text/javascript; charset=utf-8",
		"/ui/js/views/grades.js": "text/javascript; charset=utf-8",
		"/ui/app.css":            "text/css; charset=utf-8",
		"/ui/index.html":         "text/html; charset=utf-8",
	}
	for path, ct := range files {
		r := e.do(req{method: "GET", path: path})
		if r.status != 200 || r.header.Get("Content-Type") != ct {
			t.Errorf("%s: %d %q", path, r.status, r.header.Get("Content-Type"))
		}
		csp := r.header.Get("Content-Security-Policy")
		if csp != web.CSP || !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe") {
			t.Errorf("%s: CSP %q", path, csp)
		}
		for h, want := range map[string]string{"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer"} {
			if r.header.Get(h) != want {
				t.Errorf("%s: %s %q", path, h, r.header.Get(h))
			}
		}
	}
	// /ui redirects to the page, so that its relative links resolve.
	if r := e.do(req{method: "HEAD", path: "/ui/app.css"}); r.status != 200 || r.header.Get("Content-Security-Policy") != web.CSP {
		t.Errorf("HEAD /ui/app.css: %d", r.status)
	}
	if r := e.do(req{method: "GET", path: "/ui"}); r.status != 301 || r.header.Get("Location") != "/ui/" {
		t.Errorf("/ui: %d to %q", r.status, r.header.Get("Location"))
	}
	for _, path := range []string{"/ui/missing.js", "/ui/../rs/account/1001", "/ui/%2e%2e/rs/account/1001/balance"} {
		r := e.do(req{method: "GET", path: path})
		if r.status != 404 || r.header.Get("Content-Security-Policy") == web.CSP {
			t.Errorf("%s: %d, CSP %q", path, r.status, r.header.Get("Content-Security-Policy"))
		}
	}
	// The API next to it still wants a token and keeps the API's policy.
	r := e.do(req{method: "GET", path: "/rs/account/1001/balance"})
	if r.status != 401 || r.header.Get("Content-Security-Policy") != "default-src 'none'; frame-ancestors 'none'" {
		t.Errorf("API without a token: %d, CSP %q", r.status, r.header.Get("Content-Security-Policy"))
	}
	if r := e.do(req{method: "POST", path: "/ui/", body: `{}`}); r.status != 401 && r.status != 405 {
		t.Errorf("POST /ui/: %d", r.status)
	}
}
