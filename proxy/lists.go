package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/cache"
)

// Lists answered per principal. The project and plan views are cut from
// the shared project list (projects.go); the others are upstream lists,
// collected whole (CacheCollected) or passed as a page, from which every
// item of a plan the caller may not see is removed before paging.

const (
	// upstreamPage is the page size asked of Bamboo while collecting a
	// list: the largest a caller may ask of the facade, so collecting
	// costs a call per thousand items, never one per plan. Bamboo
	// documents no cap; a server that answers smaller pages is followed
	// (nextPage).
	upstreamPage = maxPage
	// maxCollected bounds a collected list (and so the document's size).
	maxCollected = 10000
)

// projectIndex returns the shared project list, parsed.
func (h *Handler) projectIndex(ctx context.Context) (*projectsIndex, cache.Entry, error) {
	return h.projectIndexFor(ctx, false)
}

// projectIndexFor returns the shared project list, or with clover the
// list Bamboo answers with cloverEnabled=true, parsed.
func (h *Handler) projectIndexFor(ctx context.Context, clover bool) (*projectsIndex, cache.Entry, error) {
	key, fetch := projectsDocKey, h.fetchProjects
	if clover {
		key, fetch = cloverProjectsDocKey, h.fetchCloverProjects
	}
	entry, err := h.document(ctx, key, fetch, nil) // projects and plans: FACADE_CACHE_TTL
	if err != nil {
		return nil, entry, err
	}
	idx, err := h.projectsIndexOf(entry)
	return idx, entry, err
}

// findVisible finds project key among a principal's visible projects.
func findVisible(idx *projectsIndex, visible []visibleProject, key string) (visibleProject, bool) {
	for _, v := range visible {
		if idx.projects[v.project].key == key {
			return v, true
		}
	}
	return visibleProject{}, false
}

// project serves GET /project/{K}: the project as the project list has it,
// with only the plans the principal may see (listed with expand=plans).
// The caller was authorized (authorizeProject); a project granted whole
// that Bamboo does not have is a 404, as is one with no plan left after
// ?favourite or cloverEnabled.
func (h *Handler) project(ctx context.Context, req *Request, q routeQuery, key string, favs map[string]bool) (view, cache.Status, error) {
	idx, entry, err := h.projectIndexFor(ctx, q.clover)
	if err != nil {
		return view{}, "", err
	}
	visible := h.visibility(idx, h.az.Version(), req.Principal)
	if q.favourite {
		visible = keepFavourites(idx, visible, favs)
	}
	v, ok := findVisible(idx, visible, key)
	if !ok {
		return view{}, "", facade.ErrNotFound
	}
	var b bytes.Buffer
	idx.renderProject(&b, v, q.has("plans"))
	return newView(finish(b.Bytes(), h.publicBase(req))), entry.Status, nil
}

// plans serves GET /plan: every plan the principal may see (with
// ?favourite, of the caller's favourites), in project order, paged after
// filtering; size is the number visible.
func (h *Handler) plans(ctx context.Context, req *Request, q routeQuery, favs map[string]bool) (view, cache.Status, error) {
	idx, entry, err := h.projectIndexFor(ctx, q.clover)
	if err != nil {
		return view{}, "", err
	}
	visible := h.visibility(idx, h.az.Version(), req.Principal)
	if q.favourite {
		visible = keepFavourites(idx, visible, favs)
	}
	var all [][]byte
	for _, v := range visible {
		proj := &idx.projects[v.project]
		if v.plans == nil {
			for _, plan := range proj.plans {
				all = append(all, plan.raw)
			}
			continue
		}
		for _, j := range v.plans {
			all = append(all, proj.plans[j].raw)
		}
	}
	from := min(q.startIndex, len(all))
	page := all[from:min(from+q.maxResults, len(all))]
	var b bytes.Buffer
	b.WriteString(`{"expand":"plans","link":{"href":"` + basePlaceholder + `/rest/api/latest/plan","rel":"self"},"plans":{"size":`)
	b.WriteString(strconv.Itoa(len(all)))
	b.WriteString(`,"expand":"plan","start-index":` + strconv.Itoa(from) + `,"max-result":` + strconv.Itoa(len(page)) + `,"plan":[`)
	b.Write(bytes.Join(page, []byte{','}))
	b.WriteString(`]}}`)
	// The placeholder was written raw: encode it as the documents hold it.
	body := bytes.Replace(b.Bytes(), []byte(basePlaceholder), basePlaceholderJSON, 1)
	return newView(finish(body, h.publicBase(req))), entry.Status, nil
}

