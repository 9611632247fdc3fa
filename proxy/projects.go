package proxy

import (
	"context"

	"github.com/facade-dev/facade/cache"
	"github.com/facade-dev/facade/internal/tracing"
)

// projects serves the project list (route ProjectList): the projects the
// principal may see, with only their visible plans, sizes recounted, paged
// after filtering. With ?favourite, only the caller's favourite plans and
// the projects holding one; with cloverEnabled, the list Bamboo answers
// with it (projectIndexFor).
func (h *Handler) projects(ctx context.Context, req *Request, q routeQuery, favs map[string]bool) (view, cache.Status, error) {
	p := req.Principal
	idx, doc, entry, err := h.projectIndexFor(ctx, q.clover)
	if err != nil {
		return view{}, "", err
	}
	params := q.listParams
	// The list is filtered for its caller (or its filtered view found
	// among the document's views): the authorization step of a list.
	defer tracing.Authorize(ctx, "project.list").End()
	if q.favourite {
		// Per caller and cheap (a concatenation): not kept.
		visible := keepFavourites(idx, h.vm.visibility(doc, idx, p), favs)
		body := idx.render(visible, params.expand&expandPlans != 0, params.startIndex, params.maxResults)
		return finished(body, h.publicBase(req)), entry.Status, nil
	}
	key := viewKey{
		kind: kindProjects, policy: h.az.Version(), principal: p.Key(),
		base: h.publicBase(req), expand: params.expand & expandPlans,
		start: params.startIndex, max: params.maxResults,
	}
	v, err := doc.view(h.docs, key, func() ([]byte, error) {
		return idx.render(h.vm.visibility(doc, idx, p), key.expand&expandPlans != 0, key.start, key.max), nil
	})
	return v, entry.Status, err
}

// visibleProject is one project the principal may see: its index in the
// document and which of its plans (nil: all, from a project grant).
type visibleProject struct {
	project int
	plans   []int32
}
