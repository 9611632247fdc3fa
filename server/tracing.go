package server

import (
	"net/http"
	"net/textproto"

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

// continueTrace is traceRequest for a service that records nothing
// (Config.Tracer nil, Config.Propagator set): a caller's trace context
// becomes the request's, so the upstream transport passes it on to Bamboo
// (internal/tracing) and its trace id goes on the request's log lines,
// as W3C Trace Context asks of a participant that records nothing. A
// request carrying none of the propagator's headers passes straight
// through: one map look-up a header, no allocation (docs/performance.md,
// "Trace context without export").
func (o *observer) continueTrace() echo.MiddlewareFunc {
	var headers []string
	for _, f := range o.propagator.Fields() {
		headers = append(headers, textproto.CanonicalMIMEHeaderKey(f))
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			if !carriesAny(r.Header, headers) {
				return next(c)
			}
			ctx := o.propagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
			sc := trace.SpanContextFromContext(ctx)
			if !sc.IsValid() {
				return next(c)
			}
			if rc := requestContextOf(ctx); rc != nil {
				rc.traceID = sc.TraceID().String()
			}
			c.SetRequest(r.WithContext(ctx))
			return next(c)
		}
	}
}

func carriesAny(h http.Header, canonical []string) bool {
	for _, k := range canonical {
		if len(h[k]) > 0 {
			return true
		}
	}
	return false
}
