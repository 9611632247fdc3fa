package main

import (
	"os"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/facade-dev/facade/internal/testbrowser"
)

// TestDemoPageInTheBrowser: `facade demo` as a newcomer runs it, its page
// in Chromium with the tokens it prints: a developer downloads an
// artifact, a professor lists their class and changes a grade, an account
// holder sees a balance.
func TestDemoPageInTheBrowser(t *testing.T) {
	d := startDemo(t)
	base, tokens := d.base, d.tokens
	b := testbrowser.New(t)

	b.OpenPage(base, tokens["DEVELOPER"])
	b.Do(chromedp.Click(chromedp.ID("projects-load")),
		chromedp.Click(chromedp.CSS(`button[data-plan="PROJ-CORE"]`)))
	b.WaitText("#results-h", "newest first")
	file := b.Download(t.TempDir(),
		chromedp.Click(chromedp.CSS(`button[data-result="PROJ-CORE-6"]`)),
		chromedp.Click(chromedp.CSS(`button[data-artifact="core-service.jar"]`)))
	if got, err := os.ReadFile(file); err != nil || !strings.HasPrefix(string(got), "PK") {
		t.Fatalf("downloaded artifact: %d bytes, %v", len(got), err)
	}

	b.OpenPage(base, tokens["PROFESSOR"])
	b.Do(chromedp.WaitReady(chromedp.CSS(`#class-select option[value="english-101"]`)),
		chromedp.Click(chromedp.ID("class-show")),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-student="alice"]`)))
	b.WaitText(`tr[data-student="alice"] .grade`, "B+")
	b.Do(chromedp.SetValue(chromedp.ID("grade-alice"), "A"),
		chromedp.Click(chromedp.CSS(`button[data-save="alice"]`)))
	b.WaitText("#status", "alice now has A (version 2)")

	b.OpenPage(base, tokens["HOLDER"])
	b.Do(chromedp.SendKeys(chromedp.ID("account-ids"), "1001"),
		chromedp.Click(chromedp.ID("account-show")))
	b.WaitText(`[data-account="1001"] .balance`, "250.00 EUR")
}
