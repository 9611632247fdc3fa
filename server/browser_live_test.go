package server_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/facade-dev/facade/internal/testbrowser"
	"github.com/facade-dev/facade/upstream/bambootest"
)

// liveWithin is how soon a change upstream must show on every open view
// (docs/contract.md §9).
const liveWithin = 5 * time.Second

// shows waits until js is true in b and answers how long it took from
// since; it fails the test when that is over liveWithin.
func shows(t *testing.T, b *testbrowser.Tab, what, js string, since time.Time) time.Duration {
	t.Helper()
	for !testbrowser.Eval[bool](b, js) {
		if time.Since(since) > liveWithin+testbrowser.Wait {
			t.Fatalf("%s: not shown after %s", what, time.Since(since).Round(time.Millisecond))
		}
		time.Sleep(25 * time.Millisecond)
	}
	took := time.Since(since)
	if took > liveWithin {
		t.Errorf("%s: shown %.1f s after the change upstream, want within %s", what, took.Seconds(), liveWithin)
	}
	return took
}

// logLines is a running job's log of n lines.
func logLines(n int) []byte {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "build\t01-Mar-2025 10:00:%02d\tStep %d of the build\n", i%60, i)
	}
	return []byte(b.String())
}

// TestBrowserRunningLogTails: a running job's log grows in the page as
// Bamboo appends to it, without a reload, and the view follows the new
// lines when it was at its end. The seconds are printed.
func TestBrowserRunningLogTails(t *testing.T) {
	e := pageEnv(t)
	e.bamboo.AddResult("PROJ-CORE", 7, "Successful", bambootest.BuildLog("JOB1", logLines(3)))
	e.bamboo.SetInProgress("PROJ-CORE-7")
	log := testbrowser.New(t)
	log.Do(chromedp.Navigate(e.url + "/ui/#/builds/PROJ-CORE/7/log/JOB1"))
	log.UseToken(token(t, "carol", "developer"))
	log.WaitFor(`document.querySelectorAll('#log[data-ready="true"] .line').length === 3`)
	if note := log.Texts("#log-running"); len(note) != 1 || !strings.Contains(note[0], "still running") {
		t.Errorf("a running job's log says %q", note)
	}
	e.bamboo.AddResult("PROJ-CORE", 7, "Successful", bambootest.BuildLog("JOB1", logLines(40)))
	e.bamboo.SetInProgress("PROJ-CORE-7")
	appended := time.Now()
	tailed := shows(t, log, "new log lines", `document.querySelectorAll('#log .line').length === 40`, appended)
	if got := log.Texts("#L40 .text"); len(got) != 1 || !strings.Contains(got[0], "Step 40 of the build") {
		t.Errorf("line 40 reads %q", got)
	}
	if got := log.Texts("#log-size"); len(got) != 1 || got[0] != "40 lines." {
		t.Errorf("the log's size reads %q", got)
	}
	if !testbrowser.Eval[bool](log, `(b => b.scrollTop + b.clientHeight >= b.scrollHeight - 8)(document.getElementById('log'))`) {
		t.Error("the log did not follow its new lines")
	}
	t.Logf("new log lines shown %.1f s after Bamboo wrote them", tailed.Seconds())
	if errs := log.ConsoleErrors(); len(errs) != 0 {
		t.Errorf("the console says %q", errs)
	}
}

// TestBrowserHiddenTabAsksNothing: a tab in the background asks the
// service nothing (the build server pays for every watcher it keeps
// polling), and asks again when it is shown.
func TestBrowserHiddenTabAsksNothing(t *testing.T) {
	e := pageEnv(t)
	b := testbrowser.New(t)
	b.OpenPage(e.url, token(t, "carol", "developer"))
	b.Do(chromedp.WaitVisible(chromedp.CSS(`#plans[data-complete="true"]`)))
	asked := `performance.getEntriesByType('resource').filter(r => r.name.includes('/rest/api/latest/result?')).length`
	start := testbrowser.Eval[int](b, asked)
	b.WaitFor(asked + ` > ` + fmt.Sprint(start)) // a shown overview asks again
	testbrowser.Eval[bool](b, `Object.defineProperty(document, 'hidden', {value: true, configurable: true}),
		document.dispatchEvent(new Event('visibilitychange')), true`)
	b.WaitNoRequestInFlight()
	hidden := testbrowser.Eval[int](b, asked)
	time.Sleep(5 * time.Second)
	if n := testbrowser.Eval[int](b, asked) - hidden; n != 0 {
		t.Errorf("a hidden tab asked for the latest results %d times in 5 s", n)
	}
	testbrowser.Eval[bool](b, `Object.defineProperty(document, 'hidden', {value: false, configurable: true}),
		document.dispatchEvent(new Event('visibilitychange')), true`)
	b.WaitFor(asked + ` > ` + fmt.Sprint(hidden))
}
