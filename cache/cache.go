// Package cache is the response cache for upstream (Bamboo) documents. It
// lives in Redis, so every instance of the service shares it (docs/contract.md
// §6 and §7).
//
// Get returns the stored copy while it is fresh (HIT): for Config.TTL, or
// for the lifetime GetFor's Lifetime decided from the document when it was
// fetched (stored with it, so every instance agrees). Otherwise it fetches,
// stores and returns the document (MISS). Concurrent misses for one key make
// one upstream call: a singleflight inside the instance, and a short Redis
// lock across instances, so N instances with M waiting requests each still
// cost one fetch. When the fetch fails and a copy younger than TTL+Stale
// exists, that copy is served (STALE); otherwise the fetch's error is
// returned unchanged. Errors are never cached.
//
// The cache is an optimisation, never a dependency: when Redis cannot be
// reached, Get fetches directly and answers MISS (with a warning logged at
// most once a minute), because the upstream data is not ours to lose. After
// such a failure it leaves Redis alone for two seconds, then lets one
// request probe it, so an outage does not add the client's dial retries to
// every request.
//
// Size: an entry holds at most Config.MaxBytes of body (larger documents are
// returned uncached), and every key carries a Redis expiry (lifetime+Stale
// for documents, LockTTL for locks), so the cache holds only what was asked for
// in the last TTL+Stale and shrinks by itself. Redis maxmemory and eviction
// policy stay ops' concern; an evicted document is simply a miss.
package cache

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/singleflight"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/metrics"
)

// Defaults for the zero Config fields.
const (
	DefaultTTL   = 30 * time.Second
	DefaultStale = 10 * time.Minute
	// DefaultMaxBytes holds a whole organization's latest results: the
	// collected /result list of 4,000 plans is about 9 MB of Bamboo's JSON,
	// and one not stored would be collected again by every instance.
	DefaultMaxBytes     = 32 << 20
	DefaultLockTTL      = 5 * time.Second
	DefaultFetchTimeout = 30 * time.Second
)

// Config tunes a Cache. The zero Config works: every field documents what
// its zero value means.
type Config struct {
	// TTL is how long a stored document is fresh (FACADE_CACHE_TTL).
	// Zero or negative means DefaultTTL.
	TTL time.Duration
	// Stale is how long past freshness a document may still be served when
	// the upstream fails (FACADE_CACHE_STALE). Zero means DefaultStale; a
	// NEGATIVE value disables stale serving (so a setting of "0" must be
	// passed as -1 by whoever parses the environment).
	Stale time.Duration
	// MaxBytes is the largest body stored; larger ones are returned
	// uncached. Zero or negative means DefaultMaxBytes.
	MaxBytes int
	// LockTTL bounds how long other instances wait for a fill by an
	// instance that died; a live holder keeps extending it while its fetch
	// runs. Zero or negative means DefaultLockTTL.
	LockTTL time.Duration
	// FetchTimeout bounds a shared fill whose first caller has no earlier
	// deadline (the upstream client has its own, shorter, timeout). Zero or
	// negative means DefaultFetchTimeout.
	FetchTimeout time.Duration
	// Now is the clock freshness and staleness are judged by (and stored
	// documents stamped with), and the Redis bypass window and warning
	// interval run by; nil means time.Now. Redis-side expiries (the fill
	// lock) run on Redis's own clock, and the fill's context deadline on
	// the machine's (a context cannot take another).
	Now func() time.Time
	// Metrics counts lookups (hit, miss, stale); nil means a private set.
	Metrics *metrics.Metrics
	// Log receives the warning that Redis failed; nil means
	// slog.Default().
	Log *slog.Logger
}

