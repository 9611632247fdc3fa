// Package ratelimit is a limit per key (a principal, a client address)
// shared by every instance of the service through Redis, without a Redis
// round trip on every request.
//
// Each key is a GCRA bucket (the algorithm of redis_rate: a "theoretical
// arrival time" that every admitted request pushes one emission interval
// further; a request is refused when that time would run more than Burst
// intervals ahead of now). Each instance keeps a local copy of the buckets
// of the keys it saw recently and decides from it; every Interval one
// pipelined call settles with Redis for all of them at once: it adds what
// this instance admitted since the last settlement and reads back what every
// instance admitted together. A key seen for the first time (or again after
// it went idle) is asked of Redis directly, so a new principal cannot start
// from a full local bucket on every instance.
//
// A settlement is a few script calls, not one per key: each bucket's Redis
// key carries one of settleGroups hash tags, and one call settles a whole
// group (in Redis Cluster a group is one slot). Redis pays a call's own
// overhead per call, so with one call per key settling the buckets of many
// principals would take most of Redis's CPU under load
// (docs/performance.md, "ratelimit").
//
// Error bound: between two settlements each instance decides alone, from
// the state of the last one. With N instances serving the same key, in one
// Interval the key can be admitted at most
//
//	(N-1) x (Burst + Rate x Interval)
//
// requests more than one instance alone would admit (each instance spends
// the same remaining burst plus what refills in the interval), plus Rate x
// the duration of a settlement call per instance (the view is dated from
// the call's start, so that settling never costs a key its rate). The excess
// is settled as debt: Redis counts every admitted request, so at the next
// settlement every instance sees the bucket that far ahead and refuses the
// key until the debt is repaid; over any window longer than an Interval the
// key gets its rate. With the service's defaults (50/s, burst 100, 100 ms)
// and two instances: at most 105 requests over, once, then refusals.
//
// When Redis cannot be reached, requests are let through (Allow returns
// the error): the stores behind the limit answer 503 on their own, and
// refusing here would also refuse what can still be served. The limiter
// logs such an outage itself, once when it starts and once when Redis
// answers again, with how many requests went through unlimited meanwhile
// (package internal/outage), never once per request.
package ratelimit

import (
	"context"
	_ "embed"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade/internal/outage"
)

// Limit is Rate requests per Period with bursts of up to Burst.
type Limit struct {
	Rate   int
	Period time.Duration
	Burst  int
}

// PerSecond is rate requests a second with a burst of burst.
func PerSecond(rate, burst int) Limit { return Limit{Rate: rate, Period: time.Second, Burst: burst} }

// Config tunes a Limiter. The zero Config works: every field documents
// what its zero value means.
type Config struct {
	// Interval between settlements with Redis: the window of the error
	// bound in the package comment. Zero or negative means 100 ms.
	Interval time.Duration
	// MaxKeys bounds the local buckets; beyond it, new keys are decided by
	// Redis on every request instead of locally. Zero or negative means
	// 100,000.
	MaxKeys int
	// Log receives the outages of Redis (a line when one starts, a line
	// when it ends); nil means slog.Default().
	Log *slog.Logger
	// Now is the clock buckets are judged by (nil means time.Now). Redis
	// answers how far a bucket runs ahead of its own clock, so only the
	// local steps between settlements read this one; the settlement
	// ticker runs on the machine's clock.
	Now func() time.Time
}

const (
	defaultInterval = 100 * time.Millisecond
	defaultMaxKeys  = 100_000
	// idleIntervals: a key unused for this many intervals leaves the local
	// table (its state stays in Redis); the next request asks Redis again.
	idleIntervals = 20
)

// Limiter limits requests per key. Create it with New.
type Limiter struct {
	rdb      redis.UniversalClient
	prefix   string
	limit    Limit
	emission time.Duration // Period / Rate: what one request costs
	tolerate time.Duration // Burst x emission: how far ahead a bucket may run
	interval time.Duration
	maxKeys  int
	log      *slog.Logger
	now      func() time.Time
	outage   *outage.Log

	mu       sync.Mutex
	buckets  map[string]*bucket
	settling bool // the settlement loop runs (only while there are buckets)
}

// bucket is this instance's view of one key.
type bucket struct {
	tat      time.Time // theoretical arrival time, local clock
	pending  int       // admitted here since the last settlement
	lastUsed time.Time
}

// New returns a limiter storing its buckets in rdb under prefix+key (the
// caller's namespace, e.g. "facade:rl:"). A Rate of zero or less is an
// error: callers that want no limit should not build one. cfg tunes the
// rest. It does not contact Redis.
func New(rdb redis.UniversalClient, prefix string, limit Limit, cfg Config) (*Limiter, error) {
	if limit.Rate <= 0 || limit.Period <= 0 || limit.Burst < 1 {
		return nil, errors.New("ratelimit: Rate, Period and Burst must be positive")
	}
	l := &Limiter{
		rdb: rdb, prefix: prefix, limit: limit,
		emission: limit.Period / time.Duration(limit.Rate),
		interval: cfg.Interval, maxKeys: cfg.MaxKeys, log: cfg.Log, now: cfg.Now,
		buckets: map[string]*bucket{},
	}
	l.tolerate = time.Duration(limit.Burst) * l.emission
	if l.interval <= 0 {
		l.interval = defaultInterval
	}
	if l.maxKeys <= 0 {
		l.maxKeys = defaultMaxKeys
	}
	if l.log == nil {
		l.log = slog.Default()
	}
	if l.now == nil {
		l.now = time.Now
	}
	l.outage = outage.New(l.log.With("keys", prefix), "rate limiter", l.now)
	return l, nil
}

