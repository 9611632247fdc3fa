package server_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/facade-dev/facade/accounts"
)

// statementPolicy gives alice a second account, -7 (an id a spreadsheet
// would read as a formula), to pay into and to view.
var statementPolicy = withPolicyLines("p, alice, account:-7, view_account", "p, alice, account:-7, transfer")

type historyPage struct {
	Transfers []struct {
		TransferID   string `json:"transfer_id"`
		Counterparty string `json:"counterparty_account_id"`
		CreatedAt    string `json:"created_at"`
		Reference    string `json:"reference"`
	} `json:"transfers"`
	Next string `json:"next"`
}

// longHistory makes n transfers of 1.00 from 1001 (alice's) to -7, the
// first with a reference a spreadsheet would run.
func longHistory(t testing.TB, e *env, n int) {
	t.Helper()
	seedAccounts(t, e)
	st := accounts.NewStore(e.rdb, accounts.Config{Log: quietLog})
	ctx := context.Background()
	if _, err := st.Seed(ctx, accounts.SeedAccount{ID: "-7", Owner: "alice", Currency: "EUR", Balance: "0"}); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		ref := fmt.Sprintf("rent %d", i)
		if i == 0 {
			ref = "=HYPERLINK(\"http://evil.example\")"
		}
		if _, _, err := st.Transfer(ctx, accounts.TransferRequest{From: accountID("1001"), To: accountID("-7"), Amount: transferAmount("1", 1_000_000), Principal: "alice", Reference: ref}); err != nil {
			t.Fatal(err)
		}
	}
}

func historyOf(t testing.TB, e *env, tok, path string) (resp, historyPage) {
	t.Helper()
	r := e.do(req{method: "GET", path: path, token: tok})
	var a historyPage
	if r.status == 200 {
		if err := json.Unmarshal([]byte(r.body), &a); err != nil {
			t.Fatal(err)
		}
	}
	return r, a
}

// TestStatementPagesToTheFirstTransferOverHTTP: following next from the
// first page reaches the first transfer of a history longer than any page
// (the 100 a page may hold), each transfer once; next keeps the range.
func TestStatementPagesToTheFirstTransferOverHTTP(t *testing.T) {
	e := newEnv(t, statementPolicy)
	longHistory(t, e, 230)
	alice := token(t, "alice", "student")
	seen := map[string]bool{}
	path, pages := "/rs/account/1001/transfers?limit=100", 0
	var last historyPage
	for path != "" {
		r, a := historyOf(t, e, alice, path)
		if r.status != 200 {
			t.Fatalf("%s: %d %s", path, r.status, r.body)
		}
		for _, tr := range a.Transfers {
			if seen[tr.TransferID] {
				t.Fatalf("%s shown twice", tr.TransferID)
			}
			seen[tr.TransferID] = true
		}
		if a.Next != "" && (strings.Contains(a.Next, "1001/transfers?") == false || !strings.Contains(a.Next, "limit=100")) {
			t.Fatalf("next %q", a.Next)
		}
		path, last = a.Next, a
		pages++
	}
	if len(seen) != 230 || pages != 3 || last.Transfers[len(last.Transfers)-1].Reference != "=HYPERLINK(\"http://evil.example\")" {
		t.Fatalf("%d transfers in %d pages, the last ends with %+v", len(seen), pages, last.Transfers[len(last.Transfers)-1])
	}
	// A range: the 20 oldest transfers' instants, both ends included, in
	// pages of 7 that keep the range.
	_, all := historyOf(t, e, alice, "/rs/account/1001/transfers?limit=100&cursor="+cursorOf(t, last, e, alice))
	_ = all
	from, to := oldest(t, e, alice, 20)
	q := url.Values{"from": {from}, "to": {to}, "limit": {"7"}}
	n := 0
	for path = "/rs/account/1001/transfers?" + q.Encode(); path != ""; {
		r, a := historyOf(t, e, alice, path)
		if r.status != 200 {
			t.Fatalf("%s: %d %s", path, r.status, r.body)
		}
		if a.Next != "" && (!strings.Contains(a.Next, "from="+url.QueryEscape(from)) || !strings.Contains(a.Next, "to=")) {
			t.Fatalf("next %q lost the range", a.Next)
		}
		n += len(a.Transfers)
		path = a.Next
	}
	if n != 20 {
		t.Fatalf("the range [%s, %s] held %d transfers, want 20", from, to, n)
	}
}

