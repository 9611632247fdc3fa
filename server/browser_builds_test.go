package server_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/facade-dev/facade/internal/testkit/testbrowser"
	"github.com/facade-dev/facade/upstream/bambootest"
)

// The builds page with real sizes: a 10,000-line log read in the page, a
// 64 MiB artifact downloaded by the browser itself, and favourites.

// screenshotDir is where a test keeps its screenshots: docs/screenshots
// with UPDATE_SCREENSHOTS=1 (the README shows them), else the test's own.
func screenshotDir(t *testing.T) string {
	if os.Getenv("UPDATE_SCREENSHOTS") == "1" {
		return filepath.Join("..", "docs", "screenshots")
	}
	return t.TempDir()
}

// longLog is a build log of n lines, every 500th an error (and its stack).
func longLog(n int) []byte {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		switch {
		case i%500 == 0:
			fmt.Fprintf(&b, "error\t01-Mar-2025 10:%02d:%02d\t[ERROR] Tests run: 40, Failures: 1 in com.example.core.Suite%d\n", i/600%60, i%60, i)
		default:
			fmt.Fprintf(&b, "build\t01-Mar-2025 10:%02d:%02d\tCompiling module %d of %d: src/main/java/com/example/core/Module%d.java\n", i/600%60, i%60, i, n, i)
		}
	}
	return []byte(b.String())
}

// TestBrowserLongLogStaysFast: 10,000 lines render without freezing the
// tab, every line numbered with its own address, error lines marked, and a
// search that jumps between hits. What keeps the tab answering is that the
// lines are drawn in slices between frames, so that is what is asserted; the
// times are printed (a busy machine stretches them, so they are no verdict).
func TestBrowserLongLogStaysFast(t *testing.T) {
	e := pageEnv(t)
	const lines = 10000
	e.bamboo.AddResult("PROJ-CORE", 7, "Failed", bambootest.BuildLog("JOB1", longLog(lines)))
	b := testbrowser.New(t)
	b.OpenPage(e.url, token(t, "carol", "developer"))
	b.Do(chromedp.WaitVisible(chromedp.CSS(`tr[data-plan="PROJ-CORE"]`)))
	// Long tasks (>50 ms) of the main thread, from here on.
	testbrowser.Eval[bool](b, `window.longest = 0; new PerformanceObserver(l => l.getEntries().forEach(e => { window.longest = Math.max(window.longest, e.duration); })).observe({type: 'longtask', buffered: false}); true`)
	// A line's own address opens the log at that line.
	testbrowser.Eval[bool](b, `location.hash = '#/builds/PROJ-CORE/7/log/JOB1/5000'; true`)
	b.WaitFor(`document.querySelector('#log[data-ready="true"]') !== null`)
	drawn := testbrowser.Eval[float64](b, `Number(document.getElementById('log').dataset.drawnMs)`)
	longest := testbrowser.Eval[float64](b, `window.longest`)
	t.Logf("10,000-line log: drawn in %.0f ms, longest main-thread task %.0f ms", drawn, longest)
	if n := testbrowser.Eval[int](b, `document.querySelectorAll('#log .line').length`); n != lines {
		t.Fatalf("%d lines drawn, want %d", n, lines)
	}
	if slices := testbrowser.Eval[int](b, `Number(document.getElementById('log').dataset.slices)`); slices < lines/2500 {
		t.Errorf("the log was drawn in %d slice(s), want at least %d: one long task freezes the tab", slices, lines/2500)
	}
	// Only the lines near the screen are laid out: a 10,000-line log laid
	// out whole held the tab about a second on a quiet machine.
	if testbrowser.Eval[bool](b, `document.getElementById('L9999').checkVisibility({contentVisibilityAuto: true})`) {
		t.Error("line 9,999 is laid out while line 5,000 is on screen: the whole log is laid out at every slice and jump")
	}
	if got := testbrowser.Eval[string](b, `document.querySelector('#log .selected .ln').textContent`); got != "5000" {
		t.Errorf("the line of the address is %q, want 5000 selected", got)
	}
	if top := testbrowser.Eval[float64](b, `(() => { const r = document.getElementById('L5000').getBoundingClientRect(), l = document.getElementById('log').getBoundingClientRect(); return r.top >= l.top && r.bottom <= l.bottom ? 1 : 0; })()`); top != 1 {
		t.Error("line 5000 is not scrolled into view")
	}
	if n := testbrowser.Eval[int](b, `document.querySelectorAll('#log .line.err').length`); n != lines/500 {
		t.Errorf("%d lines marked as errors, want %d", n, lines/500)
	}
	// A line's link is its own address, followed without redrawing.
	testbrowser.Eval[bool](b, `document.querySelector('#L1234 .ln').click(); true`)
	if loc := testbrowser.Eval[string](b, `location.hash`); loc != "#/builds/PROJ-CORE/7/log/JOB1/1234" {
		t.Errorf("line 1234's address: %q", loc)
	}
	if !testbrowser.Eval[bool](b, `document.getElementById('L1234').classList.contains('selected')`) {
		t.Error("clicking line 1234 does not select it")
	}
	// Search: Enter jumps to the next hit, Shift+Enter back.
	b.Do(chromedp.Click(chromedp.ID("log-search")))
	b.Press("E", "R", "R", "O", "R", "]")
	b.WaitText("#log-search-count", "20 lines match")
	if h := b.Texts(".log-lines")[0]; !strings.HasPrefix(h, "10,000 lines, 20 marked as errors.") {
		t.Errorf("the log says %q", h)
	}
	b.Press("\r")
	b.WaitText("#log-search-count", "Line 500: match 1 of 20")
	b.Press("\r")
	b.WaitText("#log-search-count", "Line 1000: match 2 of 20")
	b.Do(chromedp.Click(chromedp.ID("log-prev")))
	b.WaitText("#log-search-count", "Line 500: match 1 of 20")
	b.CheckView("long log")
	dir := screenshotDir(t)
	for name, width := range map[string]int{"long-log.png": testbrowser.WideWidth, "long-log-phone.png": testbrowser.NarrowWidth} {
		b.SetWidth(width)
		testbrowser.Eval[bool](b, `document.querySelector('#log .current').scrollIntoView({block: 'center'}), true`)
		b.Screenshot(filepath.Join(dir, name))
	}
}

