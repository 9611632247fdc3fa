package server_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
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
	st := accounts.NewStore(e.rdb, accounts.Config{Log: quietLog})
	for _, id := range []string{"1001", "2002"} {
		if _, err := st.Seed(context.Background(), accounts.SeedAccount{ID: id, Owner: "x", Currency: "EUR", Balance: "900000000.00"}); err != nil {
			b.Fatal(err)
		}
	}
	alice := token(b, "alice", "customer")
	direct := func(_, i int) error {
		from, to := "1001", "2002"
		if i%2 == 1 {
			from, to = to, from
		}
		_, _, err := st.Transfer(context.Background(), accounts.TransferRequest{From: accountID(from), To: accountID(to), Amount: transferAmount("0.01", 1_000_000), Principal: "alice"})
		return err
	}
	viaHTTP := transfersOverHTTP(b, e.url, alice, callers)
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

// runLoad runs n calls of op(caller, i) from callers goroutines and
// measures them.
func runLoad(n, callers int, op func(caller, i int) error) loadResult {
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
				if err := op(c, i); err != nil {
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

// rawConn is a minimal HTTP/1.1 keep-alive client for load generation.
type rawConn struct {
	conn net.Conn
	r    *bufio.Reader
}

func dialRaw(tb testing.TB, baseURL string) *rawConn {
	tb.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(baseURL, "http://"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close() })
	return &rawConn{conn: conn, r: bufio.NewReaderSize(conn, 16<<10)}
}

// do sends one pre-built request and reads the whole response.
func (rc *rawConn) do(request []byte) (int, error) {
	if _, err := rc.conn.Write(request); err != nil {
		return 0, err
	}
	res, err := http.ReadResponse(rc.r, nil)
	if err != nil {
		return 0, err
	}
	_, err = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode, err
}

// BenchmarkTransferCost measures what one transfer through HTTP costs the
// process, client included (the same for any build): CPU µs a transfer
// (getrusage, user + system) and allocations a transfer (-benchmem), at 32
// concurrent callers, info access lines written (to io.Discard) and the
// rate limiter on. Both figures depend little on the machine's other load,
// so builds can be compared on a shared machine:
//
//	go test -run '^$' -bench TransferCost -benchmem -count 6 ./server
func BenchmarkTransferCost(b *testing.B) {
	const callers = 32
	e := newEnv(b, withProductionLog(io.Discard), withRateLimit(1_000_000))
	st := accounts.NewStore(e.rdb, accounts.Config{Log: quietLog})
	for _, id := range []string{"1001", "2002"} {
		if _, err := st.Seed(context.Background(), accounts.SeedAccount{ID: id, Owner: "x", Currency: "EUR", Balance: "900000000.00"}); err != nil {
			b.Fatal(err)
		}
	}
	alice := token(b, "alice", "customer")
	viaHTTP := transfersOverHTTP(b, e.url, alice, callers)
	runLoad(200, callers, viaHTTP) // warm: connections, script cache, limiter buckets
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	h := runLoad(b.N, callers, viaHTTP)
	cpu := processCPU() - cpu0
	b.StopTimer()
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu_us/op")
	if h.errors > 0 {
		b.Errorf("errors: %d", h.errors)
	}
}

// processCPU is this process's user and system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// transfersOverHTTP returns a load function that has caller c send its i-th
// transfer of 0.01 between 1001 and 2002, back and forth, as a raw
// pre-built request on its own keep-alive connection (as wrk would: the
// figure is the service's cost, not net/http client machinery running on
// the same two cores), and fails unless it is answered 201.
func transfersOverHTTP(b *testing.B, url, token string, callers int) func(c, i int) error {
	conns := make([]*rawConn, callers)
	for c := range conns {
		conns[c] = dialRaw(b, url)
	}
	reqs := [2][]byte{}
	for i, path := range []string{"/rs/transfer/from/1001/to/2002/amount/0.01", "/rs/transfer/from/2002/to/1001/amount/0.01"} {
		reqs[i] = []byte("POST " + path + " HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer " + token +
			"\r\nX-XSRF-TOKEN: bench\r\nContent-Length: 0\r\n\r\n")
	}
	return func(c, i int) error {
		status, err := conns[c].do(reqs[i%2])
		if err == nil && status != http.StatusCreated {
			err = fmt.Errorf("status %d", status)
		}
		return err
	}
}
