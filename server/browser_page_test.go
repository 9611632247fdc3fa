package server_test

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/facade-dev/facade/grades"
	"github.com/facade-dev/facade/internal/testkit/testbrowser"
)

// The page's flows, one test per flow and user group, in a real headless
// Chromium against a real server (docs/contract.md §9). Every view a test
// reaches is checked with CheckView: axe-core (WCAG 2.1 AA) without a
// violation, no sideways scrolling and every control within reach at
// 375px and 1280px, every control labelled.

// pageEnv is a server with the demo build history, grades and accounts,
// whose own origin (the page's) may write.
func pageEnv(t *testing.T) *env {
	t.Helper()
	e := newEnv(t, withBuilds(), withPageOrigin())
	seedGrades(t, e)
	seedAccounts(t, e)
	return e
}

func click(css string) chromedp.Action[chromedp.Void] { return chromedp.Click(chromedp.CSS(css)) }
func visible(css string) chromedp.Action[chromedp.Void] {
	return chromedp.WaitVisible(chromedp.CSS(css))
}

// TestBrowserSignInScreenHidesTheTabs: before sign-in there are no tabs
// (hidden really hides them), and a bad token signs nobody in.
func TestBrowserSignInScreenHidesTheTabs(t *testing.T) {
	e := pageEnv(t)
	b := testbrowser.New(t)
	b.Do(chromedp.Navigate(e.url+"/ui/#/grades/english-101"), visible(`body[data-ready="true"] #signin`))
	if d := testbrowser.Eval[string](b, `getComputedStyle(document.getElementById('tabs')).display`); d != "none" {
		t.Errorf("tabs before sign-in: display %q", d)
	}
	b.CheckView("sign-in")
	// Without an identity provider configured, no sign-in button leads to
	// an error: only "use a token" is offered.
	if testbrowser.Eval[bool](b, `!document.getElementById('signin-sso').hidden`) {
		t.Error("a sign-in button is offered without sign-in configured")
	}
	testbrowser.Eval[bool](b, `document.getElementById('token-details').open = true`)
	b.Do(chromedp.SetValue(chromedp.ID("token"), token(t, "bob", "professor")+"x"), chromedp.Click(chromedp.ID("token-use")))
	b.WaitText("#error", "token")
	if msg := b.Texts("#error")[0]; !strings.Contains(msg, "not signed by this service") && !strings.Contains(msg, "was not accepted") {
		t.Errorf("a bad token: %q", msg)
	}
	if who := b.Texts("#who")[0]; who != "Not signed in." {
		t.Errorf("after a bad token the page says %q", who)
	}
	testbrowser.Eval[bool](b, `document.getElementById('token').value = '', true`)
	b.Do(chromedp.Click(chromedp.ID("token-use")))
	b.WaitText("#error", "Paste a token first.")
}

