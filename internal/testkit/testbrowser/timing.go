package testbrowser

import (
	"context"
	"strconv"
	"sync"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/performance"
	"github.com/chromedp/chromedp"
)

// Timing measures what a tab's page costs: its long tasks, the time
// between two of its marks, its main thread's CPU time, and requests
// held back to see what it draws before they arrive (b.Timing()).
type Timing struct{ b *Tab }

// Timing answers the tab's measurements.
func (b *Tab) Timing() Timing { return Timing{b} }

// WatchLongTasks makes every document the tab loads from now on record
// its long tasks (main-thread tasks over 50 ms, PerformanceObserver
// 'longtask') from its first script on, for LongestTask. Call it before
// navigating.
func (m Timing) WatchLongTasks() {
	b := m.b
	b.T.Helper()
	b.Do(chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
			Source: `window.testbrowserLongTasks = [];
				new PerformanceObserver(l => window.testbrowserLongTasks.push(...l.getEntries().map(e => ({start: e.startTime, duration: e.duration}))))
					.observe({type: 'longtask', buffered: true});`,
		})
		return err
	}))
}

// LongestTask is the longest task (ms) of the document since it loaded,
// 0 when none took over 50 ms (WatchLongTasks must have been called).
func (m Timing) LongestTask() float64 {
	b := m.b
	b.T.Helper()
	return Eval[float64](b, `Math.max(0, ...(window.testbrowserLongTasks || []).map(e => e.duration))`)
}

// LongestTaskSince is the longest task (ms) that began at or after the
// page's last performance mark named mark (0 when none took over 50 ms):
// what drawing one view cost, without the page's load before it.
func (m Timing) LongestTaskSince(mark string) float64 {
	b := m.b
	b.T.Helper()
	return Eval[float64](b, `(() => {
		const m = performance.getEntriesByName(`+strconv.Quote(mark)+`).at(-1);
		const from = m ? m.startTime : 0;
		return Math.max(0, ...(window.testbrowserLongTasks || []).filter(e => e.start + e.duration >= from).map(e => e.duration));
	})()`)
}

// Since is the time (ms) from the page's last performance mark named
// from to its last one named to, or -1 while either is missing.
func (m Timing) Since(from, to string) float64 {
	b := m.b
	b.T.Helper()
	return Eval[float64](b, `(() => {
		const last = n => performance.getEntriesByName(n).at(-1);
		const a = last(`+strconv.Quote(from)+`), z = last(`+strconv.Quote(to)+`);
		return a && z ? z.startTime - a.startTime : -1;
	})()`)
}

// Hold keeps every request of the page whose URL matches pattern (the
// DevTools Fetch pattern: * any run, ? one character, \ escapes) from
// leaving the browser until the returned release is called, which lets
// the held ones and every later one go: what a page draws before a slow
// answer arrives can be checked for real. Call it before navigating.
func (m Timing) Hold(pattern string) (release func()) {
	b := m.b
	b.T.Helper()
	var (
		mu       sync.Mutex
		held     []fetch.RequestID
		released bool
	)
	goOn := func(id fetch.RequestID) {
		ctx, cancel := context.WithTimeout(b.Ctx, Wait)
		defer cancel()
		_, _ = chromedp.Call(ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: id})
	}
	go func() {
		for ev, err := range chromedp.Events(b.Ctx, fetch.RequestPaused) {
			if err != nil {
				return
			}
			mu.Lock()
			if !released {
				held = append(held, ev.RequestID)
				mu.Unlock()
				continue
			}
			mu.Unlock()
			goOn(ev.RequestID)
		}
	}()
	b.Do(chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Call(ctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: pattern}}})
		return err
	}))
	return func() {
		mu.Lock()
		released = true
		ids := held
		held = nil
		mu.Unlock()
		for _, id := range ids {
			goOn(id)
		}
	}
}

// MainThreadTime is the CPU time (ms) the page's main thread has spent
// on tasks since the tab started measuring: thread time, not wall time,
// so a machine busy with other work stretches it far less than a
// PerformanceObserver's durations. The first call starts the measuring
// (and answers close to 0); compare two calls around a step.
func (m Timing) MainThreadTime() float64 {
	b := m.b
	b.T.Helper()
	var ms float64
	b.Do(chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		if !b.measuring {
			if _, err := chromedp.Call(ctx, performance.Enable, performance.EnableParams{TimeDomain: performance.EnableTimeDomainThreadTicks}); err != nil {
				return err
			}
			b.measuring = true
		}
		m, err := chromedp.Call(ctx, performance.GetMetrics, cdp.Empty{})
		if err != nil {
			return err
		}
		for _, x := range m.Metrics {
			if x.Name == "TaskDuration" {
				ms = x.Value * 1000
			}
		}
		return nil
	}))
	return ms
}
