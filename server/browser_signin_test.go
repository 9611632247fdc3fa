package server_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/facade-dev/facade/internal/testkit/testbrowser"
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
	b.WaitText("#who", "Signed in as bob")
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

// TestBrowserSignedOutLoadIsQuiet: opening the page signed out logs no
// error in the console (not even a failed request: /auth/me answers 200
// signed out), offers the organization's sign-in because /auth/me says it
// exists, and starts no sign-in (no request to /auth/login), so another
// tab's sign-in in progress is left alone.
func TestBrowserSignedOutLoadIsQuiet(t *testing.T) {
	e := newEnv(t, withSignIn(&signInEnv{}), withPageOrigin())
	b := testbrowser.New(t)
	var mu sync.Mutex
	var logged, logins []string
	go func() {
		for ev, err := range chromedp.Events(b.Ctx, cdplog.EntryAdded) {
			if err != nil {
				return
			}
			if ev.Entry.Level == cdplog.EntryLevelError || ev.Entry.Level == cdplog.EntryLevelWarning {
				mu.Lock()
				logged = append(logged, ev.Entry.Text+" "+ev.Entry.URL)
				mu.Unlock()
			}
		}
	}()
	go func() {
		for ev, err := range chromedp.Events(b.Ctx, network.RequestWillBeSent) {
			if err != nil {
				return
			}
			if strings.Contains(ev.Request.URL, "/auth/login") {
				mu.Lock()
				logins = append(logins, ev.Request.URL)
				mu.Unlock()
			}
		}
	}()
	b.Do(chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Call(ctx, cdplog.Enable, cdp.Empty{})
		return err
	}))
	b.Do(chromedp.Navigate(e.url+"/ui/"), chromedp.WaitVisible(chromedp.CSS(`body[data-ready="true"] #signin-link`)))
	b.WaitNoRequestInFlight()
	mu.Lock()
	defer mu.Unlock()
	if len(logged) > 0 {
		t.Errorf("a signed-out load logged: %q", logged)
	}
	if len(logins) > 0 {
		t.Errorf("a signed-out load started a sign-in: %q", logins)
	}
}

// TestBrowserTwoTabsSignInAtOnce: in one Chromium, a first tab goes to the
// provider's page, a second tab opens the page and signs in, then the
// first tab finishes its own sign-in: both land signed in (each sign-in
// keeps its own state; opening the page disturbs none).
func TestBrowserTwoTabsSignInAtOnce(t *testing.T) {
	e := newEnv(t, withSignIn(&signInEnv{}), withPageOrigin())
	b := testbrowser.New(t)
	toProvider := []chromedp.Action[chromedp.Void]{
		chromedp.Navigate(e.url + "/ui/"),
		chromedp.WaitVisible(chromedp.CSS(`body[data-ready="true"] #signin-link`)),
		chromedp.Click(chromedp.ID("signin-link")),
		chromedp.WaitVisible(chromedp.ID("person-bob")),
	}
	b.Do(toProvider...)
	second, cancel := chromedp.NewContext(b.Ctx) // a second tab of the same browser
	defer cancel()
	// The first action opens the tab, on a context that lives as long as it.
	if err := chromedp.Do(second); err != nil {
		t.Fatalf("second tab: %v", err)
	}
	run := func(ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		ctx, stop := context.WithTimeout(ctx, testbrowser.Wait)
		defer stop()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("second tab: %v", err)
		}
	}
	run(second, toProvider...)
	run(second, chromedp.Click(chromedp.ID("person-bob")), chromedp.WaitVisible(chromedp.CSS(`body[data-ready="true"] #signout`)))
	b.Do(chromedp.Click(chromedp.ID("person-bob")), chromedp.WaitVisible(chromedp.CSS(`body[data-ready="true"] #signout`)))
	b.WaitText("#who", "Signed in as bob")
}
