package auth

import (
	"context"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/internal/testkit/testclock"
	"github.com/facade-dev/facade/internal/testkit/testredis"
	"github.com/facade-dev/facade/redisdb"
)

// TestRecheckIsOneCallPerSessionAcrossInstances: when a session is due,
// many requests at once on two instances (two Sessions on one Redis) ask
// the provider once; the refresh token is kept sealed, never in clear.
func TestRecheckIsOneCallPerSessionAcrossInstances(t *testing.T) {
	clock := testclock.New()
	rdb := testredis.Client(t)
	key := make([]byte, 32)
	var calls atomic.Int32
	instance := func() *Sessions {
		s, err := NewSessions(rdb, SessionConfig{Keys: [][]byte{key}, Recheck: 15 * time.Minute, Now: clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		s.refresher = func(ctx context.Context, rt string) (facade.Principal, string, bool, error) {
			calls.Add(1)
			time.Sleep(50 * time.Millisecond) // the provider takes a while: the others arrive meanwhile
			return facade.Principal{ID: "omar", Groups: []string{"new"}}, rt, false, nil
		}
		return s
	}
	a, b := instance(), instance()
	rec, cookies, err := a.Issue(context.Background(), facade.Principal{ID: "omar"}, time.Time{},
		ProviderSession{RefreshToken: "the-refresh-token-in-clear"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if rec.Refresh == "" || rec.Refresh == "the-refresh-token-in-clear" {
		t.Fatalf("refresh token kept as %q", rec.Refresh)
	}
	clock.Advance(16 * time.Minute)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := httptest.NewRequest("GET", "/auth/me", nil)
			r.AddCookie(cookies[0])
			s := a
			if i%2 == 1 {
				s = b
			}
			if _, ok, err := s.Open(context.Background(), r, ""); !ok || err != nil {
				t.Errorf("open: %v %v", ok, err)
			}
		}()
	}
	wg.Wait()
	if n := calls.Load(); n != 1 {
		t.Errorf("the provider was asked %d times for one session in one interval", n)
	}
	r := httptest.NewRequest("GET", "/auth/me", nil)
	r.AddCookie(cookies[0])
	id, _, _ := b.Open(context.Background(), r, "")
	if len(id.Principal.Groups) != 1 || id.Principal.Groups[0] != "new" {
		t.Errorf("after the re-check: %+v", id.Principal)
	}
}

// TestARequestThatReadBeforeTheRecheckDoesNotUndoIt: a request that read
// the session before another request's re-check finished, and slides the
// idle time after it, keeps what the re-check wrote: the person's new
// groups and the provider's rotated refresh token (the old one is spent,
// so writing it back would end the session at the next re-check).
func TestARequestThatReadBeforeTheRecheckDoesNotUndoIt(t *testing.T) {
	clock := testclock.New()
	rdb := testredis.Client(t)
	opts := *rdb.Options()
	slowRDB := redis.NewClient(&opts) // the slow request's instance: its own connections to the same Redis
	t.Cleanup(func() { _ = slowRDB.Close() })
	// The slow request's first read of the session answers, then waits
	// until the re-check has been written.
	read, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	testredis.AfterCommand(slowRDB, "get", sessionKeyPrefix, func(context.Context) {
		once.Do(func() { close(read); <-release })
	})

	key := make([]byte, 32)
	var asked []string
	var mu sync.Mutex
	instance := func(c redis.UniversalClient) *Sessions {
		s, err := NewSessions(c, SessionConfig{Keys: [][]byte{key}, Recheck: 15 * time.Minute, Now: clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		s.refresher = func(ctx context.Context, rt string) (facade.Principal, string, bool, error) {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, rt)
			return facade.Principal{ID: "omar", Groups: []string{"new"}}, rt + "-rotated", false, nil
		}
		return s
	}
	fast, slow := instance(rdb), instance(slowRDB)
	_, cookies, err := fast.Issue(context.Background(), facade.Principal{ID: "omar"}, time.Time{},
		ProviderSession{RefreshToken: "rt1"}, "")
	if err != nil {
		t.Fatal(err)
	}
	open := func(s *Sessions) Identity {
		r := httptest.NewRequest("GET", "/auth/me", nil)
		r.AddCookie(cookies[0])
		id, ok, err := s.Open(context.Background(), r, "")
		if !ok || err != nil {
			t.Fatalf("open: %v %v", ok, err)
		}
		return id
	}

	clock.Advance(16 * time.Minute)
	slowDone := make(chan struct{})
	go func() { defer close(slowDone); open(slow) }()
	<-read     // the slow request has read the record as it was
	open(fast) // the re-check: new groups, the refresh token rotated
	close(release)
	<-slowDone // the slow one lost the lease and slides the idle time

	if id := open(fast); len(id.Principal.Groups) != 1 || id.Principal.Groups[0] != "new" {
		t.Errorf("after the slow request, the session's groups are %v, want the re-check's [new]", id.Principal.Groups)
	}
	clock.Advance(16 * time.Minute)
	open(fast) // the next interval's re-check
	if want := []string{"rt1", "rt1-rotated"}; !slices.Equal(asked, want) {
		t.Errorf("the provider was asked with refresh tokens %q, want %q: the rotated one was lost", asked, want)
	}
}

// appliedTransactions counts the MULTI/EXEC transactions Redis applied
// (not those a WATCH aborted): the writes that landed.
type appliedTransactions struct{ n atomic.Int32 }

func (h *appliedTransactions) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h *appliedTransactions) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h *appliedTransactions) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		if len(cmds) > 0 && cmds[0].Name() == "multi" && err == nil {
			h.n.Add(1)
		}
		return err
	}
}

