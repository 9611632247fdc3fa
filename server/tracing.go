package server

import (
	"net/http"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// traceRequest makes the request a server span named by its method and
// route template ("GET /rs/account/:accountId/balance", never a concrete id),
// the child of the caller's span when the request carries a W3C
// traceparent. The span's context is the request's from here on, so the
// upstream calls and Redis round trips below are its children, and its
// trace id goes on every log line of the request (LogHandler). Only in the
// chain when Config.Tracer is set.
func (o *observer) traceRequest(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		route := c.Path()
		if route == "" {
			route = "unmatched"
		}
		ctx := o.propagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		ctx, span := o.tracer.Start(ctx, r.Method+" "+route, trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(attribute.String("http.request.method", r.Method), attribute.String("http.route", route)))
		defer span.End()
		if rc := requestContextOf(ctx); rc != nil {
			rc.traceID = span.SpanContext().TraceID().String()
		}
		c.SetRequest(r.WithContext(ctx))
		err := next(c) // observe, inside, has written any error: the status is the one sent
		status := c.Response().Status
		span.SetAttributes(attribute.Int("http.response.status_code", status))
		if status >= 500 {
			span.SetStatus(codes.Error, http.StatusText(status))
		}
		return err
	}
}