// TestBrowserDownloadsAreTheBrowsers: signed in with a session, an
// artifact is a plain link the browser downloads itself (the session
// cookie authorizes the GET): 64 MiB arrive whole, named as the server
// names them, and the page's JavaScript heap does not grow by them.
func TestBrowserDownloadsAreTheBrowsers(t *testing.T) {
	e := newEnv(t, withBuilds(), withSignIn(&signInEnv{}), withPageOrigin())
	const size = 64 << 20
	e.bamboo.AddResult("PROJ-CORE", 8, "Successful", bambootest.BuildLog("JOB1", nil),
		bambootest.Artifact{Name: "disk image.img", ProducerJobKey: "PKG", Shared: true, Size: size})
	b := testbrowser.New(t)
	b.Do(
		chromedp.Navigate(e.url+"/ui/#/builds/PROJ-CORE/8"),
		chromedp.WaitVisible(chromedp.CSS(`body[data-ready="true"] #signin-link`)),
		chromedp.Click(chromedp.ID("signin-link")),
		chromedp.WaitVisible(chromedp.ID("person-carol")),
		chromedp.Click(chromedp.ID("person-carol")),
		chromedp.WaitVisible(chromedp.CSS(`a[data-artifact="disk image.img"]`)),
	)
	if li := b.Texts(`#artifacts li`)[0]; !strings.Contains(li, "64 MB") || !strings.Contains(li, "from Package") {
		t.Errorf("the artifact without its size or job: %q", li)
	}
	heap := func() float64 {
		var used float64
		b.Do(chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			u, err := chromedp.Call(ctx, runtime.GetHeapUsage, cdp.Empty{})
			used = u.UsedSize
			return err
		}))
		return used
	}
	// The name is the server's: the link sets none of its own.
	if name := testbrowser.Eval[string](b, `document.querySelector('a[data-artifact="disk image.img"]').getAttribute('download')`); name != "" {
		t.Errorf("the page names the download %q; the server's Content-Disposition should", name)
	}
	testbrowser.Eval[bool](b, `typeof gc === 'function' && gc(), true`)
	before := heap()
	file := b.Download(t.TempDir(), chromedp.Click(chromedp.CSS(`a[data-artifact="disk image.img"]`)))
	after := heap()
	st, err := os.Stat(file)
	if err != nil || st.Size() != size {
		t.Fatalf("downloaded %v bytes (%v), want %d", st, err, size)
	}
	t.Logf("64 MiB download: JS heap %.1f MiB before, %.1f MiB after (%+.1f MiB)", before/(1<<20), after/(1<<20), (after-before)/(1<<20))
	if after-before > 8<<20 {
		t.Errorf("the page's heap grew by %.1f MiB during a 64 MiB download: the file went through the tab", (after-before)/(1<<20))
	}
	// The page never asked for the file itself: no fetch of it in the
	// page's resource timings (a download the browser makes is none).
	if n := testbrowser.Eval[int](b, `performance.getEntriesByType('resource').filter(e => e.name.includes('/artifact/')).length`); n != 0 {
		t.Errorf("the page fetched the artifact itself (%d times)", n)
	}
}

