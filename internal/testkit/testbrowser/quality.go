package testbrowser

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// Widths the page is checked at: a small phone and a laptop.
const (
	NarrowWidth = 375
	WideWidth   = 1280
)

// SetWidth resizes the tab's viewport (phone-like below 600px).
func (b *Tab) SetWidth(w int) {
	b.T.Helper()
	if w < 600 {
		b.Do(chromedp.EmulateViewport(int64(w), PhoneHeight, chromedp.EmulateMobile))
		return
	}
	b.Do(chromedp.EmulateViewport(int64(w), 800))
}

// axeSource is axe-core's axe.min.js, installed by npm into axe/ beside
// this file (bash .ci/run does it: npm install axe-core@4.14.1).
var axeSource = sync.OnceValues(func() (string, error) {
	_, here, _, _ := runtime.Caller(0)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(here), "axe", "node_modules", "axe-core", "axe.min.js"))
	return string(b), err
})

// CheckAxe runs axe-core (WCAG 2.0/2.1 A and AA rules) on the page as it
// stands and fails the test for every violation. Without axe-core
// installed the check fails under CI=true and is reported and skipped
// elsewhere.
func (b *Tab) CheckAxe(view string) {
	b.T.Helper()
	src, err := axeSource()
	if err != nil {
		if os.Getenv("CI") == "true" {
			b.T.Fatalf("axe-core is not installed (bash .ci/run installs it into internal/testkit/testbrowser/axe): %v", err)
		}
		b.T.Logf("axe-core not installed, accessibility check of %s skipped (bash .ci/run installs it)", view)
		return
	}
	if !Eval[bool](b, `typeof axe === 'object'`) {
		// Injected through the debugger, which the page's CSP does not govern.
		ctx, cancel := context.WithTimeout(b.Ctx, Wait)
		defer cancel()
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](src+";true")); err != nil {
			b.T.Fatalf("injecting axe-core: %v", err)
		}
	}
	// axe's time grows with the page: a 10,000-line log is tens of
	// thousands of nodes, and a busy machine stretches that past Wait.
	violations := evalWithin[[]string](b, 5*Wait, `axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']}})
		.then(r => r.violations.map(v => v.id + ': ' + v.help + ' — ' + v.nodes.map(n => n.target.join(' ')).slice(0, 5).join(', ')))`)
	for _, v := range violations {
		b.T.Errorf("axe, %s: %s", view, v)
	}
}

// CheckFits fails when the page scrolls sideways or a visible control
// lies outside the window (controls inside a .scroll box, which scrolls
// on its own and takes focus, are reachable by scrolling it).
func (b *Tab) CheckFits(view string) {
	b.T.Helper()
	if w := Eval[int](b, `document.documentElement.scrollWidth - window.innerWidth`); w > 0 {
		b.T.Errorf("%s: the page is %dpx wider than the window", view, w)
	}
	out := Eval[[]string](b, `Array.from(document.querySelectorAll('a[href], button, input, select, textarea, summary, [tabindex="0"]'))
		.filter(e => e.offsetParent !== null && !e.closest('.scroll, dialog:not([open])') && !e.classList.contains('skip')) // the skip link shows when focused
		.filter(e => { const r = e.getBoundingClientRect(); return r.left < -1 || r.right > window.innerWidth + 1; })
		.map(e => e.outerHTML.slice(0, 80))`)
	for _, o := range out {
		b.T.Errorf("%s: a control lies outside the %dpx window: %s", view, Eval[int](b, `window.innerWidth`), o)
	}
}

// CheckView runs every quality check on the view on screen, at both
// widths: axe-core, no sideways scrolling, every control in reach,
// every control labelled.
func (b *Tab) CheckView(view string) {
	b.T.Helper()
	for _, w := range []int{NarrowWidth, WideWidth} {
		b.SetWidth(w)
		b.CheckFits(fmt.Sprintf("%s at %dpx", view, w))
		b.CheckLabels()
	}
	b.CheckAxe(view)
	b.SetWidth(PhoneWidth)
}

// Screenshot saves a PNG of the whole page to path (a directory is made).
func (b *Tab) Screenshot(path string) {
	b.T.Helper()
	screenshot(b, path, chromedp.FullScreenshot(100))
}

// ScreenshotWindow saves a PNG of what the window shows, for a page too
// long to take whole (thousands of rows, drawn only near the screen).
func (b *Tab) ScreenshotWindow(path string) {
	b.T.Helper()
	screenshot(b, path, chromedp.CaptureScreenshot())
}

func screenshot(b *Tab, path string, take chromedp.Action[[]byte]) {
	b.T.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, Wait)
	defer cancel()
	png, err := chromedp.Run(ctx, take)
	if err != nil {
		b.T.Fatalf("screenshot: %v", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		b.T.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.T.Fatal(err)
	}
}

// Press sends keys to the focused element, as a person at the keyboard.
func (b *Tab) Press(keys ...string) {
	b.T.Helper()
	for _, k := range keys {
		b.Do(chromedp.KeyEvent(k))
	}
}

// TabTo presses Tab (only) until the focused element matches css, and
// fails when 80 presses do not get there: what a keyboard user can reach.
func (b *Tab) TabTo(css string) {
	b.T.Helper()
	js := fmt.Sprintf(`!!document.activeElement && document.activeElement.matches(%q)`, css)
	for range 80 {
		if Eval[bool](b, js) {
			return
		}
		b.Do(chromedp.KeyEvent(kb.Tab))
	}
	b.T.Fatalf("80 presses of Tab do not reach %s (focus on %s)", css,
		Eval[string](b, `document.activeElement ? document.activeElement.outerHTML.slice(0, 80) : 'nothing'`))
}

// TypeText types into the focused element, key by key.
func (b *Tab) TypeText(text string) {
	b.T.Helper()
	b.Do(chromedp.KeyEvent(text))
}

// WaitFor polls a JavaScript condition until it is true.
func (b *Tab) WaitFor(js string) {
	b.T.Helper()
	deadline := time.Now().Add(Wait)
	for !Eval[bool](b, js) {
		if time.Now().After(deadline) {
			b.T.Fatalf("still false after %s: %s", Wait, js)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Texts returns the text of every element css selects (no-break spaces
// as spaces).
func (b *Tab) Texts(css string) []string {
	b.T.Helper()
	return Eval[[]string](b, fmt.Sprintf(`Array.from(document.querySelectorAll(%q), e => e.textContent.replace(/\u00a0/g, " ").trim())`, css))
}

// BodyText is the text on screen.
func (b *Tab) BodyText() string {
	b.T.Helper()
	return strings.TrimSpace(Eval[string](b, `document.body.innerText.replace(/\u00a0/g, " ")`))
}
