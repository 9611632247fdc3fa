package server_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestServiceAddressSendsBrowsersToThePage: a person who types the
// service's address lands on the page, a program gets an index of where
// things are; neither needs a token, and neither meets a 401.
func TestServiceAddressSendsBrowsersToThePage(t *testing.T) {
	e := newEnv(t)
	for accept, want := range map[string]int{
		"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8": 303, // Chromium's navigation
		"text/html":                       303,
		"":                                200,
		"application/json":                200,
		"*/*":                             200,
		"text/html;q=0, application/json": 200,
	} {
		r := e.do(req{method: "GET", path: "/", header: map[string]string{"Accept": accept}})
		if r.status != want || !strings.Contains(strings.Join(r.header.Values("Vary"), ","), "Accept") {
			t.Errorf("GET / with Accept %q: %d (Vary %q), want %d", accept, r.status, r.header.Get("Vary"), want)
			continue
		}
		if want == 303 && r.header.Get("Location") != "/ui/" {
			t.Errorf("GET / with Accept %q goes to %q", accept, r.header.Get("Location"))
		}
		var index map[string]string
		if want == 200 && (json.Unmarshal([]byte(r.body), &index) != nil || index["page"] != "/ui/" || index["openapi"] != "/openapi.json") {
			t.Errorf("GET / with Accept %q: %s", accept, r.body)
		}
	}
	for _, m := range []string{"GET", "HEAD"} {
		if r := e.do(req{method: m, path: "/favicon.ico"}); r.status != 301 || r.header.Get("Location") != "/ui/favicon.svg" {
			t.Errorf("%s /favicon.ico: %d %q", m, r.status, r.header.Get("Location"))
		}
	}
	if r := e.do(req{method: "HEAD", path: "/"}); r.status != 200 || r.body != "" {
		t.Errorf("HEAD /: %d %q", r.status, r.body)
	}
	if r := e.do(req{method: "HEAD", path: "/", header: map[string]string{"Accept": "text/html"}}); r.status != 303 {
		t.Errorf("HEAD / from a browser: %d", r.status)
	}
	if r := e.do(req{method: "GET", path: "/ui/favicon.svg"}); r.status != 200 || r.header.Get("Content-Type") != "image/svg+xml" || !strings.HasPrefix(r.body, "<svg") {
		t.Errorf("/ui/favicon.svg: %d %q", r.status, r.header.Get("Content-Type"))
	}
	// Problem pages wear the page's style and icon, and lead back to it.
	for _, path := range []string{"/problems", "/problems/bad-amount"} {
		r := e.do(req{method: "GET", path: path})
		for _, want := range []string{`<link rel="stylesheet" href="/ui/app.css">`, `<link rel="icon" href="/ui/favicon.svg"`, `<a href="/ui/">`} {
			if !strings.Contains(r.body, want) {
				t.Errorf("%s lacks %s", path, want)
			}
		}
	}
}
