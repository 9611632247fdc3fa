package server_test

import (
	"net"
	"net/http/httptest"
	"testing"

	"github.com/facade-dev/facade/upstream/bambootest"
)

// A document or artifact whose upstream answer redirects to another host
// is a 502 through the whole server, and the other host (a real server on
// another loopback port that would answer) receives nothing: neither the
// service's token nor the caller's question leave the configured upstream.
func TestUpstreamRedirectToAnotherHostReachesNothingThere(t *testing.T) {
	e := newEnv(t, withBuilds())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	other := bambootest.New(bambootest.WithToken(bambooToken))
	bambootest.DemoData(other)
	ts := httptest.NewUnstartedServer(other)
	ts.Listener.Close()
	ts.Listener = ln
	ts.Start()
	t.Cleanup(ts.Close)

	carol := token(t, "carol", "developer")
	const jar = "/browse/PROJ-CORE-6/artifact/shared/core-service.jar/"
	for path, upstreamPath := range map[string]string{
		"/rest/api/latest/result/PROJ-CORE-6": "/rest/api/latest/result/PROJ-CORE-6.json",
		jar:                                   jar,
	} {
		e.bamboo.Redirect(upstreamPath, ts.URL+upstreamPath)
		if r := e.do(req{method: "GET", path: path, token: carol}); r.status != 502 {
			t.Errorf("GET %s redirected elsewhere: %d, want 502", path, r.status)
		}
	}
	for _, c := range other.Calls() {
		t.Errorf("the other host received %s %s (Authorization %q)", c.Method, c.Path, c.Header.Get("Authorization"))
	}
}