func (cfg Config) withDefaults() Config {
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultTTL
	}
	if cfg.Stale == 0 {
		cfg.Stale = DefaultStale
	} else if cfg.Stale < 0 {
		cfg.Stale = 0
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.LockTTL <= 0 {
		cfg.LockTTL = DefaultLockTTL
	}
	if cfg.FetchTimeout <= 0 {
		cfg.FetchTimeout = DefaultFetchTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	return cfg
}

// Status says where an answer came from; it is exactly the X-Cache header.
type Status string

// The three statuses.
const (
	Hit   Status = "HIT"   // a fresh stored copy; no upstream call by this request
	Miss  Status = "MISS"  // fetched from upstream just now
	Stale Status = "STALE" // upstream failed; an older copy within Config.Stale
)

// Entry is a document as Get returns it.
type Entry struct {
	// Body is the upstream document. Callers that waited on the same fetch
	// share one slice: treat it as read-only.
	Body     []byte
	Status   Status
	StoredAt time.Time // when it was fetched from upstream
	// FreshFor is how long after StoredAt the document is fresh: what the
	// Lifetime given to GetFor decided when it was fetched, else
	// Config.TTL. A copy kept in process must not outlive it.
	FreshFor time.Duration
	// Version is 32 hex characters derived from Body: it changes exactly
	// when the document changes, so parsed in-process views (and ETags) can
	// be keyed on it.
	Version string
}

// Cache is safe for concurrent use. Create it with New.
type Cache struct {
	rdb        redis.UniversalClient
	cfg        Config
	log        *slog.Logger
	flights    singleflight.Group
	redis      redisHealth // whether to try Redis, and its trouble logged once a minute (health.go)
	waitHook   func()      // tests only: called when a fill starts waiting for another instance
	extendHook func()      // tests only: called after a holder extended its fill lock
	lookups    map[Status]prometheus.Counter
}

// New returns a cache on rdb, tuned by cfg. It does not contact Redis.
func New(rdb redis.UniversalClient, cfg Config) *Cache {
	cfg = cfg.withDefaults()
	c := &Cache{rdb: rdb, cfg: cfg, log: cfg.Log, redis: redisHealth{now: cfg.Now, log: cfg.Log}}
	m := metrics.Or(cfg.Metrics)
	c.lookups = map[Status]prometheus.Counter{
		Hit: m.Cache.WithLabelValues("hit"), Miss: m.Cache.WithLabelValues("miss"), Stale: m.Cache.WithLabelValues("stale"),
	}
	return c
}

// Get returns the document cached under key, calling fetch when there is no
// fresh copy. key must identify everything fetch depends on: the cache is
// shared by all principals and all instances, and concurrent callers of one
// key share the first caller's fetch.
//
// The only errors are fetch's own error, unchanged (when nothing stale may
// be served), and, when ctx ends first, a *facade.Error of code ErrUpstreamTimeout
// that wraps ctx's cause (errors.Is(err, context.Canceled) tells a client
// that left). A fetch in progress is not cancelled by its first caller
// leaving: it completes and is stored for the others.
func (c *Cache) Get(ctx context.Context, key string, fetch func(ctx context.Context) ([]byte, error)) (Entry, error) {
	return c.GetFor(ctx, key, fetch, nil)
}

// Lifetime decides, from a document just fetched, how long it stays fresh
// (a finished build result for a day, a running one for seconds). It is
// stored with the document, so every instance judges it alike; a zero or
// negative answer means Config.TTL. It runs once per fetch, not per read.
type Lifetime func(body []byte) time.Duration

// GetFor is Get with the document's lifetime decided by life (nil: every
// document is fresh for Config.TTL). Stale serving follows the lifetime:
// a document may stand in for a failed fetch up to its lifetime plus
// Config.Stale after it was stored.
func (c *Cache) GetFor(ctx context.Context, key string, fetch func(ctx context.Context) ([]byte, error), life Lifetime) (Entry, error) {
	src := source{fetch: fetch, life: life}
	dk := docKey(key)
	prev, redisUp, err := c.lookup(ctx, dk)
	if err != nil {
		return c.finish(ctx, prev)
	}
	if prev.ok && c.fresh(prev) {
		c.record(Hit)
		return c.entry(prev, Hit), nil
	}
	ch := c.flights.DoChan(dk, func() (any, error) {
		fctx, cancel := c.fillContext(ctx)
		defer cancel()
		if !redisUp {
			return c.passThrough(fctx, src)
		}
		return c.fill(fctx, dk, src)
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			c.record(Miss)
			return Entry{}, r.Err
		}
		e := r.Val.(Entry)
		c.record(e.Status)
		return e, nil
	case <-ctx.Done():
		return c.finish(ctx, prev)
	}
}

// lookup reads the stored copy, unless Redis is being bypassed. redisUp
// says whether the fill may use Redis; err is set only when ctx ended.
func (c *Cache) lookup(ctx context.Context, dk string) (prev stored, redisUp bool, err error) {
	if !c.redis.usable() {
		return stored{}, false, nil
	}
	prev, err = c.read(ctx, dk)
	switch {
	case err == nil:
		c.redis.works()
		return prev, true, nil
	case ctx.Err() != nil:
		return stored{}, false, ctx.Err()
	default:
		c.redis.failed(ctx, err)
		return stored{}, false, nil
	}
}

// finish answers a caller whose ctx ended before the fill did: with the
// stale copy it already read if there is one (better late data than none),
// else with a timeout that wraps the cause.
func (c *Cache) finish(ctx context.Context, prev stored) (Entry, error) {
	if c.servableStale(prev) {
		c.record(Stale)
		return c.entry(prev, Stale), nil
	}
	c.record(Miss)
	return Entry{}, facade.Wrap(facade.ErrUpstreamTimeout, context.Cause(ctx))
}

// fillContext detaches the shared fill from the first caller's
// cancellation (others may be waiting on it) but keeps a bound: that
// caller's deadline, or FetchTimeout, whichever comes first.
func (c *Cache) fillContext(caller context.Context) (context.Context, context.CancelFunc) {
	// A context's deadline runs on the machine's clock, not Config.Now:
	// FetchTimeout is a duration from now, and the caller's deadline (if
	// any, and earlier) is kept as it is.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(caller), c.cfg.FetchTimeout)
	d, ok := caller.Deadline()
	if !ok {
		return ctx, cancel
	}
	ctx, cancelCaller := context.WithDeadline(ctx, d)
	return ctx, func() { cancelCaller(); cancel() }
}

// read loads a document; a missing or unparsable value is the zero stored.
func (c *Cache) read(ctx context.Context, dk string) (stored, error) {
	raw, err := c.rdb.Get(ctx, dk).Bytes()
	if errors.Is(err, redis.Nil) {
		return stored{}, nil
	}
	if err != nil {
		return stored{}, err
	}
	return decode(raw), nil
}

func (c *Cache) fresh(s stored) bool { return s.age(c.cfg.Now()) < c.lifeOf(s) }

// servableStale reports whether s may stand in for a failed fetch.
func (c *Cache) servableStale(s stored) bool {
	return s.ok && s.age(c.cfg.Now()) < c.lifeOf(s)+c.cfg.Stale
}

// lifeOf is how long s is fresh: its own lifetime, else Config.TTL.
func (c *Cache) lifeOf(s stored) time.Duration {
	if s.life > 0 {
		return s.life
	}
	return c.cfg.TTL
}

// entry is s as Get returns it, with its lifetime filled in.
func (c *Cache) entry(s stored, status Status) Entry {
	e := s.entry(status)
	e.FreshFor = c.lifeOf(s)
	return e
}

// source is what a fill fetches and how long the result stays fresh.
type source struct {
	fetch fetchFunc
	life  Lifetime
}

// lifeFor decides a freshly fetched body's lifetime.
func (c *Cache) lifeFor(src source, body []byte) time.Duration {
	if src.life != nil {
		if d := src.life(body); d > 0 {
			return d
		}
	}
	return c.cfg.TTL
}

// record counts one lookup answered with s.
func (c *Cache) record(s Status) {
	if n := c.lookups[s]; n != nil {
		n.Inc()
	}
}

// CountHit counts a hit served from a copy the caller keeps in process
// (proxy's in-memory layer), so the metric covers every lookup.
func (c *Cache) CountHit() { c.record(Hit) }
