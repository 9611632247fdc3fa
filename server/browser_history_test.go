package server_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/facade-dev/facade/internal/testkit/testbrowser"
	"github.com/facade-dev/facade/upstream/bambootest"
)

// histPlan: a plan of 12 builds whose tests (20 in JOB1) tell each story
// once: case00003 fails since #10, case00005 fails first in #12,
// case00007 passed in #8 and failed in #9 on one revision (flaky).
func histPlan(e *env) {
	e.bamboo.AddProject("HIST", "History", "")
	e.bamboo.AddPlan("HIST", "CORE", "Core")
	for n := 1; n <= 12; n++ {
		var failed []int
		if n >= 10 {
			failed = append(failed, 3)
		}
		if n == 12 {
			failed = append(failed, 5)
		}
		if n == 9 {
			failed = append(failed, 7)
		}
		state := "Successful"
		if len(failed) > 0 {
			state = "Failed"
		}
		key := fmt.Sprintf("HIST-CORE-%d", n)
		e.bamboo.AddResult("HIST-CORE", n, state)
		e.bamboo.SetTests(key, bambootest.Tests{Count: 20, Failed: failed})
		if n == 8 || n == 9 {
			e.bamboo.SetRevision(key, "abc123def456")
		}
	}
}

// TestBrowserBuildsOverTime: against the facade's own /tests and /trend
// (over a Bamboo that lists tests only on job results), a failed build's
// failing tests say new, failing since #N (k builds) or flaky with the
// two builds; the plan's builds are a chart whose bars are links (by
// keyboard too), with the numbers as a table; the tests view shows each
// test across the builds and its search finds one; each view has its own
// address (back and forward work). axe-core, both widths, console clean;
// screenshots of the chart and the tests view at 375 and 1280 px.
func TestBrowserBuildsOverTime(t *testing.T) {
	e := newEnv(t, withBuilds(), withPageOrigin(), withPolicyLines("p, dana, project:HIST, view"))
	histPlan(e)
	b := testbrowser.New(t)
	b.OpenPage(e.url, token(t, "dana", "developer"))

	testbrowser.Eval[bool](b, `location.hash = '#/builds/HIST-CORE/12'; true`)
	b.WaitFor(`document.querySelector('#failing-tests .verdict') !== null`)
	tests := b.Texts(`#failing-tests > li`)
	if len(tests) != 2 {
		t.Fatalf("failing tests of #12, through its jobs: %q", tests)
	}
	for _, want := range [][2]string{{"case00003", "Failing since #10 (3 builds)"}, {"case00005", "New: first failed in this build"}} {
		if got := b.Texts(`#failing-tests > li[data-test$="` + want[0] + `"] .verdict`); len(got) != 1 || got[0] != want[1] {
			t.Errorf("%s on #12 says %q, want %q", want[0], got, want[1])
		}
	}
	b.CheckView("failed result with its tests' history")
	dir := screenshotDir(t)
	shoot := func(name string) {
		for suffix, width := range map[string]int{"": testbrowser.WideWidth, "-phone": testbrowser.NarrowWidth} {
			b.SetWidth(width)
			b.Screenshot(filepath.Join(dir, name+suffix+".png"))
		}
		b.SetWidth(testbrowser.PhoneWidth)
	}
	shoot("failing-tests-history")
	if links := b.Texts(`#tests-link`); len(links) != 1 {
		t.Errorf("no link from the failing tests to the tests over time: %q", links)
	}
	testbrowser.Eval[bool](b, `location.hash = '#/builds/HIST-CORE/9'; true`)
	b.WaitFor(`document.querySelector('#failing-tests .verdict.flaky') !== null`)
	if got := b.Texts(`#failing-tests .verdict`); strings.Join(got, " | ") != "New: first failed in this build | Flaky: passed in #8 and failed in #9, both of revision abc123def4" {
		t.Errorf("case00007 on #9 says %q", got)
	}

	// The plan's page shows its recent builds as a chart above its results.
	testbrowser.Eval[bool](b, `location.hash = '#/builds/HIST-CORE'; true`)
	b.WaitFor(`document.querySelectorAll('#recent-box a.bar').length === 12 && document.getElementById('results') !== null`)
	b.CheckView("plan with its recent builds")

	// The chart: 12 bars, oldest first, each a link; failed ones hatched.
	testbrowser.Eval[bool](b, `location.hash = '#/builds/HIST-CORE/trend'; true`)
	b.Do(chromedp.WaitVisible(chromedp.ID("trend-chart")))
	bars := testbrowser.Eval[[]string](b, `[...document.querySelectorAll('#trend-chart a.bar')].map(a => a.dataset.build + ' ' + a.getAttribute('class') + ' ' + (a.querySelector('.hatch') ? 'hatched' : 'plain'))`)
	if len(bars) != 12 || bars[0] != "1 bar ok plain" || bars[8] != "9 bar bad hatched" || bars[11] != "12 bar bad hatched" {
		t.Errorf("the chart's bars: %q", bars)
	}
	if rows := b.Texts(`#trend-table tbody tr`); len(rows) != 12 || !strings.Contains(rows[0], "#12") || !strings.Contains(rows[0], "Failed") || !strings.Contains(rows[0], "2 failed") {
		t.Errorf("the chart's numbers as a table: %q", rows)
	}
	b.CheckView("builds over time")
	shoot("builds-over-time")
	// A bar is a link by keyboard: Enter on the ninth opens build 9.
	b.TabTo(`#trend-chart a[data-build="9"]`)
	b.Press("\r")
	b.WaitFor(`location.hash === '#/builds/HIST-CORE/9'`)
	b.Do(chromedp.WaitVisible(chromedp.ID("result-h")))
	testbrowser.Eval[bool](b, `history.back(), true`)
	b.WaitFor(`location.hash === '#/builds/HIST-CORE/trend' && document.querySelector('#trend-table') !== null`)

	// The tests view: each test across the builds, failing now first.
	b.Do(chromedp.Click(chromedp.CSS(`.subnav a[href="#/builds/HIST-CORE/tests"]`)))
	b.Do(chromedp.WaitVisible(chromedp.ID("tests")))
	rows := b.Texts(`#tests tbody tr`)
	if len(rows) != 3 || !strings.Contains(rows[0], "case00003") || !strings.Contains(rows[0], "Failing since #10 (3 builds)") {
		t.Errorf("tests over time: %q", rows)
	}
	if flaky := b.Texts(`#tests tr[data-test$="case00007"] .verdict.flaky`); len(flaky) != 1 || !strings.Contains(flaky[0], "passed in #8 and failed in #9") {
		t.Errorf("the flaky test in the tests view: %q", flaky)
	}
	if strip := b.Texts(`#tests tr[data-test$="case00005"] .strip [aria-hidden]`); len(strip) != 1 || !strings.HasSuffix(strip[0], "✓✓✗") {
		t.Errorf("case00005's outcomes, oldest first: %q", strip)
	}
	b.CheckView("tests over time")
	shoot("tests-over-time")
	b.Do(chromedp.Click(chromedp.ID("test-search")))
	b.TypeText("case00007")
	b.WaitText("#status", "1 test matches")
	if n := testbrowser.Eval[int](b, `document.querySelectorAll('#tests tbody tr').length`); n != 1 {
		t.Errorf("%d rows for one match", n)
	}
	testbrowser.Eval[bool](b, `history.back(), true`)
	b.WaitFor(`location.hash === '#/builds/HIST-CORE/trend'`)
	testbrowser.Eval[bool](b, `history.forward(), true`)
	b.WaitFor(`location.hash === '#/builds/HIST-CORE/tests' && document.getElementById('tests') !== null`)
	if errs := b.ConsoleErrors(); len(errs) != 0 {
		t.Errorf("the console says %q", errs)
	}
}

