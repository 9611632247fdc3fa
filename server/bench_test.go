package server_test

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/facade-dev/facade/accounts"
)

// BenchmarkTransfers measures transfers per second through HTTP at 32
// concurrent callers next to the same Lua script called directly against
// the same Redis in the same run, and reports the ratio and both p99s.
// Goal: http/direct >= 0.3 with zero errors.
//
//	go test -run '^$' -bench Transfers -benchtime 4000x ./server
func BenchmarkTransfers(b *testing.B) {
	const callers = 32
	e := newEnv(b)
	st := accounts.NewStore(e.rdb, quietLog)
	for _, id := range []string{"1001", "2002"} {
		if _, err := st.Seed(context.Background(), accounts.SeedAccount{ID: id, Owner: "x", Currency: "EUR", Balance: "900000000.00"}); err != nil {
			b.Fatal(err)
		}
	}
	alice := token(b, "alice", "customer")
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: callers}}
	direct := func(i int) error {
		from, to := "1001", "2002"
		if i%2 == 1 {
			from, to = to, from
		}
		_, _, err := st.Transfer(context.Background(), accounts.TransferRequest{From: from, To: to, Amount: "0.01", Principal: "alice"}, 1_000_000)
		return err
	}
	viaHTTP := func(i int) error {
		from, to := "1001", "2002"
		if i%2 == 1 {
			from, to = to, from
		}
		r, _ := http.NewRequest("POST", e.url+"/rs/transfer/from/"+from+"/to/"+to+"/amount/0.01", nil)
		r.Header.Set("Authorization", "Bearer "+alice)
		r.Header.Set("X-XSRF-TOKEN", "bench")
		res, err := client.Do(r)
		if err != nil {
			return err
		}
		res.Body.Close()
		if res.StatusCode != http.StatusCreated {
			return fmt.Errorf("status %d", res.StatusCode)
		}
		return nil
	}
	b.ResetTimer()
	d := runLoad(b.N, callers, direct)
	h := runLoad(b.N, callers, viaHTTP)
	b.StopTimer()
	b.ReportMetric(d.rate, "direct_tps")
	b.ReportMetric(h.rate, "http_tps")
	b.ReportMetric(h.rate/d.rate, "http/direct")
	b.ReportMetric(float64(d.p99.Microseconds())/1000, "direct_p99_ms")
	b.ReportMetric(float64(h.p99.Microseconds())/1000, "http_p99_ms")
	b.ReportMetric(float64(d.errors+h.errors), "errors")
	if d.errors+h.errors > 0 {
		b.Errorf("errors: direct %d, http %d", d.errors, h.errors)
	}
}

type loadResult struct {
	rate   float64
	p99    time.Duration
	errors int64
}

// runLoad runs n calls of op from callers goroutines and measures them.
func runLoad(n, callers int, op func(i int) error) loadResult {
	var next, errs atomic.Int64
	lat := make([][]time.Duration, callers)
	var wg sync.WaitGroup
	start := time.Now()
	for c := 0; c < callers; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				t0 := time.Now()
				if err := op(i); err != nil {
					errs.Add(1)
				}
				lat[c] = append(lat[c], time.Since(t0))
			}
		}(c)
	}
	wg.Wait()
	elapsed := time.Since(start)
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	p99 := time.Duration(0)
	if len(all) > 0 {
		p99 = all[len(all)*99/100]
	}
	return loadResult{rate: float64(n) / elapsed.Seconds(), p99: p99, errors: errs.Load()}
}