// collect fetches every page of an upstream list into one document of
// Bamboo's shape. It runs inside the cache's fill, so concurrent misses
// share one collection.
func (h *Handler) collect(ctx context.Context, rt *Route, segments []string, vals url.Values) ([]byte, error) {
	var (
		top   map[string]json.RawMessage
		items []json.RawMessage
	)
	pager := listPager{size: upstreamPage}
	for start := 0; start < maxCollected; {
		q := url.Values{}
		for k, v := range vals {
			q[k] = v
		}
		q.Set("max-results", strconv.Itoa(upstreamPage))
		if start > 0 {
			q.Set("start-index", strconv.Itoa(start))
		}
		body, err := h.up.Document(ctx, rt.Name, q, segments...)
		if err != nil {
			return nil, err
		}
		var page map[string]json.RawMessage
		if err := json.Unmarshal(body, &page); err != nil {
			return nil, upstreamBad(err)
		}
		var list map[string]json.RawMessage
		if err := json.Unmarshal(page[rt.List], &list); err != nil || list == nil {
			return nil, upstreamBad(errNoList)
		}
		var got []json.RawMessage
		if raw, ok := list[rt.Item]; ok {
			if err := json.Unmarshal(raw, &got); err != nil {
				return nil, upstreamBad(err)
			}
		}
		if top == nil {
			top = page
		}
		items = append(items, got...)
		start += len(got)
		if !pager.more(len(got)) {
			break
		}
	}
	if len(items) >= maxCollected {
		h.log.Warn("upstream list truncated", "route", rt.Name, "limit", maxCollected)
	}
	list, err := json.Marshal(map[string]any{
		"size": len(items), "expand": rt.Item, "start-index": 0,
		"max-result": len(items), rt.Item: nonNil(items),
	})
	if err != nil {
		return nil, upstreamBad(err)
	}
	top[rt.List] = list
	doc, err := json.Marshal(top)
	if err != nil {
		return nil, upstreamBad(err)
	}
	return doc, nil
}

// listPager decides whether a collected list has another page. Result
// lists carry no total (Bamboo's size there is the count returned), so
// the end is a page shorter than the page size. A first page shorter than
// asked but of minCappedPage items or more may be a server's page cap
// rather than the end: its length becomes the page size, at the cost of
// one more (empty) call when it was the end after all.
type listPager struct{ size int }

// minCappedPage: a short first page at least this long is taken for a cap.
const minCappedPage = 100

func (p *listPager) more(got int) bool {
	switch {
	case got == 0:
		return false
	case got >= p.size:
		return true
	case p.size == upstreamPage && got >= minCappedPage:
		p.size = got
		return true
	}
	return false
}

