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
// the error for the caller to log): the stores behind the limit answer
// 503 on their own, and refusing here would also refuse what can still be
// served.
package ratelimit

import (
	"context"
	_ "embed"
	"errors"
	"hash/fnv"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
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
	// Log receives settlement failures; nil means slog.Default().
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
	return l, nil
}

// Allow admits one request for key, or refuses it and says when one would
// be admitted. A non-nil error means Redis could not be asked: the request
// is admitted (ok is true) and the caller should log the error.
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
	return ok, err
}

// Peek reports whether Spend would take a request for key now, without
// taking it: looking costs a blocked key nothing, so it cannot push its
// own release further away.
func (l *Limiter) Peek(ctx context.Context, key string) (bool, error) {
	ok, _, err := l.takeInRedis(ctx, BucketKey(l.prefix, key), 0)
	return ok, err
}

// Limit is the limit l enforces.
func (l *Limiter) Limit() Limit { return l.limit }

// startSettling starts the settlement loop if it is not running. l.mu held.
func (l *Limiter) startSettling() {
	if l.settling {
		return
	}
	l.settling = true
	go l.settleLoop()
}

// settleLoop settles every Interval until the local table is empty.
func (l *Limiter) settleLoop() {
	t := time.NewTicker(l.interval)
	defer t.Stop()
	for range t.C {
		if !l.settle(context.Background()) {
			return
		}
	}
}

// settle sends one pipeline: for every local bucket, what this instance
// admitted since the last settlement; and reads back each bucket as every
// instance left it. It reports whether the loop should go on.
func (l *Limiter) settle(ctx context.Context) bool {
	keys, sent := l.snapshot()
	if len(keys) == 0 {
		return l.stopIfEmpty()
	}
	ctx, cancel := context.WithTimeout(ctx, 5*l.interval+time.Second)
	defer cancel()
	// Redis's answers are "ahead of now" at some moment during the call;
	// counting from its start errs towards admitting (by at most the
	// call's duration), where counting from its end would lose that much
	// of the rate at every settlement.
	sentAt := l.now()
	aheads, err := l.pipeline(ctx, keys, sent)
	if err != nil {
		// Keep today's behaviour with Redis down: forget the local view,
		// so requests go to ask(), which lets them through, logged.
		l.log.Warn("rate limiter could not settle with Redis; local buckets dropped", "keys", len(keys), "err", err.Error())
		l.mu.Lock()
		clear(l.buckets)
		l.mu.Unlock()
		return l.stopIfEmpty()
	}
	l.mu.Lock()
	for i, key := range keys {
		b := l.buckets[key]
		if b == nil {
			continue
		}
		ahead := time.Duration(aheads[i]) * time.Microsecond
		// Redis has everything up to the snapshot; admissions made here
		// since then are still pending and go on top.
		b.tat = sentAt.Add(ahead).Add(time.Duration(b.pending) * l.emission)
	}
	l.mu.Unlock()
	return true
}

// snapshot takes the pending counts of every bucket (resetting them) and
// drops buckets idle for idleIntervals with nothing to send.
func (l *Limiter) snapshot() (keys []string, sent []int) {
	now := l.now()
	idle := time.Duration(idleIntervals) * l.interval
	l.mu.Lock()
	defer l.mu.Unlock()
	keys = make([]string, 0, len(l.buckets))
	sent = make([]int, 0, len(l.buckets))
	for key, b := range l.buckets {
		if b.pending == 0 && now.Sub(b.lastUsed) > idle {
			delete(l.buckets, key)
			continue
		}
		keys = append(keys, key)
		sent = append(sent, b.pending)
		b.pending = 0
	}
	return keys, sent
}

// settleGroups is how many hash tags the buckets are spread over: how
// many script calls settle them all (more only past maxSettleKeys keys in
// a group). In Redis Cluster the groups are as many slots, spread over the
// shards; one group would put every bucket on one shard.
const settleGroups = 16

// maxSettleKeys bounds one settlement call, so that a large table cannot
// hold Redis in one script for long.
const maxSettleKeys = 500

// BucketKey is the Redis key of key's bucket under prefix:
// prefix{g}:key, g being key's group (0..settleGroups-1), so that one
// script call can settle a whole group, also in Redis Cluster.
func BucketKey(prefix, key string) string {
	return prefix + "{" + strconv.Itoa(group(key)) + "}:" + key
}

func group(key string) int {
	h := fnv.New32a()
	h.Write([]byte(key))
	return int(h.Sum32() % settleGroups)
}

// pipeline settles the buckets of keys (sent[i] admitted here on keys[i])
// in one pipeline of one script call per group, and returns how far each
// bucket runs ahead of Redis's clock, in microseconds, in keys' order.
func (l *Limiter) pipeline(ctx context.Context, keys []string, sent []int) ([]int64, error) {
	calls := settleCalls(keys)
	run := func() ([]*redis.Cmd, error) {
		cmds := make([]*redis.Cmd, len(calls))
		_, err := l.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for c, idx := range calls {
				rkeys := make([]string, len(idx))
				args := make([]any, 1+len(idx))
				args[0] = l.emission.Microseconds()
				for j, i := range idx {
					rkeys[j], args[1+j] = BucketKey(l.prefix, keys[i]), sent[i]
				}
				cmds[c] = p.EvalSha(ctx, settleScript.Hash(), rkeys, args...)
			}
			return nil
		})
		return cmds, err
	}
	cmds, err := run()
	if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
		if err = settleScript.Load(ctx, l.rdb).Err(); err == nil {
			cmds, err = run()
		}
	}
	if err != nil {
		return nil, err
	}
	aheads := make([]int64, len(keys))
	for c, idx := range calls {
		v, err := cmds[c].Int64Slice()
		if err != nil || len(v) != len(idx) {
			return nil, errors.New("ratelimit: unexpected settlement reply")
		}
		for j, i := range idx {
			aheads[i] = v[j]
		}
	}
	return aheads, nil
}

// settleCalls splits the keys into script calls: the indexes of keys of
// one group, at most maxSettleKeys a call.
func settleCalls(keys []string) [][]int {
	var groups [settleGroups][]int
	for i, k := range keys {
		g := group(k)
		groups[g] = append(groups[g], i)
	}
	var calls [][]int
	for _, idx := range groups {
		for len(idx) > 0 {
			n := min(len(idx), maxSettleKeys)
			calls = append(calls, idx[:n])
			idx = idx[n:]
		}
	}
	return calls
}

func (l *Limiter) stopIfEmpty() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buckets) == 0 {
		l.settling = false
		return false
	}
	return true
}

//go:embed take.lua
var takeSource string

var takeScript = redis.NewScript(takeSource)

//go:embed settle.lua
var settleSource string

var settleScript = redis.NewScript(settleSource)
