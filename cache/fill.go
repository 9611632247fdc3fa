package cache

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade"
)

// fetchFunc is Get's fetch argument: it returns the upstream document.
type fetchFunc = func(ctx context.Context) ([]byte, error)

// How a waiting instance polls for another instance's fill: quickly at
// first (most fills are one upstream round trip), then backing off so a
// slow upstream costs Redis a few reads a second per waiting instance.
const (
	pollFirst = 5 * time.Millisecond
	pollMax   = 50 * time.Millisecond
)

// redisOpTimeout bounds the store and unlock that follow a fetch: they run
// even when the fetch used up the fill's deadline.
const redisOpTimeout = time.Second

// Releasing or extending the lock must only touch our own token: after a
// pause longer than LockTTL another instance may hold it.
var (
	unlockScript = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end
return 0`)
	extendScript = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("PEXPIRE", KEYS[1], ARGV[2]) end
return 0`)
)

// fill runs once per key per instance (inside the singleflight). It either
// takes the cross-instance lock and fetches, or waits for the instance that
// holds it and reads what that one stored.
func (c *Cache) fill(ctx context.Context, dk string, src source) (Entry, error) {
	lk := lockKey(dk)
	for {
		token, held, err := c.lock(ctx, lk)
		if err != nil && ctx.Err() != nil {
			return c.fillTimedOut(ctx, stored{})
		}
		if err != nil {
			c.redis.failed(ctx, err)
			return c.passThrough(ctx, src)
		}
		if held {
			return c.fillLocked(ctx, dk, lk, token, src)
		}
		if c.waitHook != nil {
			c.waitHook()
		}
		s, released, err := c.awaitOther(ctx, dk, lk)
		switch {
		case err != nil && ctx.Err() != nil:
			return c.fillTimedOut(ctx, s)
		case err != nil:
			c.redis.failed(ctx, err)
			return c.passThrough(ctx, src)
		case s.ok && c.fresh(s):
			return c.entry(s, Hit), nil
		case released && c.servableStale(s):
			// The holder's fetch failed (or it died): upstream is likely
			// failing, and asking it once more from every instance would
			// not help. The next request tries again.
			return c.entry(s, Stale), nil
		}
		// Released without a document (the holder died, or the document is
		// too large to store): take the lock and fetch ourselves.
	}
}

// fillLocked fetches and stores while holding the lock.
func (c *Cache) fillLocked(ctx context.Context, dk, lk, token string, src source) (Entry, error) {
	defer c.unlock(ctx, lk, token)
	// The previous holder may have stored the document just before we got
	// the lock; a failed read here only costs the stale fallback.
	cur, err := c.read(ctx, dk)
	if err != nil {
		c.redis.failed(ctx, err)
	}
	if cur.ok && c.fresh(cur) {
		return c.entry(cur, Hit), nil
	}

	stop := c.keepLock(ctx, lk, token)
	body, err := safeFetch(ctx, src.fetch)
	stop()
	if err != nil {
		if c.servableStale(cur) {
			return c.entry(cur, Stale), nil
		}
		return Entry{}, err
	}
	e := c.fetched(src, body)
	c.store(ctx, dk, e)
	return e, nil
}

// fillTimedOut answers when the fill's own deadline passed while waiting.
func (c *Cache) fillTimedOut(ctx context.Context, s stored) (Entry, error) {
	if c.servableStale(s) {
		return c.entry(s, Stale), nil
	}
	return Entry{}, facade.Wrap(facade.ErrUpstreamTimeout, context.Cause(ctx))
}

// passThrough fetches without Redis.
func (c *Cache) passThrough(ctx context.Context, src source) (Entry, error) {
	body, err := safeFetch(ctx, src.fetch)
	if err != nil {
		return Entry{}, err
	}
	return c.fetched(src, body), nil
}

// fetched is the entry of a body just fetched.
func (c *Cache) fetched(src source, body []byte) Entry {
	return Entry{Body: body, Status: Miss, StoredAt: c.storedNow(), FreshFor: c.lifeFor(src, body), Version: versionOf(body)}
}

// store writes e, or, when it is too large, removes the older copy: an
// outdated version must not be served as STALE later. Failures are logged
// only; the caller has its document either way.
func (c *Cache) store(ctx context.Context, dk string, e Entry) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), redisOpTimeout)
	defer cancel()
	var err error
	if len(e.Body) > c.cfg.MaxBytes {
		err = c.rdb.Del(ctx, dk).Err()
	} else {
		err = c.rdb.Set(ctx, dk, encode(e), e.FreshFor+c.cfg.Stale).Err()
	}
	if err != nil {
		c.redis.failed(ctx, err)
	}
}

// lock tries to take the fill lock; held is false when another instance has it.
func (c *Cache) lock(ctx context.Context, lk string) (token string, held bool, err error) {
	token = newToken()
	held, err = c.rdb.SetNX(ctx, lk, token, c.cfg.LockTTL).Result()
	return token, held, err
}

func (c *Cache) unlock(ctx context.Context, lk, token string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), redisOpTimeout)
	defer cancel()
	if err := unlockScript.Run(ctx, c.rdb, []string{lk}, token).Err(); err != nil {
		// It expires after LockTTL anyway.
		c.redis.failed(ctx, err)
	}
}

// keepLock extends the lock while a fetch runs, so a slow but live upstream
// call does not let every other instance start its own after LockTTL. Only
// a holder that died stops extending it. The returned func stops it.
func (c *Cache) keepLock(ctx context.Context, lk, token string) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(c.cfg.LockTTL / 3)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
				_ = extendScript.Run(ctx, c.rdb, []string{lk}, token, c.cfg.LockTTL.Milliseconds()).Err()
				if c.extendHook != nil {
					c.extendHook()
				}
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// awaitOther polls until another instance's fill is visible or its lock is
// gone. It reads the lock before the document, in one round trip: the
// holder stores before it unlocks, so "no lock" followed by "no fresh
// document" really means the holder did not store one.
func (c *Cache) awaitOther(ctx context.Context, dk, lk string) (s stored, released bool, err error) {
	delay := pollFirst
	timer := time.NewTimer(delay)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return s, false, context.Cause(ctx)
		case <-timer.C:
		}
		var locked *redis.IntCmd
		var doc *redis.StringCmd
		_, err = c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			locked = p.Exists(ctx, lk)
			doc = p.Get(ctx, dk)
			return nil
		})
		if err != nil && !errors.Is(err, redis.Nil) {
			return s, false, err
		}
		s = stored{}
		if raw, err := doc.Bytes(); err == nil {
			s = decode(raw)
		}
		if (s.ok && c.fresh(s)) || locked.Val() == 0 {
			return s, locked.Val() == 0, nil
		}
		delay = min(delay*2, pollMax)
		timer.Reset(delay)
	}
}

// safeFetch turns a panic in fetch into an error: inside singleflight's
// DoChan a panic would be re-raised on a goroutine nobody can recover.
func safeFetch(ctx context.Context, fetch fetchFunc) (body []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = facade.Wrap(facade.ErrInternal,
				fmt.Errorf("cache fetch panicked: %v\n%s", r, debug.Stack()))
		}
	}()
	return fetch(ctx)
}

// storedNow is the current time at the precision stored in Redis, so a MISS
// and the HITs that follow report the same StoredAt.
func (c *Cache) storedNow() time.Time { return c.cfg.Now().Truncate(time.Millisecond) }

func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}
