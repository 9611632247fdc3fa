package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/cache"
)

// Lists answered per principal. The project and plan views are cut from
// the shared project list (projects.go); the others are upstream lists,
// collected whole (CacheCollected) or passed as a page, from which every
// item of a plan the caller may not see is removed before paging.

// projectIndexFor returns the shared project list, or with clover the
// list Bamboo answers with cloverEnabled=true, parsed.
func (h *Handler) projectIndexFor(ctx context.Context, clover bool) (*projectsIndex, *document, cache.Entry, error) {
	key, fetch := projectsDocKey, h.fetchProjects
	if clover {
		key, fetch = cloverProjectsDocKey, h.col.fetchCloverProjects
	}
	entry, doc, err := h.docs.get(ctx, key, fetch, nil) // projects and plans: FACADE_CACHE_TTL
	if err != nil {
		return nil, nil, entry, err
	}
	v, err := doc.parse(projectsIndexFrom)
	if err != nil {
		return nil, nil, entry, err
	}
	return v.(*projectsIndex), doc, entry, nil
}

// visibility is which projects and plans of the project list p may see
// under the current policy, asked of the policy once per principal and
// document version (document.visibility). A project appears when it is
// granted whole or when any of its plans is.
func (vm *viewMaker) visibility(doc *document, idx *projectsIndex, p facade.Principal) []visibleProject {
	return doc.visibility(vm.docs, vm.az.Version(), p, func() []visibleProject {
		var out []visibleProject
		for i := range idx.projects {
			proj := &idx.projects[i]
			if vm.az.ListProject(p, proj.ref) {
				out = append(out, visibleProject{project: i})
				continue
			}
			var plans []int32
			for j, plan := range proj.plans {
				if vm.az.ListPlan(p, plan.ref) {
					plans = append(plans, int32(j))
				}
			}
			if plans != nil {
				out = append(out, visibleProject{project: i, plans: plans})
			}
		}
		return out
	})
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
	idx, doc, entry, err := h.projectIndexFor(ctx, q.clover)
	if err != nil {
		return view{}, "", err
	}
	visible := h.vm.visibility(doc, idx, req.Principal)
	if q.favourite {
		visible = keepFavourites(idx, visible, favs)
	}
	v, ok := findVisible(idx, visible, key)
	if !ok {
		return view{}, "", facade.ErrNotFound
	}
	var b bytes.Buffer
	idx.renderProject(&b, v, q.has("plans"))
	return finished(b.Bytes(), h.publicBase(req)), entry.Status, nil
}

// plans serves GET /plan: every plan the principal may see (with
// ?favourite, of the caller's favourites), in project order, paged after
// filtering; size is the number visible.
func (h *Handler) plans(ctx context.Context, req *Request, q routeQuery, favs map[string]bool) (view, cache.Status, error) {
	idx, doc, entry, err := h.projectIndexFor(ctx, q.clover)
	if err != nil {
		return view{}, "", err
	}
	visible := h.vm.visibility(doc, idx, req.Principal)
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
	return finished(body, h.publicBase(req)), entry.Status, nil
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
	plan facade.PlanKey
	raw  []byte
}

// listIndexFrom takes a collected list apart, from its rewritten object.
// An item whose plan cannot be told is left out: nobody can be authorized
// for it.
func listIndexFrom(top map[string]any, rt *Route) (any, error) {
	list, _ := top[rt.List].(map[string]any)
	idx := &listIndex{}
	var err error
	if idx.top, err = encodeMembers(top, rt.List); err != nil {
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

// listedItems are the list members whose items belong to a plan: plans,
// branches (plans of their master's project), results and job results.
var listedItems = map[string]bool{"plan": true, "branch": true, "result": true}

// linkedPlans are members holding one plan object other than the
// document's own: a branch's master plan.
var linkedPlans = map[string]bool{"master": true}

// itemPlan reads the plan an item belongs to from its key: PROJ-PLAN,
// PROJ-PLAN-7 or PROJ-PLAN-JOB-7.
func itemPlan(item any) (facade.PlanKey, bool) {
	m, _ := item.(map[string]any)
	key, _ := m["key"].(string)
	project, rest, ok := cutDash(key)
	if !ok {
		return facade.PlanKey{}, false
	}
	plan, _, _ := cutDash(rest)
	ref, err := facade.ParsePlanKey(project + "-" + plan)
	return ref, err == nil
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
