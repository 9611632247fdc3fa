package server_test

import (
	"encoding/json"
	"strings"
	"testing"
)

type statementAnswer struct {
	Transfers []struct {
		Direction    string   `json:"direction"`
		Counterparty string   `json:"counterparty_account_id"`
		Amount       float64  `json:"amount"`
		BalanceAfter *float64 `json:"balance_after"`
		Reference    string   `json:"reference"`
		CreatedAt    string   `json:"created_at"`
	} `json:"transfers"`
}

func statement(t *testing.T, e *env, tok, id string) statementAnswer {
	t.Helper()
	r := e.do(req{method: "GET", path: "/rs/account/" + id + "/transfers", token: tok})
	var s statementAnswer
	if r.status != 200 || json.Unmarshal([]byte(r.body), &s) != nil {
		t.Fatalf("statement of %s: %d %s", id, r.status, r.body)
	}
	return s
}

// TestTransferReferenceReachesBothStatements: a transfer's reference is
// answered, stored and shown on the payer's and the payee's statements,
// each line with the balance right after it.
func TestTransferReferenceReachesBothStatements(t *testing.T) {
	e := newEnv(t)
	seedAccounts(t, e)
	alice, ida := token(t, "alice", "customer"), token(t, "ida", "auditor")
	r := e.do(req{method: "POST", path: "/rs/transfer/from/1001/to/2002/amount/12.50", token: alice,
		body: `{"reference": "Rent March <é>"}`})
	if r.status != 201 || !strings.Contains(r.body, `"reference":"Rent March \u003cé\u003e"`) {
		t.Fatalf("transfer with a reference: %d %s", r.status, r.body)
	}
	if r := e.do(req{method: "POST", path: "/rs/transfer/from/1001/to/2002/amount/7.50", token: alice}); r.status != 201 || strings.Contains(r.body, "reference") {
		t.Fatalf("transfer without a body: %d %s", r.status, r.body)
	}
	if r := e.do(req{method: "POST", path: "/rs/transfer/from/1001/to/2002/amount/5", token: alice, body: `{}`}); r.status != 201 {
		t.Fatalf("transfer with {}: %d %s", r.status, r.body)
	}
	payer, payee := statement(t, e, ida, "1001"), statement(t, e, ida, "2002")
	var got []string
	for _, s := range []statementAnswer{payer, payee} {
		for _, l := range s.Transfers {
			after := "none"
			if l.BalanceAfter != nil {
				after = jsonNumber(*l.BalanceAfter)
			}
			got = append(got, l.Direction+" "+l.Counterparty+" "+jsonNumber(l.Amount)+" -> "+after+" "+l.Reference)
		}
	}
	want := []string{
		"debit 2002 -5 -> 225 ", "debit 2002 -7.5 -> 230 ", "debit 2002 -12.5 -> 237.5 Rent March <é>",
		"credit 1001 5 -> 125 ", "credit 1001 7.5 -> 120 ", "credit 1001 12.5 -> 112.5 Rent March <é>",
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("statements:\n got %q\nwant %q", got, want)
	}
	if b := balance(t, e, "1001"); b != "225.00" {
		t.Errorf("1001 holds %s; the newest balance_after says 225", b)
	}
}

func jsonNumber(f float64) string { b, _ := json.Marshal(f); return string(b) }

// TestTransferReferenceIsPartOfTheIdempotentRequest: the same key with
// the same reference replays; with another reference, or none, it is the
// reuse refusal, and no money moves twice.
func TestTransferReferenceIsPartOfTheIdempotentRequest(t *testing.T) {
	e := newEnv(t)
	seedAccounts(t, e)
	alice := token(t, "alice", "customer")
	send := func(key, body string) resp {
		return e.do(req{method: "POST", path: "/rs/transfer/from/1001/to/2002/amount/10", token: alice, body: body,
			header: map[string]string{"Idempotency-Key": key}})
	}
	first := send("k1", `{"reference":"Rent March"}`)
	if first.status != 201 {
		t.Fatalf("first: %d %s", first.status, first.body)
	}
	if r := send("k1", `{"reference":"Rent March"}`); r.status != 201 || r.header.Get("Idempotent-Replayed") != "true" || r.body != first.body {
		t.Errorf("replay: %d %s %s", r.status, r.header.Get("Idempotent-Replayed"), r.body)
	}
	for _, body := range []string{`{"reference":"Rent April"}`, ``, `{}`, `{"reference":"Rent March "}`} {
		if r := send("k1", body); r.status != 422 || decodeProblem(t, r).Code != "idempotency-reuse" {
			t.Errorf("key k1 with body %q: %d %s", body, r.status, r.body)
		}
	}
	// A key first used without a reference refuses one with a reference.
	if r := send("k2", ``); r.status != 201 {
		t.Fatalf("k2: %d", r.status)
	}
	if r := send("k2", `{"reference":"x"}`); r.status != 422 {
		t.Errorf("key k2 with a reference added: %d %s", r.status, r.body)
	}
	if b := balance(t, e, "1001"); b != "230.00" {
		t.Errorf("1001 holds %s after two transfers of 10", b)
	}
}

