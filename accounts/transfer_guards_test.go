package accounts

import (
	"context"
	"log/slog"
	"slices"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/internal/testkit/testredis"
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
			s := NewStore(rdb, Config{Log: slog.New(slog.DiscardHandler)})
			ctx := context.Background()
			for id, bal := range map[string]int64{"src": 300_000_000, "near": ceiling - 100_000_000, "full": maxInt64} {
				if _, err := s.Create(ctx, Account{ID: mustAccount(id), Owner: "o", Currency: eur, Balance: bal}); err != nil {
					t.Fatal(err)
				}
			}
			// Up to the ceiling exactly: credited.
			if _, _, err := s.transferText(ctx, textRequest{From: "src", To: "near", Amount: "1000000"}, testMax); err != nil {
				t.Fatalf("a credit reaching the ceiling: %v", err)
			}
			// Past the ceiling but under int64 (a real Redis would add it):
			// refused by the script itself.
			_, _, err := s.transferText(ctx, textRequest{From: "src", To: "near", Amount: "1000000"}, testMax)
			wantError(t, err, facade.ErrBalanceLimit)
			// Past int64 (miniredis would wrap): refused.
			_, _, err = s.transferText(ctx, textRequest{From: "src", To: "full", Amount: "0.01"}, testMax)
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

// TestOverdraftRefusedOnTheStringPath: a transfer whose balances are too
// long for the script's in-memory numbers (16 digits or more, minor units)
// is checked by covers on decimal strings. There, a negative source of 17
// characters covers nothing (its length alone would say it covers a
// 3-digit amount), and a small source beside a huge destination covers no
// more than it holds. Refused as insufficient funds, nothing moves. The
// in-memory path has its own check (src.num < amt): this test is the one
// that sees the string path's.
func TestOverdraftRefusedOnTheStringPath(t *testing.T) {
	const huge = int64(1_000_000_000_000_000) // 16 digits: not an exact Lua number in the script
	for name, store := range transferStores {
		t.Run(name, func(t *testing.T) {
			rdb := store(t)
			s := NewStore(rdb, Config{Log: slog.New(slog.DiscardHandler)})
			ctx := context.Background()
			open(t, s, "neg", "EUR", "0")
			open(t, s, "small", "EUR", "5.00")
			open(t, s, "big", "EUR", "0")
			for id, bal := range map[string]int64{"neg": -huge, "big": huge} {
				if err := rdb.HSet(ctx, accountKey(id), "balance", bal).Err(); err != nil {
					t.Fatal(err)
				}
			}
			for _, c := range []struct{ from, to, amount string }{
				{"neg", "big", "1.00"},   // -10^15 minor units: 17 characters against 3
				{"neg", "small", "0.01"}, // the destination small too: only the source is long
				{"small", "big", "5.01"}, // 500 against 501, the destination long
				{"small", "big", "10.00"},
			} {
				_, _, err := s.transferText(ctx, textRequest{From: c.from, To: c.to, Amount: c.amount}, testMax)
				wantError(t, err, facade.ErrInsufficientFunds)
			}
			if got := balances(t, s, "neg", "small", "big"); !slices.Equal(got, []int64{-huge, 500, huge}) {
				t.Fatalf("balances = %v; nothing may move", got)
			}
			if n := ledgerLen(t, rdb); n != 0 {
				t.Fatalf("ledger has %d entries; want 0", n)
			}
			// The string path still pays what the balance covers.
			if _, _, err := s.transferText(ctx, textRequest{From: "small", To: "big", Amount: "5.00"}, testMax); err != nil {
				t.Fatalf("a transfer of the whole balance on the string path: %v", err)
			}
			if got := balances(t, s, "small", "big"); !slices.Equal(got, []int64{0, huge + 500}) {
				t.Fatalf("balances = %v after paying 5.00", got)
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
			s := NewStore(rdb, Config{Log: slog.New(slog.DiscardHandler)})
			ctx := context.Background()
			open(t, s, "A", "EUR", "0")
			open(t, s, "B", "EUR", "0")
			if err := rdb.HSet(ctx, accountKey("A"), "balance", "-500").Err(); err != nil {
				t.Fatal(err)
			}
			for _, amount := range []string{"1.00", "0.01", "5.00"} {
				_, _, err := s.transferText(ctx, textRequest{From: "A", To: "B", Amount: amount}, testMax)
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