// TestBrowserFavouritesComeFirst: a star marks a plan as the person's
// favourite; favourites are listed first, for that person only.
func TestBrowserFavouritesComeFirst(t *testing.T) {
	e := newEnv(t, withBuilds(), withPageOrigin(), withPolicyLines("g, frank, team:platform"))
	b := testbrowser.New(t)
	b.OpenPage(e.url, token(t, "carol", "developer"))
	b.Do(chromedp.WaitVisible(chromedp.CSS(`tr[data-plan="PROJ-LIB"]`)))
	if n := len(b.Texts(`#favourites`)); n != 0 {
		t.Fatal("favourites shown before any was marked")
	}
	b.Do(chromedp.Click(chromedp.CSS(`button[data-star="PROJ-LIB"]`)))
	b.WaitText("#status", "Common Libraries is one of your favourites.")
	b.Do(chromedp.WaitVisible(chromedp.CSS(`#favourites tr[data-plan="PROJ-LIB"]`)))
	if first := testbrowser.Eval[string](b, `document.querySelector('tr[data-plan]').dataset.plan`); first != "PROJ-LIB" {
		t.Errorf("the first plan is %q, want the favourite", first)
	}
	if pressed := testbrowser.Eval[string](b, `document.querySelector('button[data-star="PROJ-LIB"]').getAttribute('aria-pressed')`); pressed != "true" {
		t.Errorf("the star says aria-pressed=%q", pressed)
	}
	b.CheckView("builds with a favourite")
	// Another person sees no favourite of carol's.
	b2 := testbrowser.New(t)
	b2.OpenPage(e.url, token(t, "frank", "developer"))
	b2.Do(chromedp.WaitVisible(chromedp.CSS(`tr[data-plan="PROJ-LIB"]`)))
	if n := len(b2.Texts(`#favourites`)); n != 0 {
		t.Error("frank sees carol's favourites")
	}
	// Unmarking puts it back in its project.
	b.Do(chromedp.Click(chromedp.CSS(`#favourites button[data-star="PROJ-LIB"]`)))
	b.WaitFor(`document.getElementById('favourites') === null && document.querySelector('tr[data-plan="PROJ-LIB"]') !== null`)
}

