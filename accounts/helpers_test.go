package accounts

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/internal/testkit/testredis"
)

// newTestStore returns a store on a fresh database of the shared server.
func newTestStore(t testing.TB) (*Store, *redis.Client) {
	t.Helper()
	rdb := testredis.Client(t)
	return NewStore(rdb, Config{Log: slog.New(slog.DiscardHandler)}), rdb
}

// open creates account id with a balance given as decimal text.
func open(t testing.TB, s *Store, id, currency, balance string) {
	t.Helper()
	created, err := s.Seed(context.Background(), SeedAccount{ID: id, Owner: "owner-" + id, Currency: currency, Balance: balance})
	if err != nil || !created {
		t.Fatalf("seed %s: created=%v err=%v", id, created, err)
	}
}

// balance returns the balance of id in minor units.
func balance(t testing.TB, s *Store, id string) int64 {
	t.Helper()
	a, err := s.getText(context.Background(), id)
	if err != nil {
		t.Fatalf("get %s: %v", id, err)
	}
	return a.Balance
}

// balances returns the balances of ids.
func balances(t testing.TB, s *Store, ids ...string) []int64 {
	t.Helper()
	out := make([]int64, len(ids))
	for i, id := range ids {
		out[i] = balance(t, s, id)
	}
	return out
}

// ledgerLen is the number of entries in the ledger stream.
func ledgerLen(t testing.TB, rdb redis.UniversalClient) int64 {
	t.Helper()
	n, err := rdb.XLen(context.Background(), ledgerKey()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// ledgerIDs are the transfer ids of the ledger's entries, in the order
// the transfers were applied.
func ledgerIDs(t testing.TB, rdb redis.UniversalClient) []string {
	t.Helper()
	entries, err := rdb.XRange(context.Background(), ledgerKey(), "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(entries))
	for i, e := range entries {
		ids[i], _ = e.Values["transfer"].(string)
	}
	return ids
}

// wantError fails unless err is a *facade.Error of want's code.
func wantError(t testing.TB, err error, want *facade.Error) {
	t.Helper()
	var fe *facade.Error
	if !errors.As(err, &fe) || !errors.Is(err, want) {
		t.Fatalf("error = %v (%T); want code %q", err, err, want.Code)
	}
}

// textRequest is a transfer as a client writes it, before the HTTP layer
// parses it into a TransferRequest.
type textRequest struct {
	From, To, Amount, IdempotencyKey, Principal, Reference string
}

// parse is what the HTTP layer does with a transfer's text, in its order:
// the accounts, then the amount (under maxMajor).
func (r textRequest) parse(maxMajor int64) (TransferRequest, error) {
	from, err := facade.ParseAccountID(r.From)
	if err != nil {
		return TransferRequest{}, err
	}
	to, err := facade.ParseAccountID(r.To)
	if err != nil {
		return TransferRequest{}, err
	}
	amount, err := ParseTransferAmount(r.Amount, maxMajor)
	if err != nil {
		return TransferRequest{}, err
	}
	return TransferRequest{From: from, To: to, Amount: amount, IdempotencyKey: r.IdempotencyKey,
		Principal: r.Principal, Reference: r.Reference}, nil
}

// parsed is r parsed, for requests a test knows to be well-formed.
func (r textRequest) parsed() TransferRequest {
	req, err := r.parse(testMax)
	if err != nil {
		panic(fmt.Sprintf("%+v: %v", r, err))
	}
	return req
}

// transferText parses r as the HTTP layer does and hands it to Transfer.
// A request refused in parsing is audited as the text it was, as every
// attempt is (audit).
func (s *Store) transferText(ctx context.Context, r textRequest, maxMajor int64) (Transfer, bool, error) {
	req, err := r.parse(maxMajor)
	if err != nil {
		s.audit(ctx, attempt{principal: r.Principal, from: r.From, to: r.To, amount: r.Amount, keyed: r.IdempotencyKey != ""},
			Transfer{}, false, err)
		return Transfer{}, false, err
	}
	return s.Transfer(ctx, req)
}

// mustAccount is a well-formed account id.
func mustAccount(s string) facade.AccountID {
	id, err := facade.ParseAccountID(s)
	if err != nil {
		panic(s + ": " + err.Error())
	}
	return id
}

// getText parses id as the HTTP layer does and hands it to Get.
func (s *Store) getText(ctx context.Context, id string) (Account, error) {
	account, err := facade.ParseAccountID(id)
	if err != nil {
		return Account{}, err
	}
	return s.Get(ctx, account)
}
