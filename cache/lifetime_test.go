package cache

import (
	"context"
	"encoding/binary"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/facade-dev/facade/internal/testkit/testclock"
	"github.com/facade-dev/facade/internal/testkit/testredis"
)

// byState is a Lifetime as the build routes use one: a document that
// says "running" is fresh for two seconds, one that says "finished" for a
// day, anything else for the configured TTL.
func byState(body []byte) time.Duration {
	switch {
	case strings.Contains(string(body), "running"):
		return 2 * time.Second
	case strings.Contains(string(body), "finished"):
		return 24 * time.Hour
	}
	return 0
}

func getFor(t *testing.T, c *Cache, key string, up *upstream) Entry {
	t.Helper()
	e, err := c.GetFor(context.Background(), key, up.fetch, byState)
	if err != nil {
		t.Fatalf("GetFor(%q): %v", key, err)
	}
	return e
}

// A finished document is fetched once and kept for its lifetime, far past
// the TTL; Redis expires it after its lifetime plus the stale window.
func TestFinishedDocumentIsKeptForItsLifetime(t *testing.T) {
	clock := testclock.New()
	rdb := testredis.Client(t)
	c := New(rdb, Config{TTL: 30 * time.Second, Stale: 10 * time.Minute, Now: clock.Now})
	up := newUpstream(`{"state":"finished"}`)
	first := getFor(t, c, "results:k", up)
	if first.FreshFor != 24*time.Hour {
		t.Fatalf("FreshFor %v, want 24h", first.FreshFor)
	}
	for range 5 * 60 {
		clock.Advance(time.Second)
		if e := getFor(t, c, "results:k", up); e.Status != Hit {
			t.Fatalf("after %v: %s", clock.Now().Sub(first.StoredAt), e.Status)
		}
	}
	clock.AdvancePast(first.StoredAt.Add(24 * time.Hour))
	if e := getFor(t, c, "results:k", up); e.Status != Miss || up.calls.Load() != 2 {
		t.Fatalf("a day later: %s after %d calls, want a MISS (the second call)", e.Status, up.calls.Load())
	}
	ttl := rdb.PTTL(context.Background(), docKey("results:k")).Val()
	if ttl < 24*time.Hour || ttl > 24*time.Hour+10*time.Minute {
		t.Fatalf("Redis expiry %v, want its lifetime plus the stale window", ttl)
	}
}

// A running document is asked again once its short lifetime has passed,
// however many read it on however many instances: one fetch per lifetime.
func TestRunningDocumentIsOneFetchPerIntervalAcrossInstances(t *testing.T) {
	clock := testclock.New()
	rdb := testredis.Client(t)
	cfg := Config{TTL: 30 * time.Second, Now: clock.Now}
	instances := []*Cache{New(rdb, cfg), New(secondClient(t, rdb), cfg)}
	up := newUpstream(`{"state":"running"}`)
	getFor(t, instances[0], "results:r", up)
	for tick := range 10 {
		var wg sync.WaitGroup
		for v := range 10 {
			wg.Go(func() {
				if _, err := instances[v%2].GetFor(context.Background(), "results:r", up.fetch, byState); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if want := int32(1 + tick); up.calls.Load() != want {
			t.Fatalf("interval %d: %d upstream calls for 10 readers on 2 instances, want %d", tick, up.calls.Load(), want)
		}
		clock.Advance(2 * time.Second)
	}
}

// The document decides its own lifetime at every fetch: a running result
// that finishes is then kept for a day.
func TestLifetimeFollowsTheDocument(t *testing.T) {
	clock := testclock.New()
	c := New(testredis.Client(t), Config{Now: clock.Now})
	up := newUpstream(`{"state":"running"}`)
	if e := getFor(t, c, "results:f", up); e.FreshFor != 2*time.Second {
		t.Fatalf("running: FreshFor %v", e.FreshFor)
	}
	up.body = []byte(`{"state":"finished"}`)
	clock.Advance(2 * time.Second)
	if e := getFor(t, c, "results:f", up); e.Status != Miss || string(e.Body) != `{"state":"finished"}` || e.FreshFor != 24*time.Hour {
		t.Fatalf("after the interval: %s %s %v", e.Status, e.Body, e.FreshFor)
	}
	clock.Advance(time.Hour)
	if e := getFor(t, c, "results:f", up); e.Status != Hit || up.calls.Load() != 2 {
		t.Fatalf("an hour later: %s, %d calls", e.Status, up.calls.Load())
	}
	// A document of neither kind is fresh for the TTL.
	other := newUpstream(`{"plans":{}}`)
	if e := getFor(t, c, "plans:x", other); e.FreshFor != DefaultTTL {
		t.Fatalf("other: FreshFor %v, want the TTL", e.FreshFor)
	}
}

// When upstream fails, a running document is served STALE for the stale
// window after its short lifetime, as any other.
func TestRunningDocumentIsServedStaleWhenUpstreamFails(t *testing.T) {
	clock := testclock.New()
	c := New(testredis.Client(t), Config{Stale: time.Minute, Now: clock.Now})
	getFor(t, c, "results:s", newUpstream(`{"state":"running"}`))
	clock.Advance(30 * time.Second)
	e, err := c.GetFor(context.Background(), "results:s", failing(errUpstream), byState)
	if err != nil || e.Status != Stale {
		t.Fatalf("30 s later, upstream failing: %s %v, want STALE", e.Status, err)
	}
	clock.Advance(time.Minute)
	if _, err := c.GetFor(context.Background(), "results:s", failing(errUpstream), byState); err != errUpstream {
		t.Fatalf("past the stale window: %v, want the upstream error", err)
	}
}

// A value written before lifetimes were stored is read as fresh for the
// TTL, not thrown away.
func TestOldFormatIsFreshForTheTTL(t *testing.T) {
	clock := testclock.New()
	rdb := testredis.Client(t)
	c := New(rdb, Config{TTL: time.Minute, Now: clock.Now})
	raw := make([]byte, headerV1+3)
	raw[0] = formatV1
	binary.BigEndian.PutUint64(raw[1:9], uint64(clock.Now().UnixMilli()))
	copy(raw[9:headerV1], strings.Repeat("a", versionLen))
	copy(raw[headerV1:], "old")
	rdb.Set(context.Background(), docKey("k"), raw, time.Hour)
	up := newUpstream("new")
	if e := mustGet(t, c, "k", up.fetch); e.Status != Hit || string(e.Body) != "old" || e.FreshFor != time.Minute {
		t.Fatalf("format 1: %s %q %v", e.Status, e.Body, e.FreshFor)
	}
	clock.Advance(time.Minute)
	if e := mustGet(t, c, "k", up.fetch); e.Status != Miss || string(e.Body) != "new" {
		t.Fatalf("format 1 past the TTL: %s %q", e.Status, e.Body)
	}
}
