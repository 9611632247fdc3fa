package proxy

import (
	"bytes"
	"sync"

	"golang.org/x/sync/singleflight"

	"github.com/facade-dev/facade"
)

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

	parseOnce sync.Once
	parsed    any // *projectsIndex, *listIndex or the rewritten object (map[string]any)
	parseErr  error

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
// fetch it). Upstream JSON is thus decoded once per document version.
func (doc *document) parse(parse func(map[string]any) (any, error)) (any, error) {
	doc.parseOnce.Do(func() {
		obj := doc.object
		if obj == nil {
			v, err := decodeJSON(doc.body)
			if obj, _ = v.(map[string]any); err != nil || obj == nil {
				doc.parseErr = upstreamBad(errNotObject)
				return
			}
		}
		doc.object = nil
		newRewriter(obj).rewriteTree(obj) // an object is rewritten in place
		if doc.parsed, doc.parseErr = parse(obj); doc.parseErr != nil {
			doc.parseErr = upstreamBad(doc.parseErr)
		}
	})
	return doc.parsed, doc.parseErr
}

// view returns the view under key, or builds it once (concurrent requests
// for one key share the build), finishes it for the key's base, tags it
// and keeps it.
func (doc *document) view(d *documents, key viewKey, build func() ([]byte, error)) (view, error) {
	doc.mu.Lock()
	v, ok := doc.byKey[key]
	doc.mu.Unlock()
	if ok {
		return v, nil
	}
	r, err, _ := doc.builds.Do(flightKey(key), func() (any, error) {
		body, err := build()
		if err != nil {
			return nil, err
		}
		v := newView(finish(body, key.base))
		views, bytes := doc.keep(key, &v)
		d.chargeViews(doc, views, bytes)
		return v, nil
	})
	if err != nil {
		return view{}, err
	}
	return r.(view), nil
}

// keep holds v under key, its body shared with an equal view's when there
// is one (equal ETag and equal bytes: nobody is served a byte of a view
// that is not exactly theirs), and returns the change in views and view
// bytes held.
func (doc *document) keep(key viewKey, v *view) (views, bytes_ int64) {
	doc.mu.Lock()
	defer doc.mu.Unlock()
	views, bytes_ = doc.at(key.policy)
	if b, ok := doc.bodies[v.tag]; ok && bytes.Equal(b, v.body) {
		v.body = b
	} else {
		doc.bodies[v.tag] = v.body
		bytes_ += int64(len(v.body))
	}
	if _, ok := doc.byKey[key]; !ok {
		views++
	}
	doc.byKey[key] = *v
	return views, bytes_
}

// visibility returns which projects and plans p may see under the policy
// version, computed by compute once per principal and policy.
func (doc *document) visibility(d *documents, policy uint64, p facade.Principal, compute func() []visibleProject) []visibleProject {
	doc.mu.Lock()
	v, ok := doc.vis[p.Key()]
	ok = ok && doc.policy == policy
	doc.mu.Unlock()
	if ok {
		return v
	}
	v = compute()
	doc.mu.Lock()
	views, bytes := doc.at(policy)
	if _, seen := doc.vis[p.Key()]; !seen {
		views++
	}
	doc.vis[p.Key()] = v
	doc.mu.Unlock()
	d.chargeViews(doc, views, bytes)
	return v
}

// at starts the views and visibility over when the policy changed (with
// doc.mu held) and returns the change in views and view bytes held.
func (doc *document) at(policy uint64) (views, bytes int64) {
	if doc.byKey != nil && doc.policy == policy {
		return 0, 0
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
