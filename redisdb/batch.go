package redisdb

import (
	"context"
	"sync"

	"github.com/redis/go-redis/v9"
)

// maxBatch bounds one pipeline, so one slow batch cannot hold many callers.
const maxBatch = 128

// Batcher runs one Lua script for many concurrent callers in pipelines:
// the callers waiting while earlier batches are in flight go out together,
// in one write and one read, instead of one round trip each. On the busy
// path (bench/run.sh: 32 clients transferring) each transfer's own round
// trip (its system calls, not Redis's work) was about a quarter of the
// service's CPU per transfer; batched, it is under a tenth. An idle
// caller still goes out at once, alone.
//
// Each run is still its own EVALSHA, atomic on its own; batching changes
// only how they travel. A failed connection fails every run of its batch
// with go-redis's error, as it would have failed each of them alone, so
// a caller cannot tell a batch from a single call.
//
// The caller that finds a free slot sends the queue itself; a sender that
// finishes while callers wait leaves the next batch to a new goroutine,
// so that its own caller is answered at once.
type Batcher struct {
	rdb      redis.UniversalClient
	script   *redis.Script
	inFlight int

	mu      sync.Mutex
	queue   []*batchCall
	sending int // batches in flight or being handed over
}

type batchCall struct {
	keys []string
	args []any
	cmd  *redis.Cmd
	done chan struct{} // closed when cmd is answered
}

// NewBatcher returns a Batcher of script on rdb with at most inFlight
// pipelines at a time (at least 1).
func NewBatcher(rdb redis.UniversalClient, script *redis.Script, inFlight int) *Batcher {
	return &Batcher{rdb: rdb, script: script, inFlight: max(inFlight, 1)}
}

// Run runs the script with keys and args and returns its reply, as
// script.Run would.
func (b *Batcher) Run(ctx context.Context, keys []string, args ...any) *redis.Cmd {
	c := &batchCall{keys: keys, args: args, done: make(chan struct{})}
	b.mu.Lock()
	b.queue = append(b.queue, c)
	lead := b.sending < b.inFlight
	if lead {
		b.sending++
	}
	b.mu.Unlock()
	if lead {
		b.send(context.WithoutCancel(ctx))
	}
	<-c.done
	return c.cmd
}

// send pipelines the queue, answers every caller in it, and leaves what
// was queued meanwhile to a new sender in the same slot. ctx carries no
// cancellation: a caller that gives up must not cut the others' batch
// short.
func (b *Batcher) send(ctx context.Context) {
	b.mu.Lock()
	n := min(len(b.queue), maxBatch)
	batch := b.queue[:n:n]
	b.queue = append([]*batchCall(nil), b.queue[n:]...)
	b.mu.Unlock()

	b.pipeline(ctx, batch)
	for _, c := range batch {
		close(c.done)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.queue) == 0 {
		b.sending--
		return
	}
	go b.send(ctx)
}

// pipeline sends every call as EVALSHA; calls the server answers NOSCRIPT
// (it restarted, or a new shard) never ran and go again as EVAL, which
// also caches the script.
func (b *Batcher) pipeline(ctx context.Context, batch []*batchCall) {
	_, _ = b.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, c := range batch {
			c.cmd = p.EvalSha(ctx, b.script.Hash(), c.keys, c.args...)
		}
		return nil
	})
	var again []*batchCall
	for _, c := range batch {
		if err := c.cmd.Err(); err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
			again = append(again, c)
		}
	}
	if len(again) == 0 {
		return
	}
	_, _ = b.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, c := range again {
			c.cmd = b.script.Eval(ctx, p, c.keys, c.args...)
		}
		return nil
	})
}
