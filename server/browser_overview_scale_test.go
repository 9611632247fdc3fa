package server_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/facade-dev/facade/internal/testkit/testbrowser"
	"github.com/facade-dev/facade/upstream/bambootest"
)

// An organization's Bamboo (bambootest.Organization): 400 projects of 10
// plans; dana's team may see the first 300 projects (3,000 plans).
const (
	bigProjects, bigPlansEach, bigVisible = 400, 10, 300
)

// bigPolicy grants team:big the first bigVisible projects, dana in it.
func bigPolicy() []string {
	lines := []string{"g, dana, team:big"}
	for i := range bigVisible {
		lines = append(lines, "p, team:big, project:"+bambootest.OrgProjectKey(i)+", view")
	}
	return lines
}

// overviewTimes opens the overview as dana in a new tab and answers its
// first screen, the whole list drawn (ms from the view's start) and the
// longest task of the tab (ms).
func overviewTimes(t *testing.T, e *env, tok string) (b *testbrowser.Tab, first, drawn, longest float64) {
	b = testbrowser.New(t)
	b.Timing().WatchLongTasks()
	b.Do(chromedp.Navigate(e.url + "/ui/#/builds"))
	b.UseToken(tok)
	waitLong(t, b, `document.querySelector('#plans[data-complete="true"]') !== null`)
	return b, b.Timing().Since("builds:start", "builds:first-screen"), b.Timing().Since("builds:start", "builds:drawn"), b.Timing().LongestTask()
}

// TestBrowserOverviewAtAnySize: with 4,000 plans upstream and 3,000 of
// them visible, every visible plan is on the overview (grouped by project,
// favourites first) with its real latest state, the search finds one of
// the last project ("Service 299-9"), nothing of the other 1,000 shows, and the rows are
// drawn in slices (what keeps the tab answering). First screen, the whole
// list and the longest task are printed, cold (the service's caches
// empty) and warm (a second person's tab after it).
func TestBrowserOverviewAtAnySize(t *testing.T) {
	e := newEnv(t, withBuilds(), withPageOrigin(), withPolicyLines(bigPolicy()...))
	bambootest.Organization(e.bamboo, bigProjects, bigPlansEach)
	tok := token(t, "dana", "developer")
	if r := e.do(req{method: "POST", path: "/rest/api/latest/plan/S150-P5/favourite", token: tok}); r.status != 204 {
		t.Fatalf("marking a favourite: %d %s", r.status, r.body)
	}
	b, coldFirst, coldDrawn, coldLongest := overviewTimes(t, e, tok)
	_, warmFirst, warmDrawn, warmLongest := overviewTimes(t, e, tok)
	t.Logf("overview, %d plans upstream, %d visible: first screen cold %.0f ms, warm %.0f ms; all drawn cold %.0f ms, warm %.0f ms; longest task cold %.0f ms, warm %.0f ms",
		bigProjects*bigPlansEach, bigVisible*bigPlansEach, coldFirst, warmFirst, coldDrawn, warmDrawn, coldLongest, warmLongest)
	firstScreenBeforeTheWholeList(t, e, tok)

	if n := testbrowser.Eval[int](b, `document.querySelectorAll('tr[data-plan]').length`); n != bigVisible*bigPlansEach {
		t.Errorf("%d plans on the overview, want %d", n, bigVisible*bigPlansEach)
	}
	if n := testbrowser.Eval[int](b, `document.querySelectorAll('section.project[data-project]').length`); n != bigVisible {
		t.Errorf("%d projects on the overview, want %d", n, bigVisible)
	}
	if slices := testbrowser.Eval[int](b, `Number(document.getElementById('plans').dataset.slices)`); slices < 10 {
		t.Errorf("3,000 plans drawn in %d slice(s): a long task freezes the tab", slices)
	}
	if first := testbrowser.Eval[string](b, `document.querySelector('tr[data-plan]').dataset.plan`); first != "S150-P5" {
		t.Errorf("the first plan is %s, want the favourite S150-P5", first)
	}
	never := testbrowser.Eval[[]string](b, `[...document.querySelectorAll('tr[data-plan]')].filter(r => r.textContent.includes('Never built')).map(r => r.dataset.plan).slice(0, 5)`)
	if len(never) != 0 {
		t.Errorf("plans said never built, though each has a result: %q…", never)
	}
	for _, p := range [][2]int{{0, 0}, {150, 4}, {299, 7}, {299, 9}} {
		want := map[string]string{"Failed": "Failed", "Successful": "Passed"}[bambootest.OrgLatestState(p[0], p[1])]
		key := bambootest.OrgPlanKey(p[0], p[1])
		row := b.Texts(`tr[data-plan="` + key + `"]`)
		if len(row) != 1 || !strings.Contains(row[0], want) || !strings.Contains(row[0], fmt.Sprintf("#%d", 11+p[1])) {
			t.Errorf("%s: %q, want %s and its build #%d", key, row, want, 11+p[1])
		}
	}
	if n := testbrowser.Eval[int](b, `document.querySelectorAll('tr[data-plan^="S300-"], tr[data-plan^="S399-"]').length`); n != 0 {
		t.Errorf("%d plans of projects dana may not see are shown", n)
	}

	// The search finds a plan of the last visible project by name, and
	// says no plan matches one dana may not see.
	b.Do(chromedp.Click(chromedp.ID("plan-search")))
	b.TypeText("Service 299-9")
	b.WaitText("#status", "1 plan matches")
	b.WaitFor(`document.querySelector('#plans[data-complete="true"] tr[data-plan="S299-P9"]') !== null`)
	if n := testbrowser.Eval[int](b, `document.querySelectorAll('tr[data-plan]').length`); n != 1 {
		t.Errorf("%d rows for one match", n)
	}
	clearSearch(b)
	b.TypeText("Service 300-1")
	b.WaitText("#status", "0 plans match")
	b.Do(chromedp.WaitVisible(chromedp.ID("plan-search-none")))
	// A part of a key narrows to its project's plans.
	clearSearch(b)
	b.TypeText("s029-")
	b.WaitText("#status", "10 plans match")
	b.CheckView("overview of 3,000 plans, searched")
	// The first screen of the whole list, as a person sees it (the page is
	// too long to take whole, and projects far off screen are not drawn).
	dir := screenshotDir(t)
	clearSearch(b)
	testbrowser.Eval[bool](b, `document.getElementById('plan-search').dispatchEvent(new Event('input')), true`)
	waitLong(t, b, `document.querySelectorAll('#plans[data-complete="true"] tr[data-plan]').length === 3000`)
	for name, width := range map[string]int{"builds-at-scale.png": testbrowser.WideWidth, "builds-at-scale-phone.png": testbrowser.NarrowWidth} {
		b.SetWidth(width)
		testbrowser.Eval[bool](b, `scrollTo(0, 0), true`)
		b.ScreenshotWindow(filepath.Join(dir, name))
	}
	if errs := b.ConsoleErrors(); len(errs) != 0 {
		t.Errorf("the console says %q", errs)
	}
}

