package ratelimit

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade/internal/testclock"
	"github.com/facade-dev/facade/internal/testredis"
)

func TestMain(m *testing.M) { testredis.Main(m) }

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func newLimiter(t *testing.T, rdb redis.UniversalClient, limit Limit, interval time.Duration) *Limiter {
	t.Helper()
	l, err := New(rdb, "test:rl:", limit, Options{Interval: interval, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// hammer calls Allow for key as fast as it can for d and counts the answers.
func hammer(l *Limiter, key string, d time.Duration) (allowed, refused int) {
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		ok, retry, err := l.Allow(context.Background(), key)
		switch {
		case err != nil:
			panic(err)
		case ok:
			allowed++
		case retry <= 0:
			panic("refused without a positive retry-after")
		default:
			refused++
		}
	}
	return allowed, refused
}

// callN calls Allow for key n times at once and counts the admissions.
func callN(l *Limiter, key string, n int) (allowed, refused int) {
	for range n {
		ok, _, err := l.Allow(context.Background(), key)
		switch {
		case err != nil:
			panic(err)
		case ok:
			allowed++
		default:
			refused++
		}
	}
	return allowed, refused
}

func TestOneInstanceAdmitsTheBurstThenTheRate(t *testing.T) {
	rdb := testredis.Client(t)
	l := newLimiter(t, rdb, PerSecond(20, 10), 50*time.Millisecond)
	const d = 1500 * time.Millisecond
	allowed, refused := hammer(l, "alice", d)
	// The burst at once, then 20 a second.
	lo, hi := 10+int(d.Seconds()*20)-3, 10+int(d.Seconds()*20)+2
	if allowed < lo || allowed > hi || refused == 0 {
		t.Fatalf("in %s: %d allowed, %d refused; want %d-%d allowed", d, allowed, refused, lo, hi)
	}
	// Another key has its own bucket.
	if ok, _, _ := l.Allow(context.Background(), "bob"); !ok {
		t.Fatal("bob refused: keys share a bucket")
	}
}

func TestRefusalSaysWhenToComeBack(t *testing.T) {
	rdb := testredis.Client(t)
	clock := testclock.New()
	l, err := New(rdb, "test:rl:", PerSecond(2, 1), Options{Interval: time.Hour, Logger: quiet, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if ok, _, _ := l.Allow(ctx, "k"); !ok {
		t.Fatal("first request refused")
	}
	ok, retry, _ := l.Allow(ctx, "k")
	if ok || retry <= 0 || retry > 500*time.Millisecond {
		t.Fatalf("second request at once: ok %v, retry after %s; want refused, (0, 500ms]", ok, retry)
	}
	clock.Advance(retry - time.Millisecond)
	if ok, _, _ := l.Allow(ctx, "k"); ok {
		t.Fatalf("admitted a millisecond before the %s it asked to wait", retry)
	}
	clock.Advance(time.Millisecond)
	if ok, _, _ := l.Allow(ctx, "k"); !ok {
		t.Fatalf("refused again after waiting the %s it asked for", retry)
	}
}

// Two instances hammering one key together get what one would grant plus
// at most the stated bound (package comment): (N-1) x (Burst + Rate x
// Interval); two separate limits would grant twice the whole.
func TestTwoInstancesShareOneLimitWithinTheBound(t *testing.T) {
	rdb := testredis.Client(t)
	const rate, burst, interval, d = 50, 20, 50 * time.Millisecond, 2 * time.Second
	a := newLimiter(t, rdb, PerSecond(rate, burst), interval)
	b := newLimiter(t, redis.NewClient(rdb.Options()), PerSecond(rate, burst), interval)
	var wg sync.WaitGroup
	var total, refused atomic.Int64
	for _, l := range []*Limiter{a, b, a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, no := hammer(l, "shared", d)
			total.Add(int64(ok))
			refused.Add(int64(no))
		}()
	}
	wg.Wait()
	one := burst + int(d.Seconds()*rate)
	bound := (2 - 1) * (burst + int(rate*interval.Seconds()+0.999))
	got := int(total.Load())
	if got < one-5 || got > one+bound+2 {
		t.Fatalf("two instances for %s: %d allowed; want %d (one instance) to %d (plus the bound %d)", d, got, one, one+bound, bound)
	}
	if separate := 2 * one; got >= separate {
		t.Fatalf("%d allowed: as many as two separate limits (%d)", got, separate)
	}
	t.Logf("%d allowed, %d refused (one instance alone: %d, bound +%d)", got, refused.Load(), one, bound)
}

// The excess two instances admit within one interval is settled as debt:
// after a settlement, both refuse until it is repaid.
func TestExcessIsRepaidAfterSettlement(t *testing.T) {
	rdb := testredis.Client(t)
	const interval = 300 * time.Millisecond
	a := newLimiter(t, rdb, PerSecond(1, 10), interval)
	b := newLimiter(t, redis.NewClient(rdb.Options()), PerSecond(1, 10), interval)
	ctx := context.Background()
	// Both learn the bucket (one direct request each), then spend the
	// rest locally before any settlement.
	// By count, not by time: a busy machine must not turn 20 quick calls
	// into a few slow ones (they take microseconds; the interval is 300 ms).
	na, _ := callN(a, "k", 20)
	nb, _ := callN(b, "k", 20)
	if na+nb < 15 {
		t.Fatalf("%d+%d of 20 calls each allowed: want the two instances to overshoot the burst of 10 before settling", na, nb)
	}
	// After a settlement the bucket runs (na+nb) x 1 s ahead, minus
	// the time passed: beyond the 10 s tolerance for seconds yet.
	time.Sleep(2 * interval)
	for _, l := range []*Limiter{a, b} {
		if ok, retry, _ := l.Allow(ctx, "k"); ok || retry <= 0 {
			t.Fatalf("after settling %d admissions of a burst of 10: ok %v, retry after %s", na+nb, ok, retry)
		}
	}
}

// Deciding locally means Redis sees one call per key per interval, not one
// per request.
func TestSettlesInBatchesNotPerRequest(t *testing.T) {
	rdb := testredis.Client(t)
	l := newLimiter(t, rdb, PerSecond(100000, 100000), 50*time.Millisecond)
	before := scriptCalls(t, rdb)
	const keys, requests = 20, 20000
	for i := range requests {
		if ok, _, err := l.Allow(context.Background(), "p"+strconv.Itoa(i%keys)); !ok || err != nil {
			t.Fatalf("request %d: ok %v err %v", i, ok, err)
		}
	}
	time.Sleep(120 * time.Millisecond)
	calls := scriptCalls(t, rdb) - before
	if calls > requests/10 {
		t.Fatalf("%d script calls for %d requests on %d keys", calls, requests, keys)
	}
	t.Logf("%d Redis script calls for %d requests", calls, requests)
}

func scriptCalls(t *testing.T, rdb *redis.Client) int {
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(info, "\n") {
		if strings.HasPrefix(line, "cmdstat_evalsha:calls=") || strings.HasPrefix(line, "cmdstat_eval:calls=") {
			v := strings.TrimPrefix(strings.SplitN(line, ",", 2)[0], line[:strings.Index(line, "=")+1])
			c, _ := strconv.Atoi(v)
			n += c
		}
	}
	return n
}

// With Redis down, requests are let through and the error is returned to
// be logged, whether the key was known locally or not.
func TestRedisDownLetsRequestsThrough(t *testing.T) {
	srv := testredis.Start(t, testredis.Options{})
	l := newLimiter(t, srv.Client(t), PerSecond(1, 1), 20*time.Millisecond)
	ctx := context.Background()
	if ok, _, err := l.Allow(ctx, "known"); !ok || err != nil {
		t.Fatalf("first request: ok %v err %v", ok, err)
	}
	if ok, _, _ := l.Allow(ctx, "known"); ok {
		t.Fatal("second request within the burst of 1 allowed")
	}
	srv.Stop()
	// The next failed settlement (the client retries a few times first)
	// drops the local view.
	deadline := time.Now().Add(5 * time.Second)
	for {
		if ok, _, err := l.Allow(ctx, "known"); ok && err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("known key still refused 5 s after Redis went down")
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, key := range []string{"known", "new"} {
		for i := range 3 {
			if ok, _, err := l.Allow(ctx, key); !ok || err == nil {
				t.Fatalf("%s request %d with Redis down: ok %v err %v; want allowed with the error", key, i, ok, err)
			}
		}
	}
}
