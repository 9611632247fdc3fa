package accounts

import (
	"context"
	"errors"
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
	a, err := s.Get(context.Background(), id)
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

// wantError fails unless err is a *facade.Error of want's code.
func wantError(t testing.TB, err error, want *facade.Error) {
	t.Helper()
	var fe *facade.Error
	if !errors.As(err, &fe) || !errors.Is(err, want) {
		t.Fatalf("error = %v (%T); want code %q", err, err, want.Code)
	}
}