// firstScreenBeforeTheWholeList: with every page of the whole latest
// results list held in the browser, the first screen is drawn anyway
// from what arrives first: the favourite and the first projects with
// their real latest state (their projects' small lists), later projects
// listed with their state still loading ("…", never "Never built"), and
// the search already finds a plan of the last project. Let go, the list
// completes every row.
func firstScreenBeforeTheWholeList(t *testing.T, e *env, tok string) {
	b := testbrowser.New(t)
	release := b.Timing().Hold(`*/rest/api/latest/result\?*`)
	b.Do(chromedp.Navigate(e.url + "/ui/#/builds"))
	b.UseToken(tok)
	waitLong(t, b, `document.querySelectorAll('tr[data-plan]').length === 3000`)
	for _, p := range [][2]int{{150, 5}, {0, 0}, {2, 9}} {
		want := map[string]string{"Failed": "Failed", "Successful": "Passed"}[bambootest.OrgLatestState(p[0], p[1])]
		key := bambootest.OrgPlanKey(p[0], p[1])
		if row := b.Texts(`tr[data-plan="` + key + `"]`); len(row) != 1 || !strings.Contains(row[0], want) || !strings.Contains(row[0], fmt.Sprintf("#%d", 11+p[1])) {
			t.Errorf("first screen, the whole list held: %s is %q, want %s and its build #%d", key, row, want, 11+p[1])
		}
	}
	if row := b.Texts(`tr[data-plan="S200-P1"]`); len(row) != 1 || !strings.Contains(row[0], "Loading") {
		t.Errorf("a plan whose latest result has not arrived says %q, want Loading", row)
	}
	if b.Timing().Since("builds:start", "builds:first-screen") < 0 {
		t.Error("no first screen while the whole list is held")
	}
	b.Do(chromedp.Click(chromedp.ID("plan-search")))
	b.TypeText("Service 299-9")
	b.WaitFor(`document.querySelector('tr[data-plan="S299-P9"]') !== null && document.querySelectorAll('tr[data-plan]').length === 1`)
	clearSearch(b)
	testbrowser.Eval[bool](b, `document.getElementById('plan-search').dispatchEvent(new Event('input')), true`)
	release()
	waitLong(t, b, `document.querySelector('#plans[data-complete="true"]') !== null`)
	if row := b.Texts(`tr[data-plan="S200-P1"]`); len(row) != 1 || !strings.Contains(row[0], "#12") {
		t.Errorf("once the whole list came, S200-P1 is %q, want its build #12", row)
	}
	if n := testbrowser.Eval[int](b, `[...document.querySelectorAll('tr[data-plan]')].filter(r => /Loading|Never built/.test(r.textContent)).length`); n != 0 {
		t.Errorf("%d rows still loading or said never built once the whole list came", n)
	}
	if errs := b.ConsoleErrors(); len(errs) != 0 {
		t.Errorf("the console says %q", errs)
	}
}

// clearSearch empties the plan search and leaves the focus in it.
func clearSearch(b *testbrowser.Tab) {
	testbrowser.Eval[bool](b, `(s => (s.value = '', s.focus(), true))(document.getElementById('plan-search'))`)
}

// waitLong is WaitFor with four times its patience: under -race on a busy
// machine the service takes minutes over lists of thousands (the times
// printed say how long; this only keeps the test from giving up).
func waitLong(t *testing.T, b *testbrowser.Tab, js string) {
	t.Helper()
	deadline := time.Now().Add(4 * testbrowser.Wait)
	for !testbrowser.Eval[bool](b, js) {
		if time.Now().After(deadline) {
			t.Fatalf("still false after %s: %s", 4*testbrowser.Wait, js)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
