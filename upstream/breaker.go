package upstream

import (
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	facade "github.com/facade-dev/facade"
)

// BreakerState is the circuit breaker's state; its String is what /readyz
// shows and its number what metrics.BreakerState holds.
type BreakerState int

// The breaker's states.
const (
	BreakerClosed   BreakerState = iota // calls go through; consecutive failures are counted
	BreakerHalfOpen                     // the open period ended: one probe call may go through
	BreakerOpen                         // calls are refused until the open period ends
)

func (s BreakerState) String() string {
	switch s {
	case BreakerClosed:
		return "closed"
	case BreakerHalfOpen:
		return "half-open"
	}
	return "open"
}

// breaker is a two-step circuit breaker (two-step because an artifact
// call's outcome is known when its headers arrive, before its body is
// read): after `failures` consecutive failed calls it opens for openFor,
// then lets one probe through, which closes it again or reopens it.
//
// It is written here rather than taken from gobreaker (which the service
// used before) because its open period must run on Config.Now, so that
// tests move time past it instead of sleeping, and because Retry-After
// needs the instant it opened, which gobreaker does not expose.
type breaker struct {
	now      func() time.Time
	failures uint32
	openFor  time.Duration
	log      *slog.Logger
	gauge    prometheus.Gauge

	mu          sync.Mutex
	state       BreakerState
	generation  uint64    // bumped on every change of state: late outcomes of an earlier state are ignored
	consecutive uint32    // consecutive failures while closed
	openedAt    time.Time // the last change to open
	probing     bool      // the half-open probe is out
}

// Outcomes reported to the breaker. Only errFailure counts against
// upstream; errExcluded (the caller gave up) is not counted at all.
var (
	errFailure  = errors.New("upstream failure")
	errExcluded = errors.New("call abandoned by the caller")
)

// Why a call was refused (the facade.Error's Err, for logs).
var (
	errOpenState = errors.New("circuit breaker is open")
	errProbing   = errors.New("circuit breaker is half-open and its probe is out")
)

func newBreaker(failures uint32, openFor time.Duration, now func() time.Time, log *slog.Logger, gauge prometheus.Gauge) *breaker {
	b := &breaker{now: now, failures: failures, openFor: openFor, log: log, gauge: gauge}
	b.gauge.Set(float64(BreakerClosed))
	return b
}

// allow asks the breaker for one call. On refusal it returns ErrUpstreamOpen
// with RetryAfter set to the time left until a probe may go through
// (facade.RetryLater rounds it up to whole seconds). done
// reports the call's outcome: nil, errFailure or errExcluded.
func (b *breaker) allow() (done func(outcome error), err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	b.refresh(now)
	switch {
	case b.state == BreakerOpen:
		return nil, facade.RetryLater(facade.ErrUpstreamOpen, b.openedAt.Add(b.openFor).Sub(now), errOpenState)
	case b.state == BreakerHalfOpen && b.probing:
		return nil, facade.RetryLater(facade.ErrUpstreamOpen, time.Second, errProbing)
	case b.state == BreakerHalfOpen:
		b.probing = true
	}
	generation := b.generation
	return func(outcome error) { b.report(generation, outcome) }, nil
}

// report records the outcome of a call allowed in generation.
func (b *breaker) report(generation uint64, outcome error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	b.refresh(now)
	if generation != b.generation {
		return
	}
	switch {
	case errors.Is(outcome, errExcluded):
		b.probing = false // an abandoned probe frees the slot for another
	case outcome == nil && b.state == BreakerHalfOpen:
		b.set(BreakerClosed, now)
	case outcome == nil:
		b.consecutive = 0
	case b.state == BreakerHalfOpen:
		b.set(BreakerOpen, now)
	default:
		b.consecutive++
		if b.consecutive >= b.failures {
			b.set(BreakerOpen, now)
		}
	}
}

// refresh turns an open breaker half-open once its open period is over.
func (b *breaker) refresh(now time.Time) {
	if b.state == BreakerOpen && !now.Before(b.openedAt.Add(b.openFor)) {
		b.set(BreakerHalfOpen, now)
	}
}

// set changes state, starting a new generation. Called with b.mu held:
// it records and logs only.
func (b *breaker) set(to BreakerState, now time.Time) {
	from := b.state
	b.state, b.generation, b.consecutive, b.probing = to, b.generation+1, 0, false
	if to == BreakerOpen {
		b.openedAt = now
	}
	b.gauge.Set(float64(to))
	b.log.Warn("upstream circuit breaker changed state", "from", from.String(), "to", to.String())
}

func (b *breaker) current() BreakerState {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refresh(b.now()) // may move open to half-open, which updates the gauge
	b.gauge.Set(float64(b.state))
	return b.state
}
