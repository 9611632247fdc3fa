package ratelimit

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade/internal/testkit/testclock"
	"github.com/facade-dev/facade/internal/testkit/testredis"
)

func TestMain(m *testing.M) { testredis.Main(m) }

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func newLimiter(t *testing.T, rdb redis.UniversalClient, limit Limit, interval time.Duration) *Limiter {
	t.Helper()
	l, err := New(rdb, "test:rl:", limit, Config{Interval: interval, Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// clocked is a limiter on a test clock that never settles by itself
// (an interval of an hour): the test moves its time and calls settle when
// it wants a settlement, so a busy machine changes nothing it counts.
// Only the first request of a key asks Redis, whose clock barely moves
// during a test.
func clocked(t *testing.T, rdb redis.UniversalClient, limit Limit, clock *testclock.Clock) *Limiter {
	t.Helper()
	l, err := New(rdb, "test:rl:", limit, Config{Interval: time.Hour, Log: quiet, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// drain calls Allow for key until it is refused and counts the
// admissions; the refusal's retry-after is returned too.
func drain(t *testing.T, l *Limiter, key string) (allowed int, retry time.Duration) {
	t.Helper()
	for range 100_000 {
		ok, retry, err := l.Allow(context.Background(), key)
		switch {
		case err != nil:
			t.Fatal(err)
		case !ok && retry <= 0:
			t.Fatal("refused without a positive retry-after")
		case !ok:
			return allowed, retry
		}
		allowed++
	}
	t.Fatalf("%s never refused", key)
	return 0, 0
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
	clock := testclock.New()
	l := clocked(t, testredis.Client(t), PerSecond(20, 10), clock)
	// The burst at once (the first request asked of Redis, the rest
	// decided here)...
	if n, retry := drain(t, l, "alice"); n != 10 || retry != 50*time.Millisecond {
		t.Fatalf("at once: %d allowed, then retry after %s; want the burst of 10, then 50ms", n, retry)
	}
	// ... then 20 a second, spread as the requests come...
	total := 0
	for range 30 {
		clock.Advance(100 * time.Millisecond)
		n, _ := drain(t, l, "alice")
		total += n
	}
	if total != 60 {
		t.Fatalf("3 s in steps of 100 ms: %d allowed; want 60", total)
	}
	// ... and after an idle while, the burst again, never more.
	clock.Advance(time.Minute)
	if n, _ := drain(t, l, "alice"); n != 10 {
		t.Fatalf("after an idle minute: %d allowed; want the burst of 10", n)
	}
	// Another key has its own bucket.
	if ok, _, _ := l.Allow(context.Background(), "bob"); !ok {
		t.Fatal("bob refused: keys share a bucket")
	}
}

func TestRefusalSaysWhenToComeBack(t *testing.T) {
	clock := testclock.New()
	l := clocked(t, testredis.Client(t), PerSecond(2, 1), clock)
	ctx := context.Background()
	if ok, _, _ := l.Allow(ctx, "k"); !ok {
		t.Fatal("first request refused")
	}
	ok, retry, _ := l.Allow(ctx, "k")
	if ok || retry <= 0 || retry > 500*time.Millisecond {
		t.Fatalf("second request at once: ok %v, retry after %s; want refused, (0, 500ms]", ok, retry)
	}
	clock.Advance(retry - time.Microsecond)
	if ok, _, _ := l.Allow(ctx, "k"); ok {
		t.Fatalf("admitted before the %s it asked for had passed", retry)
	}
	clock.Advance(time.Microsecond)
	if ok, _, _ := l.Allow(ctx, "k"); !ok {
		t.Fatalf("refused again after waiting the %s it asked for", retry)
	}
}

// Two instances spending one key within one interval get what one would
// grant plus at most the stated bound (package comment): (N-1) x (Burst +
// Rate x Interval); two separate limits would grant twice the whole. After
// the settlement both refuse: the excess is debt.
func TestTwoInstancesShareOneLimitWithinTheBound(t *testing.T) {
	rdb := testredis.Client(t)
	const rate, burst, interval = 50, 20, 100 * time.Millisecond
	clock := testclock.New()
	a := clocked(t, rdb, PerSecond(rate, burst), clock)
	b := clocked(t, redis.NewClient(rdb.Options()), PerSecond(rate, burst), clock)
	total := 0
	for range 10 { // one interval in ten steps
		for _, l := range []*Limiter{a, b} {
			n, _ := drain(t, l, "shared")
			total += n
		}
		clock.Advance(interval / 10)
	}
	one := burst + int(rate*interval.Seconds())
	bound := (2 - 1) * (burst + int(rate*interval.Seconds()))
	if total < one || total > one+bound {
		t.Fatalf("two instances within one interval: %d allowed; want %d (one instance) to %d (plus the bound %d)", total, one, one+bound, bound)
	}
	a.settle(context.Background())
	b.settle(context.Background())
	for _, l := range []*Limiter{a, b} {
		if ok, retry, _ := l.Allow(context.Background(), "shared"); ok || retry <= 0 {
			t.Fatalf("after settling %d admissions: ok %v, retry after %s", total, ok, retry)
		}
	}
}

// The excess two instances admit before a settlement is settled as debt:
// after one, both refuse until it is repaid.
func TestExcessIsRepaidAfterSettlement(t *testing.T) {
	rdb := testredis.Client(t)
	clock := testclock.New()
	a := clocked(t, rdb, PerSecond(1, 10), clock)
	b := clocked(t, redis.NewClient(rdb.Options()), PerSecond(1, 10), clock)
	ctx := context.Background()
	// Both learn the bucket (one direct request each), then spend the
	// rest locally before any settlement.
	na, _ := callN(a, "k", 20)
	nb, _ := callN(b, "k", 20)
	if na+nb < 15 {
		t.Fatalf("%d+%d of 20 calls each allowed: want the two instances to overshoot the burst of 10 before settling", na, nb)
	}
	// Before settling, each still decides from its own view...
	clock.Advance(time.Second)
	if ok, _, _ := a.Allow(ctx, "k"); !ok {
		t.Fatal("a refused a refilled request before any settlement")
	}
	// ... after it, the bucket runs (na+nb+1) x 1 s ahead: beyond the
	// 10 s tolerance for seconds yet.
	a.settle(ctx)
	b.settle(ctx)
	for _, l := range []*Limiter{a, b} {
		if ok, retry, _ := l.Allow(ctx, "k"); ok || retry <= 0 {
			t.Fatalf("after settling %d admissions of a burst of 10: ok %v, retry after %s", na+nb+1, ok, retry)
		}
	}
}

// Deciding locally means Redis sees one call per new key, and then one
// call per group of keys (settleGroups) per settlement, not one per
// request or per key.
func TestSettlesInBatchesNotPerRequest(t *testing.T) {
	rdb := testredis.Client(t)
	l := clocked(t, rdb, PerSecond(1000, 100000), testclock.New())
	const keys, requests = 200, 20000
	before := scriptCalls(t, rdb)
	for i := range requests {
		if ok, _, err := l.Allow(context.Background(), "p"+strconv.Itoa(i%keys)); !ok || err != nil {
			t.Fatalf("request %d: ok %v err %v", i, ok, err)
		}
	}
	if calls := scriptCalls(t, rdb) - before; calls != keys {
		t.Fatalf("%d script calls for %d requests on %d keys before settling; want one per key", calls, requests, keys)
	}
	before = scriptCalls(t, rdb)
	settledAt := redisNow(t, rdb)
	if !l.settle(context.Background()) {
		t.Fatal("settlement failed")
	}
	if calls := scriptCalls(t, rdb) - before; calls > settleGroups {
		t.Fatalf("%d script calls to settle %d keys; want at most %d, one per group", calls, keys, settleGroups)
	}
	// The settlement counted every admission: each bucket runs 100
	// requests (100 ms at 1,000/s) ahead of Redis's clock as it stood
	// when the settlement began.
	for _, key := range []string{"p0", "p199"} {
		assertAhead(t, rdb, key, settledAt, 99_000)
	}
}

// redisNow reads Redis's clock, the one the buckets run on.
func redisNow(t *testing.T, rdb redis.UniversalClient) int64 {
	t.Helper()
	now, err := rdb.Time(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return now.UnixMicro()
}

// assertAhead fails unless key's bucket runs at least want microseconds
// ahead of since, a reading of Redis's clock taken before the settlement.
// Measuring from before the settlement, not from after it, keeps a busy
// machine's delay between the two calls out of the figure.
func assertAhead(t *testing.T, rdb redis.UniversalClient, key string, since, want int64) {
	t.Helper()
	tat, err := rdb.Get(context.Background(), BucketKey("test:rl:", key)).Int64()
	if err != nil || tat-since < want {
		t.Fatalf("bucket %s: %d us ahead of Redis's clock before settling (%v); want at least %d", key, tat-since, err, want)
	}
}

// In Redis Cluster a script call may touch the keys of one slot only: each
// call of a settlement holds the keys of one group (one hash tag), so
// settling many principals works there too, whatever slots their groups
// land on.
func TestSettlesOnRedisCluster(t *testing.T) {
	cluster := testredis.StartCluster(t, 3)
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cluster.Addrs})
	t.Cleanup(func() { _ = rdb.Close() })
	l := clocked(t, rdb, PerSecond(1000, 100000), testclock.New())
	ctx := context.Background()
	const keys = 100
	for i := range 10 * keys {
		if ok, _, err := l.Allow(ctx, "p"+strconv.Itoa(i%keys)); !ok || err != nil {
			t.Fatalf("request %d: ok %v err %v", i, ok, err)
		}
	}
	settledAt := redisNow(t, rdb)
	if !l.settle(ctx) {
		t.Fatal("settlement failed on the cluster")
	}
	// Ten admissions each: the buckets run 10 ms ahead of the clock as it
	// stood before the settlement (the first admission was Redis's own,
	// before that reading, so at least nine of them count from it).
	for _, key := range []string{"p0", "p99"} {
		assertAhead(t, rdb, key, settledAt, 9_000)
	}
}

// scriptCalls counts the script calls Redis has carried out. A call that
// failed (NOSCRIPT, before the client sends the script itself on a server
// that has not seen it yet) is left out: it did no work.
func scriptCalls(t *testing.T, rdb *redis.Client) int {
	t.Helper()
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(info, "\n") {
		name, stats, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || (name != "cmdstat_evalsha" && name != "cmdstat_eval") {
			continue
		}
		n += commandStat(stats, "calls") - commandStat(stats, "failed_calls")
	}
	return n
}

// commandStat reads one field of an INFO commandstats line's values
// ("calls=3,usec=40,...").
func commandStat(stats, field string) int {
	for _, kv := range strings.Split(stats, ",") {
		if k, v, _ := strings.Cut(kv, "="); k == field {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	return 0
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
	deadline := time.Now().Add(30 * time.Second)
	for {
		if ok, _, err := l.Allow(ctx, "known"); ok && err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("known key still refused 30 s after Redis went down")
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

// TestSpendCountsInRedisAtOnce: Spend takes from the one bucket in Redis,
// so two limiters (two instances) share a burst exactly, with no
// settlement between them; Peek looks without taking, and says no once
// the burst is spent; nothing is kept locally.
func TestSpendCountsInRedisAtOnce(t *testing.T) {
	rdb := testredis.Client(t)
	limit := Limit{Rate: 3, Period: time.Minute, Burst: 3}
	a, b := newLimiter(t, rdb, limit, time.Hour), newLimiter(t, rdb, limit, time.Hour)
	ctx := context.Background()
	for i := range 10 {
		if ok, err := a.Peek(ctx, "10.0.0.1"); err != nil || !ok {
			t.Fatalf("peek %d before any spend: %v %v", i, ok, err)
		}
	}
	spent := 0
	for i := range 6 {
		l := a
		if i%2 == 1 {
			l = b
		}
		ok, err := l.Spend(ctx, "10.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			spent++
		}
	}
	if spent != 3 {
		t.Errorf("two instances spent %d of a burst of 3", spent)
	}
	for _, l := range []*Limiter{a, b} {
		if ok, err := l.Peek(ctx, "10.0.0.1"); err != nil || ok {
			t.Errorf("peek after the burst: %v %v, want refused", ok, err)
		}
		if ok, _ := l.Peek(ctx, "10.0.0.2"); !ok {
			t.Error("another key refused")
		}
		if n := len(l.buckets); n != 0 {
			t.Errorf("%d local buckets after Spend and Peek, want none", n)
		}
	}
}