// cursorOf returns the cursor a page's next carries ("" for none).
func cursorOf(t testing.TB, a historyPage, _ *env, _ string) string {
	t.Helper()
	if a.Next == "" {
		return ""
	}
	u, err := url.Parse(a.Next)
	if err != nil {
		t.Fatal(err)
	}
	return url.QueryEscape(u.Query().Get("cursor"))
}

// edited is cursor with its first character changed to another one: a
// sealed cursor is random, so it may itself start with any character.
func edited(cursor string) string {
	if cursor[0] == 'A' {
		return "B" + cursor[1:]
	}
	return "A" + cursor[1:]
}

// oldest returns the times of 1001's oldest and n-th oldest transfers.
func oldest(t testing.TB, e *env, tok string, n int) (string, string) {
	t.Helper()
	r := e.do(req{method: "GET", path: "/rs/account/1001/transfers", token: tok, header: map[string]string{"Accept": "text/csv"}})
	rows, err := csv.NewReader(strings.NewReader(r.body)).ReadAll()
	if err != nil || len(rows) < n+1 {
		t.Fatalf("CSV: %v, %d rows", err, len(rows))
	}
	return rows[len(rows)-1][0], rows[len(rows)-n][0]
}

// TestStatementCSVStreamsTheRangeSafely: Accept: text/csv answers the whole
// history (past any page) as a spreadsheet, newest first, with the
// contract's columns, amounts unsigned beside their direction, and every
// cell a spreadsheet would run quoted (a counterparty -7, a reference
// =HYPERLINK...), named for the download; a date range selects whole days.
func TestStatementCSVStreamsTheRangeSafely(t *testing.T) {
	e := newEnv(t, statementPolicy)
	longHistory(t, e, 150)
	alice := token(t, "alice", "student")
	r := e.do(req{method: "GET", path: "/rs/account/1001/transfers", token: alice, header: map[string]string{"Accept": "text/csv"}})
	rows, err := csv.NewReader(strings.NewReader(r.body)).ReadAll()
	if r.status != 200 || err != nil || len(rows) != 151 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/csv") {
		t.Fatalf("download: %d %v, %d rows", r.status, err, len(rows))
	}
	if cd := r.header.Get("Content-Disposition"); cd != `attachment; filename="1001-statement.csv"` {
		t.Errorf("Content-Disposition %q", cd)
	}
	// The same file at the path a link downloads (a link sends no Accept).
	if link := e.do(req{method: "GET", path: "/rs/account/1001/transfers.csv", token: alice, header: map[string]string{"Accept": "text/html,*/*;q=0.8"}}); link.status != 200 || link.body != r.body {
		t.Errorf("transfers.csv: %d, %d bytes, want the %d of Accept: text/csv", link.status, len(link.body), len(r.body))
	}
	if got := strings.Join(rows[0], ","); got != "date,direction,counterparty,amount,currency,balance_after,reference" {
		t.Fatalf("header %q", got)
	}
	first, newest := rows[len(rows)-1], rows[1]
	if !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$`).MatchString(newest[0]) ||
		strings.Join(newest[1:], ",") != "debit,'-7,1.00,EUR,100.00,rent 149" {
		t.Errorf("newest row %q", newest)
	}
	if strings.Join(first[1:], ",") != `debit,'-7,1.00,EUR,249.00,'=HYPERLINK("http://evil.example")` {
		t.Errorf("first row %q", first)
	}
	today := time.Now().UTC().Format(time.DateOnly)
	for query, want := range map[string]int{
		"?from=" + today + "&to=" + today: 150,
		"?to=2020-01-01":                  0,
		"?from=2999-01-01":                0,
	} {
		r := e.do(req{method: "GET", path: "/rs/account/1001/transfers" + query, token: alice, header: map[string]string{"Accept": "text/csv"}})
		if n := strings.Count(r.body, "\n") - 1; r.status != 200 || n != want {
			t.Errorf("%s: %d, %d rows, want %d", query, r.status, n, want)
		}
	}
	r = e.do(req{method: "GET", path: "/rs/account/1001/transfers?from=" + today + "&to=" + today, token: alice, header: map[string]string{"Accept": "text/csv"}})
	if cd := r.header.Get("Content-Disposition"); cd != `attachment; filename="1001-statement-`+today+`-`+today+`.csv"` {
		t.Errorf("a range's Content-Disposition %q", cd)
	}
}

// TestStatementRefusalsNameTheParameter: a cursor of another account or
// person, an edited one, a range the wrong way round, a date that is not
// one, a limit out of range or a parameter the route does not take are 400
// naming the parameter; another person's statement is 403 whatever the
// cursor, byte for byte the same as without one (it is never opened).
func TestStatementRefusalsNameTheParameter(t *testing.T) {
	e := newEnv(t, statementPolicy)
	longHistory(t, e, 30)
	alice, ida, mallory := token(t, "alice", "student"), token(t, "ida", "student"), token(t, "mallory", "student")
	_, own := historyOf(t, e, alice, "/rs/account/1001/transfers?limit=5")
	_, idas := historyOf(t, e, ida, "/rs/account/1001/transfers?limit=5")
	_, other := historyOf(t, e, alice, "/rs/account/-7/transfers?limit=5")
	if own.Next == "" || idas.Next == "" || other.Next == "" {
		t.Fatal("no next to test with")
	}
	base := "/rs/account/1001/transfers?cursor="
	for name, c := range map[string]struct{ path, param, rule string }{
		"another account's cursor": {base + cursorOf(t, other, e, ""), "cursor", "not-issued"},
		"another person's cursor":  {base + cursorOf(t, idas, e, ""), "cursor", "not-issued"},
		"an edited cursor":         {base + edited(cursorOf(t, own, e, "")), "cursor", "not-issued"},
		"a cursor of nothing":      {base + "x", "cursor", "not-issued"},
		"range wrong way round":    {"/rs/account/1001/transfers?from=2026-03-02&to=2026-03-01", "from", "reversed"},
		"instants wrong way round": {"/rs/account/1001/transfers?from=2026-03-01T10:00:00Z&to=2026-03-01T09:59:59Z", "from", "reversed"},
		"not a date":               {"/rs/account/1001/transfers?from=2026-02-30", "from", "not-date"},
		"not a date either":        {"/rs/account/1001/transfers?to=yesterday", "to", "not-date"},
		"a date with a time zone":  {"/rs/account/1001/transfers?to=2026-03-01T10:00:00", "to", "not-date"},
		"limit 0":                  {"/rs/account/1001/transfers?limit=0", "limit", "out-of-range"},
		"limit 101":                {"/rs/account/1001/transfers?limit=101", "limit", "out-of-range"},
		"a misspelt from":          {"/rs/account/1001/transfers?form=2026-03-01", "form", "unknown-parameter"},
		"from twice":               {"/rs/account/1001/transfers?from=2026-03-01&from=2026-01-01", "from", "repeated"},
	} {
		for _, accept := range []string{"", "text/csv"} {
			r := e.do(req{method: "GET", path: c.path, token: alice, header: map[string]string{"Accept": accept}})
			p := r.problem(t)
			errs, _ := p["errors"].([]any)
			if len(errs) == 0 {
				t.Errorf("%s (Accept %q): %d with no errors: %s", name, accept, r.status, r.body)
				continue
			}
			first, _ := errs[0].(map[string]any)
			if r.status != 400 || p["code"] != "bad-parameter" || first["parameter"] != c.param || first["code"] != c.rule {
				t.Errorf("%s (Accept %q): %d %s", name, accept, r.status, r.body)
			}
		}
	}
	strip := regexp.MustCompile(`"request_id":"[^"]*"`)
	plain := e.do(req{method: "GET", path: "/rs/account/1001/transfers", token: mallory})
	for _, cursor := range []string{cursorOf(t, own, e, ""), "x", ""} {
		for _, accept := range []string{"", "text/csv"} {
			r := e.do(req{method: "GET", path: base + cursor, token: mallory, header: map[string]string{"Accept": accept}})
			if r.status != 403 || strip.ReplaceAllString(r.body, "") != strip.ReplaceAllString(plain.body, "") {
				t.Errorf("mallory with cursor %q (Accept %q): %d %s", cursor, accept, r.status, r.body)
			}
		}
	}
}
