package proxy

import (
	"context"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/facade-dev/facade/cache"
	"github.com/facade-dev/facade/upstream"
)

// documents are the upstream documents as the shared cache holds them,
// and the one in-process cache in front of it: the documents read lately,
// by their cache key, each with what is made of it (document). A document
// is served from process memory while it is fresh (Config.CacheTTL), so a
// warm request costs no Redis round trip; after that it is read from Redis
// again, and when its version is the same, what was made of it is kept.
type documents struct {
	cache    *cache.Cache
	held     *lru.Cache[string, heldDoc]
	now      func() time.Time
	cacheTTL time.Duration // Config.CacheTTL

	mu     sync.Mutex // guards the budget's counters and the documents' charged flags
	budget budget
}

// heldDoc is one key's document: the cache entry it was read as, until
// when it is served without asking Redis, and what was made of it. An
// entry with no Version is a document the fill of this instance just
// fetched, waiting for its entry (fetchInto).
type heldDoc struct {
	entry cache.Entry
	until time.Time
	doc   *document
}

// budget bounds what the documents hold in process: by document bytes
// (their bodies and parsed forms), by view bytes and by number of views.
// Keys come from callers (queries, principal ids, Host headers), so no
// bound depends on their good behaviour: past any of them the least
// recently used documents go, with everything made of them.
type budget struct {
	docBytes, viewBytes, views    int64 // held
	maxDoc, maxViewBytes, maxView int64
}

func (b *budget) over() bool {
	return b.docBytes > b.maxDoc || b.viewBytes > b.maxViewBytes || b.views > b.maxView
}

func newDocuments(c *cache.Cache, cfg Config) *documents {
	d := &documents{cache: c, now: cfg.Now, cacheTTL: cfg.CacheTTL, budget: budget{
		maxDoc: docBytes, maxViewBytes: cfg.ViewCacheBytes, maxView: int64(viewIndexFactor * cfg.ViewCacheEntries),
	}}
	d.held, _ = lru.NewWithEvict(maxDocuments, func(_ string, h heldDoc) { d.release(h.doc) }) // errors only for a size below 1
	return d
}

// get returns the document under key, from process memory while it is
// fresh, else from the shared cache (which fetches on a miss). Errors are
// always *facade.Error.
func (d *documents) get(ctx context.Context, key string, fetch fetchFunc, life cache.Lifetime) (cache.Entry, *document, error) {
	now := d.now()
	if h, ok := d.held.Get(key); ok && now.Before(h.until) {
		d.cache.CountHit()
		e := h.entry
		e.Status = cache.Hit
		return e, h.doc, nil
	}
	e, err := d.cache.GetFor(ctx, key, d.fetchInto(key, fetch), life)
	if err != nil {
		return e, nil, asFacadeError(err)
	}
	return e, d.hold(key, e, now), nil
}

// fetchFunc fetches a document from upstream: its bytes, and the object
// they decode to.
type fetchFunc func(context.Context) (upstream.Document, error)

// fetchInto is fetch as the shared cache calls it: it hands the cache the
// bytes, and holds the decoded object under key, so that this fill's
// readers build their views from it without decoding the bytes again (a
// document is parsed once per miss).
func (d *documents) fetchInto(key string, fetch fetchFunc) func(context.Context) ([]byte, error) {
	return func(ctx context.Context) ([]byte, error) {
		u, err := fetch(ctx)
		if err != nil {
			return nil, err
		}
		d.put(key, heldDoc{doc: &document{body: u.Body, object: u.Object}})
		return u.Body, nil
	}
}

// hold keeps the document e was read as under key, and returns it: the
// one held already when it has e's version (what was made of it stays
// good), the one this instance's fill just fetched (sharing e's bytes),
// or a new one.
func (d *documents) hold(key string, e cache.Entry, now time.Time) *document {
	h, ok := d.held.Peek(key)
	switch {
	case ok && h.entry.Version == e.Version:
	case ok && h.entry.Version == "" && sameBytes(h.doc.body, e.Body):
	default:
		h.doc = &document{body: e.Body}
	}
	h.entry, h.until = e, time.Time{}
	if e.Status != cache.Stale { // a stale copy is never fresh: the next request asks again
		h.until = d.l1Until(e, now)
	}
	d.put(key, h)
	return h.doc
}

// sameBytes reports whether a and b are one slice: the bytes a fill
// fetched, as the cache's entry hands them back.
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && len(a) > 0 && &a[0] == &b[0]
}

// put holds h under key, charges its document to the budget, and trims
// the least recently used documents while the budget is exceeded. A
// document larger than the whole budget is not held: it would only push
// out everything else.
func (d *documents) put(key string, h heldDoc) {
	cost := 2 * int64(len(h.doc.body)) // the bytes and what is parsed from them
	if cost > d.budget.maxDoc {
		d.held.Remove(key)
		return
	}
	if old, ok := d.held.Peek(key); ok && old.doc != h.doc {
		d.release(old.doc)
	}
	d.mu.Lock()
	if !h.doc.charged {
		h.doc.charged, h.doc.cost = true, cost
		d.budget.docBytes += cost
	}
	d.mu.Unlock()
	d.held.Add(key, h)
	d.trim()
}

// release gives a document's share of the budget back when it is no
// longer held.
func (d *documents) release(doc *document) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !doc.charged {
		return
	}
	doc.charged = false
	d.budget.docBytes -= doc.cost
	d.budget.viewBytes -= doc.viewBytes
	d.budget.views -= doc.views
}

// chargeViews counts views and view bytes made of doc (nothing when doc
// is no longer held: it goes with its views).
func (d *documents) chargeViews(doc *document, views, bytes int64) {
	d.mu.Lock()
	if doc.charged {
		doc.views += views
		doc.viewBytes += bytes
		d.budget.views += views
		d.budget.viewBytes += bytes
	}
	d.mu.Unlock()
	d.trim()
}

// trim drops the least recently used documents while the budget is
// exceeded; when one document alone exceeds it, its views start over.
func (d *documents) trim() {
	for {
		d.mu.Lock()
		over := d.budget.over()
		d.mu.Unlock()
		if !over {
			return
		}
		if d.held.Len() > 1 {
			d.held.RemoveOldest()
			continue
		}
		if _, h, ok := d.held.GetOldest(); ok {
			d.dropViews(h.doc)
		}
		return
	}
}

// dropViews forgets every view and visibility made of doc, and gives
// their share of the budget back.
func (d *documents) dropViews(doc *document) {
	d.mu.Lock()
	defer d.mu.Unlock()
	views, bytes := doc.dropViews()
	if doc.charged {
		doc.views -= views
		doc.viewBytes -= bytes
		d.budget.views -= views
		d.budget.viewBytes -= bytes
	}
}

// l1Until is when an entry read now stops being served from process
// memory (see Config.CacheTTL).
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
