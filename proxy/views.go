package proxy

import (
	"bytes"
	"fmt"
	"maps"
	"strconv"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/authz"
)

// Views: what a principal sees of a document, encoded, built from the
// document's parsed form and kept with it (document.view), keyed by
// everything a view differs by: the policy's version, the principal (for
// a filtered view), the public base URL, the expansion and the paging.

// viewMaker builds the views of documents: it asks the policy what each
// principal may see, and keeps what it built with the document.
type viewMaker struct {
	az   *authz.Authorizer
	docs *documents
}

// asObject is the parsed form of a document served whole: its rewritten
// object, shared by every view of it (which copy what they change).
func asObject(obj map[string]any) (any, error) { return obj, nil }

func (vm *viewMaker) object(doc *document) (map[string]any, error) {
	v, err := doc.parse(asObject)
	if err != nil {
		return nil, err
	}
	return v.(map[string]any), nil
}

// rewrittenView is the document with its links rewritten for base. It is
// the same for every principal allowed to see it, so it is keyed by base
// only.
func (vm *viewMaker) rewrittenView(doc *document, base string) (view, error) {
	return doc.view(vm.docs, viewKey{kind: kindResults, base: base}, func() ([]byte, error) {
		top, err := vm.object(doc)
		if err != nil {
			return nil, err
		}
		defer doc.forgetParsed() // a big one's answer is all that is kept
		return encoded(top)
	})
}

// prunedView rewrites a document's links, removes every item of a plan
// the principal may not see, and collapses the route's Recount lists the
// caller did not ask for.
func (vm *viewMaker) prunedView(doc *document, base string, p facade.Principal, rt *Route, q routeQuery) (view, error) {
	key := viewKey{kind: kindPruned, policy: vm.az.Version(), principal: p.Key(), base: base}
	var collapse []string
	for i, v := range rt.Recount {
		if q.has(v) {
			key.expand |= 1 << i // the view differs with what was asked for
		} else {
			collapse = append(collapse, v)
		}
	}
	return doc.view(vm.docs, key, func() ([]byte, error) {
		obj, err := vm.object(doc)
		if err != nil {
			return nil, err
		}
		top := vm.pruned(obj, p).(map[string]any)
		for _, name := range collapse {
			if list, ok := top[name].(map[string]any); ok {
				n := jsonInt(list["size"])
				top[name] = map[string]any{"size": n, "start-index": 0, "max-result": n}
			}
		}
		return encoded(top)
	})
}

// pruned is v without the items of plans p may not see, from every list
// of plans, branches or results (an item whose plan cannot be told goes
// too: nobody can be authorized for it), those lists recounted. A linked
// plan (a branch's master) p may not see goes the same way, so no answer
// names a plan outside the caller's grants. v is shared: pruned copies
// every object and array it walks.
func (vm *viewMaker) pruned(v any, p facade.Principal) any {
	switch t := v.(type) {
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = vm.pruned(e, p)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(t))
		recount := -1
		for name, val := range t {
			if linked, ok := val.(map[string]any); ok && linkedPlans[name] {
				if ref, ok := itemPlan(linked); !ok || !vm.az.ListPlan(p, ref) {
					continue
				}
			}
			if items, ok := val.([]any); ok && listedItems[name] {
				kept := []any{}
				for _, item := range items {
					if ref, ok := itemPlan(item); ok && vm.az.ListPlan(p, ref) {
						kept = append(kept, vm.pruned(item, p))
					}
				}
				if len(kept) != len(items) {
					recount = len(kept)
				}
				out[name] = kept
				continue
			}
			out[name] = vm.pruned(val, p)
		}
		if _, counted := t["size"]; counted && recount >= 0 {
			out["size"], out["max-result"] = recount, recount
		}
		return out
	}
	return v
}

// listIndexOf is a collected list document taken apart (lists.go).
func (vm *viewMaker) listIndexOf(doc *document, rt *Route) (*listIndex, error) {
	v, err := doc.parse(func(obj map[string]any) (any, error) { return listIndexFrom(obj, rt) })
	if err != nil {
		return nil, err
	}
	return v.(*listIndex), nil
}

