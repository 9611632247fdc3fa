package server_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestBambooWritesAre405WithAllow: queueing a build, adding or removing a
// label or a comment are Bamboo writes the facade does not offer. Each is
// a 405 whose Allow names what the path does allow, and upstream is never
// called.
func TestBambooWritesAre405WithAllow(t *testing.T) {
	e := newEnv(t, withBuilds())
	carol := token(t, "carol", "developer")
	cases := []struct{ method, path, allow string }{
		{"POST", "/rest/api/latest/queue/PROJ-CORE", ""},
		{"PUT", "/rest/api/latest/queue/PROJ-CORE-6", ""},
		{"DELETE", "/rest/api/latest/queue/PROJ-CORE-6", ""},
		{"GET", "/rest/api/latest/queue", ""},
		{"POST", "/rest/api/latest/result/PROJ-CORE-6/label", "GET, HEAD"},
		{"POST", "/rest/api/latest/result/PROJ-CORE-6/comment", "GET, HEAD"},
		{"DELETE", "/rest/api/latest/result/PROJ-CORE-6/label/release", ""},
		{"PUT", "/rest/api/latest/result/PROJ-CORE-6", "GET, HEAD"},
		{"DELETE", "/rest/api/latest/plan/PROJ-CORE", "GET, HEAD"},
	}
	e.bamboo.ResetCalls()
	for _, tc := range cases {
		r := e.do(req{method: tc.method, path: tc.path, token: carol, body: `{"name":"x"}`})
		allow, present := r.header["Allow"]
		if r.status != http.StatusMethodNotAllowed || !present || !sameMethods(strings.Join(allow, ","), tc.allow) {
			t.Errorf("%s %s: %d Allow %q, want 405 Allow %q", tc.method, tc.path, r.status, allow, tc.allow)
		}
	}
	if calls := e.bamboo.Calls(); len(calls) != 0 {
		t.Errorf("a refused write called upstream: %s %s", calls[0].Method, calls[0].Path)
	}
}

// sameMethods compares Allow lists as sets of methods (OPTIONS aside).
func sameMethods(got, want string) bool {
	set := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, v := range strings.Split(s, ",") {
			if v = strings.TrimSpace(v); v != "" && v != "OPTIONS" {
				m[v] = true
			}
		}
		return m
	}
	g, w := set(got), set(want)
	if len(g) != len(w) {
		return false
	}
	for k := range w {
		if !g[k] {
			return false
		}
	}
	return true
}
