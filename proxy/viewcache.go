package proxy

import (
	"bytes"
	"crypto/sha256"
	"fmt"

	"golang.org/x/sync/singleflight"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/authz"
	"github.com/facade-dev/facade/cache"
)

// viewCache is the one cache of views: a document, as one principal may
// see it, encoded. It holds the in-process layers that sit behind the
// shared cache's documents (package comment): the parsed project list by
// content version, which projects and plans a principal may see, the
// collected lists taken apart, and the encoded views with their ETags
// (bodies held once however many principals share them). Every key holds
// the document's version and, for a filtered view, the policy's version
// and the principal, so nothing outdated or someone else's is served.
type viewCache struct {
	az     *authz.Authorizer
	views  *lru[viewKey, view]   // who gets which body: bodies are held in bodies, not here
	bodies *lru[bodyKey, []byte] // view bodies by content, so equal views share one copy
	vis    *lru[visibilityKey, []visibleProject]
	index  *lru[string, *projectsIndex]
	lists  *lru[string, *listIndex] // collected lists taken apart, by document version
	builds singleflight.Group       // parsing and view building, one per key
}

func newViewCache(az *authz.Authorizer, entries int, bytes int64) *viewCache {
	return &viewCache{
		az:    az,
		views: newLRU[viewKey, view](viewIndexFactor*entries, viewIndexFactor*int64(entries)*512),
		vis:   newLRU[visibilityKey, []visibleProject](viewIndexFactor*entries, bytes/4),
		// Two: the current list and, briefly, the one before it, so that
		// requests straddling a refresh do not parse in turn.
		index:  newLRU[string, *projectsIndex](2, 1<<62),
		lists:  newLRU[string, *listIndex](64, bytes),
		bodies: newLRU[bodyKey, []byte](entries, bytes),
	}
}

// shared returns v with its body replaced by an equal one already held,
// when there is one, and holds v's body otherwise: principals who may see
// the same things (a team's members) get byte-identical views, and one
// copy of them stays in memory and in the processor's caches where one per
// principal would not (bench/run.sh: 2,000 principals, a 49 KB list
// each). Only equal bytes are shared (bodyKey), so nobody is served a byte
// of a view that is not exactly theirs.
func (vc *viewCache) shared(v view) view {
	v.sum = sha256.Sum256(v.body)
	if b, ok := vc.bodies.get(v.sum); ok {
		v.body = b
		return v
	}
	vc.bodies.add(v.sum, v.body, int64(len(v.body)))
	return v
}

// prunedView rewrites a document's links, removes every item of a plan
// the principal may not see, and collapses the route's Recount lists the
// caller did not ask for. Views are kept in the view cache per
// document version, policy version, principal and base, so a reload or a
// new document is seen at once.
func (vc *viewCache) prunedView(entry cache.Entry, base string, p facade.Principal, rt *Route, q routeQuery) (view, error) {
	key := viewKey{kind: kindPruned, doc: entry.Version, policy: vc.az.Version(), principal: p.Key(), base: base}
	var collapse []string
	for i, v := range rt.Recount {
		if q.has(v) {
			key.expand |= 1 << i // the view differs with what was asked for
		} else {
			collapse = append(collapse, v)
		}
	}
	return vc.view(key, func() ([]byte, error) {
		top, err := decodeRewritten(entry.Body)
		if err != nil {
			return nil, upstreamBad(err)
		}
		vc.prune(top, p)
		for _, name := range collapse {
			if list, ok := top[name].(map[string]any); ok {
				n := jsonInt(list["size"])
				top[name] = map[string]any{"size": n, "start-index": 0, "max-result": n}
			}
		}
		var buf bytes.Buffer
		if err := encodeJSON(&buf, top); err != nil {
			return nil, upstreamBad(err)
		}
		return buf.Bytes(), nil
	})
}

