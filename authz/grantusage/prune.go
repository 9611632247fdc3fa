package grantusage

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// pruneScript removes the fields of the last-use hash (KEYS[1]) named in
// ARGV[2:] whose last use is still before ARGV[1] (unix seconds): a line
// an instance credited since the scan keeps its entry.
var pruneScript = redis.NewScript(`
local cutoff = tonumber(ARGV[1])
for i = 2, #ARGV do
  local last = tonumber(redis.call('HGET', KEYS[1], ARGV[i]) or 'nil')
  if last and last < cutoff then redis.call('HDEL', KEYS[1], ARGV[i]) end
end
return 1
`)

// pruneLastUse drops, once a UTC day across instances, the last uses
// older than keep: a line removed from the policy would otherwise
// keep its entry in Redis for ever (the day hashes expire by themselves).
// A failure is tried again at the next flush; the counts do not wait for
// it.
func (b *Book) pruneLastUse(ctx context.Context, rdb redis.UniversalClient, now time.Time) {
	day := now.UTC().Format(time.DateOnly)
	if b.prunedOn == day {
		return
	}
	first, err := rdb.SetNX(ctx, prefix+"pruned:"+day, 1, 48*time.Hour).Result()
	if err != nil {
		return
	}
	if first && pruneOlder(ctx, rdb, now.Add(-keep).Unix()) != nil {
		rdb.Del(ctx, prefix+"pruned:"+day) // let this or another instance try again
		return
	}
	b.prunedOn = day
}

// pruneOlder scans the last-use hash and removes entries before cutoff.
func pruneOlder(ctx context.Context, rdb redis.UniversalClient, cutoff int64) error {
	var cursor uint64
	for {
		kv, next, err := rdb.HScan(ctx, lastKey, cursor, "", 1000).Result()
		if err != nil {
			return err
		}
		args := []any{cutoff}
		for i := 0; i+1 < len(kv); i += 2 {
			if sec, err := strconv.ParseInt(kv[i+1], 10, 64); err == nil && sec < cutoff {
				args = append(args, kv[i])
			}
		}
		if len(args) > 1 {
			if err := pruneScript.Run(ctx, rdb, []string{lastKey}, args...).Err(); err != nil {
				return err
			}
		}
		if cursor = next; cursor == 0 {
			return nil
		}
	}
}