// TestTransferReferenceRefusals: a reference a statement could not show
// as written is a 400 naming it, before any money moves.
func TestTransferReferenceRefusals(t *testing.T) {
	e := newEnv(t)
	seedAccounts(t, e)
	alice := token(t, "alice", "customer")
	path := "/rs/transfer/from/1001/to/2002/amount/10"
	for name, c := range map[string]struct {
		body, ctype string
		status      int
		code        string
	}{
		"empty":                    {`{"reference":""}`, "", 400, "bad-reference"},
		"141 characters":           {`{"reference":"` + strings.Repeat("é", 141) + `"}`, "", 400, "bad-reference"},
		"a line break":             {`{"reference":"a\nb"}`, "", 400, "bad-reference"},
		"a right-to-left override": {`{"reference":"abc\u202egpj.exe"}`, "", 400, "bad-reference"},
		"a NUL":                    {`{"reference":"a\u0000"}`, "", 400, "bad-reference"},
		"not a string":             {`{"reference":5}`, "", 400, "malformed-body"},
		"another field":            {`{"reference":"x","amount":99}`, "", 400, "malformed-body"},
		"twice":                    {`{"reference":"x","reference":"y"}`, "", 400, "malformed-body"},
		"not JSON":                 {`reference=x`, "application/x-www-form-urlencoded", 415, "unsupported-media"},
	} {
		h := map[string]string{}
		if c.ctype != "" {
			h["Content-Type"] = c.ctype
		}
		r := e.do(req{method: "POST", path: path, token: alice, body: c.body, header: h})
		if r.status != c.status || decodeProblem(t, r).Code != c.code {
			t.Errorf("%s: %d %s, want %d %s", name, r.status, r.body, c.status, c.code)
		}
	}
	if r := e.do(req{method: "POST", path: path, token: alice, body: `{"reference":"` + strings.Repeat("é", 140) + `"}`}); r.status != 201 {
		t.Errorf("140 characters: %d %s", r.status, r.body)
	}
	if b := balance(t, e, "1001"); b != "240.00" {
		t.Errorf("refused references moved money: 1001 holds %s", b)
	}
}

// TestRefusedDestinationSaysToCheckTheNumber: a caller who may send from
// the source but not pay into the destination is told so (a mistyped
// number), the same whether that account exists or not; a caller who may
// not send from the source gets the plain refusal, whatever the
// destination.
func TestRefusedDestinationSaysToCheckTheNumber(t *testing.T) {
	e := newEnv(t)
	seedAccounts(t, e)
	alice, mallory := token(t, "alice", "customer"), token(t, "mallory", "customer")
	var bodies []string
	for _, to := range []string{"3003", "9999", "2020"} { // 3003 exists, the others do not
		r := e.do(req{method: "POST", path: "/rs/transfer/from/1001/to/" + to + "/amount/10", token: alice})
		if p := decodeProblem(t, r); r.status != 403 || p.Code != "destination-refused" || !strings.Contains(p.Detail, "check the account number") {
			t.Errorf("alice pays into %s: %d %s", to, r.status, r.body)
		}
		bodies = append(bodies, requestIDs.ReplaceAllString(r.body, ""))
	}
	if bodies[0] != bodies[1] || bodies[1] != bodies[2] {
		t.Errorf("the refusal differs with the destination's existence:\n%s", strings.Join(bodies, "\n"))
	}
	for name, r := range map[string]req{
		"mallory from 1001":           {method: "POST", path: "/rs/transfer/from/1001/to/2002/amount/10", token: mallory},
		"mallory from 2002 (receive)": {method: "POST", path: "/rs/transfer/from/2002/to/m1/amount/10", token: mallory},
		"alice from 3003 to 9999":     {method: "POST", path: "/rs/transfer/from/3003/to/9999/amount/10", token: alice},
	} {
		if got := e.do(r); got.status != 403 || decodeProblem(t, got).Code != "forbidden" {
			t.Errorf("%s: %d %s, want 403 forbidden", name, got.status, got.body)
		}
	}
	if b := balance(t, e, "1001"); b != "250.00" {
		t.Errorf("refused transfers moved money: %s", b)
	}
}
