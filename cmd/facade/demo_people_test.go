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

// TestDemoPeopleSignInAndLandWhereTheyWork: each demo person signs in at
// the demo's identity provider with one click, as a newcomer would, and
// lands where they work with only their tabs, labelled by name, with a
// clean console and no accessibility violation. It takes each person's
// first screen at phone and laptop width (into docs/screenshots when
// UPDATE_SCREENSHOTS=1), the README's "What each person sees first".
func TestDemoPeopleSignInAndLandWhereTheyWork(t *testing.T) {
	d := startDemo(t)
	dir := t.ArtifactDir()
	if os.Getenv("UPDATE_SCREENSHOTS") == "1" {
		dir = filepath.Join("..", "..", "docs", "screenshots")
	}
	for _, p := range []struct {
		subject, shot, lands, tabs, ready string
	}{
		{"student-alice", "first-student", "#/grades", "Grades|Accounts", "#own-grade"},
		{"professor-bob", "first-professor", "#/grades", "Grades|Accounts", "#classes"},
		{"staff-erin", "first-assistant", "#/grades/english-101", "Grades", "#view-only"},
		{"holder-alice", "first-holder", "#/accounts", "Accounts", "#accounts-list"},
		{"developer-carol", "first-developer", "#/builds", "Builds", `tr[data-plan="PROJ-CORE"]`},
	} {
		t.Run(p.subject, func(t *testing.T) {
			b := testbrowser.New(t)
			start := "/ui/"
			if p.subject == "staff-erin" {
				start = "/ui/#/grades/english-101" // her class, from a link a colleague sent
			}
			b.Do(chromedp.Navigate(d.base+start), chromedp.WaitVisible(chromedp.CSS(`body[data-ready="true"] #signin-sso`)))
			if errs := b.ConsoleErrors(); len(errs) != 0 {
				t.Errorf("signed out, the console says %q", errs)
			}
			b.Do(chromedp.Click(chromedp.CSS(`#signin-link`)), chromedp.WaitVisible(chromedp.CSS(`#person-`+p.subject)))
			b.Do(chromedp.Click(chromedp.CSS(`#person-`+p.subject)), chromedp.WaitVisible(chromedp.CSS(p.ready)))
			b.WaitFor(`location.hash === '` + p.lands + `'`)
			tabs := testbrowser.Eval[[]string](b, `[...document.querySelectorAll('#tabs a')].filter(a => !a.hidden).map(a => a.textContent)`)
			if strings.Join(tabs, "|") != p.tabs {
				t.Errorf("tabs %q, want %q", tabs, p.tabs)
			}
			if who := b.Texts("#who")[0]; strings.Contains(who, "professor") || strings.Contains(who, "(") {
				t.Errorf("the header labels %s by the token's role: %q", p.subject, who)
			}
			b.CheckView(p.subject + "'s first screen")
			b.SetWidth(testbrowser.WideWidth)
			b.Screenshot(filepath.Join(dir, p.shot+".png"))
			b.SetWidth(testbrowser.NarrowWidth)
			b.Screenshot(filepath.Join(dir, p.shot+"-phone.png"))
			if errs := b.ConsoleErrors(); len(errs) != 0 {
				t.Errorf("signed in, the console says %q", errs)
			}
		})
	}
}
