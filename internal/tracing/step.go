package tracing

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// Authorize starts the span of an authorization step of a traced request
// (one decision, such as "grade.view", or the filtering of a list for its
// caller), as a child of the request's span. The decisions themselves take
// no context (package authz decides from the principal and identifiers
// alone), so their callers make the span around them.
//
// Without a recording span in ctx (nothing recorded, a caller's trace
// context only passed on, or work outside a request) it returns that span
// unchanged: nothing is allocated or recorded, so such a request pays one
// context look-up. End the span when the step is decided; Allowed records
// the outcome.
func Authorize(ctx context.Context, op string) trace.Span {
	parent := trace.SpanFromContext(ctx)
	if !parent.IsRecording() {
		return parent
	}
	_, span := parent.TracerProvider().Tracer(Name).Start(ctx, "authorize "+op,
		trace.WithAttributes(attribute.String("facade.authz.operation", op)))
	return span
}

// Allowed records on span whether the decision allowed, and ends it.
func Allowed(span trace.Span, allowed bool) {
	if span.IsRecording() {
		span.SetAttributes(attribute.Bool("facade.authz.allowed", allowed))
	}
	span.End()
}
