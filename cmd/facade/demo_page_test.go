//go:build demo

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/facade-dev/facade/internal/testkit/testbrowser"
)

// TestDemoPageInTheBrowser: `facade demo` as a newcomer runs it, its page
// in Chromium with the tokens it prints: a developer reads a build log, a
// professor opens their class, an account holder sees her accounts in
// their currencies. It takes the README's screenshots of the main views
// (into docs/screenshots when UPDATE_SCREENSHOTS=1, else into the test's
// artifact directory), at the width of a laptop and of a phone.
func TestDemoPageInTheBrowser(t *testing.T) {
	d := startDemo(t)
	base, tokens := d.base, d.tokens
	dir := t.ArtifactDir()
	if os.Getenv("UPDATE_SCREENSHOTS") == "1" {
		dir = filepath.Join("..", "..", "docs", "screenshots")
	}
	b := testbrowser.New(t)
	shot := func(name string, width int) {
		t.Helper()
		b.SetWidth(width)
		b.Screenshot(filepath.Join(dir, name+".png"))
		b.SetWidth(testbrowser.PhoneWidth)
	}
	visible := func(css string) chromedp.Action[chromedp.Void] { return chromedp.WaitVisible(chromedp.CSS(css)) }

	b.OpenPage(base, tokens["DEVELOPER"])
	b.Do(visible(`tr[data-plan="PROJ-CORE"]`))
	shot("builds", testbrowser.WideWidth)
	b.Do(chromedp.Navigate(base+"/ui/#/builds/WEB-NIGHTLY"), visible(`#results`))
	shot("results", testbrowser.WideWidth)
	// A plan with branches, each with its own latest state.
	b.Do(chromedp.Navigate(base+"/ui/#/builds/PROJ-CORE"), visible(`#branches`))
	shot("branches", testbrowser.WideWidth)
	shot("branches-phone", testbrowser.NarrowWidth)
	// A failed build: why first.
	b.Do(chromedp.Navigate(base+"/ui/#/builds/WEB-NIGHTLY/5"), visible(`#failing-tests`))
	testbrowser.Eval[bool](b, `document.querySelector('#failing-tests details').open = true`)
	shot("failed-result", testbrowser.WideWidth)
	shot("failed-result-phone", testbrowser.NarrowWidth)
	b.Do(chromedp.Navigate(base+"/ui/#/builds/PROJ-CORE/6"), visible(`#jobs`))
	shot("result-phone", testbrowser.NarrowWidth)
	b.Do(chromedp.Navigate(base + "/ui/#/builds/PROJ-CORE/6/log/JOB1"))
	b.WaitText("#status", "Log of Default Job")
	shot("log", testbrowser.WideWidth)

	b.Do(chromedp.Click(chromedp.ID("signout")), visible(`#signin`))
	b.Do(chromedp.Navigate(base + "/ui/#/grades/english-101/alice"))
	b.UseToken(tokens["PROFESSOR"])
	b.WaitText("#history-h", "History of alice")
	b.WaitText(`tr[data-student="alice"] .grade`, "B+")
	shot("grades", testbrowser.WideWidth)
	shot("grades-phone", testbrowser.NarrowWidth)

	b.Do(chromedp.Click(chromedp.ID("signout")), visible(`#signin`))
	b.Do(chromedp.Navigate(base + "/ui/#/accounts"))
	b.UseToken(tokens["HOLDER"])
	b.Do(visible(`#accounts-list`))
	rows := b.Texts(`#accounts-list tbody tr`)
	if len(rows) != 2 || !strings.Contains(rows[0], "EUR 250.00") || !strings.Contains(rows[1], "JPY 50,000") {
		t.Errorf("the holder's accounts: %q", rows)
	}
	shot("accounts", testbrowser.WideWidth)
	b.Do(chromedp.Click(chromedp.CSS(`tr[data-account="1001"] a`)), visible(`#transfer-form`))
	b.Do(chromedp.SetValue(chromedp.ID("transfer-to"), "2002"), chromedp.SetValue(chromedp.ID("transfer-amount"), "12.50"),
		chromedp.Click(chromedp.ID("transfer-review")), visible(`#confirm`))
	b.WaitText("#confirm", "EUR 12.50 leaves account 1001 and goes to account 2002.")
	b.Do(chromedp.Click(chromedp.ID("confirm-yes")))
	b.WaitText("#status", "Sent EUR 12.50 from 1001 to 2002.")
	shot("statement-phone", testbrowser.NarrowWidth)

	b.Do(chromedp.Click(chromedp.ID("signout")), visible(`#signin`))
	testbrowser.Eval[bool](b, `document.getElementById('token-details').open = true`)
	shot("signin", testbrowser.WideWidth)
}
