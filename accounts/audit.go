package accounts

import (
	"context"
	"errors"
	"log/slog"

	"github.com/facade-dev/facade"
)

// outcome names a transfer result for the metric and the audit line: the
// error's code, never its sentence, so rewording a message keeps the metric.
func outcome(replayed bool, err error) string {
	switch {
	case err == nil && replayed:
		return "replayed"
	case err == nil:
		return "created"
	}
	return string(facade.CodeOf(err))
}

// attempt is a transfer as its audit line names it: as written.
type attempt struct {
	principal, from, to, amount string
	keyed                       bool // the request carried an Idempotency-Key
}

func (req TransferRequest) attempt() attempt {
	return attempt{principal: req.Principal, from: req.From.String(), to: req.To.String(),
		amount: req.Amount.String(), keyed: req.IdempotencyKey != ""}
}

// audit records every attempt: the metric, and one log line with
// audit=true naming who asked for what and what happened.
func (s *Store) audit(ctx context.Context, req attempt, t Transfer, replayed bool, err error) {
	result := outcome(replayed, err)
	s.metrics.Transfers.WithLabelValues(result).Inc()
	var buf [10]slog.Attr
	attrs := append(buf[:0],
		slog.Bool("audit", true),
		slog.String("principal", req.principal),
		slog.String("from", clip(req.from)),
		slog.String("to", clip(req.to)),
		slog.String("amount", clip(req.amount)),
		slog.String("outcome", result),
		slog.Bool("idempotency_key", req.keyed))
	level := slog.LevelInfo
	if err == nil {
		attrs = append(attrs, slog.String("transfer_id", t.ID),
			slog.Int64("amount_minor", t.Amount), slog.String("currency", t.Currency.Code))
	} else if errors.Is(err, facade.ErrInternal) || errors.Is(err, facade.ErrStoreUnavailable) {
		level = slog.LevelError
		attrs = append(attrs, slog.Any("error", err))
	}
	// The record goes to the handler directly: Logger.LogAttrs would also
	// walk the stack for the caller's program counter (runtime.Callers),
	// which no handler of the service writes.
	h := s.log.Handler()
	if !h.Enabled(ctx, level) {
		return
	}
	rec := slog.NewRecord(s.now(), level, "transfer", 0)
	rec.AddAttrs(attrs...)
	_ = h.Handle(ctx, rec)
}

// clip bounds text in the log. Parsed ids are at most 64 bytes and
// amounts 19, so it cuts nothing a parse accepted; it keeps an audit line
// bounded whatever text reaches it.
func clip(s string) string {
	const limit = 64
	if len(s) > limit {
		return s[:limit] + "..."
	}
	return s
}
