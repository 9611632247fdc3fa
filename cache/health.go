package cache

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/facade-dev/facade/redisdb"
)

// redisHealth is what a Cache knows of its Redis: whether to try it now
// (a bypass window after it was found unreachable) and when its trouble
// may be logged again.
type redisHealth struct {
	now      func() time.Time // Config.Now
	log      *slog.Logger
	nextWarn atomic.Int64 // Unix nanos before which Redis trouble is not logged again
	// bypassUntil is 0 while Redis works, else the Unix nanos until which
	// Get does not try it (see usable).
	bypassUntil atomic.Int64
}

// bypassFor is how long Get leaves Redis alone after finding it
// unreachable. A client's dial retries make each failing command slow (about
// 1.7 s with go-redis defaults); without this every request of an outage
// would pay that before reaching upstream.
const bypassFor = 2 * time.Second

// usable reports whether Get should use Redis. While a bypass window
// runs it does not; when the window ends, ONE caller probes Redis and the
// others keep bypassing for another window.
func (h *redisHealth) usable() bool {
	until := h.bypassUntil.Load()
	if until == 0 {
		return true
	}
	now := h.now().UnixNano()
	if now < until {
		return false
	}
	return h.bypassUntil.CompareAndSwap(until, now+int64(bypassFor))
}

// failed logs a Redis failure and, when Redis is unreachable (not
// merely our fill deadline ending), starts a bypass window.
func (h *redisHealth) failed(ctx context.Context, err error) {
	if ctx.Err() == nil && redisdb.IsUnavailable(err) {
		h.bypassUntil.Store(h.now().Add(bypassFor).UnixNano())
	}
	h.warn(err)
}

// works ends a bypass after a successful probe.
func (h *redisHealth) works() {
	if h.bypassUntil.Load() != 0 {
		h.bypassUntil.Store(0)
	}
}

const warnEvery = time.Minute

// warn logs Redis trouble at most once per warnEvery: during an outage
// every request would otherwise log the same line.
func (h *redisHealth) warn(err error) {
	now := h.now().UnixNano()
	next := h.nextWarn.Load()
	if now < next || !h.nextWarn.CompareAndSwap(next, now+int64(warnEvery)) {
		return
	}
	h.log.Warn("response cache: Redis failed; serving upstream documents uncached", "err", err)
}
