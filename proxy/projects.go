package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/cache"
	"github.com/facade-dev/facade/upstream"
)

// The project list is fetched whole (every project, plans expanded) into
// one cached document shared by everyone, then filtered per principal in
// process. Fetching per principal would multiply upstream calls by the
// number of users; fetching per caller page would make the filtered paging
// wrong (a page of 25 upstream projects may hold 3 visible ones).
const (
	// upstreamProjectPage is the page size asked of Bamboo while collecting
	// (the total it answers says when the list ends, so a server that
	// answers smaller pages is simply asked more often).
	upstreamProjectPage = upstreamPage
	// maxProjects bounds the collected list (and so the document's size).
	maxProjects = 10000
)

// projects serves the project list (route ProjectList): the projects the
// principal may see, with only their visible plans, sizes recounted, paged
// after filtering. With ?favourite, only the caller's favourite plans and
// the projects holding one; with cloverEnabled, the list Bamboo answers
// with it (projectIndexFor).
func (h *Handler) projects(ctx context.Context, req *Request, q routeQuery, favs map[string]bool) (view, cache.Status, error) {
	p := req.Principal
	idx, entry, err := h.projectIndexFor(ctx, q.clover)
	if err != nil {
		return view{}, "", err
	}
	params := q.listParams
	if q.favourite {
		// Per caller and cheap (a concatenation): not kept in the view cache.
		visible := keepFavourites(idx, h.visibility(idx, h.az.Version(), p), favs)
		body := idx.render(visible, params.expand&expandPlans != 0, params.startIndex, params.maxResults)
		return newView(finish(body, h.publicBase(req))), entry.Status, nil
	}
	key := viewKey{
		kind: kindProjects, doc: entry.Version, policy: h.az.Version(), principal: p.Key(),
		base: h.publicBase(req), expand: params.expand & expandPlans,
		start: params.startIndex, max: params.maxResults,
	}
	v, err := h.projectsView(key, p, entry)
	return v, entry.Status, err
}

// projectsView returns the encoded view for key, building it once.
func (h *Handler) projectsView(key viewKey, p facade.Principal, entry cache.Entry) (view, error) {
	return h.view(key, func() ([]byte, error) {
		idx, err := h.projectsIndexOf(entry)
		if err != nil {
			return nil, err
		}
		visible := h.visibility(idx, key.policy, key.principal.Principal())
		return idx.render(visible, key.expand&expandPlans != 0, key.start, key.max), nil
	})
}

// flightKey spells a view key as a string for singleflight.
func flightKey(k viewKey) string {
	b := make([]byte, 0, 128)
	b = append(b, 'v', k.kind, 0)
	b = append(b, k.doc...)
	b = append(b, 0)
	b = strconv.AppendUint(b, k.policy, 10)
	b = append(b, 0)
	b = append(b, k.principal.ID...)
	b = append(b, 0)
	b = append(b, k.principal.Role...)
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

// visibilityKey names one principal's filtering of one document under one
// policy; paging, expansion and base URL reuse it.
type visibilityKey struct {
	doc       string
	policy    uint64
	principal facade.PrincipalKey
}

// visibleProject is one project the principal may see: its index in the
// document and which of its plans (nil: all, from a project grant).
type visibleProject struct {
	project int
	plans   []int32
}

// visibility asks the policy, once per document, policy and principal,
// which projects and plans the principal may see. A project appears when
// it is granted whole or when any of its plans is.
func (h *Handler) visibility(idx *projectsIndex, policy uint64, p facade.Principal) []visibleProject {
	key := visibilityKey{doc: idx.version, policy: policy, principal: p.Key()}
	if v, ok := h.vis.get(key); ok {
		return v
	}
	var out []visibleProject
	for i := range idx.projects {
		proj := &idx.projects[i]
		if h.az.ListProject(p, proj.key) {
			out = append(out, visibleProject{project: i})
			continue
		}
		var plans []int32
		for j, plan := range proj.plans {
			if h.az.ListPlan(p, proj.key, plan.key) {
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
	h.vis.add(key, out, cost)
	return out
}

// projectsIndexOf returns the parsed form of entry's document, parsing it
// once per version.
func (h *Handler) projectsIndexOf(entry cache.Entry) (*projectsIndex, error) {
	if idx, ok := h.index.get(entry.Version); ok {
		return idx, nil
	}
	v, err, _ := h.builds.Do("index\x00"+entry.Version, func() (any, error) {
		idx, err := parseProjectsIndex(entry.Version, entry.Body)
		if err != nil {
			return nil, upstreamBad(err)
		}
		h.index.add(entry.Version, idx, 1)
		return idx, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*projectsIndex), nil
}

// projectsPage is the part of a Bamboo project list the collector reads;
// everything else of the first page's top level is kept as is.
type projectsPage struct {
	Projects struct {
		Size    int               `json:"size"`
		Project []json.RawMessage `json:"project"`
	} `json:"projects"`
}

var errNoProgress = errors.New("upstream project list: a page before the end was empty")

// fetchAllProjects collects every project (up to maxProjects) with plans
// expanded, page by page, into one Bamboo-shaped document. It runs inside
// the cache's fill, so concurrent misses share one collection.
func (h *Handler) fetchAllProjects(ctx context.Context) ([]byte, error) {
	return h.collectProjects(ctx, false)
}

// fetchCloverProjects is fetchAllProjects with cloverEnabled: the projects
// and plans Bamboo lists with Clover enabled.
func (h *Handler) fetchCloverProjects(ctx context.Context) ([]byte, error) {
	return h.collectProjects(ctx, true)
}

func (h *Handler) collectProjects(ctx context.Context, clover bool) ([]byte, error) {
	var (
		top      map[string]json.RawMessage
		projects []json.RawMessage
	)
	for start := 0; start < maxProjects; {
		body, err := h.up.Projects(ctx, upstream.ProjectQuery{
			Expand:        []string{upstream.ExpandProjectPlans},
			CloverEnabled: clover,
			MaxResults:    min(upstreamProjectPage, maxProjects-start),
			StartIndex:    start,
		})
		if err != nil {
			return nil, err
		}
		var page projectsPage
		if err := json.Unmarshal(body, &page); err != nil {
			return nil, upstreamBad(err)
		}
		if top == nil {
			if err := json.Unmarshal(body, &top); err != nil {
				return nil, upstreamBad(err)
			}
		}
		projects = append(projects, page.Projects.Project...)
		start += len(page.Projects.Project)
		if start >= page.Projects.Size {
			break
		}
		if len(page.Projects.Project) == 0 {
			return nil, upstreamBad(errNoProgress)
		}
	}
	if len(projects) >= maxProjects {
		h.log.Warn("upstream project list truncated", "limit", maxProjects)
	}
	list, err := json.Marshal(map[string]any{
		"size": len(projects), "expand": "project", "start-index": 0,
		"max-result": len(projects), "project": nonNil(projects),
	})
	if err != nil {
		return nil, upstreamBad(err)
	}
	top["projects"] = list
	doc, err := json.Marshal(top)
	if err != nil {
		return nil, upstreamBad(err)
	}
	return doc, nil
}

func nonNil(s []json.RawMessage) []json.RawMessage {
	if s == nil {
		return []json.RawMessage{}
	}
	return s
}
