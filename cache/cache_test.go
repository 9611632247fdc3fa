package cache

import (
	"bytes"
	"context"
	"errors"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/internal/testkit/testclock"
	"github.com/facade-dev/facade/internal/testkit/testredis"
)

func TestMain(m *testing.M) { testredis.Main(m) }

// upstream is a fake upstream document source that counts its calls. When
// gate is set, every call blocks until it is closed (or the fetch's ctx ends).
type upstream struct {
	calls   atomic.Int32
	body    []byte
	err     error
	gate    chan struct{}
	started chan struct{} // closed by the first call
	once    sync.Once
}

func newUpstream(body string) *upstream {
	return &upstream{body: []byte(body), started: make(chan struct{})}
}

func (u *upstream) fetch(ctx context.Context) ([]byte, error) {
	u.calls.Add(1)
	u.once.Do(func() { close(u.started) })
	if u.gate != nil {
		select {
		case <-u.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return u.body, u.err
}

func failing(err error) func(context.Context) ([]byte, error) {
	return func(context.Context) ([]byte, error) { return nil, err }
}

var errUpstream = facade.Wrap(facade.ErrUpstreamBad, errors.New("HTTP 500 from bamboo"))

func mustGet(t *testing.T, c *Cache, key string, fetch func(context.Context) ([]byte, error)) Entry {
	t.Helper()
	e, err := c.Get(context.Background(), key, fetch)
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	return e
}

// secondClient is another connection to the same database: a second
// service instance.
func secondClient(t *testing.T, rdb *redis.Client) *redis.Client {
	o := rdb.Options()
	c := redis.NewClient(&redis.Options{Addr: o.Addr, DB: o.DB})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestSecondReadIsHitWithoutFetch(t *testing.T) {
	c := New(testredis.Client(t), Config{})
	up := newUpstream(`{"projects":{"size":1}}`)

	first := mustGet(t, c, "projects:expand=plans", up.fetch)
	second := mustGet(t, c, "projects:expand=plans", up.fetch)

	if first.Status != Miss || second.Status != Hit {
		t.Fatalf("statuses = %s, %s; want MISS, HIT", first.Status, second.Status)
	}
	if up.calls.Load() != 1 {
		t.Fatalf("upstream called %d times, want 1", up.calls.Load())
	}
	if !bytes.Equal(second.Body, up.body) || second.Version != first.Version || !second.StoredAt.Equal(first.StoredAt) {
		t.Fatalf("HIT = %+v, want the MISS's body, version and stored-at (%+v)", second, first)
	}
}

func TestVersionFollowsTheDocument(t *testing.T) {
	c := New(testredis.Client(t), Config{})
	a1 := mustGet(t, c, "a", newUpstream("same").fetch)
	a2 := mustGet(t, c, "b", newUpstream("same").fetch)
	b := mustGet(t, c, "c", newUpstream("different").fetch)
	if a1.Version != a2.Version || a1.Version == b.Version || len(a1.Version) != 32 {
		t.Fatalf("versions %q %q %q: equal bodies must share one, different bodies differ", a1.Version, a2.Version, b.Version)
	}
}

func TestConcurrentColdReadsInOneInstanceFetchOnce(t *testing.T) {
	c := New(testredis.Client(t), Config{})
	var polled atomic.Int32 // callers that polled Redis for their own instance's lock
	c.waitHook = func() { polled.Add(1) }
	up := newUpstream("doc")
	up.gate = make(chan struct{})

	results := getConcurrently(c, "results:PROJ-PLAN", up.fetch, 40)
	<-up.started
	close(up.gate)
	for _, r := range collect(t, results, 40) {
		if !bytes.Equal(r.Body, up.body) || (r.Status != Miss && r.Status != Hit) {
			t.Fatalf("got %q %s, want the document as MISS or HIT", r.Body, r.Status)
		}
	}
	if n := up.calls.Load(); n != 1 {
		t.Fatalf("40 concurrent cold reads made %d upstream calls, want 1", n)
	}
	if n := polled.Load(); n != 0 {
		t.Fatalf("%d callers polled Redis; within one instance they must share the fill", n)
	}
}

func TestTwoInstancesShareOneFetch(t *testing.T) {
	rdb := testredis.Client(t)
	one := New(rdb, Config{})
	two, waiting := waitingInstance(t, rdb, Config{})
	up := newUpstream("doc")
	up.gate = make(chan struct{})

	r1 := getConcurrently(one, "projects:all", up.fetch, 20)
	<-up.started
	r2 := getConcurrently(two, "projects:all", up.fetch, 20)
	awaitWaiter(t, waiting, up)
	close(up.gate)
	all := append(collect(t, r1, 20), collect(t, r2, 20)...)
	for _, r := range all {
		if !bytes.Equal(r.Body, up.body) {
			t.Fatalf("got %q, want the document", r.Body)
		}
	}
	if n := up.calls.Load(); n != 1 {
		t.Fatalf("2 instances x 20 cold reads made %d upstream calls, want 1", n)
	}
}

func TestStaleServedWhenUpstreamFailsAfterTTL(t *testing.T) {
	t.Parallel()
	clock := testclock.New()
	cfg := Config{TTL: time.Minute, Stale: time.Minute, Now: clock.Now}
	c := New(testredis.Client(t), cfg)
	old := mustGet(t, c, "k", newUpstream("old").fetch)
	clock.AdvancePast(old.StoredAt.Add(cfg.TTL))

	var calls atomic.Int32
	e, err := c.Get(context.Background(), "k", func(context.Context) ([]byte, error) {
		calls.Add(1)
		return nil, errUpstream
	})
	if err != nil || e.Status != Stale || string(e.Body) != "old" || e.Version != old.Version {
		t.Fatalf("got %q %s %v; want the old document as STALE", e.Body, e.Status, err)
	}
	if calls.Load() != 1 {
		t.Fatalf("an expired entry must be refetched once; upstream called %d times", calls.Load())
	}
	// A later success replaces it.
	fresh := mustGet(t, c, "k", newUpstream("new").fetch)
	if fresh.Status != Miss || string(fresh.Body) != "new" || fresh.Version == old.Version {
		t.Fatalf("after recovery got %q %s, want new as MISS with a new version", fresh.Body, fresh.Status)
	}
}

func TestPastStaleWindowTheErrorIsReturned(t *testing.T) {
	t.Parallel()
	clock := testclock.New()
	cfg := Config{TTL: time.Minute, Stale: 10 * time.Minute, Now: clock.Now}
	c := New(testredis.Client(t), cfg)
	old := mustGet(t, c, "k", newUpstream("old").fetch)
	clock.AdvancePast(old.StoredAt.Add(cfg.TTL + cfg.Stale))

	e, err := c.Get(context.Background(), "k", failing(errUpstream))
	if err != errUpstream || e.Body != nil {
		t.Fatalf("got %q, %v; want no body and the upstream error itself", e.Body, err)
	}
}

func TestDisabledStaleServesNothingOld(t *testing.T) {
	t.Parallel()
	clock := testclock.New()
	cfg := Config{TTL: time.Minute, Stale: -1, Now: clock.Now}
	c := New(testredis.Client(t), cfg)
	old := mustGet(t, c, "k", newUpstream("old").fetch)
	clock.AdvancePast(old.StoredAt.Add(cfg.TTL))
	if _, err := c.Get(context.Background(), "k", failing(errUpstream)); err != errUpstream {
		t.Fatalf("with Stale < 0 got %v, want the upstream error", err)
	}
}

func TestColdFailureReturnsErrorUnchangedAndCachesNothing(t *testing.T) {
	rdb := testredis.Client(t)
	c := New(rdb, Config{})
	notFound := facade.ErrNotFound

	for _, want := range []error{errUpstream, notFound} {
		e, err := c.Get(context.Background(), "results:X-Y", failing(want))
		if err != want || e.Status != "" {
			t.Fatalf("got %+v, %v; want the fetch's error itself", e, err)
		}
	}
	if keys := rdb.Keys(context.Background(), "*").Val(); len(keys) != 0 {
		t.Fatalf("a failed fetch left keys %v in Redis", keys)
	}
	up := newUpstream("now it exists")
	if e := mustGet(t, c, "results:X-Y", up.fetch); e.Status != Miss || up.calls.Load() != 1 {
		t.Fatalf("after failures the next read must fetch; got %s with %d calls", e.Status, up.calls.Load())
	}
}

func TestCancelledCallerReturnsWhileSharedFetchCompletes(t *testing.T) {
	c := New(testredis.Client(t), Config{})
	up := newUpstream("slow doc")
	up.gate = make(chan struct{})

	ctx, cancel := context.WithCancel(context.Background())
	leaving := make(chan error, 1)
	go func() {
		_, err := c.Get(ctx, "k", up.fetch)
		leaving <- err
	}()
	<-up.started
	staying := getConcurrently(c, "k", up.fetch, 1)
	cancel()

	select {
	case err := <-leaving:
		if !errors.Is(err, context.Canceled) || !errors.Is(err, facade.ErrUpstreamTimeout) {
			t.Fatalf("cancelled caller got %v; want ErrUpstreamTimeout wrapping context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a cancelled caller waited for the upstream fetch")
	}
	close(up.gate) // only now may the shared fetch finish
	r := collect(t, staying, 1)[0]
	if string(r.Body) != "slow doc" {
		t.Fatalf("the caller that stayed got %q %s", r.Body, r.Status)
	}
	later := mustGet(t, c, "k", failing(errUpstream))
	if later.Status != Hit || string(later.Body) != "slow doc" || up.calls.Load() != 1 {
		t.Fatalf("got %q %s after %d calls; the fill must have been stored", later.Body, later.Status, up.calls.Load())
	}
}

func TestCallerDeadlineServesStaleWhileUpstreamHangs(t *testing.T) {
	t.Parallel()
	clock := testclock.New()
	cfg := Config{TTL: time.Minute, Now: clock.Now}
	c := New(testredis.Client(t), cfg)
	old := mustGet(t, c, "k", newUpstream("old").fetch)
	clock.AdvancePast(old.StoredAt.Add(cfg.TTL))

	hung := newUpstream("never")
	hung.gate = make(chan struct{})
	defer close(hung.gate)
	// The caller's deadline passes once the fetch hangs upstream (not after
	// a fixed 100 ms, which a slow machine may spend reading the stale copy).
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	go func() {
		<-hung.started
		cancel(context.DeadlineExceeded)
	}()
	e, err := c.Get(ctx, "k", hung.fetch)
	if err != nil || e.Status != Stale || string(e.Body) != "old" {
		t.Fatalf("got %q %s %v; want the old document as STALE", e.Body, e.Status, err)
	}
}

func TestOversizedDocumentIsReturnedNotStored(t *testing.T) {
	t.Parallel()
	rdb := testredis.Client(t)
	clock := testclock.New()
	cfg := Config{TTL: time.Minute, MaxBytes: 1024, Now: clock.Now}
	c := New(rdb, cfg)
	small := mustGet(t, c, "k", newUpstream("small").fetch)
	clock.AdvancePast(small.StoredAt.Add(cfg.TTL))

	big := newUpstream(string(bytes.Repeat([]byte("x"), 2048)))
	for i := range 2 {
		e := mustGet(t, c, "k", big.fetch)
		if e.Status != Miss || len(e.Body) != 2048 || int(big.calls.Load()) != i+1 {
			t.Fatalf("read %d: got %d bytes %s after %d calls; want all 2048 bytes fetched each time", i, len(e.Body), e.Status, big.calls.Load())
		}
	}
	if n := rdb.Exists(context.Background(), docKey("k")).Val(); n != 0 {
		t.Fatal("an oversized document (or its outdated predecessor) is still in Redis")
	}
	// The outdated small version must not come back as STALE.
	if _, err := c.Get(context.Background(), "k", failing(errUpstream)); err != errUpstream {
		t.Fatalf("got %v, want the upstream error", err)
	}
}

func TestWaitersFetchThemselvesAfterDeadHoldersLock(t *testing.T) {
	t.Parallel()
	rdb := testredis.Client(t)
	lockTTL := 300 * time.Millisecond
	c := New(rdb, Config{LockTTL: lockTTL})
	// An instance took the lock and crashed: nobody releases it. The wait
	// is measured from a reading taken before the lock was set, so the time
	// spent between the two cannot shorten it.
	start := time.Now()
	if err := rdb.Set(context.Background(), lockKey(docKey("k")), "dead-instance", lockTTL).Err(); err != nil {
		t.Fatal(err)
	}
	up := newUpstream("doc")
	e := mustGet(t, c, "k", up.fetch)
	if e.Status != Miss || string(e.Body) != "doc" || up.calls.Load() != 1 {
		t.Fatalf("got %q %s after %d calls", e.Body, e.Status, up.calls.Load())
	}
	if waited := time.Since(start); waited < lockTTL-50*time.Millisecond {
		t.Fatalf("fetched after %v, while the dead holder's lock was still live", waited)
	}
}

// waitingInstance returns a second Cache on rdb's database whose fills
// signal on the returned channel when they start waiting for another
// instance's lock.
func waitingInstance(t *testing.T, rdb *redis.Client, cfg Config) (*Cache, chan struct{}) {
	waiting := make(chan struct{}, 1)
	c := New(secondClient(t, rdb), cfg)
	c.waitHook = func() {
		select {
		case waiting <- struct{}{}:
		default:
		}
	}
	return c, waiting
}

// awaitWaiter returns once the waiting instance waits for the lock, and
// fails the test if it fetches instead.
func awaitWaiter(t *testing.T, waiting chan struct{}, up *upstream) {
	t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case <-waiting:
			return
		case <-tick.C:
			if n := up.calls.Load(); n > 1 {
				t.Fatalf("the second instance fetched (%d upstream calls) instead of waiting for the first", n)
			}
		case <-timeout:
			t.Fatal("the second instance never waited for the first one's lock")
		}
	}
}

func TestSlowButLiveHolderKeepsOtherInstancesWaiting(t *testing.T) {
	t.Parallel()
	rdb := testredis.Client(t)
	cfg := Config{LockTTL: 600 * time.Millisecond}
	holder := New(rdb, cfg)
	// The holder extends its lock every LockTTL/3; four extensions take
	// the fetch past the lock's first TTL (on Redis's clock).
	extended := make(chan struct{}, 16)
	holder.extendHook = func() {
		select {
		case extended <- struct{}{}:
		default:
		}
	}
	waiter, waiting := waitingInstance(t, rdb, cfg)
	up := newUpstream("slow doc")
	up.gate = make(chan struct{})

	r1 := getConcurrently(holder, "k", up.fetch, 1)
	<-up.started
	taken := time.Now()
	r2 := getConcurrently(waiter, "k", up.fetch, 1)
	awaitWaiter(t, waiting, up)
	// At least four extensions, and more until the fetch has run past the
	// lock's first TTL, measured from a reading taken after the lock was
	// taken (so it undercounts the lock's age, never overcounts it).
	for n := 0; n < 4 || time.Since(taken) <= cfg.LockTTL; n++ {
		select {
		case <-extended:
		case <-time.After(30 * time.Second):
			t.Fatalf("the holder stopped extending its lock after %d extensions", n)
		}
	}
	close(up.gate)
	all := append(collect(t, r1, 1), collect(t, r2, 1)...)
	if n := up.calls.Load(); n != 1 || string(all[1].Body) != "slow doc" || all[1].Status != Hit {
		t.Fatalf("%d upstream calls, waiter got %q %s; want 1 call and the holder's document as HIT", n, all[1].Body, all[1].Status)
	}
}

func TestFailingFillServesStaleOnEveryInstanceWithOneCall(t *testing.T) {
	t.Parallel()
	rdb := testredis.Client(t)
	clock := testclock.New()
	cfg := Config{TTL: time.Minute, Now: clock.Now}
	holder := New(rdb, cfg)
	waiter, waiting := waitingInstance(t, rdb, cfg)
	old := mustGet(t, holder, "k", newUpstream("old").fetch)
	clock.AdvancePast(old.StoredAt.Add(cfg.TTL))

	down := newUpstream("")
	down.err = errUpstream
	down.gate = make(chan struct{})
	r1 := getConcurrently(holder, "k", down.fetch, 1)
	<-down.started
	r2 := getConcurrently(waiter, "k", down.fetch, 1)
	awaitWaiter(t, waiting, down)
	close(down.gate)
	for _, r := range append(collect(t, r1, 1), collect(t, r2, 1)...) {
		if r.Status != Stale || string(r.Body) != "old" {
			t.Fatalf("got %q %s, want old as STALE", r.Body, r.Status)
		}
	}
	if n := down.calls.Load(); n != 1 {
		t.Fatalf("a failing upstream was called %d times, want once for both instances", n)
	}
}

func TestRedisDownPassesThroughAndCachingResumesAfterwards(t *testing.T) {
	srv := testredis.Start(t, testredis.Options{})
	clock := testclock.New()
	c := New(srv.Client(t), Config{Now: clock.Now})
	srv.Stop()

	up := newUpstream("doc")
	for range 2 {
		e := mustGet(t, c, "k", up.fetch)
		if e.Status != Miss || string(e.Body) != "doc" || e.Version != versionOf(up.body) {
			t.Fatalf("got %q %s, want the document as MISS", e.Body, e.Status)
		}
	}
	if up.calls.Load() != 2 {
		t.Fatalf("upstream called %d times, want every read to pass through", up.calls.Load())
	}
	if _, err := c.Get(context.Background(), "k", failing(errUpstream)); err != errUpstream {
		t.Fatalf("got %v, want the upstream error unchanged", err)
	}

	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	// The bypass window is over only when the clock says so: until then
	// Redis, although back, is not asked.
	for range 2 {
		if e := mustGet(t, c, "k", up.fetch); e.Status != Miss {
			t.Fatalf("inside the bypass window got %s, want MISS (Redis not asked)", e.Status)
		}
	}
	// Past it, one request probes Redis again; its client may need a few
	// tries to redial, so each try moves the clock past a new window.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		clock.Advance(bypassFor)
		if e := mustGet(t, c, "k", up.fetch); e.Status == Hit {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no HIT within 30 s of Redis coming back")
		}
	}
}

func TestPanickingFetchIsAnError(t *testing.T) {
	c := New(testredis.Client(t), Config{})
	_, err := c.Get(context.Background(), "k", func(context.Context) ([]byte, error) { panic("bug") })
	if !errors.Is(err, facade.ErrInternal) {
		t.Fatalf("got %v, want ErrInternal", err)
	}
}

func TestKeysAreHashedAndNamespaced(t *testing.T) {
	rdb := testredis.Client(t)
	c := New(rdb, Config{})
	mustGet(t, c, "projects:expand=plans", newUpstream("a").fetch)
	mustGet(t, c, "Weird key\n{with} *glob* ünïcode\x00", newUpstream("b").fetch)

	shape := regexp.MustCompile(`^facade:cache:doc:(projects|any):\{[0-9a-f]{64}\}$`)
	keys := rdb.Keys(context.Background(), "*").Val()
	if len(keys) != 2 {
		t.Fatalf("keys %v: want two documents and no leftover lock", keys)
	}
	for _, k := range keys {
		if !shape.MatchString(k) {
			t.Fatalf("key %q does not match %s", k, shape)
		}
		if ttl := rdb.PTTL(context.Background(), k).Val(); ttl <= 0 || ttl > DefaultTTL+DefaultStale {
			t.Fatalf("key %q has TTL %v; every key must expire within TTL+Stale", k, ttl)
		}
	}
}

type result struct {
	Entry
	err error
}

func getConcurrently(c *Cache, key string, fetch func(context.Context) ([]byte, error), n int) chan result {
	out := make(chan result, n)
	for range n {
		go func() {
			e, err := c.Get(context.Background(), key, fetch)
			out <- result{e, err}
		}()
	}
	return out
}

func collect(t *testing.T, ch chan result, n int) []result {
	t.Helper()
	var all []result
	for range n {
		r := <-ch
		if r.err != nil {
			t.Fatalf("Get: %v", r.err)
		}
		all = append(all, r)
	}
	return all
}
