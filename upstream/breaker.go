package upstream

import (
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sony/gobreaker/v2"

	facade "github.com/facade-dev/facade"
)

// breaker wraps a gobreaker two-step breaker (two-step because an artifact
// call's outcome is known when its headers arrive, before its body is
// read) and remembers when it opened, which gobreaker does not expose, to
// tell callers how long to wait.
type breaker struct {
	cb       *gobreaker.TwoStepCircuitBreaker[struct{}]
	openFor  time.Duration
	openedAt atomic.Int64 // unix nanoseconds of the last transition to open
	gauge    prometheus.Gauge
}

// Outcomes reported to the breaker. Only errFailure counts against
// upstream; errExcluded (the caller gave up) is not counted at all.
var (
	errFailure  = errors.New("upstream failure")
	errExcluded = errors.New("call abandoned by the caller")
)

func newBreaker(failures uint32, openFor time.Duration, log *slog.Logger, gauge prometheus.Gauge) *breaker {
	b := &breaker{openFor: openFor, gauge: gauge}
	b.cb = gobreaker.NewTwoStepCircuitBreaker[struct{}](gobreaker.Settings{
		Name:        "bamboo",
		MaxRequests: 1, // one probe while half-open
		Timeout:     openFor,
		ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= failures },
		IsExcluded:  func(err error) bool { return errors.Is(err, errExcluded) },
		// Called under gobreaker's lock: record and log only, never call back.
		OnStateChange: func(_ string, from, to gobreaker.State) {
			if to == gobreaker.StateOpen {
				b.openedAt.Store(time.Now().UnixNano())
			}
			b.gauge.Set(float64(to))
			log.Warn("upstream circuit breaker changed state", "from", from.String(), "to", to.String())
		},
	})
	b.gauge.Set(float64(gobreaker.StateClosed))
	return b
}

// allow asks the breaker for one call. On refusal it returns ErrUpstreamOpen
// with RetryAfter set to the time left until a probe may go through.
func (b *breaker) allow() (done func(outcome error), err error) {
	done, err = b.cb.Allow()
	if err != nil {
		return nil, &facade.Error{
			Code:       facade.ErrUpstreamOpen.Code,
			RetryAfter: b.retryAfter(err),
			Err:        err,
		}
	}
	return done, nil
}

// retryAfter is the time until the breaker turns half-open, rounded up to a
// whole second and at least one; while half-open (a probe is running) it
// is one second.
func (b *breaker) retryAfter(refusal error) time.Duration {
	if !errors.Is(refusal, gobreaker.ErrOpenState) {
		return time.Second
	}
	left := time.Until(time.Unix(0, b.openedAt.Load()).Add(b.openFor))
	seconds := (left + time.Second - 1) / time.Second
	return max(seconds, 1) * time.Second
}

func (b *breaker) state() gobreaker.State {
	s := b.cb.State() // may move open to half-open, which updates the gauge
	b.gauge.Set(float64(s))
	return s
}
