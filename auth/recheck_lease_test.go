package auth

import (
	"context"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/internal/testkit/testclock"
	"github.com/facade-dev/facade/internal/testkit/testredis"
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