// TestBrowserHistoryAtSize: a chart of 100 builds and a history of 1,000
// failing tests over 30 builds (1,200 tests each) draw without a task
// over 200 ms; the figures are printed.
func TestBrowserHistoryAtSize(t *testing.T) {
	e := newEnv(t, withBuilds(), withPageOrigin(), withPolicyLines("p, dana, project:SIZE, view"))
	e.bamboo.AddProject("SIZE", "Size", "")
	e.bamboo.AddPlan("SIZE", "CORE", "Core")
	for n := 1; n <= 100; n++ {
		key := fmt.Sprintf("SIZE-CORE-%d", n)
		var failed []int
		if i := 100 - n; i < 30 { // the newest 30 builds: 1,000 tests fail among them
			for k := i * 34; k < min(1000, i*34+60); k++ {
				failed = append(failed, k)
			}
		}
		state := "Successful"
		if len(failed) > 0 || n%7 == 0 {
			state = "Failed"
		}
		e.bamboo.AddResult("SIZE-CORE", n, state)
		if len(failed) > 0 {
			e.bamboo.SetTests(key, bambootest.Tests{Count: 1200, Failed: failed})
		}
	}
	b := testbrowser.New(t)
	b.Timing().WatchLongTasks()
	b.OpenPage(e.url, token(t, "dana", "developer"))
	testbrowser.Eval[bool](b, `location.hash = '#/builds/SIZE-CORE/trend'; true`)
	waitLong(t, b, `document.querySelectorAll('#trend-chart a.bar').length === 50`)
	// The plan's whole window: the chart of its last 100 builds.
	testbrowser.Eval[bool](b, `location.hash = '#/builds/SIZE-CORE/trend/100'; true`)
	waitLong(t, b, `document.querySelectorAll('#trend-chart a.bar').length === 100`)
	chartTask, chartTime := b.Timing().LongestTaskSince("trend:start"), b.Timing().Since("trend:start", "trend:drawn")
	testbrowser.Eval[bool](b, `location.hash = '#/builds/SIZE-CORE/tests'; true`)
	waitLong(t, b, `document.querySelectorAll('#tests tbody tr').length > 0`)
	testsTask, testsTime := b.Timing().LongestTaskSince("tests:start"), b.Timing().Since("tests:start", "tests:drawn")
	if n := testbrowser.Eval[string](b, `document.querySelector('#tests caption').textContent`); !strings.Contains(n, "last 30 builds") {
		t.Errorf("tests view caption: %q", n)
	}
	total := testbrowser.Eval[string](b, `document.getElementById('status').textContent`)
	b.Do(chromedp.Click(chromedp.ID("test-search")))
	b.TypeText("case0099")
	b.WaitText("#status", "10 tests match")
	searchTask := b.Timing().LongestTaskSince("tests:start")
	t.Logf("history at size: chart of 100 builds drawn in %.0f ms (from the route's start, answer included), longest task %.0f ms; %s: drawn in %.0f ms, longest task %.0f ms (%.0f ms with a search)",
		chartTime, chartTask, strings.TrimSuffix(total, "."), testsTime, testsTask, searchTask)
	if !strings.HasPrefix(total, "1000 tests failed") {
		t.Errorf("status %q, want 1000 tests", total)
	}
	for what, ms := range map[string]float64{"the chart": chartTask, "the tests view": testsTask, "a search": searchTask} {
		if ms > 200 {
			t.Errorf("%s blocked the tab for %.0f ms (at most 200)", what, ms)
		}
	}
	if errs := b.ConsoleErrors(); len(errs) != 0 {
		t.Errorf("the console says %q", errs)
	}
}