// TestBrowserDeveloperFollowsABuild: the overview shows each plan's latest
// state (word and icon), a plan's results carry state, duration, time with
// the year on hover and tests; a result shows its jobs and artifacts, an
// artifact downloads byte for byte, and a job's log is read in the page.
// Every view has its own address; back and forward work.
func TestBrowserDeveloperFollowsABuild(t *testing.T) {
	e := pageEnv(t)
	carol := token(t, "carol", "developer")
	b := testbrowser.New(t)
	b.OpenPage(e.url, carol)
	b.Do(visible(`tr[data-plan="PROJ-CORE"]`))
	if got := b.Texts(`tr[data-plan="PROJ-CORE"] td`); len(got) != 5 || got[1] != "Core Service PROJ-CORE" || got[2] != "✓ Passed" || got[3] != "#6" {
		t.Errorf("PROJ-CORE at a glance: %q", got)
	}
	if got := b.Texts(`tr[data-plan="WEB-NIGHTLY"] td`); len(got) != 5 || got[2] != "✗ Failed" {
		t.Errorf("WEB-NIGHTLY at a glance: %q", got)
	}
	if n := len(b.Texts(`tr[data-plan^="MOBILE-"]`)); n != 0 {
		t.Errorf("%d MOBILE plans shown to carol", n)
	}
	b.CheckView("builds overview")

	b.Do(click(`tr[data-plan="PROJ-CORE"] td:nth-child(2) a`), visible(`#results`))
	if loc := testbrowser.Eval[string](b, `location.hash`); loc != "#/builds/PROJ-CORE" {
		t.Errorf("results address %q", loc)
	}
	if h := b.Texts("#results-h")[0]; !strings.HasPrefix(h, "Core Service PROJ-CORE") {
		t.Errorf("the plan page is titled %q, want its name first, key beside", h)
	}
	row := b.Texts(`tr[data-result="PROJ-CORE-3"] td`)
	if len(row) != 4 || row[1] != "✗ Failed" || !strings.Contains(row[2], "took 2 min") || !strings.Contains(row[3], "failed") {
		t.Errorf("result #3: %q", row)
	}
	hover := testbrowser.Eval[string](b, `document.querySelector('tr[data-result="PROJ-CORE-6"] time').title`)
	if !strings.Contains(hover, "2025") {
		t.Errorf("hovering the time shows %q, want the full date with the year", hover)
	}
	b.CheckView("plan results")

	b.Do(click(`tr[data-result="PROJ-CORE-6"] a`), visible(`#jobs`))
	if jobs := b.Texts(`#jobs tbody tr`); len(jobs) != 2 || !strings.Contains(jobs[0], "Default Job") || !strings.Contains(jobs[1], "Package") {
		t.Errorf("jobs of PROJ-CORE-6, by name: %q", jobs)
	}
	// Artifacts are links to the service's own download route, with size
	// and job.
	href := testbrowser.Eval[string](b, `document.querySelector('a[data-artifact="core-service.jar"]').getAttribute('href')`)
	if href != "/browse/PROJ-CORE-6/artifact/shared/core-service.jar/" {
		t.Errorf("the artifact links to %q", href)
	}
	if li := b.Texts(`#artifacts li`); len(li) == 0 || !strings.Contains(strings.Join(li, " "), "from Package") {
		t.Errorf("artifacts without their job: %q", li)
	}
	b.CheckView("result")
	// With a pasted token (no session cookie to ride on a link) the page
	// fetches the file for the person.
	file := b.Download(t.TempDir(), click(`a[data-artifact="core-service.jar"]`))
	got, err := os.ReadFile(file)
	want := e.do(req{method: "GET", path: "/browse/PROJ-CORE-6/artifact/shared/core-service.jar/", token: carol})
	if err != nil || string(got) != want.body || !strings.HasPrefix(string(got), "PK") {
		t.Fatalf("downloaded %d bytes (%v), want the %d-byte archive", len(got), err, len(want.body))
	}
	b.WaitText("#status", "Downloaded core-service.jar")
	if top := testbrowser.Eval[float64](b, `document.getElementById('status').getBoundingClientRect().bottom - window.innerHeight`); top > 1 {
		t.Errorf("the status line is %.0fpx below the window", top)
	}

	b.Do(click(`tr[data-job="JOB1"] a`))
	b.WaitText("#status", "Log of Default Job: 6 lines.")
	if log := b.Texts("#log")[0]; !strings.Contains(log, "PROJ-CORE-6 job JOB1: Compiling") {
		t.Errorf("the log in the page: %q", log)
	}
	b.CheckView("build log")

	// Back to the result, back to the results, forward to the result.
	b.Do(chromedp.NavigateBack(), visible(`#jobs`))
	b.Do(chromedp.NavigateBack(), visible(`#results`))
	b.Do(chromedp.NavigateForward(), visible(`#jobs`))
	// An address shared with someone else opens the same view; PKG kept
	// no log file, its log is read from the job result's logEntries.
	b2 := testbrowser.New(t)
	b2.Do(chromedp.Navigate(e.url + "/ui/#/builds/PROJ-CORE/6/log/PKG"))
	b2.UseToken(carol)
	b2.WaitText("#log-h", "Log of Package in Core Service #6")
	b2.WaitText("#status", "Log of Package: 6 lines.")
	if log := b2.Texts("#log")[0]; !strings.Contains(log, "PROJ-CORE-6 job PKG: Compiling") {
		t.Errorf("PKG's log (only in logEntries): %q", log)
	}
}

