package upstream_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http/httptest"
	"testing"

	facade "github.com/facade-dev/facade"
	"github.com/facade-dev/facade/upstream"
	"github.com/facade-dev/facade/upstream/bambootest"
)

// A redirect off the configured Bamboo server is refused before any byte
// goes there: the service's token and the caller's question must not
// reach another host. The other host here is a real server that would
// answer (a second Bamboo-compatible server holding the same data and
// accepting the same token), listening on another port of the same
// address (where Go's client would keep the Authorization header) and on
// another loopback address (where it would drop it, but the request would
// still go). The test asserts it received nothing at all: a name that
// never resolves would make the call fail whatever the check does.
func TestRedirectsElsewhereSendNothingThere(t *testing.T) {
	const jar = "/browse/PROJ-CORE-6/artifact/shared/core-service.jar/"
	for name, addr := range map[string]string{"another port": "127.0.0.1:0", "another loopback address": "127.0.0.2:0"} {
		t.Run(name, func(t *testing.T) {
			elsewhere, other := startElsewhere(t, addr)
			bamboo, client := newPair(t, upstream.Config{Retries: -1, BreakerFailures: 100})

			bamboo.Redirect("/rest/api/latest/project.json", other+"/rest/api/latest/project.json")
			_, err := client.Projects(context.Background(), upstream.ProjectQuery{})
			refused(t, "the project list", err)

			bamboo.Redirect("/rest/api/latest/result/PROJ-CORE.json", other+"/rest/api/latest/result/PROJ-CORE.json")
			_, err = client.Document(context.Background(), "results", resultOf(t, "PROJ-CORE"), nil)
			refused(t, "a result list", err)

			// An artifact download whose caller approves every hop: the
			// host check alone stands between the token and the other host.
			bamboo.Redirect(jar, other+jar)
			approveAll := upstream.WithRedirectCheck(context.Background(), func(string) bool { return true })
			s, err := client.Artifact(approveAll, jar)
			if err == nil {
				_, _ = io.Copy(io.Discard, s.Body)
				s.Body.Close()
			}
			refused(t, "an artifact download", err)

			if calls := elsewhere.Calls(); len(calls) != 0 {
				for _, c := range calls {
					t.Errorf("the other host received %s %s (Authorization %q)", c.Method, c.Path, c.Header.Get("Authorization"))
				}
			}
			// The same hops on the configured server are followed: the
			// refusals above are about the host, not redirects as such.
			bamboo.Redirect(jar, "/browse/PROJ-CORE-5/artifact/shared/core-service.jar/")
			s, err = client.Artifact(approveAll, jar)
			if err != nil {
				t.Fatalf("same-host artifact hop: %v", err)
			}
			_, _ = io.Copy(io.Discard, s.Body)
			s.Body.Close()
			if !s.Redirected {
				t.Error("same-host hop not followed")
			}
		})
	}
}

// refused checks that a call redirected elsewhere failed as a bad upstream.
func refused(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, facade.ErrUpstreamBad) {
		t.Errorf("%s redirected to another host: error %v, want %v", what, err, facade.ErrUpstreamBad)
	}
}

// startElsewhere serves a second Bamboo-compatible server, with the demo
// data and the service's token, on addr; it returns the server and its URL.
func startElsewhere(t *testing.T, addr string) (*bambootest.Server, string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen on %s: %v", addr, err)
	}
	url := "http://" + ln.Addr().String()
	s := bambootest.New(bambootest.WithToken(serviceToken), bambootest.WithBaseURL(url))
	bambootest.DemoData(s)
	ts := httptest.NewUnstartedServer(s)
	ts.Listener.Close()
	ts.Listener = ln
	ts.Start()
	t.Cleanup(ts.Close)
	return s, url
}
