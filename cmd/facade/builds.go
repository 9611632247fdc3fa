package main

import (
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade/authz"
	"github.com/facade-dev/facade/cache"
	"github.com/facade-dev/facade/favourites"
	"github.com/facade-dev/facade/internal/tracing"
	"github.com/facade-dev/facade/metrics"
	"github.com/facade-dev/facade/proxy"
	"github.com/facade-dev/facade/proxy/history"
	"github.com/facade-dev/facade/server"
	"github.com/facade-dev/facade/upstream"
)

// newBuilds assembles the build-result side: Bamboo client, shared cache,
// proxy handlers and the builds over time (proxy/history). Without
// FACADE_UPSTREAM_URL it returns nils and the routes answer 503.
func newBuilds(s settings, rdb redis.UniversalClient, az *authz.Authorizer, log *slog.Logger, m *metrics.Metrics, now func() time.Time, tr *tracing.Tracing) (server.BuildHandlers, server.BuildHistory, func() string, error) {
	if s.UpstreamURL == "" {
		log.Warn("FACADE_UPSTREAM_URL is not set: build-result endpoints will answer 503")
		return nil, nil, nil, nil
	}
	// Each Bamboo call carries the request's traceparent (a client span of
	// its own when spans are recorded).
	hc := &http.Client{Transport: tr.Transport(nil)}
	up, err := upstream.New(upstream.Config{BaseURL: s.UpstreamURL, Token: s.UpstreamToken, Timeout: s.UpstreamTimeout,
		HTTPClient: hc, Metrics: m, Now: now, Log: log})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("FACADE_UPSTREAM_URL: %w", err)
	}
	stale := s.CacheStale
	if stale == 0 {
		stale = -1 // FACADE_CACHE_STALE=0 means "never serve stale"; the cache reads 0 as its default
	}
	// One fill (the project list may take several upstream pages) is held
	// to the same budget as one upstream request.
	c := cache.New(rdb, cache.Config{TTL: s.CacheTTL, Stale: stale, FetchTimeout: s.UpstreamTimeout, Metrics: m, Now: now, Log: log})
	favs := favourites.New(rdb, favourites.Config{Now: now})
	h := proxy.New(up, c, az, proxy.Config{PublicURL: s.PublicURL, CacheTTL: s.CacheTTL,
		FinishedTTL: s.CacheFinished, LiveInterval: s.LiveInterval, Now: now, Favourites: favs, Log: log})
	hist := history.New(up, c, history.Config{FinishedTTL: s.CacheFinished, Log: log})
	return h, hist, func() string { return up.BreakerState().String() }, nil
}
