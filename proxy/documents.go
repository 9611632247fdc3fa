package proxy

import (
	"context"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/sync/singleflight"

	"github.com/facade-dev/facade"
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
// when it is served without asking Redis, and what was made of it; and
// the document this instance's fill just fetched for the key, with its
// decoded object, until a reader of that fill takes it (hold).
type heldDoc struct {
	entry   cache.Entry
	until   time.Time
	doc     *document
	fetched *document
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
	d.held, _ = lru.NewWithEvict(maxDocuments, func(_ string, h heldDoc) { d.release(h.doc, h.fetched) }) // errors only for a size below 1
	return d
}

// get returns the document under key, from process memory while it is
// fresh, else from the shared cache (which fetches on a miss). Errors are
// always *facade.Error.
func (d *documents) get(ctx context.Context, key string, fetch fetchFunc, life cache.Lifetime) (cache.Entry, *document, error) {
	now := d.now()
	if h, ok := d.held.Get(key); ok && h.doc != nil && now.Before(h.until) {
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
// bytes, and holds the decoded object under key beside the document held
// now, so that this fill's readers build their views from it without
// decoding the bytes again (a document is parsed once per miss).
func (d *documents) fetchInto(key string, fetch fetchFunc) func(context.Context) ([]byte, error) {
	return func(ctx context.Context) ([]byte, error) {
		u, err := fetch(ctx)
		if err != nil {
			return nil, err
		}
		h, _ := d.held.Peek(key)
		h.fetched = &document{body: u.Body, object: u.Object}
		d.put(key, h)
		return u.Body, nil
	}
}

// hold keeps the document e was read as under key, and returns it: the
// one held already when it has e's version (what was made of it stays
// good: a refill that fetched the same document changes nothing), the
// one this instance's fill just fetched (sharing e's bytes), or a new one.
func (d *documents) hold(key string, e cache.Entry, now time.Time) *document {
	h, _ := d.held.Peek(key)
	switch {
	case h.doc != nil && h.entry.Version == e.Version:
	case h.fetched != nil && sameBytes(h.fetched.body, e.Body):
		h.doc = h.fetched
	default:
		h.doc = &document{body: e.Body}
	}
	if h.doc == h.fetched || e.Status == cache.Miss {
		h.fetched = nil // taken, or another fill's: this entry is newer
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

// put holds h under key, charges its documents to the budget, and trims
// the least recently used documents while the budget is exceeded. A
// document larger than the whole budget is not held: it would only push
// out everything else.
func (d *documents) put(key string, h heldDoc) {
	for _, doc := range []*document{h.doc, h.fetched} {
		if doc != nil && 2*int64(len(doc.body)) > d.budget.maxDoc { // the bytes and what is parsed from them
			d.held.Remove(key)
			return
		}
	}
	if old, ok := d.held.Peek(key); ok {
		d.release(unheld(old.doc, h), unheld(old.fetched, h))
	}
	d.mu.Lock()
	for _, doc := range []*document{h.doc, h.fetched} {
		if doc != nil && !doc.charged {
			doc.charged, doc.cost = true, 2*int64(len(doc.body))
			d.budget.docBytes += doc.cost
		}
	}
	d.mu.Unlock()
	d.held.Add(key, h)
	d.trim()
}

// unheld is doc unless h still holds it.
func unheld(doc *document, h heldDoc) *document {
	if doc == h.doc || doc == h.fetched {
		return nil
	}
	return doc
}

// release gives documents' share of the budget back when they are no
// longer held.
func (d *documents) release(docs ...*document) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, doc := range docs {
		if doc == nil || !doc.charged {
			continue
		}
		doc.charged = false
		d.budget.docBytes -= doc.cost
		d.budget.viewBytes -= doc.viewBytes
		d.budget.views -= doc.views
	}
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
		if _, h, ok := d.held.GetOldest(); ok && h.doc != nil {
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

// document is one version of an upstream document in process, with what
// is made of it: its parsed form, made once (parsed), the views built of
// it for callers, and for the project list which projects each principal
// may see. Nothing of it outlives the document: a new version of its key,
// or the key leaving the cache (documents), drops it all, so nothing
// outdated is served. Views and visibility are kept per policy version
// (bumped on every reload), so a reload is seen at once.
type document struct {
	body   []byte
	object map[string]any // decoded by the fill that fetched body; nil once parsed, or when read from Redis

	parseMu  sync.Mutex // guards the parse: one at a time, kept until forgotten
	parsed   any        // *projectsIndex, *listIndex or the rewritten object (map[string]any)
	parseErr error
	isParsed bool

	builds singleflight.Group // view builds, one per view key

	// Guarded by documents.mu: its share of the budget.
	charged                bool
	cost, views, viewBytes int64

	mu     sync.Mutex
	policy uint64            // the policy version of what follows
	byKey  map[viewKey]view  // who gets which view
	bodies map[string][]byte // view bodies by ETag, so that equal views share one copy
	vis    map[facade.PrincipalKey][]visibleProject
}

// parse returns the document's parsed form, made by parse from its object
// on the first call (decoded from its bytes when this instance did not
// fetch it). Upstream JSON is thus decoded once per document version,
// unless forgetParsed let the parsed form go.
func (doc *document) parse(parse func(map[string]any) (any, error)) (any, error) {
	doc.parseMu.Lock()
	defer doc.parseMu.Unlock()
	if doc.isParsed {
		return doc.parsed, doc.parseErr
	}
	doc.isParsed = true
	obj := doc.object
	if obj == nil {
		v, err := decodeJSON(doc.body)
		if obj, _ = v.(map[string]any); err != nil || obj == nil {
			doc.parseErr = upstreamBad(errNotObject)
			return doc.parsed, doc.parseErr
		}
	}
	doc.object = nil
	newRewriter(obj).rewriteTree(obj) // an object is rewritten in place
	if doc.parsed, doc.parseErr = parse(obj); doc.parseErr != nil {
		doc.parseErr = upstreamBad(doc.parseErr)
	}
	return doc.parsed, doc.parseErr
}

// bigDocument is the size from which a document served whole keeps only
// its bytes and its views, not its decoded form (forgetParsed): decoded,
// a 5 MB result of 20,000 tests is about ten times its size
// (docs/performance.md, "Big test suites").
const bigDocument = 1 << 20

// forgetParsed lets a big document's parsed form go once a view is built
// of it: a view for another base (Host) decodes the bytes again, which
// is rare; holding the decoded form for it is not.
func (doc *document) forgetParsed() {
	if len(doc.body) < bigDocument {
		return
	}
	doc.parseMu.Lock()
	defer doc.parseMu.Unlock()
	if doc.parseErr == nil {
		doc.parsed, doc.isParsed = nil, false
	}
}

// at starts the views and visibility over when the policy changed (with
// doc.mu held) and returns the change in views and view bytes held.
func (doc *document) at(policy uint64) (views, bytes int64) {
	if doc.byKey != nil && (policy == 0 || doc.policy == policy) {
		return 0, 0 // policy 0: a view the same under any policy (kindResults)
	}
	views, bytes = doc.clear()
	doc.policy = policy
	return -views, -bytes
}

// dropViews forgets every view and visibility of the document and returns
// how many views and view bytes that was.
func (doc *document) dropViews() (views, bytes int64) {
	doc.mu.Lock()
	defer doc.mu.Unlock()
	return doc.clear()
}

func (doc *document) clear() (views, bytes int64) {
	views = int64(len(doc.byKey) + len(doc.vis))
	for _, b := range doc.bodies {
		bytes += int64(len(b))
	}
	doc.byKey, doc.bodies, doc.vis = map[viewKey]view{}, map[string][]byte{}, map[facade.PrincipalKey][]visibleProject{}
	return views, bytes
}
