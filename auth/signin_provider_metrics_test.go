package auth_test

import (
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/facade-dev/facade/internal/testkit/testsignin"
	"github.com/facade-dev/facade/metrics"
)

// providerOutage answers the provider's token endpoint 503 while down
// is set, as a provider in trouble does; everything else goes through
// next (the relying party's tokenSwap once set).
type providerOutage struct {
	down atomic.Bool
	next atomic.Pointer[tokenSwap]
}

func (o *providerOutage) RoundTrip(r *http.Request) (*http.Response, error) {
	if o.down.Load() && strings.HasSuffix(r.URL.Path, "/oauth/token") {
		return &http.Response{StatusCode: http.StatusServiceUnavailable, Header: http.Header{}, Request: r,
			Body: io.NopCloser(strings.NewReader("unavailable"))}, nil
	}
	if next := o.next.Load(); next != nil {
		return next.RoundTrip(r)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestProviderFailuresAreCounted: facade_signin_provider_calls_total
// tells a provider's failures (a 503 at the token endpoint, an ID token
// that does not verify) from a code the provider refuses (a client's
// doing, not an outage) and from sign-ins that worked; the alert
// FacadeSignInProviderFailing watches the errors (docs/operations.md).
func TestProviderFailuresAreCounted(t *testing.T) {
	m := metrics.New()
	outage := &providerOutage{}
	p := startRP(t, func(s *rpSetup) {
		s.signin.Metrics = m
		s.signin.HTTPClient = &http.Client{Transport: outage, Timeout: 10 * time.Second}
	})
	outage.next.Store(p.swap)
	callback := func(b *testsignin.Browser, url string) {
		t.Helper()
		resp := b.Get(url)
		resp.Body.Close()
	}
	want := func(result string, n float64) {
		t.Helper()
		var got dto.Metric
		if err := m.SignInProvider.WithLabelValues("exchange", result).(prometheus.Metric).Write(&got); err != nil {
			t.Fatal(err)
		}
		if got.GetCounter().GetValue() != n {
			t.Fatalf("exchange %q: %v, want %v", result, got.GetCounter().GetValue(), n)
		}
	}

	b := testsignin.NewBrowser(t)
	callback(b, b.AtProvider(b.StartSignIn(p.url, "/ui/"), "u-alice").String())
	want("ok", 1)

	b = testsignin.NewBrowser(t)
	state := b.StartSignIn(p.url, "/ui/").Query().Get("state")
	callback(b, p.url+"/auth/callback?code=not-a-code&state="+state)
	want("refused", 1)
	want("error", 0)

	outage.down.Store(true)
	b = testsignin.NewBrowser(t)
	callback(b, b.AtProvider(b.StartSignIn(p.url, "/ui/"), "u-alice").String())
	want("error", 1)
	outage.down.Store(false)

	b = testsignin.NewBrowser(t)
	authorize := b.StartSignIn(p.url, "/ui/")
	p.swap.set(unsigned(testsignin.IDToken(t, p.idp.url, "facade", p.url+"/auth/callback", "u-alice", authorize.Query().Get("nonce"))))
	callback(b, b.AtProvider(authorize, "u-alice").String())
	want("error", 2)
	want("ok", 1)
}
