// Package jsonlog builds the service's log handler: log/slog's
// JSONHandler, its lines stamped by the clock the service was handed.
// slog.Logger stamps a record with the machine's clock behind the caller's
// back; every part of the service reads the one clock it was handed
// (README, Layout: internal/testkit/testclock), so a test that moves its
// clock sees its log lines move with it.
package jsonlog

import (
	"context"
	"io"
	"log/slog"
	"time"
)

// New returns slog's JSON handler writing to w at level (nil means
// slog.LevelInfo), whose records are stamped by now. A nil now keeps the
// record's time. Like slog.NewJSONHandler it takes its writer and level,
// not a Config (README, after the Layout table).
func New(w io.Writer, level slog.Leveler, now func() time.Time) slog.Handler {
	h := slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level})
	if now == nil {
		return h
	}
	return stamped{h, now}
}

// stamped sets each record's time from now before its handler writes it.
type stamped struct {
	slog.Handler
	now func() time.Time
}

// Handle stamps r; a record without a time is written without one, as
// slog does.
func (h stamped) Handle(ctx context.Context, r slog.Record) error {
	if !r.Time.IsZero() {
		r.Time = h.now()
	}
	return h.Handler.Handle(ctx, r)
}

func (h stamped) WithAttrs(as []slog.Attr) slog.Handler {
	return stamped{h.Handler.WithAttrs(as), h.now}
}

func (h stamped) WithGroup(name string) slog.Handler {
	return stamped{h.Handler.WithGroup(name), h.now}
}
