package server_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/facade-dev/facade/accounts"
	"github.com/facade-dev/facade/internal/testbrowser"
)

// pageEnv is a server with the demo build history, grades and accounts,
// whose own origin (the page's) may write.
func pageEnv(t *testing.T) *env {
	t.Helper()
	e := newEnv(t, withBuilds(), withPageOrigin())
	seedGrades(t, e)
	seedAccounts(t, e)
	return e
}

// TestBrowserDeveloperDownloadsAnArtifact: projects -> plans -> results
// (newest first, state shown) -> artifacts, and the file arrives on disk
// byte for byte as the build server holds it.
func TestBrowserDeveloperDownloadsAnArtifact(t *testing.T) {
	e := pageEnv(t)
	b := testbrowser.New(t)
	b.OpenPage(e.url, token(t, "carol", "developer"))
	if pressed := testbrowser.Eval[string](b, `document.getElementById('tab-builds').getAttribute('aria-pressed')`); pressed != "true" {
		t.Fatalf("a developer starts on Builds; aria-pressed=%q", pressed)
	}
	b.Do(chromedp.Click(chromedp.ID("projects-load")),
		chromedp.Click(chromedp.CSS(`button[data-plan="PROJ-CORE"]`)))
	b.WaitText("#results-h", "newest first")
	rows := func() []string {
		return testbrowser.Eval[[]string](b, `Array.from(document.querySelectorAll('#results tbody tr'), r => r.textContent)`)
	}
	// Five per page, newest first, each with its state.
	if r := rows(); len(r) != 5 || !strings.HasPrefix(r[0], "#6") || !strings.Contains(r[0], "Successful") ||
		!strings.Contains(r[3], "Failed") || !strings.HasPrefix(r[4], "#2") {
		t.Fatalf("first page of PROJ-CORE: %q", r)
	}
	b.Do(chromedp.Click(chromedp.ID("results-older")))
	b.WaitText("#status", "1 result shown.")
	if r := rows(); len(r) != 1 || !strings.HasPrefix(r[0], "#1") {
		t.Fatalf("older page of PROJ-CORE: %q", r)
	}
	if hidden := testbrowser.Eval[bool](b, `document.getElementById('results-older').hidden`); !hidden {
		t.Error("an older page is offered after the oldest result")
	}
	b.Do(chromedp.Click(chromedp.ID("results-newer")))
	b.WaitText("#status", "5 results shown.")
	// Only visible plans are offered: carol may not see MOBILE.
	if n := testbrowser.Eval[int](b, `document.querySelectorAll('button[data-plan^="MOBILE-"]').length`); n != 0 {
		t.Errorf("%d MOBILE plans offered to carol", n)
	}

	file := b.Download(t.TempDir(),
		chromedp.Click(chromedp.CSS(`button[data-result="PROJ-CORE-6"]`)),
		chromedp.Click(chromedp.CSS(`button[data-artifact="core-service.jar"]`)))
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	want := e.do(req{method: "GET", path: "/browse/PROJ-CORE-6/artifact/shared/core-service.jar/", token: token(t, "carol", "developer")})
	if want.status != 200 || string(got) != want.body || !strings.HasPrefix(string(got), "PK") {
		t.Fatalf("downloaded %d bytes, want the %d-byte archive", len(got), len(want.body))
	}
	b.WaitText("#status", "Downloaded core-service.jar")
}

