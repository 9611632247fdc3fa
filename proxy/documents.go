package proxy

import (
	"context"
	"time"

	"github.com/facade-dev/facade/cache"
)

// documents are the upstream documents as the shared cache holds them,
// with an L1 copy of each in process while it is fresh (package comment),
// so a warm request costs no Redis round trip.
type documents struct {
	cache    *cache.Cache
	l1       *lru[string, l1Entry]
	now      func() time.Time
	cacheTTL time.Duration // Config.CacheTTL
}

// l1Entry is an in-process copy of a fresh cache entry.
type l1Entry struct {
	entry cache.Entry
	until time.Time // served from process memory before this instant
}

// document returns the cached document under key, from the in-process
// copy while it is fresh, else from the shared cache (which fetches on a
// miss). Errors are always *facade.Error.
func (d *documents) get(ctx context.Context, key string, fetch func(context.Context) ([]byte, error), life cache.Lifetime) (cache.Entry, error) {
	now := d.now()
	if c, ok := d.l1.get(key); ok && now.Before(c.until) {
		d.cache.CountHit()
		c.entry.Status = cache.Hit
		return c.entry, nil
	}
	e, err := d.cache.GetFor(ctx, key, fetch, life)
	if err != nil {
		return e, asFacadeError(err)
	}
	if until := d.l1Until(e, now); e.Status != cache.Stale && now.Before(until) {
		d.l1.add(key, l1Entry{entry: e, until: until}, int64(len(e.Body)))
	}
	return e, nil
}

// l1Until is when an entry read now stops being served from process
// memory (see Config.CacheTTL). A stale entry is never kept: the next
// request must try upstream again.
func (d *documents) l1Until(e cache.Entry, now time.Time) time.Time {
	switch {
	case d.cacheTTL > 0:
		return e.StoredAt.Add(e.FreshFor)
	case d.cacheTTL == 0:
		if until := e.StoredAt.Add(e.FreshFor); until.Before(now.Add(DefaultL1Window)) {
			return until
		}
		return now.Add(DefaultL1Window)
	}
	return time.Time{}
}
