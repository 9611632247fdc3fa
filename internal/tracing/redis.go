package tracing

import (
	"context"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// RedisHook makes each Redis round trip of a traced request (a command,
// or a pipeline sent at once) a client span, child of the request's.
// Round trips outside a request (connection set-up, the rate limiter's
// and the batchers' shared flushes, policy watch) make no span: they
// would be a root trace each, many per second, that no request explains.
// Span names are the command
// names only: keys and arguments (principal ids, account numbers) stay
// out of the trace.
func (t *Tracing) RedisHook() redis.Hook { return redisHook{t} }

type redisHook struct{ t *Tracing }

func (h redisHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h redisHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !trace.SpanContextFromContext(ctx).IsValid() {
			return next(ctx, cmd)
		}
		ctx, span := h.t.Tracer.Start(ctx, "redis "+cmd.Name(), trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(semconv.DBSystemNameRedis, semconv.DBOperationName(cmd.Name())))
		defer span.End()
		err := next(ctx, cmd)
		recordRedis(span, err)
		return err
	}
}

func (h redisHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if !trace.SpanContextFromContext(ctx).IsValid() {
			return next(ctx, cmds)
		}
		name := "pipeline"
		if len(cmds) > 0 {
			name = cmds[0].Name()
		}
		ctx, span := h.t.Tracer.Start(ctx, "redis pipeline "+name, trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(semconv.DBSystemNameRedis, semconv.DBOperationBatchSize(len(cmds))))
		defer span.End()
		err := next(ctx, cmds)
		recordRedis(span, err)
		return err
	}
}

// recordRedis marks a failed round trip; redis.Nil (a missing key) is an
// answer, not a failure.
func recordRedis(span trace.Span, err error) {
	if err != nil && err != redis.Nil {
		span.SetStatus(codes.Error, "redis error")
	}
}
