package redisdb

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// maxBatch bounds one pipeline, so one slow batch cannot hold many callers.
const maxBatch = 128

// Batcher sends the commands of many concurrent callers in pipelines: the
// callers waiting while earlier batches are in flight go out together, in
// one write and one read, instead of one round trip each. Single-key reads
// (grades, balances) gain the most this way (docs/performance.md,
// "redisdb"). An idle caller still goes out at once, alone.
//
// Each command is still its own command (a script run still atomic on its
// own); batching changes only how they travel. A failed connection fails
// every command of its batch with go-redis's error, as it would have failed
// each of them alone, so a caller cannot tell a batch from a single call.
//
// Against an unreachable server go-redis gives up on a pipeline later than
// on a single command (it tries its pipeline connections, then the others;
// docs/performance.md, "redisdb"), so while Redis is down a batched call
// answers unavailable later than a lone one would.
//
// Batcher is a Combiner whose batches are pipelines.
type Batcher struct {
	rdb     redis.UniversalClient
	combine *Combiner[func(redis.Pipeliner)]
}

// NewBatcher returns a Batcher on rdb with at most inFlight pipelines at a
// time (at least 1). A building block with a required size, like
// bufio.NewReaderSize, it takes no Config (README, after the Layout table).
func NewBatcher(rdb redis.UniversalClient, inFlight int) *Batcher {
	return &Batcher{rdb: rdb, combine: NewCombiner(inFlight, maxBatch, func(ctx context.Context, batch []func(redis.Pipeliner)) {
		// Each command carries its own reply or error; the pipeline's
		// error is the first of them.
		_, _ = rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, queue := range batch {
				queue(p)
			}
			return nil
		})
	})}
}

// Do has queue add the caller's commands to the next pipeline and returns
// once that pipeline has run; the commands then hold their replies. queue
// runs on the sending goroutine and must only add commands.
func (b *Batcher) Do(ctx context.Context, queue func(redis.Pipeliner)) {
	b.combine.Do(ctx, queue)
}