// Allow admits one request for key, or refuses it and says when one would
// be admitted. A non-nil error means Redis could not be asked: the request
// is admitted (ok is true), and counted in the outage the limiter logs
// (the caller need not log it).
func (l *Limiter) Allow(ctx context.Context, key string) (ok bool, retryAfter time.Duration, err error) {
	now := l.now()
	l.mu.Lock()
	if b := l.buckets[key]; b != nil {
		ok, retryAfter = l.take(b, now)
		l.mu.Unlock()
		return ok, retryAfter, nil
	}
	l.mu.Unlock()
	return l.ask(ctx, key)
}

// take decides locally: the GCRA step on this instance's copy.
func (l *Limiter) take(b *bucket, now time.Time) (bool, time.Duration) {
	b.lastUsed = now
	tat := b.tat
	if tat.Before(now) {
		tat = now
	}
	next := tat.Add(l.emission)
	if ahead := next.Sub(now); ahead > l.tolerate {
		return false, ahead - l.tolerate
	}
	b.tat = next
	b.pending++
	return true, 0
}

// ask decides a key this instance holds no bucket for, in Redis, and keeps
// the answer as the key's local bucket.
func (l *Limiter) ask(ctx context.Context, key string) (bool, time.Duration, error) {
	now := l.now() // see settle: the call's start
	rkey := BucketKey(l.prefix, key)
	allowed, ahead, err := l.takeInRedis(ctx, rkey, 1)
	l.noteRedis(ctx, err, 1)
	if err != nil {
		return true, 0, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[key]
	switch {
	case b == nil && len(l.buckets) >= l.maxKeys:
		// Full: decided by Redis, remembered nowhere.
	case b == nil:
		l.buckets[key] = &bucket{tat: now.Add(ahead), lastUsed: now}
		l.startSettling()
	case now.Add(ahead).After(b.tat):
		// Another request made the bucket meanwhile; Redis already
		// counted this one, so only move the view forward.
		b.tat = now.Add(ahead)
	}
	if !allowed {
		return false, ahead + l.emission - l.tolerate, nil
	}
	return true, 0, nil
}

// takeInRedis runs the GCRA step on key's bucket in Redis: with cost 1 it
// takes a request if the bucket allows, with 0 it only looks. ahead is how
// far the bucket then runs ahead of Redis's clock.
func (l *Limiter) takeInRedis(ctx context.Context, rkey string, cost int) (allowed bool, ahead time.Duration, err error) {
	res, err := takeScript.Run(ctx, l.rdb, []string{rkey},
		l.emission.Microseconds(), l.tolerate.Microseconds(), cost).Int64Slice()
	if err != nil {
		return false, 0, err
	}
	if len(res) != 2 {
		return false, 0, errors.New("ratelimit: unexpected reply")
	}
	return res[0] == 1, time.Duration(res[1]) * time.Microsecond, nil
}

// Spend takes one request for key in Redis alone, when the bucket allows
// it, keeping no local copy: for rare events that every instance must
// count at once (failed authentications), where Allow would let each
// instance spend its own copy until the next settlement. The key's bucket
// is the one Allow uses.
func (l *Limiter) Spend(ctx context.Context, key string) (bool, error) {
	ok, _, err := l.takeInRedis(ctx, BucketKey(l.prefix, key), 1)
	l.noteRedis(ctx, err, 0)
	return ok, err
}

// Peek reports whether Spend would take a request for key now, without
// taking it: looking costs a blocked key nothing, so it cannot push its
// own release further away.
func (l *Limiter) Peek(ctx context.Context, key string) (bool, error) {
	ok, _, err := l.takeInRedis(ctx, BucketKey(l.prefix, key), 0)
	l.noteRedis(ctx, err, 1)
	return ok, err
}

// noteRedis tells the outage log how a call to Redis went: a failure that
// let requests (0 or 1) through unlimited, or a success. A request whose
// caller went away is no news about Redis.
func (l *Limiter) noteRedis(ctx context.Context, err error, requests int) {
	switch {
	case err == nil:
		l.outage.OK(ctx)
	case ctx.Err() != nil:
	case requests > 0:
		l.outage.Allowed(ctx, err)
	default:
		l.outage.Failed(ctx, err)
	}
}

// Limit is the limit l enforces.
func (l *Limiter) Limit() Limit { return l.limit }

//go:embed take.lua
var takeSource string

var takeScript = redis.NewScript(takeSource)

//go:embed settle.lua
var settleSource string

var settleScript = redis.NewScript(settleSource)
