package redisdb

import (
	"context"
	"sync"
)

// Combiner gathers the items of concurrent callers into batches and has
// one function apply each batch at once: the callers that arrive while
// earlier batches are in flight go out together. An idle caller still goes
// out at once, alone. Batcher uses it for pipelines; the accounts store
// for many transfers in one script call.
//
// The caller that finds a free slot applies the queue itself; one that
// finishes while callers wait leaves the next batch to a new goroutine,
// so that its own caller is answered at once.
type Combiner[T any] struct {
	apply    func(ctx context.Context, batch []T)
	inFlight int
	maxBatch int

	mu      sync.Mutex
	queue   []combined[T]
	sending int // batches in flight or being handed over
}

type combined[T any] struct {
	item T
	done chan struct{} // closed when apply has returned for its batch
}

// NewCombiner returns a Combiner with at most inFlight batches applied at
// a time (at least 1), each of at most maxBatch items (at least 1). apply
// gets a context without cancellation: a caller that gives up must not cut
// the others' batch short.
func NewCombiner[T any](inFlight, maxBatch int, apply func(ctx context.Context, batch []T)) *Combiner[T] {
	return &Combiner[T]{apply: apply, inFlight: max(inFlight, 1), maxBatch: max(maxBatch, 1)}
}

// Do queues item for the next batch and returns once apply has run over
// that batch. apply runs on another caller's goroutine (or a new one), so
// item must carry everything the caller needs back (a pointer).
func (c *Combiner[T]) Do(ctx context.Context, item T) {
	call := combined[T]{item: item, done: make(chan struct{})}
	c.mu.Lock()
	c.queue = append(c.queue, call)
	lead := c.sending < c.inFlight
	if lead {
		c.sending++
	}
	c.mu.Unlock()
	if lead {
		c.send(context.WithoutCancel(ctx))
	}
	<-call.done
}

// Queued is how many callers wait for a batch to start (tests use it to
// see callers pile up).
func (c *Combiner[T]) Queued() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.queue)
}

// send applies the head of the queue, answers every caller in it, and
// leaves what was queued meanwhile to a new sender in the same slot.
func (c *Combiner[T]) send(ctx context.Context) {
	c.mu.Lock()
	n := min(len(c.queue), c.maxBatch)
	calls := c.queue[:n:n]
	c.queue = append([]combined[T](nil), c.queue[n:]...)
	c.mu.Unlock()

	items := make([]T, n)
	for i, call := range calls {
		items[i] = call.item
	}
	c.apply(ctx, items)
	for _, call := range calls {
		close(call.done)
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.queue) == 0 {
		c.sending--
		return
	}
	go c.send(ctx)
}