// prunedView rewrites a document's links, removes every item of a plan
// the principal may not see, and collapses the route's Recount lists the
// caller did not ask for. Views are kept in the view cache per
// document version, policy version, principal and base, so a reload or a
// new document is seen at once.
func (h *Handler) prunedView(entry cache.Entry, base string, p facade.Principal, rt *Route, q routeQuery) (view, error) {
	key := viewKey{kind: kindPruned, doc: entry.Version, policy: h.az.Version(), principal: p.Key(), base: base}
	var collapse []string
	for i, v := range rt.Recount {
		if q.has(v) {
			key.expand |= 1 << i // the view differs with what was asked for
		} else {
			collapse = append(collapse, v)
		}
	}
	return h.view(key, func() ([]byte, error) {
		top, err := decodeRewritten(entry.Body)
		if err != nil {
			return nil, upstreamBad(err)
		}
		h.prune(top, p)
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
// h.bodies for every view equal to it; a body evicted from there is built
// again.
func (h *Handler) view(key viewKey, build func() ([]byte, error)) (view, error) {
	if v, ok := h.views.get(key); ok {
		if v.body, ok = h.bodies.get(v.sum); ok {
			return v, nil
		}
	}
	v, err, _ := h.builds.Do(flightKey(key), func() (any, error) {
		body, err := build()
		if err != nil {
			return nil, err
		}
		v := h.shared(newView(finish(body, key.base)))
		entry := v
		entry.body = nil
		h.views.add(key, entry, viewEntryCost(key))
		return v, nil
	})
	if err != nil {
		return view{}, err
	}
	return v.(view), nil
}

// listIndex is a collected list taken apart once per document version:
// the top-level members and each item already rewritten and encoded, with
// the plan each item belongs to, so that a principal's page is a filter
// and a concatenation, whatever the list's length.
type listIndex struct {
	top   []byte // members other than the list, comma-joined
	items []listItem
}

type listItem struct {
	plan planRef
	raw  []byte
}

func (h *Handler) listIndexOf(entry cache.Entry, rt *Route) (*listIndex, error) {
	key := rt.List + "\x00" + entry.Version
	if idx, ok := h.lists.get(key); ok {
		return idx, nil
	}
	v, err, _ := h.builds.Do("list\x00"+key, func() (any, error) {
		idx, err := parseListIndex(entry.Body, rt)
		if err != nil {
			return nil, upstreamBad(err)
		}
		cost := int64(len(idx.top))
		for _, it := range idx.items {
			cost += int64(len(it.raw)) + 32
		}
		h.lists.add(key, idx, cost)
		return idx, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*listIndex), nil
}

// parseListIndex parses a collected list. An item whose plan cannot be
// told is left out: nobody can be authorized for it.
func parseListIndex(body []byte, rt *Route) (*listIndex, error) {
	top, err := decodeRewritten(body)
	if err != nil {
		return nil, err
	}
	list, _ := top[rt.List].(map[string]any)
	delete(top, rt.List)
	idx := &listIndex{}
	if idx.top, err = encodeMembers(top, ""); err != nil {
		return nil, err
	}
	items, _ := list[rt.Item].([]any)
	for _, item := range items {
		ref, ok := itemPlan(item)
		if !ok {
			continue
		}
		var buf bytes.Buffer
		if err := encodeJSON(&buf, item); err != nil {
			return nil, err
		}
		idx.items = append(idx.items, listItem{plan: ref, raw: buf.Bytes()})
	}
	return idx, nil
}

// listView is one page of a collected list for a principal: the items of
// plans it may see, paged after filtering; size is the number visible (on
// result lists too, where Bamboo counts the items returned: a caller
// pages by it).
func (h *Handler) listView(entry cache.Entry, base string, p facade.Principal, rt *Route, q routeQuery) (view, error) {
	key := viewKey{kind: kindList, doc: entry.Version, policy: h.az.Version(), principal: p.Key(), base: base,
		start: q.startIndex, max: q.maxResults}
	return h.view(key, func() ([]byte, error) {
		return h.listPage(entry, p, rt, q, nil)
	})
}

// favouriteListView is listView keeping the caller's favourite plans
// only; per caller, so not kept in the view cache.
func (h *Handler) favouriteListView(entry cache.Entry, base string, p facade.Principal, rt *Route, q routeQuery, favs map[string]bool) (view, error) {
	body, err := h.listPage(entry, p, rt, q, func(ref planRef) bool { return favs[ref.String()] })
	if err != nil {
		return view{}, err
	}
	return newView(finish(body, base)), nil
}

// listPage renders a page of a collected list: the items of plans p may
// see (and keep, when not nil, keeps).
func (h *Handler) listPage(entry cache.Entry, p facade.Principal, rt *Route, q routeQuery, keep func(planRef) bool) ([]byte, error) {
	idx, err := h.listIndexOf(entry, rt)
	if err != nil {
		return nil, err
	}
	var visible [][]byte
	for _, it := range idx.items {
		if h.az.ListPlan(p, it.plan.project, it.plan.plan) && (keep == nil || keep(it.plan)) {
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
func (h *Handler) emptyListView(entry cache.Entry, base string, rt *Route) (view, error) {
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

// listedItems are the list members whose items belong to a plan: plans,
// branches (plans of their master's project), results and job results.
var listedItems = map[string]bool{"plan": true, "branch": true, "result": true}

// linkedPlans are members holding one plan object other than the
// document's own: a branch's master plan.
var linkedPlans = map[string]bool{"master": true}

// prune removes, from every list of plans, branches or results in v, the
// items of plans p may not see (an item whose plan cannot be told is
// removed too: nobody can be authorized for it), and recounts the lists
// it changed. A linked plan (a branch's master) p may not see is removed
// the same way, so no answer names a plan outside the caller's grants.
func (h *Handler) prune(v any, p facade.Principal) {
	switch t := v.(type) {
	case []any:
		for _, e := range t {
			h.prune(e, p)
		}
	case map[string]any:
		for name := range linkedPlans {
			if linked, ok := t[name].(map[string]any); ok {
				if ref, ok := itemPlan(linked); !ok || !h.az.ListPlan(p, ref.project, ref.plan) {
					delete(t, name)
				}
			}
		}
		for name, val := range t {
			items, ok := val.([]any)
			if ok && listedItems[name] {
				kept := items[:0:0]
				for _, item := range items {
					if ref, ok := itemPlan(item); ok && h.az.ListPlan(p, ref.project, ref.plan) {
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
			h.prune(val, p)
		}
	}
}

// itemPlan reads the plan an item belongs to from its key: PROJ-PLAN,
// PROJ-PLAN-7 or PROJ-PLAN-JOB-7.
func itemPlan(item any) (planRef, bool) {
	m, _ := item.(map[string]any)
	key, _ := m["key"].(string)
	project, rest, ok := cutDash(key)
	if !ok {
		return planRef{}, false
	}
	plan, _, _ := cutDash(rest)
	if !facade.ValidProjectKey(project) || !facade.ValidPlanKey(plan) {
		return planRef{}, false
	}
	return planRef{project, plan}, true
}

func cutDash(s string) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == '-' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// jsonInt reads a count: a decoded JSON number, or one prune wrote.
func jsonInt(v any) int {
	switch n := v.(type) {
	case int:
		return n
	case json.Number:
		i, _ := n.Int64()
		return int(i)
	}
	return 0
}