// listView is one page of a collected list for a principal: the items of
// plans it may see, paged after filtering; size is the number visible (on
// result lists too, where Bamboo counts the items returned: a caller
// pages by it).
func (vm *viewMaker) listView(doc *document, base string, p facade.Principal, rt *Route, q routeQuery) (view, error) {
	key := viewKey{kind: kindList, policy: vm.az.Version(), principal: p.Key(), base: base,
		start: q.startIndex, max: q.maxResults}
	return doc.view(vm.docs, key, func() ([]byte, error) {
		return vm.listPage(doc, p, rt, q, nil)
	})
}

// favouriteListView is listView keeping the caller's favourite plans
// only; per caller, so not kept.
func (vm *viewMaker) favouriteListView(doc *document, base string, p facade.Principal, rt *Route, q routeQuery, favs map[string]bool) (view, error) {
	body, err := vm.listPage(doc, p, rt, q, func(ref facade.PlanKey) bool { return favs[ref.String()] })
	if err != nil {
		return view{}, err
	}
	return finished(body, base), nil
}

// listPage renders a page of a collected list: the items of plans p may
// see (and keep, when not nil, keeps).
func (vm *viewMaker) listPage(doc *document, p facade.Principal, rt *Route, q routeQuery, keep func(facade.PlanKey) bool) ([]byte, error) {
	idx, err := vm.listIndexOf(doc, rt)
	if err != nil {
		return nil, err
	}
	var visible [][]byte
	for _, it := range idx.items {
		if vm.az.ListPlan(p, it.plan) && (keep == nil || keep(it.plan)) {
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
func (vm *viewMaker) emptyListView(doc *document, base string, rt *Route) (view, error) {
	obj, err := vm.object(doc)
	if err != nil {
		return view{}, err
	}
	top := maps.Clone(obj)
	list, _ := top[rt.List].(map[string]any)
	start := list["start-index"]
	if start == nil {
		start = 0
	}
	top[rt.List] = map[string]any{"size": 0, "expand": rt.Item, "start-index": start, "max-result": 0, rt.Item: []any{}}
	body, err := encoded(top)
	if err != nil {
		return view{}, err
	}
	return finished(body, base), nil
}

// encoded is v encoded as the views hold it (encodeJSON).
func encoded(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := encodeJSON(&buf, v); err != nil {
		return nil, upstreamBad(err)
	}
	return buf.Bytes(), nil
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
		v := finished(body, key.base)
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
func (doc *document) keep(key viewKey, v *view) (views, held int64) {
	doc.mu.Lock()
	defer doc.mu.Unlock()
	views, held = doc.at(key.policy)
	if b, ok := doc.bodies[v.tag]; ok && bytes.Equal(b, v.body) {
		v.body = b
	} else {
		doc.bodies[v.tag] = v.body
		held += int64(len(v.body))
	}
	if _, ok := doc.byKey[key]; !ok {
		views++
	}
	doc.byKey[key] = *v
	return views, held
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

// flightKey spells a view key as a string for singleflight.
func flightKey(k viewKey) string {
	b := make([]byte, 0, 128)
	b = append(b, 'v', k.kind, 0)
	b = strconv.AppendUint(b, k.policy, 10)
	b = append(b, 0)
	b = append(b, k.principal.ID...)
	b = append(b, 0)
	b = append(b, k.principal.Role...)
	b = append(b, 0)
	b = append(b, k.principal.Roles...)
	b = append(b, 0)
	b = append(b, k.principal.Groups...)
	b = append(b, 0)
	b = append(b, k.base...)
	b = append(b, 0, byte(k.expand), 0)
	b = strconv.AppendInt(b, int64(k.start), 10)
	b = append(b, 0)
	b = strconv.AppendInt(b, int64(k.max), 10)
	return string(b)
}
