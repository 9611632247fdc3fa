package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/facade-dev/facade/accounts"
)

type accountList struct {
	Accounts []struct {
		AccountID string  `json:"account_id"`
		Owner     string  `json:"owner"`
		Currency  string  `json:"currency"`
		Balance   float64 `json:"balance"`
	} `json:"accounts"`
	Next string `json:"next"`
}

func listAccounts(t *testing.T, e *env, tok, path string) (ids []string, next string) {
	t.Helper()
	r := e.do(req{method: "GET", path: path, token: tok})
	if r.status != 200 {
		t.Fatalf("GET %s: %d %s", path, r.status, r.body)
	}
	var l accountList
	if err := json.Unmarshal([]byte(r.body), &l); err != nil {
		t.Fatal(err)
	}
	for _, a := range l.Accounts {
		ids = append(ids, a.AccountID+" "+a.Currency+" "+fmt.Sprint(a.Balance))
	}
	return ids, l.Next
}

// TestAccountListIsExactlyTheViewableStoredAccounts: the list holds the
// stored accounts the caller may view, no more: a granted account that
// does not exist (ghost-acct) is absent, an account the caller may only
// pay into (receive) or debit is absent, and a wildcard grant lists every
// stored account.
func TestAccountListIsExactlyTheViewableStoredAccounts(t *testing.T) {
	e := newEnv(t)
	seedAccounts(t, e)
	for _, a := range []accounts.SeedAccount{{ID: "m1", Owner: "mallory", Currency: "EUR", Balance: "5.00"}} {
		if _, err := accounts.NewStore(e.rdb, accounts.Config{Log: quietLog}).Seed(context.Background(), a); err != nil {
			t.Fatal(err)
		}
	}
	for who, want := range map[string]string{
		"alice":   "1001 EUR 250",
		"mallory": "m1 EUR 5",
		"ida":     "1001 EUR 250|2002 EUR 100|3003 JPY 5000|m1 EUR 5",
		"bob":     "",
		"carol":   "",
	} {
		got, next := listAccounts(t, e, token(t, who, "customer"), "/rs/account")
		if strings.Join(got, "|") != want || next != "" {
			t.Errorf("%s's accounts: %q next %q, want %q", who, got, next, want)
		}
	}
	// Pages of two for the auditor: next's cursor continues where it says.
	ida := token(t, "ida", "staff")
	var all []string
	for path := "/rs/account?limit=2"; path != ""; {
		var ids []string
		ids, path = listAccounts(t, e, ida, path)
		all = append(all, ids...)
		if len(all) > 10 {
			t.Fatal("paging does not end")
		}
	}
	if len(all) != 4 || !strings.HasPrefix(all[3], "m1 ") {
		t.Errorf("paged walk: %q", all)
	}
	for _, bad := range []string{"?limit=0", "?limit=101", "?limit=x", "?after=1001", "?cursor=1001", "?cursor=" + strings.Repeat("A", 200)} {
		if r := e.do(req{method: "GET", path: "/rs/account" + bad, token: ida}); r.status != 400 {
			t.Errorf("GET /rs/account%s: %d, want 400", bad, r.status)
		}
	}
	if r := e.do(req{method: "HEAD", path: "/rs/account", token: ida}); r.status != 200 {
		t.Errorf("HEAD /rs/account: %d", r.status)
	}
	if r := e.do(req{method: "GET", path: "/rs/account"}); r.status != 401 {
		t.Errorf("without a token: %d", r.status)
	}
	e.scanBodies()
}

