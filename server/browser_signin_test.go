package server_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/facade-dev/facade/internal/testbrowser"
)

// TestSignInInTheBrowser: headless Chromium signs in at the embedded
// provider from the page, uses the page on the session, signs out (here
// and at the provider), and the back button then shows nothing of the
// person.
func TestSignInInTheBrowser(t *testing.T) {
	e := newEnv(t, withSignIn(&signInEnv{}), withPageOrigin())
	seedGrades(t, e)
	b := testbrowser.New(t)
	b.Do(
		chromedp.Navigate(e.url+"/ui/"),
		chromedp.WaitVisible(chromedp.CSS(`body[data-ready="true"] #signin-link`)),
		chromedp.Click(chromedp.ID("signin-link")),
		// The provider's page: one click per person.
		chromedp.WaitVisible(chromedp.ID("person-bob")),
		chromedp.Click(chromedp.ID("person-bob")),
		chromedp.WaitVisible(chromedp.CSS(`body[data-ready="true"] #signout`)),
	)
	b.WaitText("#who", "Signed in as bob (professor)")
	// The page works on the session: bob's class comes from the API.
	testbrowser.Eval[string](b, `location.hash = '#/grades/english-101'`)
	b.WaitText("#students", "alice")

	b.Do(chromedp.Click(chromedp.ID("signout")),
		chromedp.WaitVisible(chromedp.CSS(`body[data-ready="true"] #signin-link`)))
	b.WaitText("#who", "Not signed in.")
	if got := testbrowser.Eval[string](b, `document.cookie`); strings.Contains(got, "XSRF-TOKEN") {
		t.Fatalf("cookies after sign-out: %q", got)
	}

	b.Do(chromedp.NavigateBack())
	b.Do(chromedp.WaitReady(chromedp.CSS("body")))
	b.WaitText("#who", "Not signed in.")
	if text := testbrowser.Eval[string](b, `document.body.innerText`); strings.Contains(text, "bob") || strings.Contains(text, "english-101") {
		t.Fatalf("after sign-out the back button shows the person: %q", text)
	}
}
