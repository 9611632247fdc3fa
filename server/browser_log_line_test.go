package server_test

import (
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/facade-dev/facade/internal/testkit/testbrowser"
)

// TestBrowserShortLogOpensAtItsLine: a line's own address on a log short
// enough to draw in one slice opens the log with that line marked, as a
// long log does, and no error. (It once said "The request failed": the
// line was selected before the code that keeps the selection had run.)
func TestBrowserShortLogOpensAtItsLine(t *testing.T) {
	e := pageEnv(t)
	b := testbrowser.New(t)
	b.OpenPage(e.url, token(t, "carol", "developer"))
	b.Do(chromedp.WaitVisible(chromedp.CSS(`tr[data-plan="PROJ-CORE"]`)))
	testbrowser.Eval[bool](b, `location.hash = '#/builds/PROJ-CORE/6/log/JOB1/3'; true`)
	b.WaitFor(`document.querySelector('#log[data-ready="true"]') !== null || !document.getElementById('error').hidden`)
	if !testbrowser.Eval[bool](b, `document.getElementById('error').hidden`) {
		t.Fatalf("the log at its line says %q", b.Texts("#error")[0])
	}
	if got := b.Texts(`#log .selected .ln`); len(got) != 1 || got[0] != "3" {
		t.Errorf("the lines marked: %q, want line 3", got)
	}
	if errs := b.ConsoleErrors(); len(errs) != 0 {
		t.Errorf("the console says %q", errs)
	}
}