// TestAccountListWalksABoundedNumberOfAccounts: a caller who may view one
// account among more than the scan budget gets a short page with next, and
// following next finds the account: the walk is bounded per request.
func TestAccountListWalksABoundedNumberOfAccounts(t *testing.T) {
	e := newEnv(t)
	st := accounts.NewStore(e.rdb, accounts.Config{Log: quietLog})
	// 10,001 accounts before "m1" in id order ("a00000"...), then m1.
	for i := range 10_001 {
		a := accounts.Account{ID: accountID(fmt.Sprintf("a%05d", i)), Owner: "x", Currency: accounts.Currency{Code: "EUR", Exponent: 2}}
		if _, err := st.Create(context.Background(), a); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.Seed(context.Background(), accounts.SeedAccount{ID: "m1", Owner: "mallory", Currency: "EUR", Balance: "5.00"}); err != nil {
		t.Fatal(err)
	}
	mallory := token(t, "mallory", "customer")
	ids, next := listAccounts(t, e, mallory, "/rs/account")
	if len(ids) != 0 || !strings.HasPrefix(next, "/rs/account?cursor=") || accountIDs.MatchString(strings.TrimPrefix(next, "/rs/account?")) {
		t.Fatalf("first page: %q next %q", ids, next)
	}
	first := next
	ids, next = listAccounts(t, e, mallory, next)
	if strings.Join(ids, "|") != "m1 EUR 5" || next != "" {
		t.Fatalf("second page: %q next %q", ids, next)
	}
	// The cursor is mallory's alone, and cannot be edited or chosen.
	cursor := strings.TrimSuffix(strings.TrimPrefix(first, "/rs/account?cursor="), "&limit=25")
	edited := []byte(cursor)
	edited[len(edited)/2] ^= 1
	for who, path := range map[string]string{
		"ida with mallory's cursor": first,
		"mallory, edited":           "/rs/account?cursor=" + string(edited),
		"mallory, truncated":        "/rs/account?cursor=" + cursor[:len(cursor)-4],
		"mallory, not base64":       "/rs/account?cursor=a09999",
		"mallory, after=":           "/rs/account?after=a09999",
	} {
		tok := mallory
		if strings.HasPrefix(who, "ida") {
			tok = token(t, "ida", "staff")
		}
		r := e.do(req{method: "GET", path: path, token: tok})
		if p := decodeProblem(t, r); r.status != 400 || p.Code != "bad-parameter" {
			t.Errorf("%s: %d %s", who, r.status, r.body)
		}
	}
}

// accountIDs matches any of the 10,001 ids of the walk test.
var accountIDs = regexp.MustCompile(`a[0-9]{5}`)

// TestAccountListTellsNoGrantPrincipalNothing: with more stored accounts
// than one page's walk (10,052), a principal holding no account grant
// gets an empty list and no cursor, the same as with three accounts: the
// answer says nothing about how many accounts others hold. A principal
// with grants gets cursors that name none of them.
func TestAccountListTellsNoGrantPrincipalNothing(t *testing.T) {
	e := newEnv(t)
	seedAccounts(t, e)
	carol := token(t, "carol", "developer")
	few := e.do(req{method: "GET", path: "/rs/account", token: carol})
	st := accounts.NewStore(e.rdb, accounts.Config{Log: quietLog})
	for i := range 10_049 {
		a := accounts.Account{ID: accountID(fmt.Sprintf("h%05d", i)), Owner: "x", Currency: accounts.Currency{Code: "EUR", Exponent: 2}}
		if _, err := st.Create(context.Background(), a); err != nil {
			t.Fatal(err)
		}
	}
	many := e.do(req{method: "GET", path: "/rs/account?limit=1", token: carol})
	if few.body != `{"accounts":[]}`+"\n" || many.body != few.body || many.header.Get("ETag") != few.header.Get("ETag") {
		t.Errorf("no-grant carol: with 3 accounts %s, with 10,052 %s", few.body, many.body)
	}
	// mallory (m1, not stored) walks: her cursors never name an account.
	mallory := token(t, "mallory", "customer")
	path, pages := "/rs/account?limit=1", 0
	for ; path != ""; pages++ {
		var ids []string
		ids, path = listAccounts(t, e, mallory, path)
		if len(ids) != 0 || regexp.MustCompile(`h[0-9]{5}|1001|2002|3003`).MatchString(path) {
			t.Fatalf("mallory's page %d: %q next %q", pages, ids, path)
		}
	}
	if pages != 2 {
		t.Errorf("mallory walked %d pages of 10,052 accounts, want 2 (10,000 a page)", pages)
	}
}
