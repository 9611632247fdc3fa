package accounts

import (
	"context"
	"log/slog"
	"slices"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/internal/testredis"
)

// The transfer script's own guards, on both stores it runs on: a real
// redis-server and the embedded miniredis the demo runs (cmd/facade
// demo.go), whose HINCRBY does not refuse to overflow, so that there the
// script's ceiling is the only protection.

// transferStores are the stores the script must behave the same on.
var transferStores = map[string]func(t *testing.T) redis.UniversalClient{
	"redis-server": func(t *testing.T) redis.UniversalClient { return testredis.Client(t) },
	"miniredis (the demo's store)": func(t *testing.T) redis.UniversalClient {
		mr := miniredis.NewMiniRedis() // as the demo starts it
		if err := mr.StartAddr("127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(mr.Close)
		rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
		t.Cleanup(func() { rdb.Close() })
		return rdb
	},
}

// ceiling is the largest balance a credit may leave (transfer.lua): below
// int64's 9.223e18, with a margin above the rounding of Lua's doubles.
const ceiling = int64(9_200_000_000_000_000_000)

func TestCreditCeilingOnEveryStore(t *testing.T) {
	const maxInt64 = int64(^uint64(0) >> 1)
	for name, store := range transferStores {
		t.Run(name, func(t *testing.T) {
			rdb := store(t)
			s := NewStore(rdb, slog.New(slog.DiscardHandler))
			ctx := context.Background()
			for id, bal := range map[string]int64{"src": 300_000_000, "near": ceiling - 100_000_000, "full": maxInt64} {
				if _, err := s.Create(ctx, Account{ID: id, Owner: "o", Currency: eur, Balance: bal}); err != nil {
					t.Fatal(err)
				}
			}
			// Up to the ceiling exactly: credited.
			if _, _, err := s.Transfer(ctx, TransferRequest{From: "src", To: "near", Amount: "1000000"}, testMax); err != nil {
				t.Fatalf("a credit reaching the ceiling: %v", err)
			}
			// Past the ceiling but under int64 (a real Redis would add it):
			// refused by the script itself.
			_, _, err := s.Transfer(ctx, TransferRequest{From: "src", To: "near", Amount: "1000000"}, testMax)
			wantError(t, err, facade.ErrBalanceLimit)
			// Past int64 (miniredis would wrap): refused.
			_, _, err = s.Transfer(ctx, TransferRequest{From: "src", To: "full", Amount: "0.01"}, testMax)
			wantError(t, err, facade.ErrBalanceLimit)
			if got := balances(t, s, "src", "near", "full"); !slices.Equal(got, []int64{200_000_000, ceiling, maxInt64}) {
				t.Fatalf("balances = %v; only the first transfer may have moved money", got)
			}
			if n := ledgerLen(t, rdb); n != 1 {
				t.Fatalf("ledger has %d entries; want 1", n)
			}
		})
	}
}

// TestOverdrawnAccountCoversNothing: a source whose stored balance is
// negative (written by hand, or by an older release) can pay nothing, even
// an amount with fewer digits than its balance has characters.
func TestOverdrawnAccountCoversNothing(t *testing.T) {
	for name, store := range transferStores {
		t.Run(name, func(t *testing.T) {
			rdb := store(t)
			s := NewStore(rdb, slog.New(slog.DiscardHandler))
			ctx := context.Background()
			open(t, s, "A", "EUR", "0")
			open(t, s, "B", "EUR", "0")
			if err := rdb.HSet(ctx, accountKey("A"), "balance", "-500").Err(); err != nil {
				t.Fatal(err)
			}
			for _, amount := range []string{"1.00", "0.01", "5.00"} {
				_, _, err := s.Transfer(ctx, TransferRequest{From: "A", To: "B", Amount: amount}, testMax)
				wantError(t, err, facade.ErrInsufficientFunds)
			}
			if got := balances(t, s, "A", "B"); !slices.Equal(got, []int64{-500, 0}) {
				t.Fatalf("balances = %v; nothing may move", got)
			}
			if n := ledgerLen(t, rdb); n != 0 {
				t.Fatalf("ledger has %d entries; want 0", n)
			}
		})
	}
}
