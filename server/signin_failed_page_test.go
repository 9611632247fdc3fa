package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/facade-dev/facade/internal/testkit/testbrowser"
)

// TestRefusedCallbackShowsPeopleAPage: a callback nobody started in this
// browser shows a person an HTML page in the page's style saying what
// happened, with a "Sign in again" link; a program asking for
// application/problem+json gets the problem.
func TestRefusedCallbackShowsPeopleAPage(t *testing.T) {
	e := newEnv(t, withSignIn(&signInEnv{}), withPageOrigin())
	// Not through e.do, which holds every error to the problem shape.
	hr, _ := http.NewRequest(http.MethodGet, e.url+"/auth/callback?code=x&state=y", nil)
	hr.Header.Set("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
	res, err := http.DefaultClient.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	r := resp{status: res.StatusCode, header: res.Header, body: readBody(t, res)}
	checkAgainstOpenAPI(t, hr, "", r)
	if r.status != 400 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") ||
		!strings.Contains(r.body, `href="/auth/login?return_to=%2Fui%2F"`) || !strings.Contains(r.body, "Sign in again") ||
		!strings.Contains(r.body, "not started in this browser") || !strings.Contains(r.body, `href="/ui/app.css"`) ||
		!strings.Contains(r.header.Get("Content-Security-Policy"), "style-src 'self'") {
		t.Fatalf("a refused callback in a browser: %d %q %s", r.status, r.header.Get("Content-Type"), r.body)
	}
	r = e.do(req{method: "GET", path: "/auth/callback?code=x&state=y", header: map[string]string{"Accept": "application/problem+json"}})
	if r.status != 400 || r.problem(t)["code"] != "signin-failed" {
		t.Fatalf("a refused callback for a program: %d %s", r.status, r.body)
	}
}

// TestBrowserRefusedCallbackPage: in Chromium the refused callback's page
// is accessible (axe), fits a phone, and its link starts a new sign-in at
// the provider.
func TestBrowserRefusedCallbackPage(t *testing.T) {
	e := newEnv(t, withSignIn(&signInEnv{}), withPageOrigin())
	b := testbrowser.New(t)
	b.Do(chromedp.Navigate(e.url+"/auth/callback?code=x&state=y"), chromedp.WaitVisible(chromedp.ID("signin-again")))
	b.WaitText("h1", "Sign-in did not complete")
	b.CheckView("signin-failed")
	b.Do(chromedp.Click(chromedp.ID("signin-again")), chromedp.WaitVisible(chromedp.ID("person-bob")))
	if u := testbrowser.Eval[string](b, `location.href`); !strings.Contains(u, "/authorize") && !strings.Contains(u, "/login") {
		t.Fatalf("Sign in again led to %s", u)
	}
}
