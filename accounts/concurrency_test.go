package accounts

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade"
)

// randomAmount returns 0.01 to 400.00 EUR, written in the ways clients do.
func randomAmount(r *rand.Rand) string {
	cents := 1 + r.IntN(40000)
	switch {
	case cents%100 == 0 && r.IntN(2) == 0:
		return strconv.Itoa(cents / 100)
	case cents%10 == 0 && r.IntN(2) == 0:
		return fmt.Sprintf("%d.%d", cents/100, cents%100/10)
	}
	return fmt.Sprintf("%d.%02d", cents/100, cents%100)
}

func TestConcurrentRandomTransfersKeepTheBooks(t *testing.T) {
	s, rdb := newTestStore(t)
	ctx := context.Background()
	ids := []string{"acc-1", "acc-2", "acc-3", "acc-4", "acc-5"}
	opening := map[string]int64{}
	for _, id := range ids {
		open(t, s, id, "EUR", "1000.00")
		opening[id] = 100_000
	}
	const workers, perWorker = 40, 125
	var created, refused atomic.Int64
	stop := make(chan struct{})
	watcherDone := make(chan int)
	go watchBalances(t, s, ids, stop, watcherDone)

	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 7))
			for range perWorker {
				from := ids[r.IntN(len(ids))]
				to := ids[r.IntN(len(ids))]
				_, _, err := s.transferText(ctx, textRequest{From: from, To: to, Amount: randomAmount(r), Principal: "p"}, testMax)
				switch {
				case err == nil:
					created.Add(1)
				case errors.Is(err, facade.ErrInsufficientFunds), errors.Is(err, facade.ErrSameAccount):
					refused.Add(1)
				default:
					t.Errorf("transfer: %v", err)
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	looks := <-watcherDone

	total := int64(0)
	for _, b := range balances(t, s, ids...) {
		total += b
	}
	if total != 500_000 {
		t.Fatalf("total is %d cents after the run; want 500000", total)
	}
	if n := ledgerLen(t, rdb); n != created.Load() {
		t.Fatalf("ledger holds %d entries; %d transfers succeeded", n, created.Load())
	}
	replayLedger(t, rdb, s, opening)
	t.Logf("%d transfers: %d applied, %d refused; balances watched %d times",
		workers*perWorker, created.Load(), refused.Load(), looks)
	if created.Load() == 0 || refused.Load() == 0 {
		t.Fatalf("the run should both apply and refuse transfers (applied %d, refused %d)", created.Load(), refused.Load())
	}
}

// watchBalances reads every balance until stop and fails on a negative one.
func watchBalances(t *testing.T, s *Store, ids []string, stop <-chan struct{}, done chan<- int) {
	looks := 0
	defer func() { done <- looks }()
	for {
		select {
		case <-stop:
			return
		default:
		}
		for _, id := range ids {
			a, err := s.getText(context.Background(), id)
			if err != nil || a.Balance < 0 {
				t.Errorf("balance of %s = %d, %v", id, a.Balance, err)
				return
			}
		}
		looks++
	}
}

// replayLedger applies the ledger in stream order to the opening balances:
// no balance may go below zero at any step, and the result must equal what
// the accounts hold. Per-account statements must list the same transfers,
// and each entry has its transfer record (and no record lacks an entry).
func replayLedger(t *testing.T, rdb redis.UniversalClient, s *Store, opening map[string]int64) {
	t.Helper()
	ctx := context.Background()
	entries, err := rdb.XRange(ctx, ledgerKey(), "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	held := map[string]int64{}
	touches := map[string]int64{}
	for id, b := range opening {
		held[id] = b
	}
	records, err := rdb.Keys(ctx, transferKey("*")).Result()
	if err != nil || len(records) != len(entries) {
		t.Fatalf("%d transfer records (%v) for %d ledger entries: each transfer happens whole or not at all", len(records), err, len(entries))
	}
	for _, e := range entries {
		from, to := e.Values["from"].(string), e.Values["to"].(string)
		if rec, _ := rdb.HGet(ctx, transferKey(e.Values["transfer"].(string)), "amount").Result(); rec != e.Values["amount"] {
			t.Fatalf("ledger entry %s: its transfer record says amount %q", e.ID, rec)
		}
		amount, err := strconv.ParseInt(e.Values["amount"].(string), 10, 64)
		if err != nil || amount <= 0 {
			t.Fatalf("ledger entry %s has amount %v", e.ID, e.Values["amount"])
		}
		held[from] -= amount
		held[to] += amount
		touches[from]++
		touches[to]++
		if held[from] < 0 {
			t.Fatalf("ledger entry %s takes %s below zero", e.ID, from)
		}
	}
	for id := range opening {
		if got := balance(t, s, id); got != held[id] {
			t.Errorf("%s holds %d; the ledger says %d", id, got, held[id])
		}
		if n := int64(len(walk(t, s, id, StatementQuery{Limit: MaxStatementLimit}))); n != touches[id] {
			t.Errorf("statement of %s has %d entries; the ledger says %d", id, n, touches[id])
		}
	}
}
