// Package tracing is the service's OpenTelemetry tracing, configured by
// the standard OTEL_* variables: with OTEL_EXPORTER_OTLP_ENDPOINT (or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) set, spans are exported over
// OTLP/HTTP (the exporter reads the other OTEL_EXPORTER_OTLP_* variables
// itself, such as headers and timeout; the SDK reads OTEL_SERVICE_NAME,
// OTEL_RESOURCE_ATTRIBUTES and OTEL_TRACES_SAMPLER). Without it nothing
// is recorded, but a caller's trace context is still continued, as W3C
// Trace Context asks of a participant that records nothing: its
// traceparent goes on to Bamboo unchanged and its trace id on the
// request's log lines; there is no span, no Redis hook, and a request
// without a traceparent passes straight through (docs/operations.md,
// "Tracing"; the cost in docs/performance.md). The propagation is W3C
// Trace Context (traceparent).
package tracing

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// Name is the instrumentation scope of every span the service makes.
const Name = "github.com/facade-dev/facade"

// Tracing is a running tracer provider and its propagator, or the
// propagator alone when nothing is recorded (Recording).
type Tracing struct {
	provider   *sdktrace.TracerProvider // nil: nothing is recorded
	Tracer     trace.Tracer             // nil when nothing is recorded
	Propagator propagation.TextMapPropagator
}

// Setup starts the exporter to tracesURL (the OTLP/HTTP traces endpoint,
// from OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT
// + /v1/traces). When it is empty, the Tracing records nothing and only
// passes trace context on. version is the service's version on every
// span.
func Setup(ctx context.Context, tracesURL, version string) (*Tracing, error) {
	if tracesURL == "" {
		return &Tracing{Propagator: propagation.TraceContext{}}, nil
	}
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(tracesURL))
	if err != nil {
		return nil, err
	}
	// resource.Default reads OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES;
	// the service is "facade" unless they say otherwise.
	res, err := resource.Merge(resource.NewSchemaless(semconv.ServiceName("facade"), semconv.ServiceVersion(version)),
		resource.Default())
	if err != nil {
		res = resource.Default()
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return &Tracing{provider: tp, Tracer: tp.Tracer(Name), Propagator: propagation.TraceContext{}}, nil
}

// Recording reports whether spans are recorded and exported.
func (t *Tracing) Recording() bool { return t != nil && t.provider != nil }

// Shutdown sends the spans still queued and stops the exporter.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if !t.Recording() {
		return nil
	}
	return t.provider.Shutdown(ctx)
}

// Transport wraps base (nil: http.DefaultTransport) so that every call
// made through it carries the request's W3C traceparent to the server it
// calls (Bamboo): as a client span of its own, child of the request's,
// when spans are recorded; the caller's own, unchanged, when not.
func (t *Tracing) Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	if !t.Recording() {
		return &passOn{base: base, propagator: t.Propagator}
	}
	return &transport{base: base, t: t}
}

// passOn is the transport of a service that records nothing: a request
// whose context holds a trace context (the caller's, continued by the
// server) carries it on; any other goes through untouched.
type passOn struct {
	base       http.RoundTripper
	propagator propagation.TextMapPropagator
}

func (p *passOn) RoundTrip(r *http.Request) (*http.Response, error) {
	if !trace.SpanContextFromContext(r.Context()).IsValid() {
		return p.base.RoundTrip(r)
	}
	r = r.Clone(r.Context()) // a RoundTripper must not change the request it was given
	p.propagator.Inject(r.Context(), propagation.HeaderCarrier(r.Header))
	return p.base.RoundTrip(r)
}

type transport struct {
	base http.RoundTripper
	t    *Tracing
}

func (tr *transport) RoundTrip(r *http.Request) (*http.Response, error) {
	ctx, span := tr.t.Tracer.Start(r.Context(), "HTTP "+r.Method, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(semconv.HTTPRequestMethodKey.String(r.Method), semconv.ServerAddress(r.URL.Hostname()),
			semconv.URLPath(r.URL.Path)))
	defer span.End()
	r = r.Clone(ctx)
	tr.t.Propagator.Inject(ctx, propagation.HeaderCarrier(r.Header))
	res, err := tr.base.RoundTrip(r)
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, "transport error")
		return nil, err
	}
	span.SetAttributes(semconv.HTTPResponseStatusCode(res.StatusCode))
	if res.StatusCode >= 500 {
		span.SetStatus(codes.Error, http.StatusText(res.StatusCode))
	}
	return res, nil
}
