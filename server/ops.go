package server

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/facade-dev/facade/metrics"
)

func (s *Server) healthz(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

// readyz reports whether this instance can serve: Redis reachable and a
// policy loaded. A refused policy reload does not make it unready (the last
// good policy is in force) but is shown.
func (s *Server) readyz(c echo.Context) error {
	ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
	defer cancel()
	redisOK := s.rdb.Ping(ctx).Err() == nil
	st := s.authz.Status()
	body := map[string]any{
		"redis":  okString(redisOK),
		"policy": map[string]any{"loaded": st.Loaded, "last_reload_ok": st.LastReloadOK, "version": st.Version},
	}
	if s.upstream != nil {
		body["upstream_breaker"] = s.upstream()
	}
	status := http.StatusOK
	if !redisOK || !st.Loaded {
		status = http.StatusServiceUnavailable
		c.Response().Header().Set("Retry-After", "1")
	}
	body["status"] = okString(status == http.StatusOK)
	return c.JSON(status, body)
}

func okString(ok bool) string {
	if ok {
		return "ok"
	}
	return "unavailable"
}

var metricsHandler = promhttp.HandlerFor(metrics.Registry, promhttp.HandlerOpts{})

func (s *Server) metrics(c echo.Context) error {
	metricsHandler.ServeHTTP(c.Response(), c.Request())
	return nil
}
