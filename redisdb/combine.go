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
// The caller that finds a free slot applies its batch itself. One that
// finishes while callers wait hands its slot to the caller that opened the
// next batch, which is waiting anyway: it applies that batch on its own
// goroutine, so no goroutine is started per batch, and the callers who
// join the batch until it starts still go with it. Every caller of a batch
// waits on the batch's one channel, closed when apply has returned.
type Combiner[T any] struct {
	apply    func(ctx context.Context, batch []T)
	inFlight int
	maxBatch int

	mu      sync.Mutex
	queue   []*batch[T] // batches not yet started, oldest first; callers join the last
	sending int         // batches in flight or handed to their leader
}

// batch is one batch's items and the channels its callers wait on.
type batch[T any] struct {
	items  []T
	done   chan struct{} // closed when apply has returned for the batch
	lead   chan struct{} // closed when the batch's first caller is to apply it
	handed bool          // lead is closed
}

// NewCombiner returns a Combiner with at most inFlight batches applied at
// a time (at least 1), each of at most maxBatch items (at least 1). apply
// gets a context without cancellation: a caller that gives up must not cut
// the others' batch short. A building block with required sizes, like
// bufio.NewReaderSize, it takes no Config (README, after the Layout table).
func NewCombiner[T any](inFlight, maxBatch int, apply func(ctx context.Context, batch []T)) *Combiner[T] {
	return &Combiner[T]{apply: apply, inFlight: max(inFlight, 1), maxBatch: max(maxBatch, 1)}
}

// Do queues item for the next batch and returns once apply has run over
// that batch. apply may run on another caller's goroutine, so item must
// carry everything the caller needs back (a pointer).
func (c *Combiner[T]) Do(ctx context.Context, item T) {
	c.mu.Lock()
	var b *batch[T]
	if n := len(c.queue); n > 0 && len(c.queue[n-1].items) < c.maxBatch {
		b = c.queue[n-1]
		b.items = append(b.items, item)
		c.mu.Unlock()
		<-b.done
		return
	}
	// This caller opens a batch: it applies it when a slot is free now,
	// or when a finishing batch hands it one.
	b = &batch[T]{items: append(make([]T, 0, 8), item), done: make(chan struct{})}
	c.queue = append(c.queue, b)
	now := c.sending < c.inFlight
	if now {
		c.sending++
		b.handed = true
	} else {
		b.lead = make(chan struct{})
	}
	c.mu.Unlock()
	if !now {
		<-b.lead
	}
	c.send(context.WithoutCancel(ctx), b)
}

// send applies b (taken off the queue: later callers start a new batch),
// answers every caller in it, and hands the slot to the oldest batch not
// yet handed one.
func (c *Combiner[T]) send(ctx context.Context, b *batch[T]) {
	c.mu.Lock()
	for i, q := range c.queue {
		if q == b {
			copy(c.queue[i:], c.queue[i+1:])
			c.queue[len(c.queue)-1] = nil
			c.queue = c.queue[:len(c.queue)-1]
			break
		}
	}
	items := b.items
	c.mu.Unlock()

	c.apply(ctx, items)
	close(b.done)

	c.mu.Lock()
	defer c.mu.Unlock()
	for _, next := range c.queue {
		if !next.handed {
			next.handed = true
			close(next.lead)
			return
		}
	}
	c.sending--
}
