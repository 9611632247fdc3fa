// Package testbrowser drives a real headless Chromium (Debian's chromium
// package; bash .ci/run installs it) for the tests of the page at /ui/,
// through chromedp. Under CI=true a missing chromium fails the test;
// elsewhere the test is skipped with a note. When a browser test fails, a
// screenshot of the tab is kept in the test's artifact directory (go test
// -artifacts -outputdir DIR keeps it; .ci/run does) and the page's console
// errors are logged. Anything the page's Content-Security-Policy blocks
// fails the test: the page must work under its strict policy.
package testbrowser

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Wait bounds every step and every wait. Only a failing test waits it out;
// a loaded 2-core machine took over 15 s to inject axe-core's 500 KB.
const Wait = 60 * time.Second

// PhoneWidth is the window the tests use: the page must work at phone width.
const PhoneWidth, PhoneHeight = 390, 844

func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is not installed: the browser tests need it (bash .ci/run installs Debian's chromium)")
	}
	t.Skip("chromium is not installed; the browser tests run under bash .ci/run, which installs it")
	return ""
}

// Tab is one headless Chromium with one tab, for one test. Ctx is the
// tab's chromedp context, for actions and events the helpers do not cover.
type Tab struct {
	T   *testing.T
	Ctx context.Context

	mu        sync.Mutex
	console   []string                  // console errors and uncaught exceptions of the page
	inflight  map[network.RequestID]int // requests sent minus requests ended, by id
	urls      sync.Map                  // network.RequestID -> the URL it asked for, for failures
	metrics   map[string]float64
	measuring bool // Performance metrics enabled, in thread time (MainThreadTime)
}

// New starts Chromium at phone width with a fresh profile; it stops when
// the test ends.
func New(t *testing.T) *Tab {
	t.Helper()
	path := chromiumPath(t)
	profile := t.TempDir()
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(path),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(PhoneWidth, PhoneHeight),
	)
	ctx, cancel := chromedp.NewContext(actx)
	b := &Tab{T: t, Ctx: ctx}
	// The first action starts the browser; its context is the browser's
	// whole life, so it gets no timeout of its own.
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		cancelAlloc()
		t.Fatalf("starting chromium: %v", err)
	}
	go collect(b, runtime.ConsoleAPICalled, func(ev runtime.EventConsoleAPICalled) string {
		if ev.Type != runtime.ConsoleAPICalledTypeError && ev.Type != runtime.ConsoleAPICalledTypeWarning {
			return ""
		}
		var parts []string
		for _, a := range ev.Args {
			parts = append(parts, a.Description+string(a.Value))
		}
		return "console " + string(ev.Type) + ": " + strings.Join(parts, " ")
	})
	go collect(b, runtime.ExceptionThrown, func(ev runtime.EventExceptionThrown) string {
		msg := ev.ExceptionDetails.Text
		if ex := ev.ExceptionDetails.Exception; ex != nil {
			msg += " " + ex.Description
		}
		return "exception: " + msg
	})
	// What Chromium itself logs to the console: a resource that failed to
	// load (a 401, a missing favicon), a violation.
	go collect(b, cdplog.EntryAdded, func(ev cdplog.EventEntryAdded) string {
		if ev.Entry == nil || ev.Entry.Level != cdplog.EntryLevelError {
			return ""
		}
		return "log error: " + ev.Entry.Text + " " + ev.Entry.URL
	})
	b.inflight = map[network.RequestID]int{}
	go track(b, network.RequestWillBeSent, func(ev network.EventRequestWillBeSent) (network.RequestID, int) {
		if ev.RedirectResponse != nil { // the same request id, going on
			return ev.RequestID, 0
		}
		// Only the page's own calls (fetch, XHR) count: a navigation that a
		// later one replaced ends with no event at all.
		if ev.Type != network.ResourceTypeFetch && ev.Type != network.ResourceTypeXHR {
			return ev.RequestID, 0
		}
		b.urls.Store(ev.RequestID, ev.Request.URL)
		return ev.RequestID, 1
	})
	go track(b, network.LoadingFinished, func(ev network.EventLoadingFinished) (network.RequestID, int) { return ev.RequestID, -1 })
	go track(b, network.LoadingFailed, func(ev network.EventLoadingFailed) (network.RequestID, int) { return ev.RequestID, -1 })
	// A headless window is at least 500px wide; emulate the phone's.
	b.Do(chromedp.EmulateViewport(PhoneWidth, PhoneHeight, chromedp.EmulateMobile), reportCSPViolations, enableNetwork, enableLog)
	t.Cleanup(func() {
		checkCSP(b)
		if t.Failed() {
			keepScreenshot(b)
			b.mu.Lock()
			for _, c := range b.console {
				if !strings.Contains(c, marker) {
					t.Log(c)
				}
			}
			b.mu.Unlock()
		}
		cancel()
		cancelAlloc()
	})
	return b
}

