package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/facade-dev/facade/accounts"
)

func seedAccounts(t testing.TB, e *env) {
	t.Helper()
	st := accounts.NewStore(e.rdb, accounts.Config{Log: quietLog})
	for _, a := range []accounts.SeedAccount{
		{ID: "1001", Owner: "alice", Currency: "EUR", Balance: "250.00"},
		{ID: "2002", Owner: "bob", Currency: "EUR", Balance: "100.00"},
		{ID: "3003", Owner: "bob", Currency: "JPY", Balance: "5000"},
	} {
		if _, err := st.Seed(context.Background(), a); err != nil {
			t.Fatal(err)
		}
	}
}

func balance(t *testing.T, e *env, id string) string {
	t.Helper()
	a, err := accounts.NewStore(e.rdb, accounts.Config{}).Get(context.Background(), accountID(id))
	if err != nil {
		t.Fatal(err)
	}
	return a.BalanceAmount().String()
}

// TestAccountAuthorizationTable: every principal kind × own / other /
// absent / malformed account × every account endpoint.
func TestAccountAuthorizationTable(t *testing.T) {
	e := newEnv(t)
	seedAccounts(t, e)
	const F = http.StatusForbidden
	principals := map[string]string{
		"holder alice":    token(t, "alice", "customer"),
		"student alice":   token(t, "alice", "student"),
		"no-role alice":   token(t, "alice", ""),
		"owner bob":       token(t, "bob", "customer"),
		"professor bob":   token(t, "bob", "professor"),
		"developer carol": token(t, "carol", "developer"),
	}
	// Policy grants go to the sub, whatever the role: alice may view 1001
	// and ghost-acct (which does not exist); bob has no grants at all
	// (owning an account is not a permission).
	aliceView := map[string]int{"1001": 200, "2002": F, "ghost-acct": 404, "nobody": F, "bad%2Fid": 400, "x y": 400}
	nobodyView := map[string]int{"1001": F, "2002": F, "ghost-acct": F, "nobody": F, "bad%2Fid": 400, "x y": 400}
	for _, name := range sortedKeys(principals) {
		tok := principals[name]
		want := nobodyView
		if strings.HasSuffix(name, "alice") {
			want = aliceView
		}
		for _, id := range sortedKeys(want) {
			for _, suffix := range []string{"", "/balance", "/transfers"} {
				r := e.do(req{method: "GET", path: "/rs/account/" + strings.ReplaceAll(id, " ", "%20") + suffix, token: tok})
				if r.status != want[id] {
					t.Errorf("%s GET account %q%s: %d, want %d", name, id, suffix, r.status, want[id])
				}
			}
		}
	}
	transfers := []struct {
		from, to      string
		alice, others int
	}{
		{"1001", "2002", 201, F},
		{"2002", "1001", 201, F}, // alice holds transfer on both
		{"1001", "3003", F, F},   // no transfer grant on 3003
		{"3003", "1001", F, F},   // nor from it
		{"1001", "ghost-acct", 404, F},
		{"ghost-acct", "1001", 404, F},
		{"1001", "nobody", F, F},
		{"1001", "1001", 422, F},
		{"bad%2F", "1001", 400, 400},
		{"1001", "..", F, F}, // ".." is a well-formed id, and nobody's
	}
	for _, name := range sortedKeys(principals) {
		for _, tr := range transfers {
			want := tr.others
			if strings.HasSuffix(name, "alice") {
				want = tr.alice
			}
			r := e.do(req{method: "POST", path: "/rs/transfer/from/" + tr.from + "/to/" + tr.to + "/amount/1.00", token: principals[name]})
			if r.status != want {
				t.Errorf("%s transfer %s→%s: %d, want %d (%s)", name, tr.from, tr.to, r.status, want, r.body)
			}
		}
	}
}

