package upstream_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	facade "github.com/facade-dev/facade"
	"github.com/facade-dev/facade/internal/testkit/testclock"
	"github.com/facade-dev/facade/upstream"
	"github.com/facade-dev/facade/upstream/bambootest"
)

// TestDocumentPathAlphabetEdges: a resource or part word is 1 to 32 of
// a-z (Document's contract; the key between them is a facade.BuildKey,
// whose edges ids_test.go holds): a word made of the alphabet's first or
// last letter reaches Bamboo, and one with the character just past either
// end, or anything that could shape a path, is refused without a call.
func TestDocumentPathAlphabetEdges(t *testing.T) {
	bamboo, client := newPair(t, upstream.Config{Retries: -1, BreakerFailures: 1000})
	for _, w := range []string{"a", "z", strings.Repeat("z", 32)} {
		for _, at := range []upstream.Path{{Resource: w}, {Resource: "result", Key: mustKey(t, "PROJ-CORE-6"), Part: w}} {
			before := len(bamboo.Calls())
			_, err := client.Document(context.Background(), "results", at, nil)
			if errors.Is(err, facade.ErrBadIdentifier) || len(bamboo.Calls()) != before+1 {
				t.Errorf("word %.10q (%d characters) did not reach Bamboo: %v", w, len(w), err)
			}
		}
	}
	for _, w := range []string{"`", "{", "A", "0", "-", "/", ":", ".", "a/b", "../a", strings.Repeat("z", 33)} {
		for _, at := range []upstream.Path{{Resource: w}, {Resource: "result", Key: mustKey(t, "PROJ-CORE-6"), Part: w}} {
			before := len(bamboo.Calls())
			_, err := client.Document(context.Background(), "results", at, nil)
			if !errors.Is(err, facade.ErrBadIdentifier) || len(bamboo.Calls()) != before {
				t.Errorf("word %q: %v after %d calls, want bad identifier without a call", w, err, len(bamboo.Calls())-before)
			}
		}
	}
}

// TestSameServerRedirectChainIsBounded: Bamboo behind up to three
// same-server redirects (http to https, a moved context path) answers;
// a fourth hop, as in a redirect loop, fails the call as a bad gateway
// instead of following on.
func TestSameServerRedirectChainIsBounded(t *testing.T) {
	bamboo := bambootest.New(bambootest.WithToken(serviceToken))
	bambootest.DemoData(bamboo)
	mux := http.NewServeMux()
	mux.Handle("/bamboo/", http.StripPrefix("/bamboo", bamboo))
	mux.Handle("/hop1/", http.RedirectHandler("/bamboo/rest/api/latest/project.json", http.StatusFound))
	for i := 2; i <= 4; i++ {
		mux.Handle(fmt.Sprintf("/hop%d/", i), http.RedirectHandler(fmt.Sprintf("/hop%d/rest/api/latest/project.json", i-1), http.StatusFound))
	}
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	projects := func(hops int) error {
		client, err := upstream.New(upstream.Config{BaseURL: fmt.Sprintf("%s/hop%d", ts.URL, hops), Token: serviceToken, Retries: -1, Log: testLogger(t)})
		if err != nil {
			t.Fatal(err)
		}
		_, err = client.Projects(context.Background(), upstream.ProjectQuery{})
		return err
	}
	if err := projects(3); err != nil {
		t.Fatalf("three same-server redirects: %v", err)
	}
	wantError(t, projects(4), facade.ErrUpstreamBad)
}

// TestBreakerDefaults: with the breaker left unconfigured, the documented
// defaults hold (Config: 5 consecutive failures open it for 30 s): the
// fifth failed call opens it, and a caller is told to come back in 30 s,
// then 1 s before the period ends.
func TestBreakerDefaults(t *testing.T) {
	clock := testclock.New()
	bamboo, client := newPair(t, upstream.Config{Retries: -1, Now: clock.Now})
	bamboo.SetFailing(http.StatusBadGateway)
	for i := range 5 {
		if s := client.BreakerState(); s != upstream.BreakerClosed {
			t.Fatalf("breaker %v after %d failures, want closed", s, i)
		}
		_, err := client.Projects(context.Background(), upstream.ProjectQuery{})
		wantError(t, err, facade.ErrUpstreamBad)
	}
	for _, step := range []struct{ advance, want time.Duration }{{0, 30 * time.Second}, {29 * time.Second, time.Second}} {
		clock.Advance(step.advance)
		_, err := client.Projects(context.Background(), upstream.ProjectQuery{})
		if fe := wantError(t, err, facade.ErrUpstreamOpen); fe.RetryAfter != step.want {
			t.Fatalf("RetryAfter %v, want %v", fe.RetryAfter, step.want)
		}
	}
	if n := len(bamboo.Calls()); n != 5 {
		t.Fatalf("%d upstream calls, want the 5 that opened the breaker", n)
	}
}