func keepScreenshot(b *Tab) {
	ctx, cancel := context.WithTimeout(b.Ctx, 5*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.T.Logf("no screenshot: %v", err)
		return
	}
	path := filepath.Join(b.T.ArtifactDir(), "screenshot.png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.T.Logf("no screenshot: %v", err)
		return
	}
	b.T.Logf("screenshot of the failing page: %s", path)
}

// Do runs steps, failing the test on the first error.
func (b *Tab) Do(steps ...chromedp.Action[chromedp.Void]) {
	b.T.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, Wait)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.T.Fatalf("browser: %v", err)
	}
}

// Eval runs a JavaScript expression (awaiting a promise) in the page.
func Eval[T any](b *Tab, js string) T {
	b.T.Helper()
	return evalWithin[T](b, Wait, js)
}

// evalWithin is Eval with its own time budget, for work that grows with
// the page (axe-core over a 10,000-line log).
func evalWithin[T any](b *Tab, budget time.Duration, js string) T {
	b.T.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, budget)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
	if err != nil {
		b.T.Fatalf("evaluating %q: %v", js, err)
	}
	return v
}

// WaitText waits until the text of the element that css selects contains
// want, and returns that text.
func (b *Tab) WaitText(css, want string) string {
	b.T.Helper()
	deadline := time.Now().Add(Wait)
	// No-break spaces (currency formats use them) read as spaces.
	js := fmt.Sprintf(`((document.querySelector(%q) || {}).textContent || "").replace(/\u00a0/g, " ")`, css)
	for {
		got := Eval[string](b, js)
		if strings.Contains(got, want) {
			return got
		}
		if time.Now().After(deadline) {
			b.T.Fatalf("%s says %q, want it to contain %q", css, got, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// OpenPage loads the page and signs in with token through "use a token".
func (b *Tab) OpenPage(baseURL, token string) {
	b.T.Helper()
	b.Do(chromedp.Navigate(baseURL + "/ui/"))
	b.UseToken(token)
}

// UseToken signs in on the page's sign-in screen with a pasted token and
// waits until the page shows who is signed in.
func (b *Tab) UseToken(token string) {
	b.T.Helper()
	b.Do(
		chromedp.WaitVisible(chromedp.CSS(`body[data-ready="true"] #signin`)),
	)
	Eval[bool](b, `document.getElementById('token-details').open = true`)
	b.Do(
		chromedp.SetValue(chromedp.ID("token"), token),
		chromedp.Click(chromedp.ID("token-use")),
		chromedp.WaitVisible(chromedp.ID("tabs")),
	)
	if loc := Eval[string](b, `location.href`); strings.Contains(loc, token[:20]) {
		b.T.Fatalf("the token is in the address: %s", loc)
	}
	b.CheckFitsPhone()
}

// CheckFitsPhone fails when the page is wider than the phone-width window.
func (b *Tab) CheckFitsPhone() {
	b.T.Helper()
	if w := Eval[int](b, `document.documentElement.scrollWidth - window.innerWidth`); w > 0 {
		b.T.Errorf("the page is %dpx wider than a %dpx phone screen", w, PhoneWidth)
	}
}

// Download lets the tab save files into dir, runs the steps that start a
// download and returns the path of the finished file.
func (b *Tab) Download(dir string, steps ...chromedp.Action[chromedp.Void]) string {
	b.T.Helper()
	progress := chromedp.Events(b.Ctx, browser.DownloadProgress)
	allow := chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		events := true
		_, err := chromedp.Call(ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
			Behavior: browser.SetDownloadBehaviorBehaviorAllowAndName, DownloadPath: dir, EventsEnabled: &events,
		})
		return err
	})
	b.Do(append([]chromedp.Action[chromedp.Void]{allow}, steps...)...)
	timeout := time.AfterFunc(Wait, func() { _ = chromedp.Cancel(b.Ctx) })
	defer timeout.Stop()
	for ev, err := range progress {
		switch {
		case err != nil:
			b.T.Fatalf("waiting for the download: %v", err)
		case ev.State == browser.DownloadProgressStateCompleted:
			return filepath.Join(dir, ev.GUID)
		case ev.State == browser.DownloadProgressStateCanceled:
			b.T.Fatal("the download was cancelled")
		}
	}
	b.T.Fatal("no download")
	return ""
}

// CheckLabels fails when a visible form control has no label, or a button
// no accessible text: a screen reader would announce it as nothing.
func (b *Tab) CheckLabels() {
	b.T.Helper()
	unlabelled := Eval[[]string](b, `Array.from(document.querySelectorAll('input, select, textarea, button'))
		.filter(e => e.offsetParent !== null)
		.filter(e => e.tagName === 'BUTTON' ? e.textContent.trim() === '' && !e.getAttribute('aria-label') : e.labels.length === 0)
		.map(e => e.outerHTML.slice(0, 80))`)
	if len(unlabelled) > 0 {
		b.T.Errorf("controls without a label: %q", unlabelled)
	}
}
