// Package outage logs a dependency's outage as two lines, one when it
// starts and one when it ends with how many requests went on without the
// dependency meanwhile, instead of a line per request: with Redis down for
// ten seconds, a line per request was 127 lines saying the same thing
// (docs/operations.md, "Outages in the log").
package outage

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Log follows one dependency (the rate limiter's Redis, the revocation
// list's). Its methods are safe for concurrent use; OK, called on every
// success, costs an atomic load while nothing is down.
type Log struct {
	log  *slog.Logger
	what string
	now  func() time.Time

	down    atomic.Bool
	mu      sync.Mutex
	since   time.Time
	allowed int
}

// New returns a Log writing to log (nil: slog.Default()) about what
// ("rate limiter"), on clock now (nil: time.Now).
func New(log *slog.Logger, what string, now func() time.Time) *Log {
	if log == nil {
		log = slog.Default()
	}
	if now == nil {
		now = time.Now
	}
	return &Log{log: log, what: what, now: now}
}

// Allowed records a request that went on without the dependency (err says
// why it could not be asked). The first failure of an outage is logged.
func (o *Log) Allowed(ctx context.Context, err error) { o.fail(ctx, err, 1) }

// Failed records a failure that let no request through (a background
// call): it starts an outage like Allowed, and counts nothing.
func (o *Log) Failed(ctx context.Context, err error) { o.fail(ctx, err, 0) }

func (o *Log) fail(ctx context.Context, err error, requests int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.allowed += requests
	if o.down.Load() {
		return
	}
	o.down.Store(true)
	o.since = o.now()
	o.log.WarnContext(ctx, o.what+" unavailable; requests allowed until it is back", "err", err.Error())
}

// OK records a success: it ends an outage, with one line saying how long it
// lasted and how many requests went on without the dependency.
func (o *Log) OK(ctx context.Context) {
	if !o.down.Load() {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.down.Load() {
		return
	}
	o.log.WarnContext(ctx, o.what+" available again", "allowed", o.allowed,
		"down_ms", o.now().Sub(o.since).Milliseconds())
	o.down.Store(false)
	o.allowed = 0
}