// TestBrowserResultPagesOlderAndNewer: ten results a page; older and
// newer are addresses.
func TestBrowserResultPagesOlderAndNewer(t *testing.T) {
	e := pageEnv(t)
	for n := 7; n <= 12; n++ {
		e.bamboo.AddResult("PROJ-CORE", n, "Successful")
	}
	b := testbrowser.New(t)
	b.Do(chromedp.Navigate(e.url + "/ui/#/builds/PROJ-CORE"))
	b.UseToken(token(t, "carol", "developer"))
	b.Do(visible(`#results-older`))
	if rows := b.Texts(`#results tbody tr`); len(rows) != 10 || !strings.HasPrefix(rows[0], "#12") {
		t.Fatalf("first page: %q", rows)
	}
	b.Do(click(`#results-older`), visible(`#results-newer`))
	if rows := b.Texts(`#results tbody tr`); len(rows) != 2 || !strings.HasPrefix(rows[0], "#2") {
		t.Fatalf("older page: %q", rows)
	}
	if n := len(b.Texts(`#results-older`)); n != 0 {
		t.Error("an older page is offered after the oldest result")
	}
	b.Do(chromedp.NavigateBack(), visible(`#results-older`))
}

// TestBrowserRunningBuildRefreshesItself: a running result asks again on
// its own, with If-None-Match once it has an ETag, until it is left.
func TestBrowserRunningBuildRefreshesItself(t *testing.T) {
	e := pageEnv(t)
	e.bamboo.AddResult("PROJ-CORE", 7, "Unknown")
	e.bamboo.SetInProgress("PROJ-CORE-7")
	b := testbrowser.New(t)
	var mu sync.Mutex
	var asked, conditional int
	ctx, stop := context.WithCancel(b.Ctx)
	defer stop()
	go func() {
		for ev, err := range chromedp.Events(ctx, network.RequestWillBeSent) {
			if err != nil {
				return
			}
			if strings.Contains(ev.Request.URL, "/result/PROJ-CORE-7") {
				mu.Lock()
				asked++
				if _, ok := ev.Request.Headers["If-None-Match"]; ok {
					conditional++
				}
				mu.Unlock()
			}
		}
	}()
	b.Do(chromedp.Navigate(e.url + "/ui/#/builds/PROJ-CORE/7"))
	b.UseToken(token(t, "carol", "developer"))
	b.WaitText("#result-h", "Running")
	b.WaitFor(`document.querySelector('#result-h') !== null`)
	count := func() (int, int) { mu.Lock(); defer mu.Unlock(); return asked, conditional }
	for n, _ := count(); n < 3; n, _ = count() {
		b.WaitFor(`new Promise(r => setTimeout(() => r(true), 500))`)
	}
	withETag := e.do(req{method: "GET", path: "/rest/api/latest/result/PROJ-CORE-7?expand=stages.stage.results.result,artifacts",
		token: token(t, "carol", "developer")}).header.Get("ETag") != ""
	if n, c := count(); withETag && c < n-1 {
		t.Errorf("%d of %d repeated requests carried If-None-Match", c, n-1)
	}
	b.Do(click(`.crumbs a[href="#/builds"]`), visible(`tr[data-plan="PROJ-CORE"]`))
	before, _ := count()
	b.WaitFor(`new Promise(r => setTimeout(() => r(true), 3500))`)
	if after, _ := count(); after != before {
		t.Errorf("the running build was asked about %d more times after leaving it", after-before)
	}
}

