package server_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/facade-dev/facade/internal/testkit/testbrowser"
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

// logLines are lines from to to of a running job's log.
func logLines(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "build\t01-Mar-2025 10:00:%02d\tStep %d of the build\n", i%60, i)
	}
	return b.String()
}

// watch opens hash as carol in a new tab and waits until ready is true.
func watch(t *testing.T, e *env, hash, ready string) *testbrowser.Tab {
	t.Helper()
	b := testbrowser.New(t)
	b.Do(chromedp.Navigate(e.url + "/ui/" + hash))
	b.UseToken(token(t, "carol", "developer"))
	b.WaitFor(ready)
	return b
}

// TestBrowserRunningLogTails: a running job's log grows in the page as
// Bamboo appends to it, without a reload, and the view follows the new
// lines when it was at its end. The seconds are printed.
func TestBrowserRunningLogTails(t *testing.T) {
	e := pageEnv(t)
	key := e.bamboo.StartBuild("PROJ-CORE")
	n := strings.TrimPrefix(key, "PROJ-CORE-")
	e.bamboo.AppendLog(key, "JOB1", logLines(1, 3))
	log := watch(t, e, "#/builds/PROJ-CORE/"+n+"/log/JOB1", `document.querySelectorAll('#log[data-ready="true"] .line').length === 3`)
	if note := log.Texts("#log-running"); len(note) != 1 || !strings.Contains(note[0], "still running") {
		t.Errorf("a running job's log says %q", note)
	}
	e.bamboo.AppendLog(key, "JOB1", logLines(4, 40))
	tailed := shows(t, log, "new log lines", `document.querySelectorAll('#log .line').length === 40`, time.Now())
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

// TestBrowserFinishedBuildShowsEverywhere: three people watch a running
// build, one on the overview, one on the result, one on its job's log;
// when it fails upstream every view says so within 5 s, without a reload,
// and the log says the job finished, with its last lines. The seconds
// are printed.
func TestBrowserFinishedBuildShowsEverywhere(t *testing.T) {
	e := pageEnv(t)
	key := e.bamboo.StartBuild("PROJ-CORE")
	n := strings.TrimPrefix(key, "PROJ-CORE-")
	e.bamboo.AppendLog(key, "JOB1", logLines(1, 3))
	overview := watch(t, e, "#/builds", `(r => !!r && r.textContent.includes('Running') && r.textContent.includes('#`+n+`'))(document.querySelector('tr[data-plan="PROJ-CORE"]'))`)
	result := watch(t, e, "#/builds/PROJ-CORE/"+n, `(h => !!h && h.textContent.includes('Running'))(document.getElementById('result-h'))`)
	log := watch(t, e, "#/builds/PROJ-CORE/"+n+"/log/JOB1", `document.querySelectorAll('#log[data-ready="true"] .line').length === 3`)
	e.bamboo.AppendLog(key, "JOB1", logLines(4, 5))
	e.bamboo.Finish(key, "Failed")
	failed := time.Now()
	inOverview := shows(t, overview, "the overview", `document.querySelector('tr[data-plan="PROJ-CORE"]').textContent.includes('Failed')`, failed)
	inResult := shows(t, result, "the result", `document.getElementById('result-h').textContent.includes('Failed')`, failed)
	inLog := shows(t, log, "the log", `document.getElementById('log-running').textContent.includes('finished')`, failed)
	if n := testbrowser.Eval[int](log, `document.querySelectorAll('#log .line').length`); n != 5 {
		t.Errorf("the finished log shows %d lines, want 5", n)
	}
	t.Logf("seconds from a build's failure upstream to the page: the overview %.1f s, the result %.1f s, the log %.1f s",
		inOverview.Seconds(), inResult.Seconds(), inLog.Seconds())
	for _, b := range []*testbrowser.Tab{overview, result, log} {
		if errs := b.ConsoleErrors(); len(errs) != 0 {
			t.Errorf("the console says %q", errs)
		}
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