// TestBrowserProfessorChangesAGrade: a professor picks a class they teach,
// sees its students with their grades, sets one, changes another, and
// reads the grade's history.
func TestBrowserProfessorChangesAGrade(t *testing.T) {
	e := pageEnv(t)
	b := testbrowser.New(t)
	b.OpenPage(e.url, token(t, "bob", "professor"))
	b.Do(chromedp.WaitReady(chromedp.CSS(`#class-select option[value="english-101"]`)),
		chromedp.Click(chromedp.ID("class-show")),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-student="ghost"]`)))
	b.WaitText(`tr[data-student="alice"] .grade`, "B")
	b.WaitText(`tr[data-student="ghost"] .grade`, "none yet")
	b.CheckFitsPhone()
	b.CheckLabels()

	// Change alice's grade (PUT with If-Match) and set ghost's (POST).
	b.Do(chromedp.SetValue(chromedp.ID("grade-alice"), "A-"),
		chromedp.Click(chromedp.CSS(`button[data-save="alice"]`)))
	b.WaitText("#status", "alice now has A- (version 2)")
	b.Do(chromedp.SetValue(chromedp.ID("grade-ghost"), "C+"),
		chromedp.Click(chromedp.CSS(`button[data-save="ghost"]`)))
	b.WaitText("#status", "ghost now has C+ (version 1)")
	for student, want := range map[string]string{"alice": `"grade":"A-"`, "ghost": `"grade":"C+"`} {
		r := e.do(req{method: "GET", path: "/student/" + student + "/english/grade", token: token(t, "bob", "professor")})
		if !strings.Contains(r.body, want) || !strings.Contains(r.body, `"updated_by":"bob"`) {
			t.Errorf("%s after the page saved: %s", student, r.body)
		}
	}

	b.Do(chromedp.Click(chromedp.CSS(`button[data-history="alice"]`)))
	b.WaitText("#history-h", "History of alice")
	versions := testbrowser.Eval[[]string](b, `Array.from(document.querySelectorAll('#history li'), li => li.textContent)`)
	if len(versions) != 2 || !strings.Contains(versions[0], "Version 2: B → A- by bob") ||
		!strings.Contains(versions[1], "Version 1: set to B by seed") {
		t.Errorf("history: %q", versions)
	}
	if active := testbrowser.Eval[string](b, `document.activeElement.id`); active != "history-h" {
		t.Errorf("focus after opening the history is on %q, want the history heading", active)
	}
}

// TestBrowserConflictingEditIsShownAsConflict: someone else changes the
// grade after the page loaded it; saving answers 412 and the page says so
// with the current value, which it keeps.
func TestBrowserConflictingEditIsShownAsConflict(t *testing.T) {
	e := pageEnv(t)
	b := testbrowser.New(t)
	bob := token(t, "bob", "professor")
	b.OpenPage(e.url, bob)
	b.Do(chromedp.WaitReady(chromedp.CSS(`#class-select option[value="english-101"]`)),
		chromedp.Click(chromedp.ID("class-show")),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-student="alice"]`)))

	// Another session (same professor, another tab) changes it first.
	if r := e.do(req{method: "PUT", path: "/student/alice/english/grade", token: bob, body: `{"grade":"C"}`}); r.status != 200 {
		t.Fatalf("the other edit: %d %s", r.status, r.body)
	}
	b.Do(chromedp.SetValue(chromedp.ID("grade-alice"), "A"),
		chromedp.Click(chromedp.CSS(`button[data-save="alice"]`)))
	msg := b.WaitText("#error", "Conflict")
	for _, want := range []string{"changed this grade to C (version 2)", "Your A was not saved"} {
		if !strings.Contains(msg, want) {
			t.Errorf("conflict message %q does not say %q", msg, want)
		}
	}
	if status := testbrowser.Eval[string](b, `document.getElementById('error').dataset.status`); status != "412" {
		t.Errorf("error status %q, want 412", status)
	}
	b.WaitText(`tr[data-student="alice"] .grade`, "C")
	if r := e.do(req{method: "GET", path: "/student/alice/english/grade", token: bob}); !strings.Contains(r.body, `"grade":"C"`) {
		t.Fatalf("the conflicting save changed the grade: %s", r.body)
	}
	// Choosing again now sends the current version and succeeds.
	b.Do(chromedp.SetValue(chromedp.ID("grade-alice"), "A"),
		chromedp.Click(chromedp.CSS(`button[data-save="alice"]`)))
	b.WaitText("#status", "alice now has A (version 3)")
}

// TestBrowserTransferOnceDespiteDoubleClick: a double click on Transfer,
// then a third click on the unchanged form, move the money once; the
// third is answered as a replay of the first.
func TestBrowserTransferOnceDespiteDoubleClick(t *testing.T) {
	e := pageEnv(t)
	b := testbrowser.New(t)
	b.OpenPage(e.url, token(t, "alice", "customer"))
	b.Do(chromedp.SendKeys(chromedp.ID("account-ids"), "1001"),
		chromedp.Click(chromedp.ID("account-show")))
	b.WaitText(`section[data-account="1001"] .balance`, "250.00 EUR")
	b.CheckLabels()

	b.Do(chromedp.SendKeys(chromedp.ID("transfer-from"), "1001"),
		chromedp.SendKeys(chromedp.ID("transfer-to"), "2002"),
		chromedp.SendKeys(chromedp.ID("transfer-amount"), "12.50"),
		chromedp.DoubleClick(chromedp.ID("transfer-send")))
	b.WaitText("#transfer-result", "Done: 12.50 EUR from 1001 to 2002")
	b.WaitText(`section[data-account="1001"] .balance`, "237.50 EUR")
	first := testbrowser.Eval[string](b, `document.getElementById('transfer-result').dataset.transfer`)

	b.Do(chromedp.Click(chromedp.ID("transfer-send")))
	b.WaitText("#transfer-result", "Already done, not repeated")
	if again := testbrowser.Eval[string](b, `document.getElementById('transfer-result').dataset.transfer`); again != first {
		t.Errorf("the replay names transfer %q, the first was %q", again, first)
	}
	b.WaitNoRequestInFlight() // a stray request of the double click has landed before counting
	if got := balance(t, e, "1001"); got != "237.50" {
		t.Errorf("balance of 1001 is %s, want 237.50 (one transfer)", got)
	}
	if got := balance(t, e, "2002"); got != "112.50" {
		t.Errorf("balance of 2002 is %s, want 112.50", got)
	}
	entries, err := accounts.NewStore(e.rdb, quietLog).Statement(context.Background(), "1001", 10)
	if err != nil || len(entries) != 1 {
		t.Fatalf("statement of 1001: %d entries, %v", len(entries), err)
	}
	if rows := testbrowser.Eval[int](b, `document.querySelectorAll('section[data-account="1001"] tbody tr').length`); rows != 1 {
		t.Errorf("the page's statement shows %d transfers, want 1", rows)
	}

	// Changing the amount is a new attempt: a new key, a second transfer.
	b.Do(chromedp.SendKeys(chromedp.ID("transfer-amount"), "0"), // 12.500 is too precise for EUR
		chromedp.Click(chromedp.ID("transfer-send")))
	b.WaitText("#error", "The service did not accept what was sent.")
	if got := balance(t, e, "1001"); got != "237.50" {
		t.Errorf("a refused transfer moved money: %s", got)
	}
}

// TestBrowserRefusedActionShowsItsError: what the service refuses is
// shown in plain words with its status, and nothing changes.
func TestBrowserRefusedActionShowsItsError(t *testing.T) {
	e := pageEnv(t)
	b := testbrowser.New(t)
	b.OpenPage(e.url, token(t, "carol", "developer"))
	b.Do(chromedp.Click(chromedp.ID("tab-accounts")),
		chromedp.SendKeys(chromedp.ID("transfer-from"), "1001"),
		chromedp.SendKeys(chromedp.ID("transfer-to"), "2002"),
		chromedp.SendKeys(chromedp.ID("transfer-amount"), "5"),
		chromedp.Click(chromedp.ID("transfer-send")))
	msg := b.WaitText("#error", "You are not allowed to do this.")
	if !strings.Contains(msg, "Reference: ") {
		t.Errorf("no request id to quote: %q", msg)
	}
	if active := testbrowser.Eval[string](b, `document.activeElement.id`); active != "error" {
		t.Errorf("focus is on %q, want the error message", active)
	}
	if got := balance(t, e, "1001"); got != "250.00" {
		t.Errorf("a refused transfer moved money: %s", got)
	}
	// Reading an account carol may not view is refused in place.
	b.Do(chromedp.SendKeys(chromedp.ID("account-ids"), "1001"), chromedp.Click(chromedp.ID("account-show")))
	b.WaitText(`section[data-account="1001"]`, "You are not allowed to do this.")

	// A token that is not valid: 401 in plain words.
	b.OpenPage(e.url, "not-a-token-at-all-but-long-enough")
	b.Do(chromedp.Click(chromedp.ID("tab-builds")), chromedp.Click(chromedp.ID("projects-load")))
	b.WaitText("#error", "Your token is missing, expired or not valid.")
}

// TestBrowserPageFollowsOnlyItsOwnLinks: the token never leaves the
// page's origin, even when a link the page is handed points elsewhere.
func TestBrowserPageFollowsOnlyItsOwnLinks(t *testing.T) {
	e := pageEnv(t)
	b := testbrowser.New(t)
	b.OpenPage(e.url, token(t, "carol", "developer"))
	got := testbrowser.Eval[string](b, `(async () => { try { ownPath('https://elsewhere.example/x'); return 'followed'; } catch (e) { return e.message; } })()`)
	if !strings.Contains(got, "not followed") {
		t.Errorf("a link to another site: %q", got)
	}
	stored := testbrowser.Eval[map[string]string](b, `({session: sessionStorage.getItem('facade.token') || '', local: JSON.stringify(Object.keys(localStorage)), cookie: document.cookie})`)
	if stored["session"] == "" || stored["local"] != "[]" || stored["cookie"] != "" {
		t.Errorf("token storage: %v", stored)
	}
}

// TestBrowserKeyboardOnly: with the keyboard alone, in focus order, a
// developer pastes a token, opens the projects, a plan's results and a
// result's artifacts.
func TestBrowserKeyboardOnly(t *testing.T) {
	e := pageEnv(t)
	b := testbrowser.New(t)
	focused := func() string {
		return testbrowser.Eval[string](b, `document.activeElement.id || document.activeElement.textContent.trim()`)
	}
	press := func(keys, wantFocus string) {
		t.Helper()
		b.Do(chromedp.KeyEvent(keys))
		if got := focused(); got != wantFocus {
			t.Fatalf("after %q focus is on %q, want %q", keys, got, wantFocus)
		}
	}
	b.Do(chromedp.Navigate(e.url+"/ui/"), chromedp.WaitVisible(chromedp.CSS(`body[data-ready="true"] #token`)))
	press("\t", "Skip to content")
	press("\t", "token")
	b.Do(chromedp.KeyEvent(token(t, "carol", "developer")))
	press("\t", "token-use")
	b.Do(chromedp.KeyEvent("\r"), chromedp.WaitVisible(chromedp.ID("tabs")))
	press("\t", "token-forget")
	press("\t", "tab-builds")
	press("\t", "tab-grades")
	press("\t", "tab-accounts")
	press("\t", "projects-load")
	b.Do(chromedp.KeyEvent("\r"))
	b.WaitText("#projects", "Core Service")
	press("\t", "Core Service")
	b.Do(chromedp.KeyEvent("\r"))
	b.WaitText("#results-h", "newest first")
	if got := focused(); got != "results-h" {
		t.Fatalf("after opening the results focus is on %q", got)
	}
	press("\t", "3 artifacts")
	b.Do(chromedp.KeyEvent("\r"))
	b.WaitText("#artifacts-h", "Artifacts of PROJ-CORE-6")
	if got := focused(); got != "artifacts-h" {
		t.Fatalf("after opening the artifacts focus is on %q", got)
	}
}