func TestTransferOverHTTP(t *testing.T) {
	e := newEnv(t)
	seedAccounts(t, e)
	alice := token(t, "alice", "customer")
	path := "/rs/transfer/from/1001/to/2002/amount/12.34"
	r := e.do(req{method: "POST", path: path, token: alice, header: map[string]string{"Idempotency-Key": "k-1"}})
	if r.status != 201 || r.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("transfer: %d %s", r.status, r.body)
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal([]byte(r.body), &body); err != nil {
		t.Fatal(err)
	}
	if string(body["amount"]) != "12.34" || string(body["currency"]) != `"EUR"` ||
		string(body["from_account_id"]) != `"1001"` || string(body["to_account_id"]) != `"2002"` ||
		len(body["transfer_id"]) < 10 || len(body["created_at"]) < 10 {
		t.Fatalf("transfer body: %s", r.body)
	}
	again := e.do(req{method: "POST", path: path, token: alice, header: map[string]string{"Idempotency-Key": "k-1"}})
	if again.status != 201 || again.header.Get("Idempotent-Replayed") != "true" || again.body != r.body {
		t.Fatalf("replay: %d %q\n%s\n%s", again.status, again.header.Get("Idempotent-Replayed"), again.body, r.body)
	}
	if b := balance(t, e, "1001"); b != "237.66" {
		t.Fatalf("balance after replay: %s", b)
	}
	other := e.do(req{method: "POST", path: "/rs/transfer/from/1001/to/2002/amount/1", token: alice, header: map[string]string{"Idempotency-Key": "k-1"}})
	if other.status != 422 {
		t.Fatalf("key reused for another request: %d", other.status)
	}
	for _, k := range []string{strings.Repeat("k", 256), "has space", "tab\there"} {
		bad := e.do(req{method: "POST", path: path, token: alice, header: map[string]string{"Idempotency-Key": k}})
		if bad.status != 400 {
			t.Errorf("Idempotency-Key %q: %d", k, bad.status)
		}
	}
	r = e.do(req{method: "GET", path: "/rs/account/1001/balance", token: alice})
	if r.status != 200 || r.body != `{"account_id":"1001","balance":237.66,"currency":"EUR"}`+"\n" {
		t.Fatalf("balance: %d %q", r.status, r.body)
	}
	r = e.do(req{method: "GET", path: "/rs/account/1001/transfers?limit=5", token: alice})
	if r.status != 200 || !strings.Contains(r.body, `"amount":-12.34`) {
		t.Fatalf("statement: %d %s", r.status, r.body)
	}
	for _, q := range []string{"0", "101", "-1", "abc", "1e2", "05"} {
		if r := e.do(req{method: "GET", path: "/rs/account/1001/transfers?limit=" + q, token: alice}); r.status != 400 {
			t.Errorf("limit=%s: %d", q, r.status)
		}
	}
	if r := e.do(req{method: "POST", path: "/rs/transfer/from/1001/to/2002/amount/1000", token: alice}); r.status != 422 {
		t.Fatalf("insufficient funds: %d", r.status)
	}
}

// TestAmountsOverHTTP: every malformed amount is 400 and moves nothing.
func TestAmountsOverHTTP(t *testing.T) {
	e := newEnv(t)
	seedAccounts(t, e)
	alice := token(t, "alice", "customer")
	bad := []string{"-5", "0", "0.00", "1e3", "NaN", "Infinity", "1.001", "01", "%2B5", "%205", "5.", ".5", "1,5",
		"%EF%BC%95", "12345678901234567890", "1000001", "0x10", "1_000"}
	for _, a := range bad {
		r := e.do(req{method: "POST", path: "/rs/transfer/from/1001/to/2002/amount/" + a, token: alice})
		if r.status != 400 {
			t.Errorf("amount %q: %d, want 400", a, r.status)
		}
	}
	if b := balance(t, e, "1001"); b != "250.00" {
		t.Fatalf("balance moved by refused amounts: %s", b)
	}
}