// TestBrowserProfessorChangesAGradeWithConfirmation: no grade is
// pre-selected; a careless click sends nothing; the confirmation says
// from what to what; cancel sends nothing; confirm saves and the history
// shows it.
func TestBrowserProfessorChangesAGradeWithConfirmation(t *testing.T) {
	e := pageEnv(t)
	bob := token(t, "bob", "professor")
	b := testbrowser.New(t)
	b.OpenPage(e.url, bob)
	b.Do(click(`#classes a`), visible(`tr[data-student="ghost"]`))
	b.WaitText(`tr[data-student="alice"] .grade`, "B")
	b.WaitText(`tr[data-student="ghost"] .grade`, "none yet")
	if v := testbrowser.Eval[string](b, `document.getElementById('grade-ghost').value`); v != "" {
		t.Errorf("ghost's grade control starts at %q, want nothing chosen", v)
	}
	b.CheckView("class")

	// Careless: Set… with nothing chosen.
	b.Do(click(`button[data-save="ghost"]`))
	b.WaitText("#error", "Choose a grade for ghost first.")
	if r := e.do(req{method: "GET", path: "/student/ghost/english/grade", token: bob}); r.status != 404 {
		t.Fatalf("a click without a choice wrote a grade: %d", r.status)
	}
	// Cancel sends nothing.
	b.Do(chromedp.SetValue(chromedp.ID("grade-alice"), "A-"), click(`button[data-save="alice"]`), visible(`#confirm`))
	b.WaitText("#confirm", "From B to A-.")
	b.CheckAxe("confirmation")
	b.Do(click(`#confirm-no`))
	b.WaitText("#status", "Nothing was changed.")
	// Confirm saves once.
	b.Do(click(`button[data-save="alice"]`), visible(`#confirm`), click(`#confirm-yes`))
	b.WaitText("#status", "alice's grade is now A-.")
	b.WaitText(`tr[data-student="alice"] .grade`, "A-")
	// The history beside the grade is redrawn with it.
	b.WaitText("#history-h", "History of alice's grade")
	b.WaitText("#history li", "B → A-, changed by bob")
	// The same grade again: nothing to send.
	b.Do(chromedp.SetValue(chromedp.ID("grade-alice"), "A-"), click(`button[data-save="alice"]`))
	b.WaitText("#status", "alice already has A-; nothing to change.")
	// Nothing reached the server but the one confirmed save: neither the
	// careless click, the cancel nor the same grade again sent a write.
	b.WaitNoRequestInFlight()
	if puts := strings.Count(e.logs.String(), `"method":"PUT"`) + strings.Count(e.logs.String(), `"method":"POST"`); puts != 1 {
		t.Errorf("%d writes reached the server, want 1 (the confirmed save)", puts)
	}

	// The history shown now is the one drawn beside the saved grade; the
	// link draws the page again, and for a moment no list at all. Marked,
	// the old list cannot pass for the new one.
	testbrowser.Eval[bool](b, `(document.getElementById('history').dataset.before = 'click', true)`)
	b.Do(click(`a[data-history="alice"]`))
	b.WaitText("#history-h", "History of alice")
	b.WaitText(`#history:not([data-before]) li:nth-child(2)`, "Version 1: B")
	if v := b.Texts("#history li"); len(v) != 2 || !strings.HasPrefix(v[0], "Version 2: B → A-, changed by bob, ") ||
		!strings.HasPrefix(v[1], "Version 1: B, recorded when the grades were loaded, ") || !strings.Contains(v[1], "20") {
		t.Errorf("history: %q", v)
	}
	if n := testbrowser.Eval[int](b, `document.querySelectorAll('ol#history').length`); n != 0 {
		t.Error("the history is a numbered list whose entries carry their own version numbers: numbered twice")
	}
	if loc := testbrowser.Eval[string](b, `location.hash`); loc != "#/grades/english-101/alice" {
		t.Errorf("history address: %q", loc)
	}
	b.CheckView("class with history")
}

// TestBrowserConflictIsExplained: someone changes the grade after the page
// read it; the page says who changed it to what, shows the current value
// and the refreshed history, and overwrites nothing.
func TestBrowserConflictIsExplained(t *testing.T) {
	e := pageEnv(t)
	bob := token(t, "bob", "professor")
	b := testbrowser.New(t)
	b.Do(chromedp.Navigate(e.url + "/ui/#/grades/english-101/alice"))
	b.UseToken(bob)
	b.WaitText("#history-h", "History of alice")
	if _, err := grades.NewStore(e.rdb, grades.Config{Log: quietLog}).Update(context.Background(), studentID("alice"), grades.SubjectEnglish, parsedGrade("D"), "frank", nil, nil); err != nil {
		t.Fatal(err)
	}
	b.Do(chromedp.SetValue(chromedp.ID("grade-alice"), "A"), click(`button[data-save="alice"]`), visible(`#confirm`), click(`#confirm-yes`))
	b.WaitText("#error", "while you were looking, frank changed alice's grade to D (version 2")
	b.WaitText(`tr[data-student="alice"] .grade`, "D")
	if v := b.Texts("#history li"); len(v) != 2 || !strings.HasPrefix(v[0], "Version 2: B → D, changed by frank") {
		t.Errorf("history after the conflict: %q", v)
	}
	if s := b.Texts("#status")[0]; strings.Contains(s, "Saving") {
		t.Errorf("status after the conflict: %q", s)
	}
	if r := e.do(req{method: "GET", path: "/student/alice/english/grade", token: bob}); !strings.Contains(r.body, `"grade":"D"`) {
		t.Errorf("the conflict overwrote: %s", r.body)
	}
	// Someone sets ghost's first grade meanwhile: POST answers 409.
	if _, err := grades.NewStore(e.rdb, grades.Config{Log: quietLog}).Create(context.Background(), studentID("ghost"), grades.SubjectEnglish, parsedGrade("C"), "frank", nil); err != nil {
		t.Fatal(err)
	}
	b.Do(chromedp.SetValue(chromedp.ID("grade-ghost"), "A"), click(`button[data-save="ghost"]`), visible(`#confirm`), click(`#confirm-yes`))
	b.WaitText("#error", "frank set ghost's grade to C (version 1")
}

