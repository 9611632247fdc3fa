package server_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/facade-dev/facade/accounts"
)

// TestReceiveLetsMoneyInNeverOut: mallory holds transfer on m1 and only
// receive on 2002. She may pay from m1 into 2002; she may not take money
// from 2002 into m1 (403, no money moves), nor read 2002. The refusal is
// the one every refusal shares, whether 2002 exists or not.
func TestReceiveLetsMoneyInNeverOut(t *testing.T) {
	e := newEnv(t)
	seedAccounts(t, e)
	if _, err := accounts.NewStore(e.rdb, accounts.Config{Log: quietLog}).Seed(context.Background(),
		accounts.SeedAccount{ID: "m1", Owner: "mallory", Currency: "EUR", Balance: "50.00"}); err != nil {
		t.Fatal(err)
	}
	mallory := token(t, "mallory", "customer")
	if r := e.do(req{method: "POST", path: "/rs/transfer/from/m1/to/2002/amount/10.00", token: mallory}); r.status != 201 {
		t.Fatalf("paying into 2002 with receive: %d %s", r.status, r.body)
	}
	take := e.do(req{method: "POST", path: "/rs/transfer/from/2002/to/m1/amount/10.00", token: mallory})
	absent := e.do(req{method: "POST", path: "/rs/transfer/from/no-such/to/m1/amount/10.00", token: mallory})
	tp, ap := take.problem(t), absent.problem(t)
	delete(tp, "request_id")
	delete(ap, "request_id")
	if take.status != 403 || absent.status != 403 || fmt.Sprint(tp) != fmt.Sprint(ap) {
		t.Fatalf("taking from 2002 with receive: %d %s (absent account: %d)", take.status, take.body, absent.status)
	}
	for path, want := range map[string]int{
		"/rs/account/2002/balance": 403, "/rs/account/2002": 403, "/rs/account/2002/transfers": 403,
	} {
		if r := e.do(req{method: "GET", path: path, token: mallory}); r.status != want {
			t.Errorf("mallory GET %s: %d, want %d", path, r.status, want)
		}
	}
	if got := balance(t, e, "m1"); got != "40.00" {
		t.Errorf("m1 holds %s, want 40.00", got)
	}
	if got := balance(t, e, "2002"); got != "110.00" {
		t.Errorf("2002 holds %s, want 110.00", got)
	}
	// receive on the from side never helps: a principal with receive on
	// both accounts moves nothing.
	if r := e.do(req{method: "POST", path: "/rs/transfer/from/2002/to/2002/amount/1.00", token: mallory}); r.status != 403 {
		t.Errorf("receive on both sides: %d", r.status)
	}
	e.scanBodies()
}
