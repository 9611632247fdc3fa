package accounts

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"
)

// BenchmarkTransferScriptDirect measures Store.Transfer (validation plus the
// one EVALSHA) from 32 concurrent goroutines against the shared redis-server,
// with the go-redis default client options: the ceiling the HTTP layer can
// approach. It reports transfers/s and the 99th percentile latency.
func BenchmarkTransferScriptDirect(b *testing.B) {
	for _, keyed := range []bool{false, true} {
		name := "no-key"
		if keyed {
			name = "idempotency-key"
		}
		b.Run(name, func(b *testing.B) { benchmarkTransfers(b, keyed) })
	}
}

func benchmarkTransfers(b *testing.B, keyed bool) {
	s, _ := newTestStore(b)
	ids := make([]string, 10)
	for i := range ids {
		ids[i] = fmt.Sprintf("bench-%d", i)
		open(b, s, ids[i], "EUR", "1000000000.00")
	}
	const goroutines = 32
	var mu sync.Mutex
	var latencies []time.Duration
	var worker int64
	procs := runtime.GOMAXPROCS(0)
	b.SetParallelism((goroutines + procs - 1) / procs) // 16 x 2 cores = 32
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		mu.Lock()
		worker++
		w := worker
		mu.Unlock()
		rng := rand.New(rand.NewPCG(uint64(w), 3))
		own := make([]time.Duration, 0, 1024)
		for n := 0; pb.Next(); n++ {
			i := rng.IntN(len(ids))
			req := textRequest{From: ids[i], To: ids[(i+1)%len(ids)], Amount: "1.25", Principal: "bench"}
			if keyed {
				req.IdempotencyKey = fmt.Sprintf("%d-%d", w, n)
			}
			t0 := time.Now()
			if _, _, err := s.transferText(context.Background(), req, testMax); err != nil {
				b.Error(err)
				return
			}
			own = append(own, time.Since(t0))
		}
		mu.Lock()
		latencies = append(latencies, own...)
		mu.Unlock()
	})
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "transfers/s")
	b.ReportMetric(float64(percentile(latencies, 0.99).Microseconds())/1000, "p99_ms")
}

// percentile returns the q-th quantile of ds (sorted in place).
func percentile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[min(len(ds)-1, int(q*float64(len(ds))))]
}