// TestBrowserHostileUpstreamTextStaysText: names, comments and build
// reasons from the build server carrying markup and javascript: links are
// shown as text; nothing of them runs or becomes an element.
func TestBrowserHostileUpstreamTextStaysText(t *testing.T) {
	e := pageEnv(t)
	const evil = `<img src=x onerror="window.pwned=1"><a href="javascript:window.pwned=2">x</a><script>window.pwned=3</script>`
	e.bamboo.AddProject("PROJ", "Core "+evil, evil)
	e.bamboo.AddPlan("PROJ", "CORE", "Core Service "+evil)
	e.bamboo.AddResult("PROJ-CORE", 7, "Failed", bambootest.BuildLog("JOB1", []byte("error: "+evil+"\n")))
	e.bamboo.CommentResult("PROJ-CORE-7", evil)
	b := testbrowser.New(t)
	b.OpenPage(e.url, token(t, "carol", "developer"))
	for _, view := range []struct{ hash, ready string }{
		{"#/builds", `tr[data-plan="PROJ-CORE"]`},
		{"#/builds/PROJ-CORE", `#results`},
		{"#/builds/PROJ-CORE/7", `#jobs`},
		{"#/builds/PROJ-CORE/7/log/JOB1", `#log[data-ready="true"]`},
	} {
		testbrowser.Eval[bool](b, `location.hash = '`+view.hash+`'; true`)
		b.Do(chromedp.WaitVisible(chromedp.CSS(view.ready)))
		if !strings.Contains(b.BodyText(), "<img src=x") {
			t.Errorf("%s: the markup is not shown as text", view.hash)
		}
		if n := testbrowser.Eval[int](b, `document.querySelectorAll('#view img, #view script, #view a[href^="javascript"]').length`); n != 0 {
			t.Errorf("%s: %d elements made from upstream markup", view.hash, n)
		}
		if testbrowser.Eval[bool](b, `window.pwned !== undefined`) {
			t.Fatalf("%s: upstream markup ran", view.hash)
		}
	}
}

// TestBrowserFailedResultSaysWhyFirst: a failed result leads with its
// failing jobs, then its failing tests (class, name, message; the stack on
// demand), then the commits, before the jobs table; a plan page lists its
// branches with their own latest state. Both pass axe at 375 and 1280 px.
func TestBrowserFailedResultSaysWhyFirst(t *testing.T) {
	e := pageEnv(t)
	b := testbrowser.New(t)
	b.OpenPage(e.url, token(t, "carol", "developer"))
	testbrowser.Eval[bool](b, `location.hash = '#/builds/WEB-NIGHTLY/5'; true`)
	b.Do(chromedp.WaitVisible(chromedp.CSS(`#failing-tests`)))
	order := testbrowser.Eval[[]string](b, `[...document.querySelectorAll('#why, #failing-jobs, #failing-tests, #commits, #jobs')].map(e => e.id)`)
	if strings.Join(order, " ") != "why failing-jobs failing-tests commits jobs" {
		t.Errorf("the failed result's parts in order: %v", order)
	}
	tests := b.Texts(`#failing-tests > li`)
	if len(tests) != 3 || !strings.Contains(tests[0], "com.example.nightly.ApiTest servesBuild") || !strings.Contains(tests[0], "expected:<200> but was:<500>") {
		t.Errorf("failing tests: %q", tests)
	}
	if testbrowser.Eval[bool](b, `document.querySelector('#failing-tests details').open`) {
		t.Error("a stack is open before it was asked for")
	}
	if c := b.Texts(`#commits li`); len(c) != 1 || !strings.Contains(c[0], "Change behind build 5") {
		t.Errorf("commits: %q", c)
	}
	b.CheckView("failed result")
	testbrowser.Eval[bool](b, `location.hash = '#/builds/PROJ-CORE'; true`)
	b.Do(chromedp.WaitVisible(chromedp.CSS(`#branches`)))
	rows := b.Texts(`#branches tbody tr`)
	if len(rows) != 2 || !strings.Contains(rows[0], "feature-login PROJ-CORE1") || !strings.Contains(rows[0], "✓ Passed") || !strings.Contains(rows[0], "#2") {
		t.Errorf("branches with their latest state: %q", rows)
	}
	b.CheckView("plan with branches")
	// A passed result leads with its duration and artifacts.
	testbrowser.Eval[bool](b, `location.hash = '#/builds/PROJ-CORE/6'; true`)
	b.Do(chromedp.WaitVisible(chromedp.CSS(`#jobs`)))
	if order := testbrowser.Eval[[]string](b, `[...document.querySelectorAll('#why, #artifacts, #jobs')].map(e => e.id)`); strings.Join(order, " ") != "artifacts jobs" {
		t.Errorf("the passed result's parts in order: %v", order)
	}
}
