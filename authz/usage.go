package authz

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade/authz/grantusage"
)

// Which lines are used (docs/policy.md): with Config.RecordUsage each
// Loaded counts its decisions (compiled.Uses), a reload retires the old
// counts into the Book, and the Book writes them all to Redis
// (package grantusage).

// FlushUsage adds the counts since the last flush to Redis (one script
// call per 2,000 lines used). On a failure the counts are kept for the
// next flush and the error returned. A no-op without RecordUsage.
func (a *Authorizer) FlushUsage(ctx context.Context, rdb redis.UniversalClient) error {
	if a.usage == nil {
		return nil
	}
	return a.usage.Flush(ctx, rdb, a.force.uses())
}

// RecordUsage flushes the usage counts every interval until ctx ends (a
// failed flush is logged and retried with the next). The caller flushes
// once more after the last request (serve does, after draining).
func (a *Authorizer) RecordUsage(ctx context.Context, rdb redis.UniversalClient, every time.Duration) {
	if a.usage == nil || every <= 0 {
		return
	}
	a.usage.Record(ctx, rdb, every, a.force.uses)
}

// uses are the counts of the policy in force; nil when none are kept.
func (f *inForce) uses() grantusage.Counts {
	if st := f.state(); st.use != nil {
		return st.use
	}
	return nil
}
