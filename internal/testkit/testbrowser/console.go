package testbrowser

// What the page logs and sends: its console, its requests in flight, and
// the Content-Security-Policy violations that fail a test.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

var enableLog = chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
	_, err := chromedp.Call(ctx, cdplog.Enable, cdp.Empty{})
	return err
})

// ConsoleErrors returns the console's errors and warnings so far, and
// what Chromium logged as errors (failed loads), in order: a person's
// console stays clean on every view (docs/contract.md §9).
func (b *Tab) ConsoleErrors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, c := range b.console {
		if !strings.Contains(c, marker) {
			out = append(out, c)
		}
	}
	return out
}

var enableNetwork = chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
	_, err := chromedp.Call(ctx, network.Enable, network.EnableParams{})
	return err
})

// track counts requests started and ended (events of three kinds arrive
// on three goroutines, so an end may be counted before its start).
func track[E any](b *Tab, ev cdp.Event[E], delta func(E) (network.RequestID, int)) {
	for e, err := range chromedp.Events(b.Ctx, ev) {
		if err != nil {
			return
		}
		id, d := delta(e)
		b.mu.Lock()
		if b.inflight[id] += d; b.inflight[id] == 0 {
			delete(b.inflight, id)
		}
		b.mu.Unlock()
	}
}

// WaitNoRequestInFlight waits until every call the page's script started
// (fetch or XHR) has ended (loaded or failed), so a test counts what the server did only once
// nothing the page sent can still arrive.
func (b *Tab) WaitNoRequestInFlight() {
	b.T.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		b.mu.Lock()
		var open []string
		for id, c := range b.inflight {
			if c > 0 {
				u, _ := b.urls.Load(id)
				open = append(open, fmt.Sprint(u))
			}
		}
		b.mu.Unlock()
		if len(open) == 0 {
			return
		}
		if time.Now().After(deadline) {
			b.T.Fatalf("requests of the page still in flight after 10 s: %q", open)
		}
	}
}

// cspViolation starts the console line of a Content-Security-Policy
// violation in any page the tab loads.
const cspViolation = "CSP violation:"

// reportCSPViolations makes every document the tab loads report what its
// Content-Security-Policy blocked (an inline style or script, a call to
// another origin) as a console error, which checkCSP turns into a test
// failure: the page must work under its strict policy, not just load.
var reportCSPViolations = chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
	_, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
		Source: `document.addEventListener('securitypolicyviolation', e =>
			console.error(` + fmt.Sprintf("%q", cspViolation) + ` + ' ' + e.effectiveDirective + ' blocked ' + (e.blockedURI || 'inline') +
				' at ' + e.sourceFile + ':' + e.lineNumber))`,
	})
	return err
})

// checkCSP fails the test for every CSP violation seen. A marker logged
// last, once collected, says every earlier console event has been.
func checkCSP(b *Tab) {
	// 30 s, not 2: on a loaded machine the events arrive late, and a check
	// made before they do would pass a page that broke its policy.
	ctx, cancel := context.WithTimeout(b.Ctx, Wait+15*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`console.error(`+fmt.Sprintf("%q", marker)+`), true`)); err == nil {
		for !sawConsole(b, marker) && ctx.Err() == nil {
			time.Sleep(10 * time.Millisecond)
		}
		if !sawConsole(b, marker) {
			b.T.Errorf("the console events never all arrived: the Content-Security-Policy check is incomplete")
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range b.console {
		if strings.Contains(c, cspViolation) {
			b.T.Errorf("the page broke its Content-Security-Policy: %s", c)
		}
	}
}

// marker is logged last by checkCSP; it is not the page's.
const marker = "testbrowser: console collected"

func sawConsole(b *Tab, text string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.ContainsFunc(b.console, func(c string) bool { return strings.Contains(c, text) })
}

// collect keeps what line makes of each event of one kind (empty: skip).
func collect[E any](b *Tab, ev cdp.Event[E], line func(E) string) {
	for e, err := range chromedp.Events(b.Ctx, ev) {
		if err != nil {
			return
		}
		if l := line(e); l != "" {
			b.mu.Lock()
			b.console = append(b.console, l)
			b.mu.Unlock()
		}
	}
}
