// Package grantusage keeps the record of which policy lines are used
// (docs/policy.md, "Which lines are used"): the counts decisions leave in
// a compiled policy (compiled.Uses) are added, every few seconds, to Redis
// in one script call, shared by every instance, and read back by
// `facade policy usage` and the access review. It exists so that a line
// nobody's decision goes through can be found and removed: Redis holds a
// hash per UTC day of counts per line and a hash of each line's last use,
// keyed by the line's normalised text (compiled.NormalLine), so moving or
// re-spacing a line keeps its history.
package grantusage

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade/metrics"
)

// keep is how long a day's counts are kept in Redis: the longest window
// `policy usage --since` accepts.
const keep = 400 * 24 * time.Hour

// MaxWindow is the longest window `facade policy usage --since` reads.
const MaxWindow = keep

// prefix holds the usage hashes; the hash tag puts them in one cluster
// slot, as the flush script needs.
const prefix = "facade:policy-usage:{u}:"

// chunk is how many lines one script call carries: a policy-sized first
// flush is a few calls, not one huge one.
const chunk = 2000

func dayKey(t time.Time) string { return prefix + "day:" + t.UTC().Format(time.DateOnly) }

const lastKey = prefix + "last"

// Counts is what a compiled policy counted: Take adds to out, by line,
// what was counted since the last Take (compiled.Uses). Take is called
// by one Book at a time, under its lock.
type Counts interface {
	Take(out map[string]uint64)
}

// Book is an instance's usage recording: the counts of policies a reload
// retired that are still to be written, and counts a failed write keeps
// for the next.
type Book struct {
	now     func() time.Time // the flush's time: the day's hash and the last use
	log     *slog.Logger
	metrics *metrics.Metrics

	mu       sync.Mutex
	retired  []retired
	pending  map[string]uint64
	prunedOn string // the UTC day this instance last saw the last-use hash pruned
}

type retired struct {
	counts  Counts
	flushes int
}

// NewBook returns an empty Book that reads the time from now, logs to log
// and counts its flushes in m (facade_policy_usage_flushes_total).
func NewBook(now func() time.Time, log *slog.Logger, m *metrics.Metrics) *Book {
	return &Book{now: now, log: log, metrics: m}
}

// Retire keeps the counts of a policy a reload replaced for the next two
// flushes: a decision that started on it may still be counting.
func (b *Book) Retire(c Counts) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.retired = append(b.retired, retired{counts: c})
}

// flushScript adds one flush's counts to the day's hash (KEYS[1]) and
// raises each line's last use (KEYS[2]) to now unless an instance already
// wrote a later one: ARGV = ttl seconds, now (unix seconds), then line,
// count pairs.
var flushScript = redis.NewScript(`
local now = tonumber(ARGV[2])
for i = 3, #ARGV, 2 do
  redis.call('HINCRBY', KEYS[1], ARGV[i], ARGV[i + 1])
  local last = tonumber(redis.call('HGET', KEYS[2], ARGV[i]) or '0')
  if last < now then redis.call('HSET', KEYS[2], ARGV[i], now) end
end
redis.call('EXPIRE', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[2], ARGV[1])
return 1
`)

// Flush adds the counts since the last flush, the retired policies' and
// current's (nil: none), to Redis: one script call per 2,000 lines used.
// On a failure the counts are kept for the next flush and the error
// returned.
func (b *Book) Flush(ctx context.Context, rdb redis.UniversalClient, current Counts) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	counts := b.pending
	if counts == nil {
		counts = map[string]uint64{}
	}
	b.pending = nil
	kept := b.retired[:0]
	for _, r := range b.retired {
		r.counts.Take(counts)
		if r.flushes++; r.flushes < 2 {
			kept = append(kept, r)
		}
	}
	b.retired = kept
	if current != nil {
		current.Take(counts)
	}
	now := b.now()
	b.pruneLastUse(ctx, rdb, now)
	if len(counts) == 0 {
		return nil
	}
	lines := make([]string, 0, len(counts))
	for l := range counts {
		lines = append(lines, l)
	}
	slices.Sort(lines)
	keys := []string{dayKey(now), lastKey}
	for start := 0; start < len(lines); start += chunk {
		part := lines[start:min(start+chunk, len(lines))]
		args := make([]any, 0, 2+2*len(part))
		args = append(args, int64(keep/time.Second), now.Unix())
		for _, l := range part {
			args = append(args, l, counts[l])
		}
		if err := flushScript.Run(ctx, rdb, keys, args...).Err(); err != nil {
			b.metrics.PolicyUsageFlushes.WithLabelValues("error").Inc()
			b.pending = map[string]uint64{}
			for _, l := range lines[start:] {
				b.pending[l] = counts[l]
			}
			return fmt.Errorf("authz: write policy usage: %w", err)
		}
	}
	b.metrics.PolicyUsageFlushes.WithLabelValues("ok").Inc()
	return nil
}

// Record flushes every interval, with the counts current returns at the
// time, until ctx ends (a failed flush is logged and retried with the
// next). The caller flushes once more after the last request.
func (b *Book) Record(ctx context.Context, rdb redis.UniversalClient, every time.Duration, current func() Counts) {
	t := time.NewTicker(every)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			fctx, cancel := context.WithTimeout(ctx, every)
			err := b.Flush(fctx, rdb, current())
			cancel()
			if err != nil && !failing {
				b.log.Warn("could not write policy usage to Redis; the counts are kept for the next try", "err", err)
			}
			failing = err != nil
		}
	}
}
