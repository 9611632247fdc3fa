package server

import (
	"log/slog"
	"net"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/ratelimit"
)

// authFailurePrefix is where the failed authentications of client
// addresses are counted (package ratelimit, a bucket per address), shared
// by every instance like the per-principal limit.
const authFailurePrefix = "facade:authfail:"

// authFailureKey is the client address a failure counts against. IPv6
// addresses count per /64, which one client usually holds whole.
func authFailureKey(addr string) string {
	ip := net.ParseIP(addr)
	if ip != nil && ip.To4() == nil {
		addr = ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
	}
	return addr
}

// failureLimit counts failed authentications per client address
// (FACADE_AUTH_FAILURE_LIMIT): the token check (authenticator) and the
// back-channel logout (signInHandlers) spend and look at it. A nil
// limiter means no limit.
type failureLimit struct {
	limiter *ratelimit.Limiter
}

// newFailureLimit allows FACADE_AUTH_FAILURE_LIMIT failed
// authentications per minute per client address, as a burst; no limit
// when it is 0. Failures are counted in Redis alone (Spend, Peek), so
// every instance sees each at once.
func newFailureLimit(rdb redis.UniversalClient, cfg Config, log *slog.Logger) (*failureLimit, error) {
	f := &failureLimit{}
	n := cfg.AuthFailureLimit
	if n <= 0 {
		return f, nil
	}
	var err error
	f.limiter, err = ratelimit.New(rdb, authFailurePrefix, ratelimit.Limit{Rate: n, Period: time.Minute, Burst: n},
		ratelimit.Config{Log: log, Now: cfg.Now})
	return f, err
}

// throttled reports whether c's client address has used up its failed
// authentications, and when to retry. It only looks (Peek), so a blocked
// address cannot push its own release further away. It is asked about a
// token that failed (authenticator.failed), never a valid one. When Redis
// cannot be reached the request goes on, as with the per-principal limit.
func (f *failureLimit) throttled(c echo.Context) (time.Duration, bool) {
	if f.limiter == nil {
		return 0, false
	}
	ok, err := f.limiter.Peek(c.Request().Context(), authFailureKey(c.RealIP()))
	if err != nil {
		return 0, false // the limiter logs the outage once (internal/outage)
	}
	if ok {
		return 0, false
	}
	// The next failure is allowed one emission interval after the last.
	limit := f.limiter.Limit()
	return max(limit.Period/time.Duration(limit.Rate), time.Second), true
}

// count spends one of c's client address's failures.
func (f *failureLimit) count(c echo.Context) {
	if f.limiter == nil {
		return
	}
	// An error is the limiter's Redis down: it logs the outage once, with
	// a count, at its end (internal/outage), never a line per request.
	f.limiter.Spend(c.Request().Context(), authFailureKey(c.RealIP())) //nolint:errcheck // see above
}

// errAuthThrottled is the 429 for an address over its failure limit.
func errAuthThrottled(retry time.Duration) error {
	return facade.RetryLater(facade.ErrAuthThrottled, retry, nil)
}

// ipExtractor finds the client address: the peer, or, when the peer is one
// of FACADE_TRUSTED_PROXIES, the right-most X-Forwarded-For entry that is
// not itself a trusted proxy. Nothing is trusted by default (not even
// loopback or private networks, which Echo would trust).
func ipExtractor(trusted []*net.IPNet) echo.IPExtractor {
	if len(trusted) == 0 {
		return echo.ExtractIPDirect()
	}
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, n := range trusted {
		opts = append(opts, echo.TrustIPRange(n))
	}
	return echo.ExtractIPFromXFFHeader(opts...)
}
