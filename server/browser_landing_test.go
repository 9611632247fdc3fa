package server_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/facade-dev/facade/internal/testkit/testbrowser"
)

// TestBrowserEachPersonLandsWhereTheyWork: from /auth/me's has, an
// account holder lands on Accounts, grading staff on Grades, a developer
// on Builds, and no one sees a tab with nothing in it.
func TestBrowserEachPersonLandsWhereTheyWork(t *testing.T) {
	e := pageEnv(t)
	for _, c := range []struct {
		who, role, lands, tabs string
	}{
		{"alice", "customer", "#/accounts", "Accounts"},
		{"ida", "staff", "#/accounts", "Accounts"},
		{"bob", "professor", "#/grades", "Grades"},
		{"erin", "professor", "#/grades", "Grades"},
		{"alice", "student", "#/grades", "Grades|Accounts"},
		{"carol", "developer", "#/builds", "Builds"},
	} {
		b := testbrowser.New(t)
		b.OpenPage(e.url, token(t, c.who, c.role))
		b.WaitFor(`location.hash === '` + c.lands + `'`)
		tabs := testbrowser.Eval[[]string](b, `[...document.querySelectorAll('#tabs a')].filter(a => !a.hidden).map(a => a.textContent)`)
		if strings.Join(tabs, "|") != c.tabs {
			t.Errorf("%s (%s) sees the tabs %q, want %q", c.who, c.role, tabs, c.tabs)
		}
		if who := b.Texts("#who")[0]; who != "Signed in as "+c.who {
			t.Errorf("%s (%s) is labelled %q: by the token's role, not by what they may do", c.who, c.role, who)
		}
		if c.who == "carol" {
			// A view with nothing in it for her is not offered, even by address.
			b.Do(chromedp.Navigate(e.url + "/ui/#/accounts"))
			b.WaitFor(`location.hash === '#/builds'`)
		}
	}
}

// TestBrowserSignInReturnsToTheCurrentView: the sign-in link carries the
// view the tab shows now, also after the address changed while signed
// out, and after someone signed out in this tab.
func TestBrowserSignInReturnsToTheCurrentView(t *testing.T) {
	e := pageEnv(t)
	b := testbrowser.New(t)
	returnTo := func() string {
		href := testbrowser.Eval[string](b, `document.getElementById('signin-link').getAttribute('href')`)
		u, err := url.Parse(href)
		if err != nil {
			t.Fatal(err)
		}
		return u.Query().Get("return_to")
	}
	b.Do(chromedp.Navigate(e.url+"/ui/#/grades/english-101"), visible(`body[data-ready="true"] #signin`))
	if got := returnTo(); got != "/ui/#/grades/english-101" {
		t.Errorf("opened at a class: the sign-in returns to %q", got)
	}
	b.Do(chromedp.Navigate(e.url + "/ui/#/accounts/1001"))
	b.WaitFor(`new URL(document.getElementById('signin-link').href).searchParams.get('return_to') === '/ui/#/accounts/1001'`)
	// Someone signs in and out in this tab; the next person opens a view.
	b.UseToken(token(t, "alice", "customer"))
	b.Do(click(`#signout`), visible(`#signin`))
	b.Do(chromedp.Navigate(e.url + "/ui/#/accounts/1001"))
	b.WaitFor(`new URL(document.getElementById('signin-link').href).searchParams.get('return_to') === '/ui/#/accounts/1001'`)
}
