package server

import (
	"log/slog"

	"github.com/labstack/echo/v4"
	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/ratelimit"
)

// rateLimitPrefix is the per-principal limiter's Redis key space (the
// failed-authentication limit keeps "facade:authfail:", authlimit.go):
// one bucket per principal at ratelimit.BucketKey(prefix, principal),
// "facade:rl:{g}:<principal>" with g one of a few hash tags, shared by
// every instance (package ratelimit says how, and how far N instances
// can overshoot within one settlement interval).
const rateLimitPrefix = "facade:rl:"

// newRateLimiter allows FACADE_RATE_LIMIT requests per second per
// principal with a burst of twice that; nil when the limit is off.
func newRateLimiter(rdb redis.UniversalClient, cfg Config, log *slog.Logger) (*ratelimit.Limiter, error) {
	if cfg.RateLimit <= 0 {
		return nil, nil
	}
	return ratelimit.New(rdb, rateLimitPrefix, ratelimit.PerSecond(cfg.RateLimit, 2*cfg.RateLimit),
		ratelimit.Config{Log: log, Now: cfg.Now})
}

// principalLimit is the per-principal rate limit stage; a nil limiter
// means the limit is off.
type principalLimit struct {
	limiter *ratelimit.Limiter
}

// rateLimit answers 429 with Retry-After beyond the principal's limit.
//
// When Redis cannot be reached the request is let through: the stores
// behind the handlers answer 503 themselves, and the build endpoints can
// still serve cached data, which refusing here would prevent. The limiter
// logs the outage itself, once when it starts and once when it ends with a
// count (package ratelimit), not once per request.
func (l principalLimit) rateLimit(next echo.HandlerFunc) echo.HandlerFunc {
	if l.limiter == nil {
		return next
	}
	return func(c echo.Context) error {
		p := principal(c)
		if p.ID == "" { // a public ops endpoint
			return next(c)
		}
		ok, retry, _ := l.limiter.Allow(c.Request().Context(), p.ID)
		if !ok {
			return facade.RetryLater(facade.ErrRateLimited, retry, nil)
		}
		return next(c)
	}
}
