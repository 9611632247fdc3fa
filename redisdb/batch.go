package redisdb

import (
	"context"
	"sync"

	"github.com/redis/go-redis/v9"
)

// maxBatch bounds one pipeline, so one slow batch cannot hold many callers.
const maxBatch = 128

// Batcher sends the commands of many concurrent callers in pipelines: the
// callers waiting while earlier batches are in flight go out together, in
// one write and one read, instead of one round trip each. On the busy path
// (bench/run.sh: 32 clients transferring) each transfer's own round trip
// (its system calls, not Redis's work) was about a quarter of the
// service's CPU per transfer; batched, it is under a tenth. Single-key
// reads gain the same way (grade and balance reads: 1.26-1.31x the
// requests a second, 20-30% less CPU each). An idle caller still goes out
// at once, alone.
//
// Each command is still its own command (a script run still atomic on its
// own); batching changes only how they travel. A failed connection fails
// every command of its batch with go-redis's error, as it would have failed
// each of them alone, so a caller cannot tell a batch from a single call.
//
// Against an unreachable server a pipeline takes go-redis about twice as
// long as a single command to give up (with its defaults 3.3 s against
// 1.7 s: it tries its pipeline connections, then the others), so while
// Redis is down a batched call answers unavailable that much later.
//
// The caller that finds a free slot sends the queue itself; a sender that
// finishes while callers wait leaves the next batch to a new goroutine,
// so that its own caller is answered at once.
type Batcher struct {
	rdb      redis.UniversalClient
	inFlight int

	mu      sync.Mutex
	queue   []*batchCall
	sending int // batches in flight or being handed over
}

type batchCall struct {
	queue func(redis.Pipeliner) // adds the caller's command(s)
	done  chan struct{}         // closed when the batch has run
}

// NewBatcher returns a Batcher on rdb with at most inFlight pipelines at a
// time (at least 1).
func NewBatcher(rdb redis.UniversalClient, inFlight int) *Batcher {
	return &Batcher{rdb: rdb, inFlight: max(inFlight, 1)}
}

// Do has queue add the caller's commands to the next pipeline and returns
// once that pipeline has run; the commands then hold their replies. queue
// runs on the sending goroutine and must only add commands.
func (b *Batcher) Do(ctx context.Context, queue func(redis.Pipeliner)) {
	c := &batchCall{queue: queue, done: make(chan struct{})}
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
}

// RunScript runs script with keys and args as EVALSHA in the next
// pipeline and returns its reply, as script.Run would: a server that
// answers NOSCRIPT (it restarted, or a new shard) never ran it, and gets
// it again as EVAL, which also caches the script.
func (b *Batcher) RunScript(ctx context.Context, script *redis.Script, keys []string, args ...any) *redis.Cmd {
	var cmd *redis.Cmd
	b.Do(ctx, func(p redis.Pipeliner) { cmd = p.EvalSha(ctx, script.Hash(), keys, args...) })
	if err := cmd.Err(); err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
		return script.Eval(ctx, b.rdb, keys, args...)
	}
	return cmd
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

	// Each command carries its own reply or error; the pipeline's error is
	// the first of them.
	_, _ = b.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, c := range batch {
			c.queue(p)
		}
		return nil
	})
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
