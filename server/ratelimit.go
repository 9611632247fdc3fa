package server

import (
	"net/http"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/labstack/echo/v4"

	"github.com/facade-dev/facade"
)

// rateLimitKey is this package's only Redis key: redis_rate prefixes it with
// "rate:", so the stored key is "rate:facade:rl:{principal}". GCRA state in
// Redis is what makes the limit shared by every instance.
func rateLimitKey(principal string) string { return "facade:rl:" + principal }

// rateLimit allows FACADE_RATE_LIMIT requests per second per principal with
// a burst of twice that, and answers 429 with Retry-After beyond it.
//
// When Redis cannot be reached the request is let through (logged): the
// stores behind the handlers answer 503 themselves, and the build endpoints
// can still serve cached data, which refusing here would prevent.
func (s *Server) rateLimit(next echo.HandlerFunc) echo.HandlerFunc {
	if s.cfg.RateLimit <= 0 {
		return next
	}
	limit := redis_rate.Limit{Rate: s.cfg.RateLimit, Period: time.Second, Burst: 2 * s.cfg.RateLimit}
	return func(c echo.Context) error {
		p := facade.PrincipalFrom(c.Request().Context())
		if p.ID == "" { // a public ops endpoint
			return next(c)
		}
		res, err := s.limiter.Allow(c.Request().Context(), rateLimitKey(p.ID), limit)
		if err != nil {
			s.log.Warn("rate limiter unavailable; request allowed", "request_id", requestID(c), "err", err.Error())
			return next(c)
		}
		if res.Allowed == 0 {
			retry := res.RetryAfter
			if retry < time.Second {
				retry = time.Second
			}
			writeProblem(c, http.StatusTooManyRequests, facade.DetailRateLimited, retry)
			return nil
		}
		return next(c)
	}
}
