package server

import (
	"context"
	"net/http"
	"slices"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/redis/go-redis/v9"

	facade "github.com/facade-dev/facade"
	"github.com/facade-dev/facade/authz"
)

// opsHandlers answer /healthz and /readyz (routes.go mounts /metrics
// beside them): whether Redis answers, the policy authz holds, the
// upstream's breaker (nil: no upstream), and whether the instance is
// draining (Server.Drain).
type opsHandlers struct {
	rdb      redis.UniversalClient
	az       *authz.Authorizer
	upstream func() string
	draining atomic.Bool
}

func (h *opsHandlers) healthz(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

// readyz reports what this instance can decide alone: whether it is
// draining (Server.Drain) and whether a policy is loaded; either is a 503
// whose body says which (reason). Redis is shared by every instance: a
// Redis blip would take every pod out of the Service at once while the
// build routes still answer from the cache, so its state is shown in the
// body (and in facade_redis_up, metrics/redis.go) and the routes that need
// it answer 503 store_unavailable themselves. The PING waits at most
// facade.ReadyRedisWait. A refused policy reload does not make it unready
// (the last good policy is in force) but is shown.
func (h *opsHandlers) readyz(c echo.Context) error {
	ctx, cancel := context.WithTimeout(c.Request().Context(), facade.ReadyRedisWait)
	defer cancel()
	redisOK := h.rdb.Ping(ctx).Err() == nil
	st := h.az.Status()
	body := map[string]any{
		"redis": okString(redisOK),
		"policy": map[string]any{"loaded": st.Loaded, "last_reload_ok": st.LastReloadOK, "version": st.Version,
			"hash": st.Hash, "loaded_at": st.LoadedAt.UTC().Format(time.RFC3339), "decider": st.Decider},
	}
	if h.upstream != nil {
		body["upstream_breaker"] = h.upstream()
	}
	status, reason := http.StatusOK, ""
	switch {
	case h.draining.Load():
		status, reason = http.StatusServiceUnavailable, "draining: the instance is shutting down"
		body["status"] = "draining"
	case !st.Loaded:
		status, reason = http.StatusServiceUnavailable, "no policy loaded"
		body["status"] = okString(false)
	default:
		body["status"] = okString(true)
	}
	if status != http.StatusOK {
		body["reason"] = reason
		c.Response().Header().Set("Retry-After", "1")
	}
	return c.JSON(status, body)
}

func okString(ok bool) string {
	if ok {
		return "ok"
	}
	return "unavailable"
}

// withoutVersions drops the metric families that name a version (go_info
// carries the Go release): the API listener shows none, the ops listener
// may.
func withoutVersions(g prometheus.Gatherer) prometheus.Gatherer {
	return prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		families, err := g.Gather()
		return slices.DeleteFunc(families, func(f *dto.MetricFamily) bool {
			return f.GetName() == "go_info" || f.GetName() == "facade_build_info"
		}), err
	})
}
