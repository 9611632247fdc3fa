package accounts

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/internal/testkit/testredis"
)

// A Redis crash in the middle of a busy run: callers see 503 with
// Retry-After while it is down, the same store recovers by itself once it
// is back, and retrying with the Idempotency-Key makes every transfer
// happen exactly once, whether or not its first reply was lost.
func TestRedisCrashMidRunLosesNoMoneyAndMovesItOnce(t *testing.T) {
	srv := testredis.Start(t, testredis.Options{AOF: true})
	s := NewStore(srv.Client(t), Config{Log: slog.New(slog.DiscardHandler)})
	rdb := srv.Client(t)
	ids := []string{"a1", "a2", "a3", "a4"}
	opening := map[string]int64{}
	for _, id := range ids {
		open(t, s, id, "EUR", "1000.00")
		opening[id] = 100_000
	}

	run := &crashRun{sawDown: make(chan struct{})}
	const workers, quota = 8, 40
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() { run.worker(t, s, ids, w, quota) })
	}
	allDone := make(chan struct{})
	go func() { wg.Wait(); close(allDone) }()

	run.waitFinished(workers * quota / 4)
	srv.Stop()
	_, err := s.getText(context.Background(), "a1")
	wantUnavailable(t, err)
	select {
	case <-run.sawDown:
	case <-allDone:
		t.Fatal("workers finished without seeing the outage")
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	run.restarted.Store(true)
	<-allDone

	total := int64(0)
	for _, b := range balances(t, s, ids...) {
		total += b
	}
	if total != 400_000 {
		t.Fatalf("total is %d cents after the crash; want 400000", total)
	}
	if n := ledgerLen(t, rdb); n != run.succeeded.Load() {
		t.Fatalf("ledger holds %d entries; %d transfers succeeded (each exactly once)", n, run.succeeded.Load())
	}
	replayLedger(t, rdb, s, opening)
	t.Logf("%d transfers succeeded (%d answered by replay after a lost reply), %d refused, %d answers were 503",
		run.succeeded.Load(), run.replays.Load(), run.refused.Load(), run.unavailable.Load())
}

// crashRun is the shared state of the workers in the crash test.
type crashRun struct {
	succeeded, replays, refused, unavailable, finished atomic.Int64
	restarted                                          atomic.Bool
	downOnce                                           sync.Once
	sawDown                                            chan struct{} // closed at the first 503
}

// worker sends transfers until it has done its quota and the server has
// come back, so some of its transfers straddle the outage.
func (r *crashRun) worker(t *testing.T, s *Store, ids []string, w, quota int) {
	rng := rand.New(rand.NewPCG(uint64(w), 11))
	for n := 0; n < quota || !r.restarted.Load(); n++ {
		i := rng.IntN(len(ids))
		req := textRequest{
			From: ids[i], To: ids[(i+1+rng.IntN(len(ids)-1))%len(ids)], Amount: randomAmount(rng),
			IdempotencyKey: fmt.Sprintf("w%d-%d", w, n), Principal: "crash-test",
		}
		r.transferUntilAnswered(t, s, req)
		r.finished.Add(1)
	}
}

// transferUntilAnswered retries one transfer, same key, until Redis gives a
// definite answer.
func (r *crashRun) transferUntilAnswered(t *testing.T, s *Store, req textRequest) {
	for {
		_, replayed, err := s.transferText(context.Background(), req, testMax)
		switch {
		case err == nil:
			r.succeeded.Add(1)
			if replayed {
				r.replays.Add(1)
			}
			return
		case errors.Is(err, facade.ErrInsufficientFunds), errors.Is(err, facade.ErrSameAccount):
			r.refused.Add(1)
			return
		case errors.Is(err, facade.ErrStoreUnavailable):
			wantUnavailable(t, err)
			r.unavailable.Add(1)
			r.downOnce.Do(func() { close(r.sawDown) })
			time.Sleep(10 * time.Millisecond) // a client honouring Retry-After, shortened
		default:
			t.Errorf("transfer %+v: %v", req, err)
			return
		}
	}
}

// waitFinished blocks until n transfers have been answered.
func (r *crashRun) waitFinished(n int) {
	for r.finished.Load() < int64(n) {
		time.Sleep(time.Millisecond)
	}
}

func wantUnavailable(t *testing.T, err error) {
	t.Helper()
	var fe *facade.Error
	if !errors.As(err, &fe) || !errors.Is(err, facade.ErrStoreUnavailable) {
		t.Errorf("error while Redis is down = %v; want ErrStoreUnavailable", err)
	}
}
