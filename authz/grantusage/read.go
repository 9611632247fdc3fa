package grantusage

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Usage is what Redis holds about the lines' use in a window: the uses
// per normalised line, summed over the UTC days from the day of since to
// the day of now, and each line's last use (any time in the last 400
// days).
type Usage struct {
	Since, Now time.Time
	Uses       map[string]uint64
	Last       map[string]time.Time
}

// ReadUsage reads the usage of the window (now-window, now] from Redis.
func ReadUsage(ctx context.Context, rdb redis.UniversalClient, now time.Time, window time.Duration) (*Usage, error) {
	if window <= 0 || window > MaxWindow {
		return nil, fmt.Errorf("authz: a usage window is 1 second to %d days", MaxWindow/(24*time.Hour))
	}
	u := &Usage{Since: now.Add(-window), Now: now, Uses: map[string]uint64{}, Last: map[string]time.Time{}}
	pipe := rdb.Pipeline()
	var days []*redis.MapStringStringCmd
	first := u.Since.UTC().Truncate(24 * time.Hour)
	for d := first; !d.After(now.UTC()); d = d.Add(24 * time.Hour) {
		days = append(days, pipe.HGetAll(ctx, dayKey(d)))
	}
	last := pipe.HGetAll(ctx, lastKey)
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("authz: read policy usage: %w", err)
	}
	for _, d := range days {
		for line, v := range d.Val() {
			n, _ := strconv.ParseUint(v, 10, 64)
			u.Uses[line] += n
		}
	}
	u.readLast(last.Val())
	return u, nil
}

// ReadLastUse reads each line's last use only (for the access review).
func ReadLastUse(ctx context.Context, rdb redis.UniversalClient) (*Usage, error) {
	last, err := rdb.HGetAll(ctx, lastKey).Result()
	if err != nil {
		return nil, fmt.Errorf("authz: read policy usage: %w", err)
	}
	u := &Usage{Uses: map[string]uint64{}, Last: map[string]time.Time{}}
	u.readLast(last)
	return u, nil
}

func (u *Usage) readLast(last map[string]string) {
	for line, v := range last {
		if sec, err := strconv.ParseInt(v, 10, 64); err == nil {
			u.Last[line] = time.Unix(sec, 0).UTC()
		}
	}
}