// TestManyRequestsAtOnceSlideTheSessionOnce: twenty requests of one page
// that arrive together a minute after the last write slide the idle time
// with one write: the others find it slid and write nothing, so a
// re-check at the same moment is not crowded out of its retries (it was:
// TestRecheckIsOneCallPerSessionAcrossInstances failed under load when
// every request wrote).
func TestManyRequestsAtOnceSlideTheSessionOnce(t *testing.T) {
	clock := testclock.New()
	rdb := testredis.Client(t)
	writes := &appliedTransactions{}
	rdb.AddHook(writes)
	s, err := NewSessions(rdb, SessionConfig{Keys: [][]byte{make([]byte, 32)}, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	_, cookies, err := s.Issue(context.Background(), facade.Principal{ID: "omar"}, time.Time{}, ProviderSession{}, "")
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(2 * time.Minute)
	// The 20 requests' first reads all answer before any of them writes.
	var reads atomic.Int32
	all := make(chan struct{})
	testredis.AfterCommand(rdb, "get", sessionKeyPrefix, func(context.Context) {
		switch n := reads.Add(1); {
		case n == 20:
			close(all)
		case n < 20:
			<-all
		}
	})
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			r := httptest.NewRequest("GET", "/auth/me", nil)
			r.AddCookie(cookies[0])
			if _, ok, err := s.Open(context.Background(), r, ""); !ok || err != nil {
				t.Errorf("open: %v %v", ok, err)
			}
		})
	}
	wg.Wait()
	if n := writes.n.Load(); n != 1 {
		t.Errorf("20 requests at once slid the session with %d writes, want 1", n)
	}
	clock.Advance(59 * time.Minute) // 61 minutes after sign-in, 59 after the slide: within the idle hour
	r := httptest.NewRequest("GET", "/auth/me", nil)
	r.AddCookie(cookies[0])
	if _, ok, err := s.Open(context.Background(), r, ""); !ok || err != nil {
		t.Errorf("the slid session, 59 minutes unused: %v %v", ok, err)
	}
}

// TestSessionChangesLandOnACluster: on a Redis Cluster (each instance's
// client from redisdb.Open), the slide and the re-check's transaction
// (WATCH on the one session key) land as on one Redis.
func TestSessionChangesLandOnACluster(t *testing.T) {
	cluster := testredis.StartCluster(t, 3)
	rdb, err := redisdb.Open(redisdb.Config{Addrs: cluster.Addrs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rdb.Close() })
	clock := testclock.New()
	s, err := NewSessions(rdb, SessionConfig{Keys: [][]byte{make([]byte, 32)}, Recheck: 15 * time.Minute, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	s.refresher = func(ctx context.Context, rt string) (facade.Principal, string, bool, error) {
		return facade.Principal{ID: "omar", Groups: []string{"new"}}, rt, false, nil
	}
	_, cookies, err := s.Issue(context.Background(), facade.Principal{ID: "omar"}, time.Time{},
		ProviderSession{RefreshToken: "rt1"}, "")
	if err != nil {
		t.Fatal(err)
	}
	open := func(when string) Identity {
		r := httptest.NewRequest("GET", "/auth/me", nil)
		r.AddCookie(cookies[0])
		id, ok, err := s.Open(context.Background(), r, "")
		if !ok || err != nil {
			t.Fatalf("%s: %v %v", when, ok, err)
		}
		return id
	}
	clock.Advance(16 * time.Minute)
	open("at the re-check")
	clock.Advance(59 * time.Minute) // 75 minutes after sign-in, 59 after the slide
	if id := open("59 minutes after the slide"); len(id.Principal.Groups) != 1 || id.Principal.Groups[0] != "new" {
		t.Errorf("after the re-check on a cluster, groups %v, want [new]", id.Principal.Groups)
	}
}
