package server_test

import (
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/facade-dev/facade/internal/testbrowser"

	"github.com/facade-dev/facade/internal/testredis"
)

// TestBrowserErrorsInPlainWords: what the API refuses reaches the person
// as a plain sentence (plus the service's fixed detail): 404, 409 (someone
// created the grade first), 422, 429 with its wait, and 503 with its wait.
func TestBrowserErrorsInPlainWords(t *testing.T) {
	e := pageEnv(t)
	limited := newEnv(t, withRateLimit(1), withPageOrigin())
	seedAccounts(t, limited)
	downRedis := testredis.Start(t, testredis.Options{})
	down := newEnv(t, withRedis(downRedis.Client(t)), withPageOrigin())
	downRedis.Stop()
	b := testbrowser.New(t)
	bob := token(t, "bob", "professor")

	// 404: ghost is enrolled but has no grade, so no history.
	b.OpenPage(e.url, bob)
	b.Do(chromedp.WaitReady(chromedp.CSS(`#class-select option[value="english-101"]`)),
		chromedp.Click(chromedp.ID("class-show")),
		chromedp.Click(chromedp.CSS(`button[data-history="ghost"]`)))
	b.WaitText("#error", "History of ghost: Not found.")

	// 409: someone else creates ghost's grade while the page shows none.
	if r := e.do(req{method: "POST", path: "/student/ghost/english/grade", token: bob, body: `{"grade":"D"}`}); r.status != 201 {
		t.Fatalf("the other create: %d", r.status)
	}
	b.Do(chromedp.SetValue(chromedp.ID("grade-ghost"), "A"),
		chromedp.Click(chromedp.CSS(`button[data-save="ghost"]`)))
	b.WaitText("#error", "Conflict: bob changed this grade to D (version 1)")
	b.WaitText(`tr[data-student="ghost"] .grade`, "D")

	// 422: more than the balance.
	b.OpenPage(e.url, token(t, "alice", "customer"))
	b.Do(chromedp.Click(chromedp.ID("tab-accounts")),
		chromedp.SendKeys(chromedp.ID("transfer-from"), "1001"),
		chromedp.SendKeys(chromedp.ID("transfer-to"), "2002"),
		chromedp.SendKeys(chromedp.ID("transfer-amount"), "1000"),
		chromedp.Click(chromedp.ID("transfer-send")))
	b.WaitText("#error", "This cannot be done. (The source account has insufficient funds.)")

	// 429: many reads at once past a limit of one per second.
	b.OpenPage(limited.url, token(t, "alice", "customer"))
	b.Do(chromedp.Click(chromedp.ID("tab-accounts")),
		chromedp.SendKeys(chromedp.ID("account-ids"), "1001 1001 1001 1001 1001 1001"),
		chromedp.Click(chromedp.ID("account-show")))
	b.WaitText("#account-cards", "Too many requests in a short time. Wait 1 second and try again.")

	// 503: the data store is down.
	b.OpenPage(down.url, token(t, "alice", "customer"))
	b.Do(chromedp.Click(chromedp.ID("tab-accounts")),
		chromedp.SendKeys(chromedp.ID("account-ids"), "1001"),
		chromedp.Click(chromedp.ID("account-show")))
	b.WaitText("#account-cards", "The service is temporarily unavailable. Wait")
}