// view returns the view under key from the view cache, or builds it once
// (concurrent requests for one key share the build), finishes it for the
// key's base and tags it. The cache entry names its body, held once in
// vc.bodies for every view equal to it; a body evicted from there is built
// again.
func (vc *viewCache) view(key viewKey, build func() ([]byte, error)) (view, error) {
	if v, ok := vc.views.get(key); ok {
		if v.body, ok = vc.bodies.get(v.sum); ok {
			return v, nil
		}
	}
	v, err, _ := vc.builds.Do(flightKey(key), func() (any, error) {
		body, err := build()
		if err != nil {
			return nil, err
		}
		v := vc.shared(newView(finish(body, key.base)))
		entry := v
		entry.body = nil
		vc.views.add(key, entry, viewEntryCost(key))
		return v, nil
	})
	if err != nil {
		return view{}, err
	}
	return v.(view), nil
}

func (vc *viewCache) listIndexOf(entry cache.Entry, rt *Route) (*listIndex, error) {
	key := rt.List + "\x00" + entry.Version
	if idx, ok := vc.lists.get(key); ok {
		return idx, nil
	}
	v, err, _ := vc.builds.Do("list\x00"+key, func() (any, error) {
		idx, err := parseListIndex(entry.Body, rt)
		if err != nil {
			return nil, upstreamBad(err)
		}
		cost := int64(len(idx.top))
		for _, it := range idx.items {
			cost += int64(len(it.raw)) + 32
		}
		vc.lists.add(key, idx, cost)
		return idx, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*listIndex), nil
}

// listView is one page of a collected list for a principal: the items of
// plans it may see, paged after filtering; size is the number visible (on
// result lists too, where Bamboo counts the items returned: a caller
// pages by it).
func (vc *viewCache) listView(entry cache.Entry, base string, p facade.Principal, rt *Route, q routeQuery) (view, error) {
	key := viewKey{kind: kindList, doc: entry.Version, policy: vc.az.Version(), principal: p.Key(), base: base,
		start: q.startIndex, max: q.maxResults}
	return vc.view(key, func() ([]byte, error) {
		return vc.listPage(entry, p, rt, q, nil)
	})
}

// favouriteListView is listView keeping the caller's favourite plans
// only; per caller, so not kept in the view cache.
func (vc *viewCache) favouriteListView(entry cache.Entry, base string, p facade.Principal, rt *Route, q routeQuery, favs map[string]bool) (view, error) {
	body, err := vc.listPage(entry, p, rt, q, func(ref facade.PlanKey) bool { return favs[ref.String()] })
	if err != nil {
		return view{}, err
	}
	return newView(finish(body, base)), nil
}

// listPage renders a page of a collected list: the items of plans p may
// see (and keep, when not nil, keeps).
func (vc *viewCache) listPage(entry cache.Entry, p facade.Principal, rt *Route, q routeQuery, keep func(facade.PlanKey) bool) ([]byte, error) {
	idx, err := vc.listIndexOf(entry, rt)
	if err != nil {
		return nil, err
	}
	var visible [][]byte
	for _, it := range idx.items {
		if vc.az.ListPlan(p, it.plan) && (keep == nil || keep(it.plan)) {
			visible = append(visible, it.raw)
		}
	}
	from := min(q.startIndex, len(visible))
	page := visible[from:min(from+q.maxResults, len(visible))]
	size := len(visible) // what the caller may see, so a client knows how far to page
	var b bytes.Buffer
	b.WriteByte('{')
	if len(idx.top) > 0 {
		b.Write(idx.top)
		b.WriteByte(',')
	}
	fmt.Fprintf(&b, `"%s":{"size":%d,"expand":"%s","start-index":%d,"max-result":%d,"%s":[`, rt.List, size, rt.Item, from, len(page), rt.Item)
	b.Write(bytes.Join(page, []byte{','}))
	b.WriteString(`]}}`)
	return b.Bytes(), nil
}

// emptyListView is a list document with its list emptied: a page of one
// plan's results asked with ?favourite when the plan is not one.
func (vc *viewCache) emptyListView(entry cache.Entry, base string, rt *Route) (view, error) {
	top, err := decodeRewritten(entry.Body)
	if err != nil {
		return view{}, upstreamBad(err)
	}
	list, _ := top[rt.List].(map[string]any)
	start := list["start-index"]
	if start == nil {
		start = 0
	}
	top[rt.List] = map[string]any{"size": 0, "expand": rt.Item, "start-index": start, "max-result": 0, rt.Item: []any{}}
	var buf bytes.Buffer
	if err := encodeJSON(&buf, top); err != nil {
		return view{}, upstreamBad(err)
	}
	return newView(finish(buf.Bytes(), base)), nil
}

// prune removes, from every list of plans, branches or results in v, the
// items of plans p may not see (an item whose plan cannot be told is
// removed too: nobody can be authorized for it), and recounts the lists
// it changed. A linked plan (a branch's master) p may not see is removed
// the same way, so no answer names a plan outside the caller's grants.
func (vc *viewCache) prune(v any, p facade.Principal) {
	switch t := v.(type) {
	case []any:
		for _, e := range t {
			vc.prune(e, p)
		}
	case map[string]any:
		for name := range linkedPlans {
			if linked, ok := t[name].(map[string]any); ok {
				if ref, ok := itemPlan(linked); !ok || !vc.az.ListPlan(p, ref) {
					delete(t, name)
				}
			}
		}
		for name, val := range t {
			items, ok := val.([]any)
			if ok && listedItems[name] {
				kept := items[:0:0]
				for _, item := range items {
					if ref, ok := itemPlan(item); ok && vc.az.ListPlan(p, ref) {
						kept = append(kept, item)
					}
				}
				if len(kept) != len(items) {
					t[name] = kept
					if _, counted := t["size"]; counted {
						t["size"], t["max-result"] = len(kept), len(kept)
					}
				}
				val = kept
			}
			vc.prune(val, p)
		}
	}
}

// projectsView returns the encoded view for key, building it once.
func (vc *viewCache) projectsView(key viewKey, p facade.Principal, entry cache.Entry) (view, error) {
	return vc.view(key, func() ([]byte, error) {
		idx, err := vc.projectsIndexOf(entry)
		if err != nil {
			return nil, err
		}
		visible := vc.visibility(idx, key.policy, key.principal.Principal())
		return idx.render(visible, key.expand&expandPlans != 0, key.start, key.max), nil
	})
}

// visibility asks the policy, once per document, policy and principal,
// which projects and plans the principal may see. A project appears when
// it is granted whole or when any of its plans is.
func (vc *viewCache) visibility(idx *projectsIndex, policy uint64, p facade.Principal) []visibleProject {
	key := visibilityKey{doc: idx.version, policy: policy, principal: p.Key()}
	if v, ok := vc.vis.get(key); ok {
		return v
	}
	var out []visibleProject
	for i := range idx.projects {
		proj := &idx.projects[i]
		if vc.az.ListProject(p, proj.ref) {
			out = append(out, visibleProject{project: i})
			continue
		}
		var plans []int32
		for j, plan := range proj.plans {
			if vc.az.ListPlan(p, plan.ref) {
				plans = append(plans, int32(j))
			}
		}
		if plans != nil {
			out = append(out, visibleProject{project: i, plans: plans})
		}
	}
	cost := int64(16)
	for _, v := range out {
		cost += 32 + 4*int64(len(v.plans))
	}
	vc.vis.add(key, out, cost)
	return out
}

// projectsIndexOf returns the parsed form of entry's document, parsing it
// once per version.
func (vc *viewCache) projectsIndexOf(entry cache.Entry) (*projectsIndex, error) {
	if idx, ok := vc.index.get(entry.Version); ok {
		return idx, nil
	}
	v, err, _ := vc.builds.Do("index\x00"+entry.Version, func() (any, error) {
		idx, err := parseProjectsIndex(entry.Version, entry.Body)
		if err != nil {
			return nil, upstreamBad(err)
		}
		vc.index.add(entry.Version, idx, 1)
		return idx, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*projectsIndex), nil
}

// rewrittenView returns the document with its links rewritten for base. It
// is the same for every principal allowed to see it, so it is keyed by
// document version and base only.
func (vc *viewCache) rewrittenView(entry cache.Entry, base string) (view, error) {
	return vc.view(viewKey{kind: kindResults, doc: entry.Version, base: base}, func() ([]byte, error) {
		body, err := rewriteDocument(entry.Body)
		if err != nil {
			return nil, upstreamBad(err)
		}
		return body, nil
	})
}