// TestBrowserGradebookDownloadAndUpload: the download is the class as CSV;
// an upload shows its dry-run preview, writes nothing until applied, and
// then reports each row.
func TestBrowserGradebookDownloadAndUpload(t *testing.T) {
	e := pageEnv(t)
	bob := token(t, "bob", "professor")
	b := testbrowser.New(t)
	b.Do(chromedp.Navigate(e.url + "/ui/#/grades/english-101"))
	b.UseToken(bob)
	b.Do(visible(`tr[data-student="alice"]`))
	file := b.Download(t.TempDir(), click(`#book-download`))
	got, err := os.ReadFile(file)
	if err != nil || !strings.HasPrefix(string(got), "student_id,grade,version,updated_at,updated_by,posted\nalice,B,1,") {
		t.Fatalf("downloaded gradebook: %q %v", got, err)
	}
	csv := t.TempDir() + "/book.csv"
	if err := os.WriteFile(csv, []byte("student_id,grade,version\nalice,A,1\nghost,C+,\ndave,A,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b.Do(chromedp.SetUploadFiles(chromedp.ID("book-file"), []string{csv}), click(`#book-preview`))
	b.WaitText("#book-result h3", "Preview: nothing is saved yet: 2 would change")
	// It opens on the problem (dave is not in the class); "all" lists it
	// first, then the changes.
	if rows := b.Texts("#book-rows tbody tr"); len(rows) != 1 || !strings.Contains(rows[0], "Not a student of this class") {
		t.Errorf("preview's problems: %q", rows)
	}
	b.Do(click(`label[for="book-filter-all"]`))
	b.WaitFor(`document.querySelectorAll('#book-rows tbody tr').length === 3`)
	if rows := b.Texts("#book-rows tbody tr"); len(rows) != 3 || !strings.Contains(rows[0], "Not a student of this class") || !strings.Contains(rows[1], "B → A") {
		t.Errorf("preview rows: %q", rows)
	}
	b.CheckView("gradebook preview")
	if r := e.do(req{method: "GET", path: "/student/alice/english/grade", token: bob}); !strings.Contains(r.body, `"grade":"B"`) {
		t.Fatalf("the preview wrote: %s", r.body)
	}
	b.Do(click(`#book-apply`), visible(`#confirm`), click(`#confirm-yes`))
	b.WaitText("#book-result h3", "Applied: 2 changed")
	b.Do(click(`label[for="book-filter-changes"]`))
	b.WaitFor(`document.querySelectorAll('#book-rows tbody tr').length === 2`)
	if rows := b.Texts("#book-rows tbody tr"); len(rows) != 2 || !strings.Contains(rows[0], "Changed B → A") || strings.Contains(rows[0], "Change now") {
		t.Errorf("applied rows: %q", rows)
	}
	b.WaitText(`tr[data-student="ghost"] .grade`, "C+")
	b.WaitText(`tr[data-student="alice"] .grade`, "A")
}

// TestBrowserViewOnlyStaffSeeNoChangeControls: erin may view english-101
// only: no grade control, no upload, a note saying why; the download
// stays.
func TestBrowserViewOnlyStaffSeeNoChangeControls(t *testing.T) {
	e := pageEnv(t)
	b := testbrowser.New(t)
	b.Do(chromedp.Navigate(e.url + "/ui/#/grades/english-101"))
	b.UseToken(token(t, "erin", "professor"))
	b.Do(visible(`tr[data-student="alice"]`))
	if n := testbrowser.Eval[int](b, `document.querySelectorAll('#students select, #students button, #book-form').length`); n != 0 {
		t.Errorf("view-only erin sees %d change controls", n)
	}
	b.WaitText("#view-only", "changing them is for its teachers")
	b.Do(visible(`#book-download`))
	b.CheckView("view-only class")
}

// TestBrowserStudentSeesTheirGrade: a student lands on their own grade
// with its history, and on nothing else of grades.
func TestBrowserStudentSeesTheirGrade(t *testing.T) {
	e := pageEnv(t)
	b := testbrowser.New(t)
	b.OpenPage(e.url, token(t, "alice", "student"))
	b.WaitText("#own-grade", "English: B")
	b.WaitText("#own-grade-by", "Recorded when the grades were loaded on ")
	b.WaitText("#history-h", "How your grade changed")
	if text := b.BodyText(); strings.Contains(text, "seed") || strings.Contains(text, "History of alice") || strings.Contains(text, "Version") {
		t.Errorf("the student's page speaks of seeds, versions or herself in the third person:\n%s", text)
	}
	b.CheckView("student's grade")
	b.Do(chromedp.Navigate(e.url + "/ui/#/grades/english-101"))
	b.WaitText("#own-grade", "English: B") // no class view for a student
	b2 := testbrowser.New(t)
	b2.OpenPage(e.url, token(t, "ghost", "student"))
	b2.WaitText("#own-grade", "You have no english grade yet")
}

// TestBrowserAccountHolderTransfers: the caller's accounts are listed with
// balances in their currency; a transfer says what will happen and asks;
// cancel sends nothing, a careless amount is explained without a request;
// the statement then shows direction and counterparty on both sides.
func TestBrowserAccountHolderTransfers(t *testing.T) {
	e := pageEnv(t)
	b := testbrowser.New(t)
	b.Do(chromedp.Navigate(e.url + "/ui/#/accounts"))
	b.UseToken(token(t, "alice", "customer"))
	b.Do(visible(`#accounts-list`))
	if rows := b.Texts(`#accounts-list tbody tr`); len(rows) != 1 || !strings.Contains(rows[0], "EUR 250.00") {
		t.Fatalf("alice's accounts: %q", rows)
	}
	b.CheckView("accounts")
	b.Do(click(`tr[data-account="1001"] a`), visible(`#transfer-form`))
	b.CheckView("account")

	b.Do(chromedp.SetValue(chromedp.ID("transfer-to"), "2002"), chromedp.SetValue(chromedp.ID("transfer-amount"), "12.505"),
		click(`#transfer-review`))
	b.WaitText("#error", "EUR has 2 decimals at most")
	b.Do(chromedp.SetValue(chromedp.ID("transfer-amount"), "12.50"), click(`#transfer-review`), visible(`#confirm`))
	b.WaitText("#confirm", "EUR 12.50 leaves account 1001 and goes to account 2002.")
	b.WaitText("#confirm", "1001 will then hold EUR 237.50.")
	b.CheckAxe("transfer confirmation")
	b.Do(click(`#confirm-no`))
	b.WaitText("#status", "Nothing was sent.")
	if got := balance(t, e, "1001"); got != "250.00" {
		t.Fatalf("cancel moved money: %s", got)
	}
	b.Do(click(`#transfer-review`), visible(`#confirm`), click(`#confirm-yes`))
	b.WaitText("#status", "Sent EUR 12.50 from 1001 to 2002.")
	b.WaitText("#balance", "EUR 237.50")
	// The person's focus moves to what happened, not to the page's start.
	b.WaitFor(`document.activeElement.id === 'transfer-result'`)
	b.WaitText("#transfer-result", "Sent EUR 12.50 from 1001 to 2002.")
	if rows := b.Texts(`#statement tbody tr`); len(rows) != 1 || !strings.Contains(rows[0], "Money out") ||
		!strings.Contains(rows[0], "to 2002") || !strings.Contains(rows[0], "-EUR 12.50") && !strings.Contains(rows[0], "−EUR 12.50") ||
		!strings.Contains(rows[0], "EUR 237.50") || !strings.Contains(rows[0], "20") {
		t.Errorf("alice's statement (date with its year, amount, balance after): %q", rows)
	}
	if got := balance(t, e, "2002"); got != "112.50" {
		t.Errorf("2002 holds %s, want 112.50", got)
	}
	// Too much, or over the limit: never offered, and the words say what
	// to do instead.
	for _, c := range [][2]string{
		{"5000", "Account 1001 holds EUR 237.50: send at most that"},
		{"007", "without leading zeros"},
		{"2000000", "One transfer may move at most EUR 1,000,000.00"},
		{"-5", "more than zero"},
	} {
		amount := c[0]
		b.Do(chromedp.SetValue(chromedp.ID("transfer-to"), "2002"), chromedp.SetValue(chromedp.ID("transfer-amount"), amount),
			click(`#transfer-review`))
		b.WaitText("#error", c[1])
		if testbrowser.Eval[bool](b, `!!document.getElementById('confirm')`) {
			t.Errorf("a transfer of %s, which would be refused, is offered", amount)
			b.Do(click(`#confirm-no`))
		}
	}
	// A reference travels with the transfer to both statements.
	b.Do(chromedp.SetValue(chromedp.ID("transfer-amount"), "7.50"), chromedp.SetValue(chromedp.ID("transfer-ref"), "Rent March"),
		click(`#transfer-review`), visible(`#confirm`))
	b.WaitText("#confirm", "Reference: Rent March")
	b.Do(click(`#confirm-yes`))
	b.WaitText("#transfer-result", "Sent EUR 7.50 from 1001 to 2002 (Rent March).")
	if rows := b.Texts(`#statement tbody tr`); len(rows) != 2 || !strings.Contains(rows[0], "Rent March") || !strings.Contains(rows[0], "EUR 230.00") {
		t.Errorf("the statement after a transfer with a reference: %q", rows)
	}
	// A mistyped destination: check the number, not "not allowed".
	b.Do(chromedp.SetValue(chromedp.ID("transfer-to"), "2020"), chromedp.SetValue(chromedp.ID("transfer-amount"), "1"),
		click(`#transfer-review`), visible(`#confirm`), click(`#confirm-yes`))
	b.WaitText("#error", "You may not pay into account 2020. You may not pay into that account. Check the account number")
	b.WaitFor(`document.activeElement.id === 'transfer-to'`)
	// 2002, which alice may pay into but not view: refused, in words.
	b.Do(chromedp.Navigate(e.url + "/ui/#/accounts/2002"))
	b.WaitText("#error", "You are not allowed to do this.")

	// An auditor (who may view every account) sees the money arrive in
	// 2002, from 1001.
	b.OpenPage(e.url, token(t, "ida", "staff"))
	b.Do(chromedp.Navigate(e.url+"/ui/#/accounts/2002"), visible(`#statement`))
	if rows := b.Texts(`#statement tbody tr`); len(rows) != 2 || !strings.Contains(rows[1], "Money in") || !strings.Contains(rows[1], "from 1001") ||
		!strings.Contains(rows[0], "Rent March") || !strings.Contains(rows[0], "EUR 120.00") {
		t.Errorf("2002's statement: %q", rows)
	}
}

// TestBrowserSwitchingPeopleLeavesNothing: after signing out nothing of
// the previous person is on screen, back shows the sign-in screen, and
// the next person sees only their own things.
func TestBrowserSwitchingPeopleLeavesNothing(t *testing.T) {
	e := pageEnv(t)
	b := testbrowser.New(t)
	b.Do(chromedp.Navigate(e.url + "/ui/#/grades"))
	b.UseToken(token(t, "bob", "professor"))
	b.Do(click(`#classes a`), visible(`tr[data-student="alice"]`), click(`a[data-history="alice"]`))
	b.WaitText("#history-h", "History of alice")
	b.Do(click(`#signout`), visible(`#signin`))
	b.WaitText("#status", "Signed out.")
	gone := func(when string) {
		t.Helper()
		text := b.BodyText()
		for _, s := range []string{"alice", "ghost", "english-101", "bob"} {
			if strings.Contains(text, s) {
				t.Errorf("%s, the screen still shows %q:\n%s", when, s, text)
			}
		}
		if v := testbrowser.Eval[string](b, `document.getElementById('token').value`); v != "" {
			t.Errorf("%s, the token field holds %q", when, v)
		}
		if testbrowser.Eval[bool](b, `!document.getElementById('tabs').hidden`) {
			t.Errorf("%s, the tabs show", when)
		}
	}
	gone("after sign-out")
	b.Do(chromedp.NavigateBack())
	b.WaitFor(`location.hash === '#/grades/english-101' && !document.getElementById('signin').hidden`)
	gone("after back")
	b.UseToken(token(t, "carol", "developer"))
	b.Do(visible(`tr[data-plan="PROJ-CORE"]`))
	if testbrowser.Eval[bool](b, `!document.getElementById('tab-grades').hidden`) {
		t.Error("carol, a developer, is offered grades")
	}
	if text := b.BodyText(); strings.Contains(text, "alice") || strings.Contains(text, "english-101") {
		t.Errorf("carol's screen shows bob's things:\n%s", text)
	}
}

// TestBrowserKeyboardOnly: one flow per group, with Tab, arrows, typing
// and Enter only.
func TestBrowserKeyboardOnly(t *testing.T) {
	e := pageEnv(t)
	t.Run("developer reads a log", func(t *testing.T) {
		b := testbrowser.New(t)
		b.OpenPage(e.url, token(t, "carol", "developer"))
		b.Do(visible(`tr[data-plan="PROJ-CORE"]`))
		b.TabTo(`tr[data-plan="PROJ-CORE"] td:nth-child(2) a`)
		b.Press("\r")
		b.Do(visible(`#results`))
		b.TabTo(`tr[data-result="PROJ-CORE-6"] a`)
		b.Press("\r")
		b.Do(visible(`#jobs`))
		b.TabTo(`tr[data-job="JOB1"] a`)
		b.Press("\r")
		b.WaitText("#status", "Log of Default Job")
	})
	t.Run("developer opens the failing test of the latest failed build", func(t *testing.T) {
		b := testbrowser.New(t)
		b.OpenPage(e.url, token(t, "carol", "developer"))
		b.Do(visible(`tr[data-plan="WEB-NIGHTLY"]`))
		// "/" jumps to the plan search; typing narrows the plans.
		b.Press("/")
		b.WaitFor(`document.activeElement.id === 'plan-search'`)
		b.Press("n", "i", "g", "h", "t")
		b.WaitText("#status", "1 plan matches")
		b.TabTo(`tr[data-plan="WEB-NIGHTLY"] td:nth-child(4) a`) // its latest build, failed
		b.Press("\r")
		b.Do(visible(`#failing-tests`))
		b.TabTo(`#failing-tests summary`)
		b.Press("\r")
		if !testbrowser.Eval[bool](b, `document.activeElement.parentElement.open`) {
			t.Fatal("Enter on the stack's summary did not open it")
		}
		if stack := testbrowser.Eval[string](b, `document.activeElement.parentElement.querySelector('pre').innerText`); !strings.Contains(stack, "at com.example.nightly.ApiTest.servesBuild") {
			t.Errorf("the failing test's stack: %q", stack)
		}
	})
	t.Run("professor sets a grade", func(t *testing.T) {
		b := testbrowser.New(t)
		b.OpenPage(e.url, token(t, "bob", "professor"))
		b.Do(visible(`#classes a`))
		b.TabTo(`#classes a`)
		b.Press("\r")
		b.Do(visible(`#grade-ghost`))
		b.TabTo(`#grade-ghost`)
		b.TypeText("a") // a grade is typed (any case), the scale offered
		b.TabTo(`button[data-save="ghost"]`)
		b.Press("\r")
		b.Do(visible(`#confirm`))
		if f := testbrowser.Eval[string](b, `document.activeElement.id`); f != "confirm-no" {
			t.Errorf("the confirmation opens with focus on %q, want Cancel", f)
		}
		b.TabTo(`#confirm-yes`)
		b.Press("\r")
		b.WaitText("#status", "ghost's grade is now A.")
	})
	t.Run("account holder sends money", func(t *testing.T) {
		b := testbrowser.New(t)
		b.Do(chromedp.Navigate(e.url + "/ui/#/accounts"))
		b.UseToken(token(t, "alice", "customer"))
		b.Do(visible(`#accounts-list`))
		b.TabTo(`tr[data-account="1001"] a`)
		b.Press("\r")
		b.Do(visible(`#transfer-to`))
		b.TabTo(`#transfer-to`)
		b.TypeText("2002")
		b.TabTo(`#transfer-amount`)
		b.TypeText("1.25\r")
		b.Do(visible(`#confirm`))
		b.TabTo(`#confirm-yes`)
		b.Press("\r")
		b.WaitText("#status", "Sent EUR 1.25 from 1001 to 2002.")
	})
}
